//===- BlockMatvec.cpp - streamed products over block-quantized W ---------===//
//
// Part of -linnet-cpu-lower-linalg. A product y[m, i] += sum_k x[m, k] *
// W[i, k] whose W is a param stored in a block format (q8_0, q4_0) reaches
// here as the importer reads it: a linalg.generic with x, then W's blocks
// three times (the scale's two bytes and the quant's byte at k), its body
// the dequantizing product (tagged `linnet.dequant`) times x, added to y.
//
// It becomes a streaming kernel that reads each block once: the quants are
// widened (sign-extended, or the nibble split and offset by 8), multiplied
// with x a vector at a time, and each block's sum is scaled by its f16
// scale into the accumulator, as ggml's vec_dot does per block. W's bytes
// are the only stream, 34 (q8_0) or 18 (q4_0) bytes for 32 values against
// f32's 128. Rows of W are split over threads (scf.parallel, a static
// schedule); within a thread, each group of W's rows meets every row of x
// in chunks of up to 8 (decode of a batch, prefill), so W is read from
// memory once a call.
//
// The sums are reassociated (per lane, per block): compiled results agree
// with the interpreter's sequential sums to rounding, as the f32 streamed
// product does.
//
// Under --block-products int8 (a permission, docs/language/08 §8.4), a
// product with one row of x quantizes x to q8_0 once a call and sums each
// block's products as integers (pmaddubsw, pmaddwd), as ggml's CPU back end
// does; results then differ from the exact ones within the stated bound.
//
//===----------------------------------------------------------------------===//
#include "BlockMatvec.h"
#include "BlockRepack.h"

#include "linnet/Support/BlockBytes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

using namespace mlir;

namespace linnet::cpu {

namespace {

/// The most rows of x one kernel takes: one accumulator per (row of W, row
/// of x).
constexpr int64_t kMaxRowsOfX = 8;

struct BlockMatvec {
  std::string fmt;        // "q8_0", "q4_0", "q4_K", "q5_K", "q6_K"
  support::BlockFormat format = support::BlockFormat::Q8_0;
  int64_t blockBytes = 0; // 34, 18, 144, 176, 210
  int64_t elems = 32;     // values a block: 32, the k-quants 256
  unsigned nbytes = 0;    // the generic's block inputs (support::blockBytes)
  Value blocks, x, y;     // W's blocks [N, K / elems, blockBytes] i8; x, y f32
  unsigned row = ~0u, k = ~0u, unit = ~0u; // loop positions (unit: rows of x)
  AffineMap xm, ym;
  int64_t rows = -1;  // W's rows, -1 dynamic
  int64_t batch = 1;  // rows of x: the unit loop's static extent, -1 dynamic
  // q4_0 in groups of eight rows (BlockRepack.h): `blocks` is the view
  // [N / 8, KB, 144] -linnet-cpu-repack-block-params made.
  bool repacked = false;
};

bool isDimExpr(AffineExpr e, unsigned &pos) {
  auto d = dyn_cast<AffineDimExpr>(e);
  if (d)
    pos = d.getPosition();
  return bool(d);
}

/// The dequantizing value D of the body and the values it is built from:
/// only the `nbytes` block arguments, constants and linalg.index (a nibble's
/// or a sub-block's position).
bool isDequantSlice(Value d, Block &body, unsigned nbytes, llvm::SetVector<Operation *> &slice) {
  SmallVector<Value> work{d};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (arg.getOwner() != &body || arg.getArgNumber() < 1 || arg.getArgNumber() > nbytes)
        return false;
      continue;
    }
    Operation *op = v.getDefiningOp();
    if (op && isa<arith::ConstantOp>(op))
      continue; // hoisted out of the body, or not
    if (!op || op->getBlock() != &body || op->getNumRegions() != 0)
      return false;
    if (!isa<arith::ArithDialect>(op->getDialect()) && !isa<linalg::IndexOp>(op))
      return false;
    if (slice.insert(op))
      for (Value o : op->getOperands())
        work.push_back(o);
  }
  return true;
}

std::optional<BlockMatvec> match(linalg::LinalgOp op) {
  auto g = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!g || !g.hasPureBufferSemantics() || g.getNumDpsInputs() < 2 || g.getNumDpsInits() != 1)
    return std::nullopt;
  BlockMatvec mv;
  // The body: yield(acc + x * D), D the importer's dequantized value
  // (tagged with its format).
  Block &body = g.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto add = yield.getNumOperands() == 1 ? yield.getOperand(0).getDefiningOp<arith::AddFOp>() : nullptr;
  Value acc = body.getArguments().back();
  if (!add || (add.getLhs() != acc && add.getRhs() != acc))
    return std::nullopt;
  auto mul = (add.getLhs() == acc ? add.getRhs() : add.getLhs()).getDefiningOp<arith::MulFOp>();
  if (!mul || (mul.getLhs() != body.getArgument(0) && mul.getRhs() != body.getArgument(0)))
    return std::nullopt;
  Value d = mul.getLhs() == body.getArgument(0) ? mul.getRhs() : mul.getLhs();
  Operation *dq = d.getDefiningOp();
  auto tag = dq ? dq->getAttrOfType<StringAttr>("linnet.dequant") : nullptr;
  std::optional<support::BlockFormatInfo> bf = tag ? support::blockFormat(tag.getValue().str()) : std::nullopt;
  if (!bf)
    return std::nullopt;
  MLIRContext *ctx = op->getContext();
  mv.fmt = bf->name;
  mv.format = bf->format;
  mv.blockBytes = bf->blockBytes;
  mv.elems = bf->blockElems;
  // The maps: x's k innermost; each block input at (row, k / elems, the
  // byte support::blockBytes names).
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  SmallVector<utils::IteratorType> its = op.getIteratorTypesArray();
  mv.xm = maps[0];
  if (mv.xm.getNumResults() < 1 || !isDimExpr(mv.xm.getResult(mv.xm.getNumResults() - 1), mv.k))
    return std::nullopt;
  AffineExpr kx = getAffineDimExpr(mv.k, ctx);
  SmallVector<AffineExpr> bytes = support::blockBytes(mv.format, kx);
  mv.nbytes = bytes.size();
  if (g.getNumDpsInputs() != 1 + mv.nbytes)
    return std::nullopt;
  SmallVector<Value> ins = g.getDpsInputs(); // a vector: getDpsInputs returns one by value
  mv.x = ins[0];
  mv.blocks = ins[1];
  mv.y = g.getDpsInits()[0];
  mv.ym = maps[1 + mv.nbytes];
  auto bt = dyn_cast<MemRefType>(mv.blocks.getType());
  auto xt = dyn_cast<MemRefType>(mv.x.getType());
  auto yt = dyn_cast<MemRefType>(mv.y.getType());
  if (auto view = mv.blocks.getDefiningOp<memref::ReinterpretCastOp>()) {
    auto layout = view->getAttrOfType<StringAttr>("linnet.layout");
    mv.repacked = layout && layout.getValue() == kQ4_0x8 && mv.format == support::BlockFormat::Q4_0;
  }
  if (!bt || !xt || !yt || bt.getRank() != 3 || !bt.getElementType().isInteger(8) ||
      !xt.getElementType().isF32() || !yt.getElementType().isF32() || xt.getRank() < 1 || xt.getRank() > 2 ||
      bt.getDimSize(2) != (mv.repacked ? kRepackGroupBytes : mv.blockBytes))
    return std::nullopt;
  // The row: W's first index, or (grouped) its group's.
  AffineExpr rowAt = maps[1].getNumResults() == 3 ? maps[1].getResult(0) : AffineExpr();
  if (mv.repacked) {
    auto group = dyn_cast_or_null<AffineBinaryOpExpr>(rowAt);
    auto eight = group ? dyn_cast<AffineConstantExpr>(group.getRHS()) : nullptr;
    if (!group || group.getKind() != AffineExprKind::FloorDiv || !eight || eight.getValue() != kRepackRows)
      return std::nullopt;
    rowAt = group.getLHS();
  }
  if (!rowAt || !isDimExpr(rowAt, mv.row) || mv.k == mv.row)
    return std::nullopt;
  AffineExpr blk = kx.floorDiv(mv.elems);
  for (unsigned a = 0; a < mv.nbytes; ++a) {
    AffineMap m = maps[1 + a];
    AffineExpr byte = mv.repacked ? repackedByte(rowAt, bytes[a]) : bytes[a];
    if (ins[1 + a] != mv.blocks || m.getNumResults() != 3 || m.getResult(0) != maps[1].getResult(0) ||
        m.getResult(1) != blk || m.getResult(2) != byte)
      return std::nullopt;
  }
  llvm::SetVector<Operation *> slice;
  if (!isDequantSlice(d, body, mv.nbytes, slice))
    return std::nullopt;
  for (Operation &o : body.without_terminator())
    if (&o != add.getOperation() && &o != mul.getOperation() && !slice.contains(&o))
      return std::nullopt;
  for (unsigned a = 1; a <= mv.nbytes; ++a)
    for (Operation *user : body.getArgument(a).getUsers())
      if (!slice.contains(user))
        return std::nullopt;
  unsigned loops = op.getNumLoops();
  if (its[mv.k] != utils::IteratorType::reduction || its[mv.row] != utils::IteratorType::parallel)
    return std::nullopt;
  if (mv.xm.getNumResults() == 2) {
    if (!isDimExpr(mv.xm.getResult(0), mv.unit) || mv.unit == mv.row || mv.unit == mv.k ||
        its[mv.unit] != utils::IteratorType::parallel)
      return std::nullopt;
  }
  if (loops != (mv.unit == ~0u ? 2u : 3u))
    return std::nullopt;
  // y: the row, and the rows of x when there are several.
  bool hasRow = false, hasUnit = false;
  for (AffineExpr e : mv.ym.getResults()) {
    unsigned p;
    if (!isDimExpr(e, p) || (p != mv.row && p != mv.unit))
      return std::nullopt;
    hasRow |= p == mv.row;
    hasUnit |= p == mv.unit;
  }
  if (!hasRow || (mv.unit != ~0u && !hasUnit))
    return std::nullopt;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(getStridesAndOffset(xt, strides, offset)) || strides.back() != 1 ||
      failed(getStridesAndOffset(bt, strides, offset)) || strides.back() != 1)
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  mv.rows = ShapedType::isDynamic(ranges[mv.row]) ? -1 : ranges[mv.row];
  if (mv.unit != ~0u)
    mv.batch = ShapedType::isDynamic(ranges[mv.unit]) ? -1 : ranges[mv.unit];
  return mv;
}

//===----------------------------------------------------------------------===//
// --block-products int8: activations quantized to q8_0, integer block sums
//===----------------------------------------------------------------------===//

/// x's indices at row m of x and k; y's at row i of W and row m of x.
SmallVector<Value> xIndices(const BlockMatvec &mv, Value m, Value k) {
  SmallVector<Value> ix;
  for (AffineExpr e : mv.xm.getResults())
    ix.push_back(cast<AffineDimExpr>(e).getPosition() == mv.k ? k : m);
  return ix;
}
SmallVector<Value> yIndices(const BlockMatvec &mv, Value i, Value m) {
  SmallVector<Value> ix;
  for (AffineExpr e : mv.ym.getResults())
    ix.push_back(cast<AffineDimExpr>(e).getPosition() == mv.row ? i : m);
  return ix;
}

/// The indices of byte `byte` of block kb of W's row `row`: (row, kb, byte),
/// or in the grouped layout (row / 8, kb, its place in the group).
SmallVector<Value> blockAt(OpBuilder &b, Location loc, const BlockMatvec &mv, Value row, Value kb, int64_t byte) {
  auto c = [&](int64_t v) -> Value { return b.create<arith::ConstantIndexOp>(loc, v); };
  if (!mv.repacked)
    return {row, kb, c(byte)};
  Value r = b.create<arith::RemUIOp>(loc, row, c(kRepackRows));
  Value at = b.create<arith::AddIOp>(loc, b.create<arith::MulIOp>(loc, r, c(byte < 2 ? 2 : 16)),
                                     c(repackedByte(0, byte)));
  return {b.create<arith::DivUIOp>(loc, row, c(kRepackRows)), kb, at};
}

/// Rows of a few hundred bytes end before the hardware's stream
/// prefetchers pick them up: fetch block kb of each row `prefetchRows`
/// further on (clamped to the last of N), where the CPU needs it
/// (streamPrefetchRows; 0: nothing).
void prefetchAhead(OpBuilder &b, Location loc, const BlockMatvec &mv, ArrayRef<Value> rows, Value kb, Value N,
                   int64_t prefetchRows) {
  if (prefetchRows <= 0)
    return;
  Value last = b.create<arith::SubIOp>(loc, N, b.create<arith::ConstantIndexOp>(loc, 1));
  for (Value row : rows) {
    Value ahead = b.create<arith::MinUIOp>(
        loc, b.create<arith::AddIOp>(loc, row, b.create<arith::ConstantIndexOp>(loc, prefetchRows)), last);
    // Each cache line of the block (one for q8_0 and q4_0; the k-quants'
    // super-blocks span three or four).
    // Grouped: the group's 144 bytes.
    Value at0 = mv.repacked ? b.create<arith::DivUIOp>(loc, ahead, b.create<arith::ConstantIndexOp>(loc, kRepackRows))
                            : ahead;
    for (int64_t at = 0; at < (mv.repacked ? kRepackGroupBytes : mv.blockBytes); at += 64)
      b.create<memref::PrefetchOp>(loc, mv.blocks, ValueRange{at0, kb, b.create<arith::ConstantIndexOp>(loc, at)},
                                   /*isWrite=*/false, /*localityHint=*/3, /*isDataCache=*/true);
  }
}

/// Block kb's f16 scale of a row: its two bytes as one f16.
Value blockScale(OpBuilder &b, Location loc, const BlockMatvec &mv, Value row, Value kb) {
  Value bytes = b.create<vector::LoadOp>(loc, VectorType::get({2}, b.getI8Type()), mv.blocks,
                                         blockAt(b, loc, mv, row, kb, 0));
  return b.create<vector::ExtractOp>(
      loc, b.create<vector::BitCastOp>(loc, VectorType::get({1}, b.getF16Type()), bytes), 0);
}

/// y[i, m] += sum.
void addInto(OpBuilder &b, Location loc, const BlockMatvec &mv, Value sum, Value i, Value m) {
  SmallVector<Value> at = yIndices(mv, i, m);
  Value old = b.create<memref::LoadOp>(loc, mv.y, at);
  b.create<memref::StoreOp>(loc, b.create<arith::AddFOp>(loc, old, sum), mv.y, at);
}

Value constI8(OpBuilder &b, Location loc, VectorType t, int64_t v) {
  return b.create<arith::ConstantOp>(loc, t, DenseElementsAttr::get(t, b.getI8IntegerAttr(v)));
}

/// The sums of 32 byte products, four to each of 8 i32 lanes: `w`'s bytes
/// unsigned, `x`'s signed (vector<32xi8> each). With `vnni` one vpdpbusd
/// (AVX-512 VNNI); else pmaddubsw and pmaddwd against ones (AVX2): the same
/// sums, as no pair of products here reaches i16's saturation (|w| <= 63).
Value dotBytes(OpBuilder &b, Location loc, Value w, Value x, bool vnni) {
  Type i16 = b.getI16Type(), i32 = b.getI32Type();
  auto vd = VectorType::get({8}, i32), vw = VectorType::get({16}, i16);
  auto call = [&](const char *name, Type t, ValueRange args) -> Value {
    return b.create<LLVM::CallIntrinsicOp>(loc, t, b.getStringAttr(name), args).getResult(0);
  };
  if (vnni) {
    Value zero = b.create<arith::ConstantOp>(loc, vd, DenseElementsAttr::get(vd, b.getI32IntegerAttr(0)));
    return call("llvm.x86.avx512.vpdpbusd.256", vd,
                {zero, b.create<vector::BitCastOp>(loc, vd, w), b.create<vector::BitCastOp>(loc, vd, x)});
  }
  Value ones = b.create<arith::ConstantOp>(loc, vw, DenseElementsAttr::get(vw, b.getI16IntegerAttr(1)));
  return call("llvm.x86.avx2.pmadd.wd", vd, {call("llvm.x86.avx2.pmadd.ub.sw", vw, {w, x}), ones});
}

/// Block kb of a q8_0 or q4_0 row as the integer products take it: `abs`
/// the 32 quants as unsigned bytes, `sign` the signed quants whose signs x
/// takes (q8_0: |w| against x with w's sign), or null (q4_0: byte j holds
/// value j (low nibble) and j + 16 (high), 0..15, summed unsigned; the 8 is
/// taken off by the correction).
struct BlockQuants {
  Value abs, sign;
};
BlockQuants blockQuants(OpBuilder &b, Location loc, const BlockMatvec &mv, Value row, Value kb) {
  Type i8 = b.getI8Type();
  if (mv.format == support::BlockFormat::Q8_0) {
    Value q = b.create<vector::LoadOp>(loc, VectorType::get({32}, i8), mv.blocks, blockAt(b, loc, mv, row, kb, 2));
    return {b.create<math::AbsIOp>(loc, q), q};
  }
  auto vh = VectorType::get({16}, i8);
  Value raw = b.create<vector::LoadOp>(loc, vh, mv.blocks, blockAt(b, loc, mv, row, kb, 2));
  Value lo = b.create<arith::AndIOp>(loc, raw, constI8(b, loc, vh, 15));
  Value hi = b.create<arith::ShRUIOp>(loc, raw, constI8(b, loc, vh, 4));
  SmallVector<int64_t> order(32);
  for (int64_t j = 0; j < 32; ++j)
    order[j] = j;
  return {b.create<vector::ShuffleOp>(loc, lo, hi, order), Value()};
}

/// The block's 32 products with x's quants `xv`, as 8 f32 partial sums.
Value blockSums(OpBuilder &b, Location loc, const BlockQuants &w, Value xv, bool vnni) {
  Value sx = w.sign ? b.create<LLVM::CallIntrinsicOp>(loc, xv.getType(), b.getStringAttr("llvm.x86.avx2.psign.b"),
                                                     ValueRange{xv, w.sign})
                          .getResult(0)
                    : xv;
  return b.create<arith::SIToFPOp>(loc, VectorType::get({8}, b.getF32Type()), dotBytes(b, loc, w.abs, sx, vnni));
}

/// Rows [0, M) of x as q8_0, the way ggml's x86 back end quantizes a row
/// for its dot products: per 32 values along k, amax = max |x|, the scale
/// d = f16(amax / 127) (kept widened in xd[m, kb]), and each value
/// round-half-even(x * 127 / amax) (0 for a block of zeros) in xq[m, k].
void quantizeRows(OpBuilder &b, Location loc, const BlockMatvec &mv, Value M, Value KB, Value xq, Value xd,
                  Value xc, float corrFactor) {
  Type f32 = b.getF32Type(), i8 = b.getI8Type();
  auto v32 = VectorType::get({32}, f32);
  auto c = [&](int64_t v) -> Value { return b.create<arith::ConstantIndexOp>(loc, v); };
  b.create<scf::ForOp>(loc, c(0), M, c(1), ValueRange{}, [&](OpBuilder &b, Location loc, Value m, ValueRange) {
    b.create<scf::ForOp>(loc, c(0), KB, c(1), ValueRange{}, [&](OpBuilder &b, Location loc, Value kb, ValueRange) {
      Value k0 = b.create<arith::MulIOp>(loc, kb, b.create<arith::ConstantIndexOp>(loc, 32));
      Value xv = b.create<vector::LoadOp>(loc, v32, mv.x, xIndices(mv, m, k0));
      Value amax = b.create<vector::ReductionOp>(loc, vector::CombiningKind::MAXNUMF,
                                                 b.create<math::AbsFOp>(loc, xv));
      Value zero = b.create<arith::ConstantFloatOp>(loc, APFloat(0.0f), b.getF32Type());
      Value c127 = b.create<arith::ConstantFloatOp>(loc, APFloat(127.0f), b.getF32Type());
      Value d = b.create<arith::DivFOp>(loc, amax, c127);
      Value nonzero = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::ONE, amax, zero);
      Value id = b.create<arith::SelectOp>(loc, nonzero, b.create<arith::DivFOp>(loc, c127, amax), zero);
      Value dh = b.create<arith::ExtFOp>(loc, f32, b.create<arith::TruncFOp>(loc, b.getF16Type(), d).getResult());
      b.create<memref::StoreOp>(loc, dh, xd, ValueRange{m, kb});
      Value scaled = b.create<arith::MulFOp>(loc, xv, b.create<vector::BroadcastOp>(loc, v32, id));
      Value q = b.create<arith::FPToSIOp>(loc, VectorType::get({32}, i8), b.create<math::RoundEvenOp>(loc, scaled));
      b.create<vector::StoreOp>(loc, q, xq, ValueRange{m, k0});
      if (xc) {
        // q4_0's nibbles are summed unsigned: each block then takes
        // d_w * (8 d_x sum(q)) off, kept here as 8 d_x sum(q); the
        // k-quants' mins take d_x sum(q) (corrFactor 8 or 1).
        Value s = b.create<vector::ReductionOp>(loc, vector::CombiningKind::ADD,
                                                b.create<arith::ExtSIOp>(loc, VectorType::get({32}, b.getI32Type()), q));
        Value c8 = b.create<arith::ConstantFloatOp>(loc, APFloat(corrFactor), b.getF32Type());
        Value corr = b.create<arith::MulFOp>(loc, b.create<arith::MulFOp>(loc, dh, c8),
                                            b.create<arith::SIToFPOp>(loc, b.getF32Type(), s));
        b.create<memref::StoreOp>(loc, corr, xc, ValueRange{m, kb});
      }
      b.create<scf::YieldOp>(loc);
    });
    b.create<scf::YieldOp>(loc);
  });
}

/// Rows i0 .. i0+7 of a grouped q4_0 W (BlockRepack.h; i0 a multiple of 8)
/// against quantized rows m0 .. m0+nb-1 of x (the quants' nibbles split
/// once for all of them), the eight rows in the i32 lanes of `L`-lane
/// vectors (8: 256 bits, two rows a vector; 16: 512 bits with AVX-512
/// VNNI, four): per block, each 4L bytes of the group's quants (L / 4 rows'
/// 16) as low and high nibbles against x's low and high 16 quants copied
/// into every 128 bits give four i32 lanes a row; they are converted and
/// scaled by their row's d_w * d_x (one f16 conversion for the eight
/// scales) into 32 / L accumulators, and q4_0's corrections (d_w * 8 d_x
/// sum(q)) are one multiply-add for the eight rows. The four lanes of a
/// row are summed once, after the last block: no horizontal reduction a
/// block, none a row but that one.
void int8Grouped(OpBuilder &b, Location loc, const BlockMatvec &mv, Value i0, Value m0, int64_t nb, Value KB,
                 Value xq, Value xd, Value xc, bool vnni, int64_t L) {
  Type f32 = b.getF32Type(), i8 = b.getI8Type(), i16 = b.getI16Type(), i32 = b.getI32Type();
  auto v8f = VectorType::get({8}, f32), vf = VectorType::get({L}, f32);
  auto vi = VectorType::get({L}, i32);
  auto vs = VectorType::get({2 * L}, i16);
  auto vb = VectorType::get({4 * L}, i8), v16b = VectorType::get({16}, i8);
  const int64_t vectors = 32 / L, rowsPerVector = L / 4;
  auto c = [&](OpBuilder &b, int64_t v) -> Value { return b.create<arith::ConstantIndexOp>(loc, v); };
  auto call = [&](OpBuilder &b, const char *name, Type t, ValueRange args) -> Value {
    return b.create<LLVM::CallIntrinsicOp>(loc, t, b.getStringAttr(name), args).getResult(0);
  };
  Value g = b.create<arith::DivUIOp>(loc, i0, c(b, kRepackRows));
  auto zeros = [&](VectorType t, Attribute a) {
    return b.create<arith::ConstantOp>(loc, t, DenseElementsAttr::get(t, a)).getResult();
  };
  Value zeroF = zeros(vf, b.getFloatAttr(f32, 0.0)), zero8 = zeros(v8f, b.getFloatAttr(f32, 0.0));
  Value zeroI = zeros(vi, b.getI32IntegerAttr(0));
  Value ones = zeros(vs, b.getI16IntegerAttr(1));
  SmallVector<int64_t> copies(4 * L);
  for (int64_t j = 0; j < 4 * L; ++j)
    copies[j] = j % 16;
  // Accumulators: (vector p, row of x m) at p * nb + m, then each row of
  // x's corrections.
  SmallVector<Value> rowsM;
  for (int64_t m = 0; m < nb; ++m)
    rowsM.push_back(m ? b.create<arith::AddIOp>(loc, m0, c(b, m)).getResult() : m0);
  SmallVector<Value> init(vectors * nb, zeroF);
  init.append(nb, zero8);
  auto loop = b.create<scf::ForOp>(
      loc, c(b, 0), KB, c(b, 1), init, [&](OpBuilder &b, Location loc, Value kb, ValueRange accs) {
        Value k0 = b.create<arith::MulIOp>(loc, kb, c(b, 32));
        auto xHalf = [&](Value m, int64_t at) -> Value {
          Value h = b.create<vector::LoadOp>(loc, v16b, xq,
                                             ValueRange{m, b.create<arith::AddIOp>(loc, k0, c(b, at))});
          return b.create<vector::ShuffleOp>(loc, h, h, copies);
        };
        Value scales = b.create<vector::LoadOp>(loc, v16b, mv.blocks, ValueRange{g, kb, c(b, 0)});
        Value d8 = b.create<arith::ExtFOp>(
            loc, v8f, b.create<vector::BitCastOp>(loc, VectorType::get({8}, b.getF16Type()), scales).getResult());
        SmallVector<Value> next(accs.begin(), accs.end()), xlos, xhis, s8s;
        for (int64_t m = 0; m < nb; ++m) {
          xlos.push_back(xHalf(rowsM[m], 0));
          xhis.push_back(xHalf(rowsM[m], 16));
          Value dx = b.create<memref::LoadOp>(loc, xd, ValueRange{rowsM[m], kb});
          s8s.push_back(b.create<arith::MulFOp>(loc, d8, b.create<vector::BroadcastOp>(loc, v8f, dx)));
          Value corr = b.create<memref::LoadOp>(loc, xc, ValueRange{rowsM[m], kb});
          next[vectors * nb + m] = b.create<vector::FMAOp>(loc, d8, b.create<vector::BroadcastOp>(loc, v8f, corr),
                                                           accs[vectors * nb + m]);
        }
        for (int64_t p = 0; p < vectors; ++p) {
          Value raw = b.create<vector::LoadOp>(loc, vb, mv.blocks, ValueRange{g, kb, c(b, 16 + 4 * L * p)});
          Value lo = b.create<arith::AndIOp>(loc, raw, constI8(b, loc, vb, 15));
          Value hi = b.create<arith::ShRUIOp>(loc, raw, constI8(b, loc, vb, 4));
          SmallVector<int64_t> rowOf(L);
          for (int64_t l = 0; l < L; ++l)
            rowOf[l] = rowsPerVector * p + l / 4;
          for (int64_t m = 0; m < nb; ++m) {
            Value xlo = xlos[m], xhi = xhis[m];
            Value sums;
            if (vnni) {
              const char *dpbusd = L == 16 ? "llvm.x86.avx512.vpdpbusd.512" : "llvm.x86.avx512.vpdpbusd.256";
              auto dp = [&](Value acc, Value w, Value x) {
                return call(b, dpbusd, vi,
                            {acc, b.create<vector::BitCastOp>(loc, vi, w), b.create<vector::BitCastOp>(loc, vi, x)});
              };
              sums = dp(dp(zeroI, lo, xlo), hi, xhi);
            } else {
              // Pairs of products stay within i16: 2 * 15 * 127 each, 4 the sum.
              Value pairs = b.create<arith::AddIOp>(loc, call(b, "llvm.x86.avx2.pmadd.ub.sw", vs, {lo, xlo}),
                                                    call(b, "llvm.x86.avx2.pmadd.ub.sw", vs, {hi, xhi}));
              sums = call(b, "llvm.x86.avx2.pmadd.wd", vi, {pairs, ones});
            }
            Value scale = b.create<vector::ShuffleOp>(loc, s8s[m], s8s[m], rowOf);
            next[p * nb + m] =
                b.create<vector::FMAOp>(loc, b.create<arith::SIToFPOp>(loc, vf, sums), scale, accs[p * nb + m]);
          }
        }
        b.create<scf::YieldOp>(loc, next);
      });
  // Each accumulator's rows: four lanes each, summed in place.
  SmallVector<int64_t> swap1(L), swap2(L);
  for (int64_t l = 0; l < L; ++l) {
    swap1[l] = l ^ 1;
    swap2[l] = l ^ 2;
  }
  for (int64_t m = 0; m < nb; ++m) {
    Value corr = loop.getResult(vectors * nb + m);
    for (int64_t p = 0; p < vectors; ++p) {
      Value t = loop.getResult(p * nb + m);
      t = b.create<arith::AddFOp>(loc, t, b.create<vector::ShuffleOp>(loc, t, t, swap1));
      t = b.create<arith::AddFOp>(loc, t, b.create<vector::ShuffleOp>(loc, t, t, swap2));
      for (int64_t h = 0; h < rowsPerVector; ++h) {
        int64_t r = rowsPerVector * p + h;
        Value sum = b.create<arith::SubFOp>(loc, b.create<vector::ExtractOp>(loc, t, 4 * h),
                                            b.create<vector::ExtractOp>(loc, corr, r));
        addInto(b, loc, mv, sum, r ? b.create<arith::AddIOp>(loc, i0, c(b, r)).getResult() : i0, rowsM[m]);
      }
    }
  }
}

/// Rows i0 .. i0+nr-1 of W against quantized rows m0 .. m0+nb-1 of x: per
/// block, W's 32 quants as signed bytes (q4_0: the nibbles less 8), the 32
/// integer products summed in pairs and fours (pmaddubsw on |w| and x with
/// w's sign, then pmaddwd: AVX2), eight i32 partial sums converted and
/// scaled by d_w * d_x into eight f32 accumulators.
void int8Block(OpBuilder &b, Location loc, const BlockMatvec &mv, Value i0, int64_t nr, Value m0, int64_t nb,
               Value KB, Value N, Value xq, Value xd, Value xc, int64_t prefetchRows, bool vnni) {
  Type f32 = b.getF32Type(), i8 = b.getI8Type();
  auto vb = VectorType::get({32}, i8);
  auto vf = VectorType::get({8}, f32);
  const bool q8 = mv.fmt == "q8_0";
  auto c = [&](OpBuilder &b, int64_t v) -> Value { return b.create<arith::ConstantIndexOp>(loc, v); };
  SmallVector<Value> rowsI, rowsM;
  for (int64_t r = 0; r < nr; ++r)
    rowsI.push_back(r ? b.create<arith::AddIOp>(loc, i0, c(b, r)).getResult() : i0);
  for (int64_t m = 0; m < nb; ++m)
    rowsM.push_back(m ? b.create<arith::AddIOp>(loc, m0, c(b, m)).getResult() : m0);
  Value zeroV = b.create<arith::ConstantOp>(loc, vf, DenseElementsAttr::get(vf, b.getFloatAttr(f32, 0.0)));
  // q4_0: one scalar correction sum per (row, x row) beside the vectors.
  Value zeroS = b.create<arith::ConstantFloatOp>(loc, APFloat(0.0f), b.getF32Type());
  SmallVector<Value> init(nr * nb, zeroV);
  if (!q8)
    init.append(nr * nb, zeroS);
  // One block's update of one set of accumulators.
  auto step = [&](OpBuilder &b, Location loc, Value kb, ValueRange accs) {
        prefetchAhead(b, loc, mv, rowsI, kb, N, prefetchRows);
        SmallVector<BlockQuants> wq;
        SmallVector<Value> dw;
        for (int64_t r = 0; r < nr; ++r) {
          dw.push_back(b.create<arith::ExtFOp>(loc, f32, blockScale(b, loc, mv, rowsI[r], kb)));
          wq.push_back(blockQuants(b, loc, mv, rowsI[r], kb));
        }
        SmallVector<Value> next(accs.begin(), accs.end());
        Value k0 = b.create<arith::MulIOp>(loc, kb, c(b, 32));
        for (int64_t m = 0; m < nb; ++m) {
          Value xv = b.create<vector::LoadOp>(loc, vb, xq, ValueRange{rowsM[m], k0});
          Value dx = b.create<memref::LoadOp>(loc, xd, ValueRange{rowsM[m], kb});
          Value xcm = q8 ? Value() : b.create<memref::LoadOp>(loc, xc, ValueRange{rowsM[m], kb}).getResult();
          for (int64_t r = 0; r < nr; ++r) {
            if (!q8)
              next[nr * nb + r * nb + m] = b.create<math::FmaOp>(loc, dw[r], xcm, accs[nr * nb + r * nb + m]);
            Value sums = blockSums(b, loc, wq[r], xv, vnni);
            Value scale = b.create<vector::BroadcastOp>(loc, vf, b.create<arith::MulFOp>(loc, dw[r], dx));
            next[r * nb + m] = b.create<vector::FMAOp>(loc, sums, scale, accs[r * nb + m]);
          }
        }
        return next;
  };
  // Eight blocks a step first: their f16 scales gathered into one vector
  // (one conversion, one multiply by x's eight), each block's sums scaled
  // by a lane of it into two accumulators (even and odd blocks), q4_0's
  // corrections one 8-lane multiply-add. Per (row, x row): two vectors,
  // then (q4_0) the corrections'.
  auto v8h = VectorType::get({8}, b.getF16Type());
  const int64_t per8 = q8 ? 2 : 3;
  auto eightStep = [&](OpBuilder &b, Location loc, Value kb0, ValueRange accs) {
    SmallVector<Value> next(accs.begin(), accs.end());
    SmallVector<Value> dw8;
    for (int64_t r = 0; r < nr; ++r) {
      Value h8 = b.create<arith::ConstantOp>(loc, v8h, DenseElementsAttr::get(v8h, b.getF16FloatAttr(0.0f)));
      for (int64_t k = 0; k < 8; ++k)
        h8 = b.create<vector::InsertOp>(
            loc, blockScale(b, loc, mv, rowsI[r], b.create<arith::AddIOp>(loc, kb0, c(b, k))), h8, k);
      dw8.push_back(b.create<arith::ExtFOp>(loc, vf, h8));
    }
    SmallVector<Value> dx8, xc8;
    for (int64_t m = 0; m < nb; ++m) {
      dx8.push_back(b.create<vector::LoadOp>(loc, vf, xd, ValueRange{rowsM[m], kb0}));
      if (!q8)
        xc8.push_back(b.create<vector::LoadOp>(loc, vf, xc, ValueRange{rowsM[m], kb0}));
    }
    SmallVector<Value> s8(nr * nb);
    for (int64_t r = 0; r < nr; ++r)
      for (int64_t m = 0; m < nb; ++m) {
        s8[r * nb + m] = b.create<arith::MulFOp>(loc, dw8[r], dx8[m]);
        if (!q8)
          next[(r * nb + m) * per8 + 2] = b.create<vector::FMAOp>(loc, dw8[r], xc8[m], next[(r * nb + m) * per8 + 2]);
      }
    for (int64_t k = 0; k < 8; ++k) {
      Value kb = b.create<arith::AddIOp>(loc, kb0, c(b, k));
      prefetchAhead(b, loc, mv, rowsI, kb, N, prefetchRows);
      SmallVector<BlockQuants> wq;
      for (int64_t r = 0; r < nr; ++r)
        wq.push_back(blockQuants(b, loc, mv, rowsI[r], kb));
      Value k0 = b.create<arith::MulIOp>(loc, kb, c(b, 32));
      for (int64_t m = 0; m < nb; ++m) {
        Value xv = b.create<vector::LoadOp>(loc, vb, xq, ValueRange{rowsM[m], k0});
        for (int64_t r = 0; r < nr; ++r) {
          Value sums = blockSums(b, loc, wq[r], xv, vnni);
          Value scale = b.create<vector::BroadcastOp>(loc, vf, b.create<vector::ExtractOp>(loc, s8[r * nb + m], k));
          Value &acc = next[(r * nb + m) * per8 + k % 2];
          acc = b.create<vector::FMAOp>(loc, sums, scale, acc);
        }
      }
    }
    return next;
  };
  Value KB8 = b.create<arith::SubIOp>(loc, KB, b.create<arith::RemUIOp>(loc, KB, c(b, 8)));
  auto eights = b.create<scf::ForOp>(loc, c(b, 0), KB8, c(b, 8), SmallVector<Value>(nr * nb * per8, zeroV),
                                     [&](OpBuilder &b, Location loc, Value kb, ValueRange accs) {
                                       b.create<scf::YieldOp>(loc, eightStep(b, loc, kb, accs));
                                     });
  // The blocks left: two sets of accumulators, even and odd blocks: each
  // block's multiply-add into its set waits on that set's last, not on the
  // block before it.
  const int64_t sets = nr * nb * (q8 ? 1 : 2);
  SmallVector<Value> init2(init);
  init2.append(init.begin(), init.end());
  Value even = b.create<arith::SubIOp>(loc, KB, b.create<arith::RemUIOp>(loc, KB, c(b, 2)));
  auto pairs = b.create<scf::ForOp>(loc, KB8, even, c(b, 2), init2,
                                    [&](OpBuilder &b, Location loc, Value kb, ValueRange accs) {
                                      SmallVector<Value> next = step(b, loc, kb, accs.take_front(sets));
                                      Value kb1 = b.create<arith::AddIOp>(loc, kb, c(b, 1));
                                      llvm::append_range(next, step(b, loc, kb1, accs.drop_front(sets)));
                                      b.create<scf::YieldOp>(loc, next);
                                    });
  auto loop = b.create<scf::ForOp>(loc, even, KB, c(b, 1), pairs.getResults().take_front(sets),
                                   [&](OpBuilder &b, Location loc, Value kb, ValueRange accs) {
                                     b.create<scf::YieldOp>(loc, step(b, loc, kb, accs));
                                   });
  auto result = [&](int64_t i) -> Value {
    return b.create<arith::AddFOp>(loc, loop.getResult(i), pairs.getResult(sets + i));
  };
  auto reduce = [&](Value v) -> Value {
    return b.create<vector::ReductionOp>(loc, vector::CombiningKind::ADD, v, Value(), arith::FastMathFlags::reassoc);
  };
  for (int64_t r = 0; r < nr; ++r)
    for (int64_t m = 0; m < nb; ++m) {
      int64_t e = (r * nb + m) * per8;
      // q4_0's corrections leave the 8 lanes before the one horizontal
      // reduction a row: a row of 16 blocks (the output projection's) spent
      // its time waiting on two.
      Value lanes = b.create<arith::AddFOp>(loc, result(r * nb + m),
                                            b.create<arith::AddFOp>(loc, eights.getResult(e), eights.getResult(e + 1)));
      if (!q8)
        lanes = b.create<arith::SubFOp>(loc, lanes, eights.getResult(e + 2));
      Value sum = reduce(lanes);
      if (!q8)
        sum = b.create<arith::SubFOp>(loc, sum, result(nr * nb + r * nb + m));
      addInto(b, loc, mv, sum, rowsI[r], rowsM[m]);
    }
}

//===----------------------------------------------------------------------===//
// The k-quants: super-blocks of 256 values with per-sub-block scales
//===----------------------------------------------------------------------===//

/// One sub-block's share of a super-block, for one row of W: its values'
/// quants as f32 vectors (consecutive, `at` the first value's position in
/// the super-block) and what turns them into values: d1 * q - m1, exactly
/// as ggml's dequantize_row_q{4,5,6}_K computes each (m1 absent for q6_K).
struct SubBlock {
  Value d1, m1;
  int64_t at;
  SmallVector<Value> q;
};

/// Rows [0, M) of x summed per 32 values along k (xs[m, k / 32]): the
/// q4_K/q5_K mins multiply these sums, the same for every row of W.
void sumRows(OpBuilder &b, Location loc, const BlockMatvec &mv, Value M, Value KB, Value xs) {
  auto v32 = VectorType::get({32}, b.getF32Type());
  auto c = [&](int64_t v) -> Value { return b.create<arith::ConstantIndexOp>(loc, v); };
  Value K32 = b.create<arith::MulIOp>(loc, KB, c(mv.elems / 32));
  b.create<scf::ForOp>(loc, c(0), M, c(1), ValueRange{}, [&](OpBuilder &b, Location loc, Value m, ValueRange) {
    b.create<scf::ForOp>(loc, c(0), K32, c(1), ValueRange{}, [&](OpBuilder &b, Location loc, Value j, ValueRange) {
      Value k0 = b.create<arith::MulIOp>(loc, j, b.create<arith::ConstantIndexOp>(loc, 32));
      Value xv = b.create<vector::LoadOp>(loc, v32, mv.x, xIndices(mv, m, k0));
      Value sum = b.create<vector::ReductionOp>(loc, vector::CombiningKind::ADD, xv, Value(),
                                                arith::FastMathFlags::reassoc);
      b.create<memref::StoreOp>(loc, sum, xs, ValueRange{m, j});
      b.create<scf::YieldOp>(loc);
    });
    b.create<scf::YieldOp>(loc);
  });
}

/// Super-block kb of `row`'s scales as f32 vectors, exactly as ggml's
/// dequantize_row_q{4,5,6}_K computes them: `d1` = d * sc per sub-block (8
/// lanes; q6_K: 16, its i8 scales) and `m1` = dmin * m (8 lanes; q6_K:
/// none). q4_K/q5_K's 6-bit pairs are unpacked for the 8 at once: with the
/// 12 scale bytes b, sub-block j < 4 takes b[j] & 63 and b[j + 4] & 63;
/// j >= 4 the nibbles of b[j + 4] with b[j - 4]'s and b[j]'s top bits.
struct KScales {
  Value d1, m1;
};
KScales decodeKScales(OpBuilder &b, Location loc, const BlockMatvec &mv, Value row, Value kb) {
  Type f32 = b.getF32Type(), i8 = b.getI8Type();
  auto v8f = VectorType::get({8}, f32), v8i = VectorType::get({8}, i8), v16i = VectorType::get({16}, i8);
  auto c = [&](int64_t v) -> Value { return b.create<arith::ConstantIndexOp>(loc, v); };
  auto halfAt = [&](int64_t at) -> Value {
    Value bytes = b.create<vector::LoadOp>(loc, VectorType::get({2}, i8), mv.blocks, ValueRange{row, kb, c(at)});
    Value h = b.create<vector::ExtractOp>(
        loc, b.create<vector::BitCastOp>(loc, VectorType::get({1}, b.getF16Type()), bytes), 0);
    return b.create<arith::ExtFOp>(loc, f32, h);
  };
  Value bytes16 = b.create<vector::LoadOp>(
      loc, v16i, mv.blocks, ValueRange{row, kb, c(mv.format == support::BlockFormat::Q6_K ? 192 : 4)});
  if (mv.format == support::BlockFormat::Q6_K) {
    auto v16f = VectorType::get({16}, f32);
    return {b.create<arith::MulFOp>(loc, b.create<vector::BroadcastOp>(loc, v16f, halfAt(208)),
                                    b.create<arith::SIToFPOp>(loc, v16f, bytes16)),
            Value()};
  }
  auto shuffle = [&](ArrayRef<int64_t> order) -> Value {
    return b.create<vector::ShuffleOp>(loc, bytes16, bytes16, order);
  };
  Value P = shuffle({0, 1, 2, 3, 8, 9, 10, 11}), Q = shuffle({4, 5, 6, 7, 8, 9, 10, 11});
  Value R = shuffle({0, 1, 2, 3, 0, 1, 2, 3}), S = shuffle({4, 5, 6, 7, 4, 5, 6, 7});
  auto splat = [&](int64_t v) -> Value { return constI8(b, loc, v8i, v); };
  auto band = [&](Value v, int64_t m) -> Value { return b.create<arith::AndIOp>(loc, v, splat(m)); };
  auto shr = [&](Value v, int64_t s) -> Value { return b.create<arith::ShRUIOp>(loc, v, splat(s)); };
  auto shl = [&](Value v, int64_t s) -> Value { return b.create<arith::ShLIOp>(loc, v, splat(s)); };
  auto bor = [&](Value x, Value y) -> Value { return b.create<arith::OrIOp>(loc, x, y); };
  Value first = b.create<arith::ConstantOp>(
      loc, DenseElementsAttr::get(VectorType::get({8}, b.getI1Type()),
                                  ArrayRef<bool>{true, true, true, true, false, false, false, false}));
  Value sc = b.create<arith::SelectOp>(loc, first, band(P, 63), bor(band(P, 15), shl(shr(R, 6), 4)));
  Value mq = b.create<arith::SelectOp>(loc, first, band(Q, 63), bor(shr(Q, 4), shl(shr(S, 6), 4)));
  return {b.create<arith::MulFOp>(loc, b.create<vector::BroadcastOp>(loc, v8f, halfAt(0)),
                                  b.create<arith::UIToFPOp>(loc, v8f, sc)),
          b.create<arith::MulFOp>(loc, b.create<vector::BroadcastOp>(loc, v8f, halfAt(2)),
                                  b.create<arith::UIToFPOp>(loc, v8f, mq))};
}

/// Rows i0 .. i0+nr-1 of W in a k-quant against rows m0 .. m0+nb-1 of x:
/// per super-block, each row's scales decoded as vectors (8 or 16 lanes,
/// one conversion), its quants widened a vector at a time. One row of x:
/// per sub-block, the partial sum of q * x scaled by d1 into one of two
/// accumulators (even and odd sub-blocks, so consecutive multiply-adds do
/// not wait on each other); q4_K/q5_K's mins times x's sums per sub-block
/// (`xs`, sumRows) into an 8-lane accumulator, taken off at the end.
/// Several rows of x: each value dequantized (d1 * q - m1, exact) once for
/// all of them.
void kquantBlock(OpBuilder &b, Location loc, const BlockMatvec &mv, unsigned width, Value i0, int64_t nr, Value m0,
                 int64_t nb, Value KB, Value N, Value xs, int64_t prefetchRows) {
  Type f32 = b.getF32Type(), i8 = b.getI8Type();
  const int64_t w = width;
  auto vf = VectorType::get({w}, f32);
  auto vi = VectorType::get({w}, i8);
  auto v8f = VectorType::get({8}, f32);
  const bool q6 = mv.format == support::BlockFormat::Q6_K, q5 = mv.format == support::BlockFormat::Q5_K;
  auto c = [&](OpBuilder &b, int64_t v) -> Value { return b.create<arith::ConstantIndexOp>(loc, v); };
  auto splat = [&](OpBuilder &b, VectorType t, int64_t v) -> Value { return constI8(b, loc, t, v); };
  SmallVector<Value> rowsI, rowsM;
  for (int64_t r = 0; r < nr; ++r)
    rowsI.push_back(r ? b.create<arith::AddIOp>(loc, i0, c(b, r)).getResult() : i0);
  for (int64_t m = 0; m < nb; ++m)
    rowsM.push_back(m ? b.create<arith::AddIOp>(loc, m0, c(b, m)).getResult() : m0);
  Value zeroV = b.create<arith::ConstantOp>(loc, vf, DenseElementsAttr::get(vf, b.getFloatAttr(f32, 0.0)));
  Value zero8 = b.create<arith::ConstantOp>(loc, v8f, DenseElementsAttr::get(v8f, b.getFloatAttr(f32, 0.0)));
  // Accumulators: nb == 1: two for q * x per row, then (q4_K, q5_K) one of
  // 8 lanes for the mins per row; nb > 1: one per (row, row of x).
  const bool mins = nb == 1 && !q6;
  const int64_t perRow = nb > 1 ? nb : 2;
  SmallVector<Value> init(nr * perRow, zeroV);
  if (mins)
    init.append(nr, zero8);

  auto step = [&](OpBuilder &b, Location loc, Value kb, ValueRange accs) {
    prefetchAhead(b, loc, mv, rowsI, kb, N, prefetchRows);
    auto bytesAt = [&](Value row, int64_t at, VectorType t) -> Value {
      return b.create<vector::LoadOp>(loc, t, mv.blocks, ValueRange{row, kb, c(b, at)});
    };
    auto lane = [&](Value v, int64_t i) -> Value { return b.create<vector::ExtractOp>(loc, v, i); };
    SmallVector<SmallVector<SubBlock>> subs(nr);
    SmallVector<Value> mins8(nr);
    for (int64_t r = 0; r < nr; ++r) {
      Value row = rowsI[r];
      if (q6) {
        // 16 sub-blocks of 16 values, each (d * scale) * (q - 32).
        Value d1v = decodeKScales(b, loc, mv, row, kb).d1;
        for (int64_t n = 0; n < 2; ++n)
          for (int64_t ch = 0; ch < 32 / w; ++ch) {
            Value ql0 = bytesAt(row, 64 * n + ch * w, vi), ql1 = bytesAt(row, 64 * n + 32 + ch * w, vi);
            Value qh = bytesAt(row, 128 + 32 * n + ch * w, vi);
            for (int64_t t = 0; t < 4; ++t) {
              Value low = t % 2 ? ql1 : ql0;
              Value nib = t < 2 ? b.create<arith::AndIOp>(loc, low, splat(b, vi, 15)).getResult()
                                : b.create<arith::ShRUIOp>(loc, low, splat(b, vi, 4)).getResult();
              Value hb = b.create<arith::AndIOp>(loc, b.create<arith::ShRUIOp>(loc, qh, splat(b, vi, 2 * t)),
                                                 splat(b, vi, 3));
              Value q = b.create<arith::SubIOp>(
                  loc, b.create<arith::OrIOp>(loc, nib, b.create<arith::ShLIOp>(loc, hb, splat(b, vi, 4))),
                  splat(b, vi, 32));
              int64_t at = 128 * n + 32 * t + ch * w;
              subs[r].push_back({lane(d1v, 8 * n + 2 * t + ch * w / 16), Value(), at,
                                 {b.create<arith::SIToFPOp>(loc, vf, q).getResult()}});
            }
          }
        continue;
      }
      // q4_K, q5_K: 8 sub-blocks of 32 values, (d * sc) * q - dmin * m.
      KScales ks = decodeKScales(b, loc, mv, row, kb);
      Value d1v = ks.d1, m1v = ks.m1;
      mins8[r] = m1v;
      for (int64_t p = 0; p < 4; ++p) {
        SubBlock lo{lane(d1v, 2 * p), mins ? Value() : lane(m1v, 2 * p), 64 * p, {}};
        SubBlock hi{lane(d1v, 2 * p + 1), mins ? Value() : lane(m1v, 2 * p + 1), 64 * p + 32, {}};
        for (int64_t ch = 0; ch < 32 / w; ++ch) {
          Value raw = bytesAt(row, (q5 ? 48 : 16) + 32 * p + ch * w, vi);
          Value l = b.create<arith::AndIOp>(loc, raw, splat(b, vi, 15));
          Value h = b.create<arith::ShRUIOp>(loc, raw, splat(b, vi, 4));
          if (q5) { // the fifth bits: bits 2p and 2p + 1 of qh[l]
            Value qh = bytesAt(row, 16 + ch * w, vi);
            auto bit = [&](int64_t s) -> Value {
              return b.create<arith::ShLIOp>(
                  loc,
                  b.create<arith::AndIOp>(loc, b.create<arith::ShRUIOp>(loc, qh, splat(b, vi, s)), splat(b, vi, 1)),
                  splat(b, vi, 4));
            };
            l = b.create<arith::OrIOp>(loc, l, bit(2 * p));
            h = b.create<arith::OrIOp>(loc, h, bit(2 * p + 1));
          }
          lo.q.push_back(b.create<arith::UIToFPOp>(loc, vf, l));
          hi.q.push_back(b.create<arith::UIToFPOp>(loc, vf, h));
        }
        subs[r].push_back(std::move(lo));
        subs[r].push_back(std::move(hi));
      }
    }
    SmallVector<Value> next(accs.begin(), accs.end());
    Value k0 = b.create<arith::MulIOp>(loc, kb, c(b, 256));
    // x's vector at value `at` of the super-block, row m of x.
    auto xAt = [&](int64_t m, int64_t at) -> Value {
      Value k = b.create<arith::AddIOp>(loc, k0, c(b, at));
      return b.create<vector::LoadOp>(loc, vf, mv.x, xIndices(mv, rowsM[m], k));
    };
    auto bcast = [&](Value s) -> Value { return b.create<vector::BroadcastOp>(loc, vf, s); };
    if (nb == 1) {
      for (int64_t r = 0; r < nr; ++r) {
        for (size_t j = 0; j < subs[r].size(); ++j) {
          const SubBlock &sbk = subs[r][j];
          Value part;
          for (size_t v = 0; v < sbk.q.size(); ++v) {
            Value xv = xAt(0, sbk.at + int64_t(v) * w);
            part = part ? b.create<vector::FMAOp>(loc, sbk.q[v], xv, part).getResult()
                        : b.create<arith::MulFOp>(loc, sbk.q[v], xv).getResult();
          }
          Value &acc = next[r * perRow + j % 2];
          acc = b.create<vector::FMAOp>(loc, bcast(sbk.d1), part, acc);
        }
        if (mins) {
          Value sums = b.create<vector::LoadOp>(loc, v8f, xs,
                                                ValueRange{rowsM[0], b.create<arith::MulIOp>(loc, kb, c(b, 8))});
          Value &accm = next[nr * perRow + r];
          accm = b.create<vector::FMAOp>(loc, mins8[r], sums, accm);
        }
      }
      return next;
    }
    for (int64_t r = 0; r < nr; ++r)
      for (const SubBlock &sbk : subs[r]) {
        Value d1 = bcast(sbk.d1), m1 = sbk.m1 ? bcast(sbk.m1) : Value();
        for (size_t v = 0; v < sbk.q.size(); ++v) {
          Value wv = b.create<arith::MulFOp>(loc, d1, sbk.q[v]);
          if (m1)
            wv = b.create<arith::SubFOp>(loc, wv, m1);
          for (int64_t m = 0; m < nb; ++m)
            next[r * perRow + m] =
                b.create<vector::FMAOp>(loc, wv, xAt(m, sbk.at + int64_t(v) * w), next[r * perRow + m]);
        }
      }
    return next;
  };
  auto loop = b.create<scf::ForOp>(loc, c(b, 0), KB, c(b, 1), init,
                                   [&](OpBuilder &b, Location loc, Value kb, ValueRange accs) {
                                     b.create<scf::YieldOp>(loc, step(b, loc, kb, accs));
                                   });
  auto reduce = [&](int64_t i) -> Value {
    return b.create<vector::ReductionOp>(loc, vector::CombiningKind::ADD, loop.getResult(i), Value(),
                                         arith::FastMathFlags::reassoc);
  };
  for (int64_t r = 0; r < nr; ++r)
    for (int64_t m = 0; m < nb; ++m) {
      Value sum;
      if (nb > 1) {
        sum = reduce(r * perRow + m);
      } else {
        sum = b.create<arith::AddFOp>(loc, reduce(r * perRow), reduce(r * perRow + 1));
        if (mins)
          sum = b.create<arith::SubFOp>(loc, sum, reduce(nr * perRow + r));
      }
      addInto(b, loc, mv, sum, rowsI[r], rowsM[m]);
    }
}

/// --block-products int8 for the k-quants, one row of x: x quantized to
/// q8_0 per 32 values (quantizeRows: xq, the scales xd, and xc = d_x *
/// sum(q_x) per 32), so each 32 values of x share one scale d_x. Per
/// super-block of rows i0 .. i0+nr-1: the scales decoded (decodeKScales),
/// then per 32 values the quants as unsigned bytes (q4_K, q5_K: 0..31;
/// q6_K: q - 32 by its sign, psign on x) against x's, summed in pairs and
/// fours (pmaddubsw, pmaddwd), converted and scaled by d1 * d_x (q6_K: a
/// scale per 16 values, so per 4 lanes) into two accumulators; q4_K/q5_K's
/// mins take m1 * d_x * sum(q_x) per 32 values, 8 lanes a super-block.
/// Exactly the exact product of the dequantized weights and x as q8_0
/// rounds it, summed in another order.
void kquantInt8Block(OpBuilder &b, Location loc, const BlockMatvec &mv, Value i0, int64_t nr, Value KB, Value N,
                     Value xq, Value xd, Value xc, int64_t prefetchRows, bool vnni) {
  Type f32 = b.getF32Type(), i8 = b.getI8Type();
  auto vb = VectorType::get({32}, i8);
  auto vf = VectorType::get({8}, f32);
  const bool q6 = mv.format == support::BlockFormat::Q6_K, q5 = mv.format == support::BlockFormat::Q5_K;
  auto c = [&](OpBuilder &b, int64_t v) -> Value { return b.create<arith::ConstantIndexOp>(loc, v); };
  auto intrinsic = [&](OpBuilder &b, const char *name, Type t, ValueRange args) -> Value {
    return b.create<LLVM::CallIntrinsicOp>(loc, t, b.getStringAttr(name), args).getResult(0);
  };
  SmallVector<Value> rowsI;
  for (int64_t r = 0; r < nr; ++r)
    rowsI.push_back(r ? b.create<arith::AddIOp>(loc, i0, c(b, r)).getResult() : i0);
  Value m0 = c(b, 0);
  Value zeroV = b.create<arith::ConstantOp>(loc, vf, DenseElementsAttr::get(vf, b.getFloatAttr(f32, 0.0)));
  // Per row: two accumulators, then (q4_K, q5_K) the mins'.
  const int64_t perRow = q6 ? 2 : 3;
  SmallVector<Value> init(nr * perRow, zeroV);
  auto step = [&](OpBuilder &b, Location loc, Value kb, ValueRange accs) {
    prefetchAhead(b, loc, mv, rowsI, kb, N, prefetchRows);
    auto splat = [&](int64_t v) -> Value { return constI8(b, loc, vb, v); };
    auto bytesAt = [&](Value row, int64_t at) -> Value {
      return b.create<vector::LoadOp>(loc, vb, mv.blocks, ValueRange{row, kb, c(b, at)});
    };
    Value k0 = b.create<arith::MulIOp>(loc, kb, c(b, 256));
    Value kb8 = b.create<arith::MulIOp>(loc, kb, c(b, 8));
    // x's 32 values at `at` of the super-block, as q8_0 quants, and the
    // super-block's 8 scales.
    auto xAt = [&](int64_t at) -> Value {
      return b.create<vector::LoadOp>(loc, vb, xq, ValueRange{m0, b.create<arith::AddIOp>(loc, k0, c(b, at))});
    };
    Value dx = b.create<vector::LoadOp>(loc, vf, xd, ValueRange{m0, kb8});
    // The i32 sums of 32 products, 4 a lane: w unsigned against x signed.
    auto dot = [&](Value wu, Value xv) -> Value {
      return b.create<arith::SIToFPOp>(loc, vf, dotBytes(b, loc, wu, xv, vnni));
    };
    auto bcast = [&](Value v, int64_t lane) -> Value {
      return b.create<vector::BroadcastOp>(loc, vf, b.create<vector::ExtractOp>(loc, v, lane));
    };
    SmallVector<Value> next(accs.begin(), accs.end());
    for (int64_t r = 0; r < nr; ++r) {
      Value row = rowsI[r];
      KScales ks = decodeKScales(b, loc, mv, row, kb);
      if (q6) {
        for (int64_t n = 0; n < 2; ++n) {
          Value ql0 = bytesAt(row, 64 * n), ql1 = bytesAt(row, 64 * n + 32), qh = bytesAt(row, 128 + 32 * n);
          for (int64_t t = 0; t < 4; ++t) {
            Value low = t % 2 ? ql1 : ql0;
            Value nib = t < 2 ? b.create<arith::AndIOp>(loc, low, splat(15)).getResult()
                              : b.create<arith::ShRUIOp>(loc, low, splat(4)).getResult();
            Value hb = b.create<arith::AndIOp>(loc, b.create<arith::ShRUIOp>(loc, qh, splat(2 * t)), splat(3));
            Value q = b.create<arith::SubIOp>(
                loc, b.create<arith::OrIOp>(loc, nib, b.create<arith::ShLIOp>(loc, hb, splat(4))), splat(32));
            Value sx = intrinsic(b, "llvm.x86.avx2.psign.b", vb, {xAt(128 * n + 32 * t), q});
            Value sums = dot(b.create<math::AbsIOp>(loc, q), sx);
            // Lanes 0-3 hold the first 16 values (sub-block 8n + 2t), 4-7
            // the next (8n + 2t + 1); both share x's scale 4n + t.
            int64_t sub = 8 * n + 2 * t;
            Value scale = b.create<vector::ShuffleOp>(
                loc, ks.d1, ks.d1, ArrayRef<int64_t>{sub, sub, sub, sub, sub + 1, sub + 1, sub + 1, sub + 1});
            scale = b.create<arith::MulFOp>(loc, scale, bcast(dx, 4 * n + t));
            Value &acc = next[r * perRow + t % 2];
            acc = b.create<vector::FMAOp>(loc, sums, scale, acc);
          }
        }
        continue;
      }
      Value s8 = b.create<arith::MulFOp>(loc, ks.d1, dx); // d1 * d_x per sub-block
      Value qh = q5 ? bytesAt(row, 16) : Value();
      for (int64_t p = 0; p < 4; ++p) {
        Value raw = bytesAt(row, (q5 ? 48 : 16) + 32 * p);
        Value lo = b.create<arith::AndIOp>(loc, raw, splat(15));
        Value hi = b.create<arith::ShRUIOp>(loc, raw, splat(4));
        if (q5) { // the fifth bits: bits 2p and 2p + 1 of qh[l]
          auto bit = [&](int64_t s) -> Value {
            return b.create<arith::ShLIOp>(
                loc, b.create<arith::AndIOp>(loc, b.create<arith::ShRUIOp>(loc, qh, splat(s)), splat(1)), splat(4));
          };
          lo = b.create<arith::OrIOp>(loc, lo, bit(2 * p));
          hi = b.create<arith::OrIOp>(loc, hi, bit(2 * p + 1));
        }
        next[r * perRow] = b.create<vector::FMAOp>(loc, dot(lo, xAt(64 * p)), bcast(s8, 2 * p), next[r * perRow]);
        next[r * perRow + 1] =
            b.create<vector::FMAOp>(loc, dot(hi, xAt(64 * p + 32)), bcast(s8, 2 * p + 1), next[r * perRow + 1]);
      }
      Value sums = b.create<vector::LoadOp>(loc, vf, xc, ValueRange{m0, kb8});
      next[r * perRow + 2] = b.create<vector::FMAOp>(loc, ks.m1, sums, next[r * perRow + 2]);
    }
    return next;
  };
  auto loop = b.create<scf::ForOp>(loc, c(b, 0), KB, c(b, 1), init,
                                   [&](OpBuilder &b, Location loc, Value kb, ValueRange accs) {
                                     b.create<scf::YieldOp>(loc, step(b, loc, kb, accs));
                                   });
  auto reduce = [&](int64_t i) -> Value {
    return b.create<vector::ReductionOp>(loc, vector::CombiningKind::ADD, loop.getResult(i), Value(),
                                         arith::FastMathFlags::reassoc);
  };
  for (int64_t r = 0; r < nr; ++r) {
    Value sum = b.create<arith::AddFOp>(loc, reduce(r * perRow), reduce(r * perRow + 1));
    if (!q6)
      sum = b.create<arith::SubFOp>(loc, sum, reduce(r * perRow + 2));
    addInto(b, loc, mv, sum, rowsI[r], m0);
  }
}

/// Emits the kernel in place of the op (see the file comment).
void emit(linalg::LinalgOp op, const BlockMatvec &mv, unsigned width, int64_t rowsPerBlock,
          int64_t prefetchRows, bool int8, bool vnni) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  const bool q8 = mv.fmt == "q8_0";
  Type f32 = b.getF32Type(), i8 = b.getI8Type();
  const int64_t w = width;
  auto vf = VectorType::get({w}, f32);
  auto vi = VectorType::get({w}, i8);
  auto cst = [&](OpBuilder &b, Location loc, int64_t v) -> Value {
    return b.create<arith::ConstantIndexOp>(loc, v);
  };
  Value c0 = cst(b, loc, 0), c1 = cst(b, loc, 1);
  Value N = b.create<memref::DimOp>(loc, mv.blocks, 0);
  if (mv.repacked)
    N = b.create<arith::MulIOp>(loc, N, cst(b, loc, kRepackRows));
  Value KB = b.create<memref::DimOp>(loc, mv.blocks, 1);
  // Rows of x: the unit loop's extent, read from x (its axis in x's map).
  Value M = c1;
  if (mv.unit != ~0u)
    M = mv.batch > 0 ? cst(b, loc, mv.batch) : b.create<memref::DimOp>(loc, mv.x, 0).getResult();
  Value zeroV = b.create<arith::ConstantOp>(loc, vf, DenseElementsAttr::get(vf, b.getFloatAttr(f32, 0.0)));
  auto xIdx = [&](Value m, Value k) { return xIndices(mv, m, k); };

  // Rows i0 .. i0+nr-1 of W against rows m0 .. m0+nb-1 of x (both static
  // counts): per block, each row's quants widened a vector at a time, the
  // block's partial sums per (row, x row), then scaled into the accumulators.
  auto kernel = [&](OpBuilder &b, Location loc, Value i0, int64_t nr, Value m0, int64_t nb) {
    SmallVector<Value> rowsI, rowsM;
    for (int64_t r = 0; r < nr; ++r)
      rowsI.push_back(r ? b.create<arith::AddIOp>(loc, i0, cst(b, loc, r)).getResult() : i0);
    for (int64_t m = 0; m < nb; ++m)
      rowsM.push_back(m ? b.create<arith::AddIOp>(loc, m0, cst(b, loc, m)).getResult() : m0);
    auto loop = b.create<scf::ForOp>(
        loc, c0, KB, c1, SmallVector<Value>(nr * nb, zeroV),
        [&](OpBuilder &b, Location loc, Value kb, ValueRange accs) {
          Value k0 = b.create<arith::MulIOp>(loc, kb, cst(b, loc, 32));
          prefetchAhead(b, loc, mv, rowsI, kb, N, prefetchRows);
          // Each row's f16 scale, widened in every lane (a broadcast load
          // and one conversion).
          SmallVector<Value> dv;
          for (int64_t r = 0; r < nr; ++r) {
            Value h = blockScale(b, loc, mv, rowsI[r], kb);
            dv.push_back(b.create<arith::ExtFOp>(
                loc, vf, b.create<vector::BroadcastOp>(loc, VectorType::get({w}, b.getF16Type()), h).getResult()));
          }
          // One row of x: the block's partial sums, scaled once a block.
          // Several: each quant vector scaled first (the dequantized
          // values, exact), then one multiply-add per row of x, so the
          // conversion is shared and only the accumulators stay live.
          SmallVector<Value> part(nr * nb), next(accs.begin(), accs.end());
          auto addChunk = [&](ArrayRef<Value> qs, int64_t elem) {
            Value k = b.create<arith::AddIOp>(loc, k0, cst(b, loc, elem));
            SmallVector<Value> xs;
            for (int64_t m = 0; m < nb; ++m)
              xs.push_back(b.create<vector::LoadOp>(loc, vf, mv.x, xIdx(rowsM[m], k)));
            for (int64_t r = 0; r < nr; ++r) {
              if (nb > 1) {
                Value wv = b.create<arith::MulFOp>(loc, dv[r], qs[r]);
                for (int64_t m = 0; m < nb; ++m)
                  next[r * nb + m] = b.create<vector::FMAOp>(loc, wv, xs[m], next[r * nb + m]);
                continue;
              }
              Value &p = part[r];
              p = p ? b.create<vector::FMAOp>(loc, qs[r], xs[0], p).getResult()
                    : b.create<arith::MulFOp>(loc, qs[r], xs[0]).getResult();
            }
          };
          if (q8) {
            for (int64_t c = 0; c < 32 / w; ++c) {
              SmallVector<Value> qs;
              for (int64_t r = 0; r < nr; ++r) {
                Value raw =
                    b.create<vector::LoadOp>(loc, vi, mv.blocks, blockAt(b, loc, mv, rowsI[r], kb, 2 + c * w));
                qs.push_back(b.create<arith::SIToFPOp>(loc, vf, raw));
              }
              addChunk(qs, c * w);
            }
          } else {
            // 16 bytes: byte j holds value j (low nibble) and j + 16 (high).
            Value mask = b.create<arith::ConstantOp>(loc, vi, DenseElementsAttr::get(vi, b.getI8IntegerAttr(15)));
            Value four = b.create<arith::ConstantOp>(loc, vi, DenseElementsAttr::get(vi, b.getI8IntegerAttr(4)));
            Value eight = b.create<arith::ConstantOp>(loc, vi, DenseElementsAttr::get(vi, b.getI8IntegerAttr(8)));
            for (int64_t c = 0; c < 16 / w; ++c) {
              SmallVector<Value> lo, hi;
              for (int64_t r = 0; r < nr; ++r) {
                Value raw =
                    b.create<vector::LoadOp>(loc, vi, mv.blocks, blockAt(b, loc, mv, rowsI[r], kb, 2 + c * w));
                Value l = b.create<arith::SubIOp>(loc, b.create<arith::AndIOp>(loc, raw, mask), eight);
                Value h = b.create<arith::SubIOp>(loc, b.create<arith::ShRUIOp>(loc, raw, four), eight);
                lo.push_back(b.create<arith::SIToFPOp>(loc, vf, l));
                hi.push_back(b.create<arith::SIToFPOp>(loc, vf, h));
              }
              addChunk(lo, c * w);
              addChunk(hi, 16 + c * w);
            }
          }
          if (nb == 1)
            for (int64_t r = 0; r < nr; ++r)
              next[r] = b.create<vector::FMAOp>(loc, dv[r], part[r], accs[r]);
          b.create<scf::YieldOp>(loc, next);
        });
    for (int64_t r = 0; r < nr; ++r)
      for (int64_t m = 0; m < nb; ++m) {
        Value sum = b.create<vector::ReductionOp>(loc, vector::CombiningKind::ADD, loop.getResult(r * nb + m),
                                                  Value(), arith::FastMathFlags::reassoc);
        addInto(b, loc, mv, sum, rowsI[r], rowsM[m]);
      }
  };

  // --block-products int8: x quantized once a call, before the rows of W
  // are split over threads (every thread reads the same quantized rows).
  Value xq, xd, xc;
  if (int8) {
    // x in q8_0 blocks of 32 (the k-quants: 8 a super-block).
    Value KB32 = mv.elems == 256 ? b.create<arith::MulIOp>(loc, KB, cst(b, loc, 8)).getResult() : KB;
    Value K = b.create<arith::MulIOp>(loc, KB32, cst(b, loc, 32));
    xq = b.create<memref::AllocOp>(loc, MemRefType::get({ShapedType::kDynamic, ShapedType::kDynamic}, i8),
                                   ValueRange{M, K});
    xd = b.create<memref::AllocOp>(loc, MemRefType::get({ShapedType::kDynamic, ShapedType::kDynamic}, f32),
                                   ValueRange{M, KB32});
    if (!q8 && mv.format != support::BlockFormat::Q6_K)
      xc = b.create<memref::AllocOp>(loc, MemRefType::get({ShapedType::kDynamic, ShapedType::kDynamic}, f32),
                                     ValueRange{M, KB32});
    quantizeRows(b, loc, mv, M, KB32, xq, xd, xc, mv.elems == 256 ? 1.0f : 8.0f);
  }
  // q4_K, q5_K: x's sums per 32 values, once a call (sumRows).
  Value xs;
  if (!int8 && (mv.format == support::BlockFormat::Q4_K || mv.format == support::BlockFormat::Q5_K)) {
    xs = b.create<memref::AllocOp>(loc, MemRefType::get({ShapedType::kDynamic, ShapedType::kDynamic}, f32),
                                   ValueRange{M, b.create<arith::MulIOp>(loc, KB, cst(b, loc, 8)).getResult()});
    sumRows(b, loc, mv, M, KB, xs);
  }
  // The grouped kernel: 512-bit vectors where the code's CPU has AVX-512
  // VNNI (its vpdpbusd on zmm), 256 bits otherwise; rows of x a step as
  // its accumulators fit the registers (2 or 8 vectors a row of x, the
  // row's x quants and scales beside them).
  const int64_t groupedLanes = vnni && w >= 16 ? 16 : 8, groupedRowsOfX = groupedLanes == 16 ? 4 : 2;
  auto int8Kernel = [&](OpBuilder &b, Location loc, Value i0, int64_t nr, Value m0, int64_t nb) {
    if (mv.elems == 256)
      kquantInt8Block(b, loc, mv, i0, nr, KB, N, xq, xd, xc, prefetchRows, vnni);
    else if (mv.repacked && nr == kRepackRows && nb <= groupedRowsOfX)
      int8Grouped(b, loc, mv, i0, m0, nb, KB, xq, xd, xc, vnni, groupedLanes);
    else
      int8Block(b, loc, mv, i0, nr, m0, nb, KB, N, xq, xd, xc, prefetchRows, vnni);
  };
  auto run = [&](OpBuilder &b, Location loc, Value i0, int64_t nr, Value m0, int64_t nb) {
    if (int8)
      int8Kernel(b, loc, i0, nr, m0, nb);
    else if (mv.elems == 256)
      kquantBlock(b, loc, mv, width, i0, nr, m0, nb, KB, N, xs, prefetchRows);
    else
      kernel(b, loc, i0, nr, m0, nb);
  };

  // Rows of x in chunks: all of a static batch at once (decode of a few
  // sequences), else chunks of 8 and single rows (prefill).
  // Rows of W a group: one for one row of x (a single stream per thread,
  // which the prefetchers follow: q8_0 decode of the default Llama ran
  // 550-620 tokens/s so, 370-520 with groups of 4); with several rows of x,
  // two rows (AVX-512) sharing each x load, one accumulator per pair.
  // Grouped q4_0 under int8: the eight rows of a group together.
  const int64_t group = int8 && mv.repacked ? kRepackRows : mv.batch == 1 ? 1 : (w >= 16 ? 2 : 1);
  const int64_t chunk = int8 && mv.repacked ? groupedRowsOfX : kMaxRowsOfX;
  auto rowsOfX = [&](OpBuilder &b, Location loc, Value i0, int64_t nr) {
    if (mv.batch >= 1 && mv.batch <= chunk)
      return run(b, loc, i0, nr, c0, mv.batch);
    Value full = b.create<arith::SubIOp>(loc, M, b.create<arith::RemUIOp>(loc, M, cst(b, loc, chunk)));
    b.create<scf::ForOp>(loc, c0, full, cst(b, loc, chunk), ValueRange{},
                         [&](OpBuilder &b, Location loc, Value m0, ValueRange) {
                           run(b, loc, i0, nr, m0, chunk);
                           b.create<scf::YieldOp>(loc);
                         });
    b.create<scf::ForOp>(loc, full, M, c1, ValueRange{}, [&](OpBuilder &b, Location loc, Value m, ValueRange) {
      run(b, loc, i0, nr, m, 1);
      b.create<scf::YieldOp>(loc);
    });
  };
  // One block of W's rows [lo, hi): groups of `group` rows, then single rows.
  auto block = [&](OpBuilder &b, Location loc, Value lo, Value hi) {
    Value n = b.create<arith::SubIOp>(loc, hi, lo);
    Value grouped = b.create<arith::AddIOp>(
        loc, lo, b.create<arith::SubIOp>(loc, n, b.create<arith::RemUIOp>(loc, n, cst(b, loc, group))));
    b.create<scf::ForOp>(loc, lo, grouped, cst(b, loc, group), ValueRange{},
                         [&](OpBuilder &b, Location loc, Value i, ValueRange) {
                           rowsOfX(b, loc, i, group);
                           b.create<scf::YieldOp>(loc);
                         });
    if (group > 1)
      b.create<scf::ForOp>(loc, grouped, hi, c1, ValueRange{}, [&](OpBuilder &b, Location loc, Value i, ValueRange) {
        rowsOfX(b, loc, i, 1);
        b.create<scf::YieldOp>(loc);
      });
  };
  if (mv.rows >= 0 && mv.rows <= rowsPerBlock) {
    block(b, loc, c0, N);
  } else {
    Value rb = cst(b, loc, rowsPerBlock);
    b.create<scf::ParallelOp>(NameLoc::get(b.getStringAttr("linnet.static_schedule"), loc), ValueRange{c0},
                              ValueRange{b.create<arith::CeilDivUIOp>(loc, N, rb).getResult()}, ValueRange{c1},
                              [&](OpBuilder &b, Location loc, ValueRange ivs) {
                                Value lo = b.create<arith::MulIOp>(loc, ivs[0], rb);
                                Value hi = b.create<arith::MinUIOp>(loc, b.create<arith::AddIOp>(loc, lo, rb), N);
                                block(b, loc, lo, hi);
                              });
  }
  if (xs)
    b.create<memref::DeallocOp>(loc, xs);
  if (int8) {
    b.create<memref::DeallocOp>(loc, xq);
    b.create<memref::DeallocOp>(loc, xd);
    if (xc)
      b.create<memref::DeallocOp>(loc, xc);
  }
  op->erase();
}

} // namespace

std::optional<BlockMatvecChoice> rewriteBlockMatvec(linalg::LinalgOp op, unsigned width, unsigned threads,
                                                    int64_t prefetchRows, bool int8, bool vnni) {
  std::optional<BlockMatvec> mv = match(op);
  if (!mv || width < 4 || width > 16)
    return std::nullopt;
  // One contiguous block of W's rows per thread, as the f32 streamed
  // product takes them.
  int64_t perThread = mv->rows < 0 ? 0 : (mv->rows + threads - 1) / threads;
  int64_t rows = mv->rows < 0 ? 64 : std::max<int64_t>(16, (perThread + 15) / 16 * 16);
  BlockMatvecChoice c;
  c.routine = "matvec-stream-" + mv->fmt;
  c.detail = llvm::formatv("rows_per_block={0} lanes={1} rows_of_x={2} prefetch_rows={3}", rows, width,
                           mv->batch < 0 ? std::string("dynamic") : std::to_string(mv->batch), prefetchRows)
                 .str();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  c.shape.assign(ranges.begin(), ranges.end());
  for (int64_t &d : c.shape)
    if (ShapedType::isDynamic(d))
      d = -1;
  // Integer block sums take AVX2 (x86-64-v3), and pay at one row of x
  // (decode): with several, the exact kernel widens each quant vector once
  // for all of them (prefill of 128 tokens at q4_0: 2459 tokens/s exact,
  // 2064 in integers). Elsewhere the product stays exact, as the
  // permission allows.
  // Grouped q4_0 (-linnet-cpu-repack-block-params) computes several rows
  // of x in integers as well: its nibbles are split once for them.
  int8 = int8 && width >= 8 && (mv->batch == 1 || mv->repacked);
  if (int8)
    c.detail += vnni ? " products=int8 dot=vnni" : " products=int8";
  if (mv->repacked)
    c.detail += std::string(" layout=") + kQ4_0x8;
  emit(op, *mv, width, rows, prefetchRows, int8, vnni);
  return c;
}

} // namespace linnet::cpu
