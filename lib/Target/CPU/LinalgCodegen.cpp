//===- LinalgCodegen.cpp - linalg contractions and elementwise ops on CPU -===//
//
// -linnet-cpu-lower-linalg. Per function:
//   1. every linalg op is classified: matmul-like contraction (one M, N and K
//      loop plus batch loops), matrix-vector product (M and K, W rows
//      contiguous), static elementwise op, or other;
//   2. f32 matmuls become cblas_sgemm calls where the policy allows a
//      library; matrix-vector products are rewritten here into row loops
//      that stream W once with vector loads (scf.parallel over row blocks);
//   3. a transform-dialect schedule is printed for the remaining ops (each
//      tagged with `linnet_cpu_tag`) and run by the interpreter:
//      contractions get forall (threads) / cache / register tiles derived
//      from the shape and the target, their B operand packed per cache tile,
//      register loops peeled, then vectorization (vector.contract), alias
//      folding, hoisting and outer-product lowering; elementwise ops are
//      tiled to rows of a few vectors and vectorized;
//   4. whatever is left (dynamic remainders, non-contraction reductions)
//      becomes scf loops; scf.forall becomes scf.parallel (OpenMP later).
//
//===----------------------------------------------------------------------===//

#include "linnet/Target/CPU/LinalgCodegen.h"
#include "linnet/Target/CPU/Passes.h"

#include "BlockMatvec.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Affine/IR/ValueBoundsOpInterfaceImpl.h"
#include "mlir/Dialect/Arith/IR/ValueBoundsOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Func/TransformOps/FuncTransformOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/TransformOps/DialectExtension.h"
#include "mlir/Dialect/Linalg/Transforms/AllInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/TransformOps/MemRefTransformOps.h"
#include "mlir/Dialect/MemRef/Transforms/AllocationOpInterfaceImpl.h"
#include "mlir/Dialect/SCF/IR/ValueBoundsOpInterfaceImpl.h"
#include "mlir/Dialect/SCF/TransformOps/SCFTransformOps.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Transform/IR/TransformDialect.h"
#include "mlir/Dialect/Transform/IR/TransformOps.h"
#include "mlir/Dialect/Transform/Transforms/TransformInterpreterUtils.h"
#include "mlir/Dialect/Vector/TransformOps/VectorTransformOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Parser/Parser.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/TargetParser/Host.h"

#include <algorithm>
#include <unistd.h>

using namespace mlir;

namespace linnet::cpu {

#define GEN_PASS_DEF_LINNETCPULOWERLINALG
#include "linnet/Target/CPU/Passes.h.inc"

namespace {

constexpr llvm::StringLiteral kTag = "linnet_cpu_tag";
constexpr llvm::StringLiteral kChoicesAttr = "linnet.cpu.implementations";

int64_t roundUp(int64_t x, int64_t m) { return (x + m - 1) / m * m; }
int64_t roundDown(int64_t x, int64_t m) { return std::max(m, x / m * m); }
int64_t ceilDiv(int64_t x, int64_t m) { return (x + m - 1) / m; }

//===----------------------------------------------------------------------===//
// Classification
//===----------------------------------------------------------------------===//

struct Contraction {
  mutable linalg::LinalgOp op;
  SmallVector<unsigned> batch;
  unsigned m = ~0u, n = ~0u, k = ~0u; // loop positions (~0u: absent)
  unsigned aOperand = 0, bOperand = 1;  // inputs holding (m,k) and (k,n)
  SmallVector<int64_t> ranges;          // static loop ranges
};

/// A contraction with exactly one K loop, at most one M and one N loop, any
/// batch loops, two inputs and one output.
std::optional<Contraction> matchContraction(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || !linalg::isaContractionOpInterface(op))
    return std::nullopt;
  Contraction c;
  c.op = op;
  c.ranges = op.getStaticLoopRanges();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  for (AffineMap map : maps)
    if (!map.isProjectedPermutation())
      return std::nullopt;
  // Classify loops by which operands use them: batch (all three), m (A and
  // C), n (B and C), k (A and B). Which input is "A" is decided by M.
  auto uses = [&](unsigned operand, unsigned loop) {
    return maps[operand].isFunctionOfDim(loop);
  };
  SmallVector<unsigned> m0, m1, k;
  for (unsigned l = 0; l < op.getNumLoops(); ++l) {
    bool i0 = uses(0, l), i1 = uses(1, l), o = uses(2, l);
    if (i0 && i1 && o)
      c.batch.push_back(l);
    else if (i0 && !i1 && o)
      m0.push_back(l);
    else if (!i0 && i1 && o)
      m1.push_back(l);
    else if (i0 && i1 && !o)
      k.push_back(l);
    else
      return std::nullopt;
  }
  if (k.size() != 1 || m0.size() > 1 || m1.size() > 1)
    return std::nullopt;
  c.k = k[0];
  // Prefer the operand whose K is not its innermost index as B (k, n): a
  // matrix-vector product then has A = W (m, k) and no N loop.
  if (m0.empty() && !m1.empty()) {
    c.aOperand = 1;
    c.bOperand = 0;
    std::swap(m0, m1);
  }
  if (!m0.empty())
    c.m = m0[0];
  if (!m1.empty())
    c.n = m1[0];
  return c;
}

bool isF32(linalg::LinalgOp op) {
  for (OpOperand &operand : op->getOpOperands())
    if (getElementTypeOrSelf(operand.get().getType()) !=
        Float32Type::get(op.getContext()))
      return false;
  return true;
}

/// Position of `loop` among the results of operand's map, or -1.
int resultPos(linalg::LinalgOp op, unsigned operand, unsigned loop) {
  AffineMap map = op.getIndexingMapsArray()[operand];
  for (unsigned r = 0; r < map.getNumResults(); ++r)
    if (map.getDimPosition(r) == loop)
      return r;
  return -1;
}

/// memref with a static unit innermost stride.
bool unitInnerStride(Value v) {
  auto type = dyn_cast<MemRefType>(v.getType());
  if (!type || type.getRank() == 0)
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(getStridesAndOffset(type, strides, offset)))
    return false;
  return strides.back() == 1;
}

std::string opName(Operation *op) { return op->getName().getStringRef().str(); }

std::vector<int64_t> shapeOf(const Contraction &c) {
  std::vector<int64_t> s;
  auto at = [&](unsigned l) {
    return l == ~0u ? 1 : (ShapedType::isDynamic(c.ranges[l]) ? -1 : c.ranges[l]);
  };
  for (unsigned b : c.batch)
    s.push_back(at(b));
  s.push_back(at(c.m));
  s.push_back(at(c.n));
  s.push_back(at(c.k));
  return s;
}

//===----------------------------------------------------------------------===//
// BLAS: f32 matmul -> linnet_cblas_sgemm (the shim's cblas_sgemm)
//===----------------------------------------------------------------------===//

constexpr llvm::StringLiteral kSgemm = "linnet_cblas_sgemm";

func::FuncOp declareSgemm(ModuleOp module) {
  if (auto f = module.lookupSymbol<func::FuncOp>(kSgemm))
    return f;
  MLIRContext *ctx = module.getContext();
  OpBuilder b(module.getBodyRegion());
  b.setInsertionPointToEnd(module.getBody());
  Type i32 = b.getI32Type(), f32 = b.getF32Type(),
       ptr = LLVM::LLVMPointerType::get(ctx);
  auto type = b.getFunctionType(
      {i32, i32, i32, i32, i32, i32, f32, ptr, i32, ptr, i32, f32, ptr, i32}, {});
  auto f = b.create<func::FuncOp>(module.getLoc(), kSgemm, type);
  f.setPrivate();
  return f;
}

/// A pointer to element 0 of a memref view and its leading stride.
std::pair<Value, Value> pointerAndLd(OpBuilder &b, Location loc, Value memref) {
  auto meta = b.create<memref::ExtractStridedMetadataOp>(loc, memref);
  Value base = b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, memref);
  Value bytes = b.create<arith::MulIOp>(
      loc, meta.getOffset(), b.create<arith::ConstantIndexOp>(loc, 4));
  Value addr = b.create<arith::AddIOp>(loc, base, bytes);
  Value i64 = b.create<arith::IndexCastOp>(loc, b.getI64Type(), addr);
  Value ptr = b.create<LLVM::IntToPtrOp>(
      loc, LLVM::LLVMPointerType::get(b.getContext()), i64);
  Value ld = b.create<arith::IndexCastOp>(loc, b.getI32Type(),
                                          meta.getStrides()[0]);
  return {ptr, ld};
}

/// Rewrites a 2-D f32 matmul-like contraction into one sgemm call; `beta` is
/// 0 when the op overwrote a zero fill of C that is erased here.
bool rewriteToSgemm(const Contraction &c, std::string &detail) {
  linalg::LinalgOp op = c.op;
  if (!c.batch.empty() || c.m == ~0u || c.n == ~0u || !isF32(op))
    return false;
  Value A = op.getDpsInputs()[c.aOperand], B = op.getDpsInputs()[c.bOperand],
        C = op.getDpsInits()[0];
  for (Value v : {A, B, C})
    if (cast<MemRefType>(v.getType()).getRank() != 2 || !unitInnerStride(v))
      return false;
  // C must be (m, n); A (m, k) or (k, m); B (k, n) or (n, k).
  if (resultPos(op, 2, c.m) != 0 || resultPos(op, 2, c.n) != 1)
    return false;
  bool transA = resultPos(op, c.aOperand, c.m) == 1;
  bool transB = resultPos(op, c.bOperand, c.k) == 1;
  // The body must multiply its two inputs and add to the output (the
  // contraction interface already checked mul/add); a body that casts or
  // negates is not an sgemm.
  if (auto generic = dyn_cast<linalg::GenericOp>(op.getOperation()))
    if (generic.getBody()->getOperations().size() != 3)
      return false;

  OpBuilder b(op);
  Location loc = op.getLoc();
  float beta = 1.0f;
  // A zero fill of C right before the matmul: beta = 0, fill erased.
  if (Operation *prev = op->getPrevNode())
    if (auto fill = dyn_cast<linalg::FillOp>(prev))
      if (fill.getDpsInits()[0] == C)
        if (auto cst = fill.getDpsInputs()[0].getDefiningOp<arith::ConstantOp>())
          if (auto f = dyn_cast<FloatAttr>(cst.getValue()); f && f.getValue().isZero()) {
            beta = 0.0f;
            fill->erase();
          }
  auto module = op->getParentOfType<ModuleOp>();
  func::FuncOp sgemm = declareSgemm(module);
  auto i32c = [&](int v) { return b.create<arith::ConstantIntOp>(loc, v, 32); };
  auto dim = [&](Value v, unsigned d) -> Value {
    return b.create<arith::IndexCastOp>(
        loc, b.getI32Type(), b.create<memref::DimOp>(loc, v, d));
  };
  Value M = dim(C, 0), N = dim(C, 1), K = dim(A, transA ? 0 : 1);
  auto [pa, lda] = pointerAndLd(b, loc, A);
  auto [pb, ldb] = pointerAndLd(b, loc, B);
  auto [pc, ldc] = pointerAndLd(b, loc, C);
  Value alpha = b.create<arith::ConstantFloatOp>(loc, APFloat(1.0f), b.getF32Type());
  Value betaV = b.create<arith::ConstantFloatOp>(loc, APFloat(beta), b.getF32Type());
  constexpr int RowMajor = 101, NoTrans = 111, Trans = 112;
  b.create<func::CallOp>(
      loc, sgemm,
      ValueRange{i32c(RowMajor), i32c(transA ? Trans : NoTrans),
                 i32c(transB ? Trans : NoTrans), M, N, K, alpha, pa, lda, pb,
                 ldb, betaV, pc, ldc});
  detail = llvm::formatv("transA={0} transB={1} beta={2}", transA ? 1 : 0,
                         transB ? 1 : 0, beta);
  op->erase();
  return true;
}

//===----------------------------------------------------------------------===//
// Matrix-vector product: y[i] += sum_k W[i, k] x[k], W rows streamed once
//===----------------------------------------------------------------------===//

/// A matrix-vector product y[i] += sum_k W[i, k] x[k], possibly written as
/// a matmul with a unit M or N loop (decode: x is [1, K], y is [1, N]).
/// The unit loop indexes x and y at 0.
struct Matvec {
  Value W, x, y;
  unsigned row = ~0u, unit = ~0u, k = ~0u; // loop positions
  SmallVector<AffineMap> maps;             // x, y indexing maps
  int64_t rows = -1;                       // static row count, -1 dynamic
  /// Rows of x (and y) at once: the `unit` loop's static extent, up to
  /// kMaxMatvecBatch (decode of a few sequences: [B, K] x [N, K]^T reads W
  /// once for all B rows); 1 for a plain matrix-vector product.
  int64_t batch = 1;
  /// W's and x's element type: f32, or a half type whose products round
  /// to it before they are added to y's f32 sums (the language's half
  /// sums: each term in its dtype, accumulated in f32).
  Type elem;
  /// Half W and x whose products are taken in f32 (the f32-compute
  /// numerics policy): exact, so a fused multiply-add computes the term.
  bool exactProducts = false;
};

/// The most x rows a streamed product takes at once: each W vector loaded
/// feeds that many accumulators per row of W.
constexpr int64_t kMaxMatvecBatch = 8;
/// An f32 product with a run-time number of rows of x streams W (once per 8
/// rows) up to this many rows; more go to BLAS or the tiled contraction.
/// Default Llama prefill (2 threads, znver4), OpenBLAS against streamed:
/// 8 rows 14.2 against ~6 ms, 32 rows 22.3 against ~20 ms.
constexpr int64_t kMaxStreamedRows = 32;

enum class HalfProduct { None, Rounded, Exact };

/// Whether `op` is a half-precision product summed in f32: W and x of one
/// half type (bf16, f16), y f32, the body `y + extf(x * w)` (each product
/// rounded to the half type, as written) or `y + extf(x) * extf(w)` (the
/// product in f32: the f32-compute numerics policy).
HalfProduct halfProductIntoF32(linalg::LinalgOp op) {
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic || op.getNumDpsInputs() != 2)
    return HalfProduct::None;
  Type a = getElementTypeOrSelf(op.getDpsInputs()[0].getType());
  Type b = getElementTypeOrSelf(op.getDpsInputs()[1].getType());
  auto isHalf = [](Type t) { return t.isBF16() || t.isF16(); };
  if (!getElementTypeOrSelf(op.getDpsInits()[0].getType()).isF32())
    return HalfProduct::None;
  Block *body = generic.getBody();
  auto isArg = [&](Value v, unsigned i) { return v == body->getArgument(i); };
  // f32 x times a narrower W widened (std.nn's Linear with W = bf16, or
  // int8 weights whose per-channel scale is applied after the sum):
  // y + x * extf(w) or y + x * sitofp(w), each product exact to f32's
  // rounding.
  auto isNarrow = [&](Type t) { return isHalf(t) || t.isInteger(8); };
  if ((isNarrow(a) != isNarrow(b)) && (a.isF32() || b.isF32()) && body->getOperations().size() == 4) {
    unsigned h = isNarrow(a) ? 0 : 1;
    Operation *ext = &body->front();
    auto mul = dyn_cast<arith::MulFOp>(*std::next(body->begin()));
    auto add = dyn_cast<arith::AddFOp>(*std::next(body->begin(), 2));
    bool widens = (isa<arith::ExtFOp>(ext) && isHalf(h ? b : a)) ||
                  (isa<arith::SIToFPOp>(ext) && (h ? b : a).isInteger(8));
    if (!widens || !mul || !add || !isArg(ext->getOperand(0), h) || !ext->getResult(0).getType().isF32())
      return HalfProduct::None;
    bool product = (mul.getLhs() == ext->getResult(0) && isArg(mul.getRhs(), 1 - h)) ||
                   (mul.getRhs() == ext->getResult(0) && isArg(mul.getLhs(), 1 - h));
    bool sum = (add.getLhs() == mul.getResult() && isArg(add.getRhs(), 2)) ||
               (add.getRhs() == mul.getResult() && isArg(add.getLhs(), 2));
    return product && sum ? HalfProduct::Exact : HalfProduct::None;
  }
  if (a != b || !isHalf(a))
    return HalfProduct::None;
  if (body->getOperations().size() == 5) {
    auto e0 = dyn_cast<arith::ExtFOp>(body->front());
    auto e1 = dyn_cast<arith::ExtFOp>(*std::next(body->begin()));
    auto mul = dyn_cast<arith::MulFOp>(*std::next(body->begin(), 2));
    auto add = dyn_cast<arith::AddFOp>(*std::next(body->begin(), 3));
    if (!e0 || !e1 || !mul || !add || !e0.getType().isF32())
      return HalfProduct::None;
    bool ins = (isArg(e0.getIn(), 0) && isArg(e1.getIn(), 1)) || (isArg(e0.getIn(), 1) && isArg(e1.getIn(), 0));
    bool product = (mul.getLhs() == e0.getResult() && mul.getRhs() == e1.getResult()) ||
                   (mul.getLhs() == e1.getResult() && mul.getRhs() == e0.getResult());
    bool sum = (add.getLhs() == mul.getResult() && isArg(add.getRhs(), 2)) ||
               (add.getRhs() == mul.getResult() && isArg(add.getLhs(), 2));
    return ins && product && sum ? HalfProduct::Exact : HalfProduct::None;
  }
  if (body->getOperations().size() != 4)
    return HalfProduct::None;
  auto mul = dyn_cast<arith::MulFOp>(body->front());
  auto ext = dyn_cast<arith::ExtFOp>(*std::next(body->begin()));
  auto add = dyn_cast<arith::AddFOp>(*std::next(body->begin(), 2));
  if (!mul || !ext || !add || ext.getIn() != mul.getResult())
    return HalfProduct::None;
  bool operands = (isArg(mul.getLhs(), 0) && isArg(mul.getRhs(), 1)) ||
                  (isArg(mul.getLhs(), 1) && isArg(mul.getRhs(), 0));
  bool sum = (add.getLhs() == ext.getResult() && isArg(add.getRhs(), 2)) ||
             (add.getRhs() == ext.getResult() && isArg(add.getLhs(), 2));
  return operands && sum ? HalfProduct::Rounded : HalfProduct::None;
}

/// W (rows, k) with unit inner stride, x (k) or (1, k) / (k, 1) with unit
/// stride along k, y (rows) or with a unit axis; f32, or half W and x
/// summed into f32 y (halfProductIntoF32).
std::optional<Matvec> matchMatvec(const Contraction &c, bool anyRows = false) {
  linalg::LinalgOp op = c.op;
  HalfProduct hp = halfProductIntoF32(op);
  bool half = hp != HalfProduct::None;
  if (!c.batch.empty() || c.m == ~0u || !(isF32(op) || half))
    return std::nullopt;
  Matvec mv;
  unsigned wOperand, xOperand;
  auto isUnit = [&](unsigned l) { return l != ~0u && c.ranges[l] == 1; };
  if (c.n == ~0u) {
    mv.row = c.m;
    wOperand = c.aOperand;
    xOperand = c.bOperand;
  } else if (isUnit(c.m) && !isUnit(c.n)) {
    mv.row = c.n;
    mv.unit = c.m;
    wOperand = c.bOperand;
    xOperand = c.aOperand;
  } else if (isUnit(c.n)) {
    mv.row = c.m;
    mv.unit = c.n;
    wOperand = c.aOperand;
    xOperand = c.bOperand;
  } else if (!ShapedType::isDynamic(c.ranges[c.m]) && c.ranges[c.m] <= kMaxMatvecBatch &&
             (ShapedType::isDynamic(c.ranges[c.n]) || c.ranges[c.n] > kMaxMatvecBatch)) {
    // A few rows of x against a large W: W streamed once for all of them.
    mv.row = c.n;
    mv.unit = c.m;
    mv.batch = c.ranges[c.m];
    wOperand = c.bOperand;
    xOperand = c.aOperand;
  } else if ((half || anyRows) && ShapedType::isDynamic(c.ranges[c.m]) &&
             (ShapedType::isDynamic(c.ranges[c.n]) || c.ranges[c.n] > kMaxMatvecBatch)) {
    // Any number of rows of x (prefill) against a narrower W (bf16, f16,
    // i8): W streamed once a call, the rows of x in chunks of 8, so W is
    // widened once for 8 rows (the tiled contraction widens it per tile).
    mv.row = c.n;
    mv.unit = c.m;
    mv.batch = -1;
    wOperand = c.bOperand;
    xOperand = c.aOperand;
  } else {
    return std::nullopt;
  }
  mv.k = c.k;
  mv.W = op.getDpsInputs()[wOperand];
  mv.x = op.getDpsInputs()[xOperand];
  mv.y = op.getDpsInits()[0];
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (cast<MemRefType>(mv.W.getType()).getRank() != 2 ||
      resultPos(op, wOperand, mv.row) != 0 || resultPos(op, wOperand, mv.k) != 1)
    return std::nullopt;
  // x: k innermost; y: every result a row or the unit loop.
  AffineMap xm = maps[xOperand], ym = maps[2];
  if (xm.getNumResults() == 0 || xm.getDimPosition(xm.getNumResults() - 1) != mv.k)
    return std::nullopt;
  if (llvm::count_if(ym.getResults(), [&](AffineExpr) { return true; }) == 0)
    return std::nullopt;
  if (resultPos(op, 2, mv.row) < 0)
    return std::nullopt;
  if (mv.batch != 1 && (resultPos(op, xOperand, mv.unit) < 0 || resultPos(op, 2, mv.unit) < 0))
    return std::nullopt;
  if (auto generic = dyn_cast<linalg::GenericOp>(op.getOperation()))
    if (!half && generic.getBody()->getOperations().size() != 3)
      return std::nullopt;
  if (!unitInnerStride(mv.W) || !unitInnerStride(mv.x))
    return std::nullopt;
  mv.elem = getElementTypeOrSelf(mv.W.getType());
  mv.exactProducts = hp == HalfProduct::Exact;
  mv.maps = {xm, ym};
  mv.rows = ShapedType::isDynamic(c.ranges[mv.row]) ? -1 : c.ranges[mv.row];
  return mv;
}

/// Indices of an operand with indexing `map` at row `i` / reduction `k`
/// / the unit (batch) loop at `u`.
SmallVector<Value> matvecIndices(const Matvec &mv, AffineMap map, Value i,
                                 Value k, Value u) {
  SmallVector<Value> idx;
  for (unsigned r = 0; r < map.getNumResults(); ++r) {
    unsigned d = map.getDimPosition(r);
    idx.push_back(d == mv.row ? i : d == mv.k ? k : u);
  }
  return idx;
}

/// Emits the streaming kernel in place of the op. Rows are split into
/// blocks run by scf.parallel (OpenMP threads; one block runs in the caller
/// without a parallel region); within a block, groups of `group` rows share
/// each x load, every row with `unroll` vector accumulators of `width`
/// lanes; then single rows, a one-vector loop and a scalar tail.
void emitMatvec(const Contraction &c, const Matvec &mv, unsigned width,
                int64_t rowsPerBlock, int64_t prefetchRows) {
  linalg::LinalgOp op = c.op;
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value W = mv.W, x = mv.x, y = mv.y;
  FloatType f32 = b.getF32Type();
  auto vt = VectorType::get({(int64_t)width}, f32);
  // Half W and x: loaded as such, widened (exactly), each product rounded
  // to the half type and widened again, then added (no FMA: the rounding
  // between the product and the sum is the language's). Under f32-compute
  // the product of two widened halves is exact in f32: an FMA is the term.
  bool half = !mv.elem.isF32();
  auto vin = VectorType::get({(int64_t)width}, mv.elem);
  // Each operand loaded in its own element type (W may be half with an f32
  // x), a half one widened exactly.
  // (an i8 W, int8 weights, converted exactly).
  auto loadV = [&](OpBuilder &b, Location loc, Value m, ValueRange ix) -> Value {
    Type e = getElementTypeOrSelf(m.getType());
    if (e.isF32())
      return b.create<vector::LoadOp>(loc, vt, m, ix);
    Value v = b.create<vector::LoadOp>(loc, VectorType::get({(int64_t)width}, e), m, ix);
    if (e.isInteger(8))
      return b.create<arith::SIToFPOp>(loc, vt, v);
    return b.create<arith::ExtFOp>(loc, vt, v);
  };
  auto loadS = [&](OpBuilder &b, Location loc, Value m, ValueRange ix) -> Value {
    Value v = b.create<memref::LoadOp>(loc, m, ix);
    if (v.getType().isInteger(8))
      return b.create<arith::SIToFPOp>(loc, f32, v);
    return v.getType().isF32() ? v : b.create<arith::ExtFOp>(loc, f32, v).getResult();
  };
  auto productAdd = [&](OpBuilder &b, Location loc, Value w, Value xv, Value acc) -> Value {
    if (!half || mv.exactProducts)
      return isa<VectorType>(acc.getType()) ? b.create<vector::FMAOp>(loc, w, xv, acc).getResult()
                                            : b.create<arith::AddFOp>(loc, acc, b.create<arith::MulFOp>(loc, w, xv))
                                                  .getResult();
    Type wide = acc.getType();
    Type narrow = isa<VectorType>(wide) ? Type(vin) : mv.elem;
    Value p = b.create<arith::MulFOp>(loc, w, xv);
    p = b.create<arith::ExtFOp>(loc, wide, b.create<arith::TruncFOp>(loc, narrow, p).getResult());
    return b.create<arith::AddFOp>(loc, acc, p);
  };
  // A batch of x rows: one accumulator per (row of W, row of x), at most 8
  // of them a group of W rows, no unrolling along K. Measured on decode of
  // 8 sequences (AVX-512): one row of W a group, 8 accumulators, ran 1.3x
  // faster than two rows with 16 (bench/llama/batched.sh).
  // Rows of x: 1, a static batch of up to 8, or -1 (any number, in chunks
  // of kMaxMatvecBatch and single rows).
  const int64_t batch = mv.batch;
  const bool batched = batch != 1;
  const int64_t unroll = batched ? 1 : 2;
  // One row of x: one row of W at a time, a single sequential stream per
  // thread, which the hardware prefetchers follow; groups of 4 rows sharing
  // each x load (four interleaved streams 2 KB apart at K = 512) decoded
  // the default Llama 9% slower (bench/llama/quantized-llamacpp.sh).
  const int64_t group = batch > 1 ? std::clamp<int64_t>(8 / batch, 1, 4) : 1;
  static_assert(kMaxMatvecBatch == 8, "a dynamic batch's chunks take one row of W a group");
  auto idx = [&](int64_t v) -> Value {
    return b.create<arith::ConstantIndexOp>(loc, v);
  };
  Value c0 = idx(0), c1 = idx(1);
  Value M = b.create<memref::DimOp>(loc, W, 0);
  Value K = b.create<memref::DimOp>(loc, W, 1);
  Value rb = idx(rowsPerBlock);
  Value blocks = b.create<arith::CeilDivUIOp>(loc, M, rb);
  // K split: [0, kUnrolled) by unroll*width, [kUnrolled, kVector) by width,
  // [kVector, K) scalar.
  Value kUnrolled = b.create<arith::SubIOp>(
      loc, K, b.create<arith::RemUIOp>(loc, K, idx(unroll * width)));
  Value kVector = b.create<arith::SubIOp>(
      loc, K, b.create<arith::RemUIOp>(loc, K, idx(width)));
  Value zeroV = b.create<arith::ConstantOp>(
      loc, vt, DenseElementsAttr::get(vt, b.getFloatAttr(f32, 0.0)));
  Value zero = b.create<arith::ConstantFloatOp>(loc, APFloat(0.0f), f32);
  auto xIdx = [&](Value k) { return matvecIndices(mv, mv.maps[0], c0, k, c0); };
  auto yIdx = [&](Value i) { return matvecIndices(mv, mv.maps[1], i, c0, c0); };

  // Rows of W of a few KB end before the hardware's stream prefetchers
  // pick them up (decode's projections: K = 512 ran at half the bandwidth
  // of K = 4096): each step fetches the same columns prefetchRows rows on,
  // where the CPU needs it (streamPrefetchRows).
  auto prefetchAhead = [&](OpBuilder &b, Location loc, ArrayRef<Value> rowsI, Value k) {
    if (prefetchRows <= 0)
      return;
    Value last = b.create<arith::SubIOp>(loc, M, c1);
    for (Value i : rowsI) {
      Value ahead = b.create<arith::MinUIOp>(
          loc, b.create<arith::AddIOp>(loc, i, b.create<arith::ConstantIndexOp>(loc, prefetchRows)), last);
      b.create<memref::PrefetchOp>(loc, W, ValueRange{ahead, k}, /*isWrite=*/false, /*localityHint=*/3,
                                   /*isDataCache=*/true);
    }
  };

  // Rows i0 .. i0+n-1 of W against every row of x (batch > 1).
  // Rows i0 .. i0+n-1 of W against rows m0 .. m0+nb-1 of x.
  auto batchRows = [&](OpBuilder &b, Location loc, Value i0, int64_t n, Value m0, int64_t nb) {
    auto cst = [&](int64_t v) -> Value {
      return b.create<arith::ConstantIndexOp>(loc, v);
    };
    SmallVector<Value> rowsI, rowsM;
    for (int64_t r = 0; r < n; ++r)
      rowsI.push_back(r ? b.create<arith::AddIOp>(loc, i0, cst(r)).getResult() : i0);
    for (int64_t m = 0; m < nb; ++m)
      rowsM.push_back(m ? b.create<arith::AddIOp>(loc, m0, cst(m)).getResult() : m0);
    auto xAt = [&](Value k, int64_t m) { return matvecIndices(mv, mv.maps[0], c0, k, rowsM[m]); };
    auto yAt = [&](Value i, int64_t m) { return matvecIndices(mv, mv.maps[1], i, c0, rowsM[m]); };
    auto step = [&](OpBuilder &b, Location loc, Value k, ValueRange accs, bool vector) {
      SmallVector<Value> xs, next(accs.begin(), accs.end());
      if (vector)
        prefetchAhead(b, loc, rowsI, k);
      for (int64_t m = 0; m < nb; ++m)
        xs.push_back(vector ? loadV(b, loc, x, xAt(k, m)) : loadS(b, loc, x, xAt(k, m)));
      for (int64_t r = 0; r < n; ++r) {
        Value w = vector ? loadV(b, loc, W, ValueRange{rowsI[r], k}) : loadS(b, loc, W, ValueRange{rowsI[r], k});
        for (int64_t m = 0; m < nb; ++m)
          next[r * nb + m] = productAdd(b, loc, w, xs[m], accs[r * nb + m]);
      }
      b.create<scf::YieldOp>(loc, next);
    };
    auto main = b.create<scf::ForOp>(
        loc, c0, kVector, cst(width), SmallVector<Value>(n * nb, zeroV),
        [&](OpBuilder &b, Location loc, Value k, ValueRange accs) { step(b, loc, k, accs, true); });
    auto tail = b.create<scf::ForOp>(
        loc, kVector, K, c1, SmallVector<Value>(n * nb, zero),
        [&](OpBuilder &b, Location loc, Value k, ValueRange accs) { step(b, loc, k, accs, false); });
    for (int64_t r = 0; r < n; ++r)
      for (int64_t m = 0; m < nb; ++m) {
        Value sum = b.create<vector::ReductionOp>(loc, vector::CombiningKind::ADD,
                                                  main.getResult(r * nb + m), Value(),
                                                  arith::FastMathFlags::reassoc);
        Value old = b.create<memref::LoadOp>(loc, y, yAt(rowsI[r], m));
        Value total = b.create<arith::AddFOp>(
            loc, old, b.create<arith::AddFOp>(loc, sum, tail.getResult(r * nb + m)));
        b.create<memref::StoreOp>(loc, total, y, yAt(rowsI[r], m));
      }
  };
  // Every row of x: the static batch at once, or chunks of 8 and single rows.
  auto batchKernel = [&](OpBuilder &b, Location loc, Value i0, int64_t n) {
    if (batch > 1)
      return batchRows(b, loc, i0, n, c0, batch);
    int64_t xAxis = -1;
    for (unsigned r = 0; r < mv.maps[0].getNumResults(); ++r)
      if (mv.maps[0].getDimPosition(r) == mv.unit)
        xAxis = r;
    Value rowsX = b.create<memref::DimOp>(loc, x, xAxis);
    Value chunk = b.create<arith::ConstantIndexOp>(loc, kMaxMatvecBatch);
    Value full = b.create<arith::SubIOp>(loc, rowsX, b.create<arith::RemUIOp>(loc, rowsX, chunk));
    b.create<scf::ForOp>(loc, c0, full, chunk, ValueRange{}, [&](OpBuilder &b, Location loc, Value m0, ValueRange) {
      batchRows(b, loc, i0, n, m0, kMaxMatvecBatch);
      b.create<scf::YieldOp>(loc);
    });
    b.create<scf::ForOp>(loc, full, rowsX, c1, ValueRange{}, [&](OpBuilder &b, Location loc, Value m, ValueRange) {
      batchRows(b, loc, i0, n, m, 1);
      b.create<scf::YieldOp>(loc);
    });
  };

  // Reduces rows i0 .. i0+n-1 (n static) over K and adds into y.
  auto rowsKernel = [&](OpBuilder &b, Location loc, Value i0, int64_t n) {
    if (batched)
      return batchKernel(b, loc, i0, n);
    auto cst = [&](int64_t v) -> Value {
      return b.create<arith::ConstantIndexOp>(loc, v);
    };
    SmallVector<Value> rowsI;
    for (int64_t r = 0; r < n; ++r)
      rowsI.push_back(r ? b.create<arith::AddIOp>(loc, i0, cst(r)).getResult() : i0);
    SmallVector<Value> init(n * unroll, zeroV);
    auto main = b.create<scf::ForOp>(
        loc, c0, kUnrolled, cst(unroll * width), init,
        [&](OpBuilder &b, Location loc, Value k, ValueRange accs) {
          SmallVector<Value> next(accs.begin(), accs.end());
          prefetchAhead(b, loc, rowsI, k);
          for (int64_t u = 0; u < unroll; ++u) {
            Value ku = u ? b.create<arith::AddIOp>(
                               loc, k, b.create<arith::ConstantIndexOp>(loc, u * width))
                               .getResult()
                         : k;
            Value xv = loadV(b, loc, x, xIdx(ku));
            for (int64_t r = 0; r < n; ++r) {
              Value w = loadV(b, loc, W, ValueRange{rowsI[r], ku});
              next[r * unroll + u] = productAdd(b, loc, w, xv, accs[r * unroll + u]);
            }
          }
          b.create<scf::YieldOp>(loc, next);
        });
    SmallVector<Value> acc;
    for (int64_t r = 0; r < n; ++r) {
      Value a = main.getResult(r * unroll);
      for (int64_t u = 1; u < unroll; ++u)
        a = b.create<arith::AddFOp>(loc, a, main.getResult(r * unroll + u));
      acc.push_back(a);
    }
    auto rest = b.create<scf::ForOp>(
        loc, kUnrolled, kVector, cst(width), acc,
        [&](OpBuilder &b, Location loc, Value k, ValueRange accs) {
          Value xv = loadV(b, loc, x, xIdx(k));
          SmallVector<Value> next;
          for (int64_t r = 0; r < n; ++r) {
            Value w = loadV(b, loc, W, ValueRange{rowsI[r], k});
            next.push_back(productAdd(b, loc, w, xv, accs[r]));
          }
          b.create<scf::YieldOp>(loc, next);
        });
    SmallVector<Value> tailInit(n, zero);
    auto tail = b.create<scf::ForOp>(
        loc, kVector, K, c1, tailInit,
        [&](OpBuilder &b, Location loc, Value k, ValueRange s) {
          Value xv = loadS(b, loc, x, xIdx(k));
          SmallVector<Value> next;
          for (int64_t r = 0; r < n; ++r) {
            Value w = loadS(b, loc, W, ValueRange{rowsI[r], k});
            next.push_back(productAdd(b, loc, w, xv, s[r]));
          }
          b.create<scf::YieldOp>(loc, next);
        });
    for (int64_t r = 0; r < n; ++r) {
      // reassoc: a shuffle tree, not 16 dependent scalar adds per row.
      Value sum = b.create<vector::ReductionOp>(
          loc, vector::CombiningKind::ADD, rest.getResult(r), Value(),
          arith::FastMathFlags::reassoc);
      Value old = b.create<memref::LoadOp>(loc, y, yIdx(rowsI[r]));
      Value total = b.create<arith::AddFOp>(
          loc, old, b.create<arith::AddFOp>(loc, sum, tail.getResult(r)));
      b.create<memref::StoreOp>(loc, total, y, yIdx(rowsI[r]));
    }
  };
  // One block of rows [lo, hi): groups of `group` rows, then single rows.
  auto block = [&](OpBuilder &b, Location loc, Value lo, Value hi) {
    Value n = b.create<arith::SubIOp>(loc, hi, lo);
    Value grouped = b.create<arith::AddIOp>(
        loc, lo,
        b.create<arith::SubIOp>(
            loc, n, b.create<arith::RemUIOp>(loc, n, b.create<arith::ConstantIndexOp>(loc, group))));
    b.create<scf::ForOp>(loc, lo, grouped, b.create<arith::ConstantIndexOp>(loc, group),
                         ValueRange{},
                         [&](OpBuilder &b, Location loc, Value i, ValueRange) {
                           rowsKernel(b, loc, i, group);
                           b.create<scf::YieldOp>(loc);
                         });
    b.create<scf::ForOp>(loc, grouped, hi, c1, ValueRange{},
                         [&](OpBuilder &b, Location loc, Value i, ValueRange) {
                           rowsKernel(b, loc, i, 1);
                           b.create<scf::YieldOp>(loc);
                         });
  };
  if (mv.rows >= 0 && mv.rows <= rowsPerBlock) {
    // Too little work for a parallel region.
    block(b, loc, c0, M);
  } else {
    // One block per thread: a static OpenMP schedule (CPUCodegen).
    b.create<scf::ParallelOp>(
        NameLoc::get(b.getStringAttr("linnet.static_schedule"), loc), ValueRange{c0},
        ValueRange{blocks}, ValueRange{c1},
        [&](OpBuilder &b, Location loc, ValueRange ivs) {
          Value lo = b.create<arith::MulIOp>(loc, ivs[0], rb);
          Value hi = b.create<arith::MinUIOp>(
              loc, b.create<arith::AddIOp>(loc, lo, rb), M);
          block(b, loc, lo, hi);
        });
  }
  op->erase();
}

//===----------------------------------------------------------------------===//
// Transform schedules
//===----------------------------------------------------------------------===//

/// Builds the text of one named sequence; handles are numbered.
class Schedule {
public:
  std::string body;
  int next = 0;
  std::string fresh() { return "%h" + std::to_string(next++); }
  void line(const std::string &s) { body += "    " + s + "\n"; }
  std::string match(int64_t tag) {
    std::string h = fresh();
    line(llvm::formatv("{0} = transform.structured.match attributes{{{1} = {2} : i64} "
                       "in %root : (!transform.any_op) -> !transform.any_op",
                       h, kTag, tag));
    return h;
  }
  static std::string list(ArrayRef<int64_t> v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i)
      s += (i ? ", " : "") + std::to_string(v[i]);
    return s + "]";
  }
  /// tile_using_for: returns {tiled op, loops (one per non-zero size)}.
  std::pair<std::string, std::vector<std::string>>
  tileFor(const std::string &target, ArrayRef<int64_t> sizes,
          ArrayRef<int64_t> interchange = {}) {
    unsigned loops = llvm::count_if(sizes, [](int64_t s) { return s != 0; });
    std::string op = fresh(), l = fresh();
    std::string types = "!transform.any_op";
    for (unsigned i = 0; i < loops; ++i)
      types += ", !transform.any_op";
    std::string results = op + (loops ? ", " + l + ":" + std::to_string(loops) : "");
    line(llvm::formatv("{0} = transform.structured.tile_using_for {1} tile_sizes {2}{3} "
                       ": (!transform.any_op) -> ({4})",
                       results, target, list(sizes),
                       interchange.empty() ? "" : " interchange = " + list(interchange),
                       types));
    std::vector<std::string> ls;
    for (unsigned i = 0; i < loops; ++i)
      ls.push_back(l + "#" + std::to_string(i));
    return {op, ls};
  }
  /// tile_using_forall by tile sizes, or by thread counts (`byThreads`:
  /// extents known at run time only).
  std::string tileForall(const std::string &target, ArrayRef<int64_t> sizes, bool byThreads = false) {
    std::string op = fresh(), f = fresh();
    line(llvm::formatv("{0}, {1} = transform.structured.tile_using_forall {2} {3} {4} "
                       ": (!transform.any_op) -> (!transform.any_op, !transform.any_op)",
                       op, f, target, byThreads ? "num_threads" : "tile_sizes", list(sizes)));
    return op;
  }
  /// Peels a loop; returns the remainder handle.
  std::string peel(const std::string &loop) {
    std::string c = fresh(), main = fresh(), rem = fresh();
    line(llvm::formatv("{0} = transform.cast {1} : !transform.any_op to !transform.op<\"scf.for\">",
                       c, loop));
    line(llvm::formatv("{0}, {1} = transform.loop.peel {2} : (!transform.op<\"scf.for\">) "
                       "-> (!transform.any_op, !transform.any_op)",
                       main, rem, c));
    return rem;
  }
  std::string text() const {
    return "module attributes {transform.with_named_sequence} {\n"
           "  transform.named_sequence @__transform_main(%root: !transform.any_op "
           "{transform.readonly}) {\n" +
           body +
           "    transform.yield\n  }\n}\n";
  }
};

struct Tiles {
  SmallVector<int64_t> forall, cache, reg;
  int64_t ri, rj;
  bool promote = false;
};

/// Derives the tile sizes of a contraction from its shape and the target.
///  - register tile RI x RJ: RJ = two vectors, RI rows such that RI*2
///    accumulators + 2 B vectors + 1 broadcast fit the register file;
///  - cache tiles: the packed B tile (TK x TJ) takes a quarter of L2, the
///    A tile (TI x TK) half of it;
///  - threads split M (or N, or the batch) into equal register-aligned chunks.
Tiles deriveTiles(const Contraction &c, const LinalgTarget &t) {
  unsigned loops = c.op.getNumLoops();
  const int64_t elt = 4;
  const int64_t lanes = t.vectorBits / 32;
  const int64_t regs = t.vectorBits >= 512 ? 32 : 16;
  Tiles tiles;
  tiles.rj = 2 * lanes;
  tiles.ri = std::min<int64_t>(8, (regs - 3) / 2);
  auto range = [&](unsigned l) -> int64_t {
    if (l == ~0u)
      return 1;
    return ShapedType::isDynamic(c.ranges[l]) ? -1 : c.ranges[l];
  };
  int64_t M = range(c.m), N = range(c.n), K = range(c.k);
  // Small dims: one register tile covers them.
  if (c.n == ~0u)
    tiles.rj = 0;
  else if (N > 0 && N < tiles.rj)
    tiles.rj = N;
  if (c.m == ~0u)
    tiles.ri = 0;
  else if (M > 0 && M < tiles.ri)
    tiles.ri = M;
  int64_t ri = std::max<int64_t>(tiles.ri, 1), rj = std::max<int64_t>(tiles.rj, 1);

  int64_t tj = c.n == ~0u ? 0 : std::min<int64_t>(N > 0 ? roundUp(N, rj) : 8 * rj, 8 * rj);
  int64_t tk = std::min<int64_t>(K > 0 ? K : 512,
                                 roundDown(std::max<int64_t>(64, t.l2Bytes / 4 / (std::max<int64_t>(tj, 1) * elt)), 16));
  int64_t tiCap = roundDown(std::max<int64_t>(ri, t.l2Bytes / 2 / (tk * elt)), ri);

  tiles.forall.assign(loops, 0);
  tiles.cache.assign(loops, 0);
  tiles.reg.assign(loops, 0);
  int64_t mChunk = M;
  bool split = false;
  // A small product (fewer than t.minParallelMacs multiply-adds; 128^3 is
  // 2^21) takes tens of microseconds on one core, what starting a parallel
  // region costs (64^3 ran at 7 GFLOP/s over two threads, 52 on one).
  int64_t B = c.batch.empty() ? 1 : range(c.batch[0]);
  bool small = M > 0 && N > 0 && K > 0 && B > 0 && M * N < t.minParallelMacs / K / B;
  if (t.threads > 1 && !small) {
    if (!c.batch.empty() && B >= (int64_t)t.threads) {
      tiles.forall[c.batch[0]] = ceilDiv(B, t.threads);
      split = true;
    } else if (c.m != ~0u && M >= (int64_t)t.threads * ri) {
      mChunk = roundUp(ceilDiv(M, t.threads), ri);
      tiles.forall[c.m] = mChunk;
      split = true;
    } else if (c.n != ~0u && N >= (int64_t)t.threads * rj) {
      tiles.forall[c.n] = roundUp(ceilDiv(N, t.threads), rj);
      split = true;
    } else if (c.m != ~0u && M < 0) {
      // Dynamic M: chunks of the cache tile.
      tiles.forall[c.m] = tiCap;
      split = true;
    }
  }
  if (!split)
    tiles.forall.clear();
  for (unsigned b : c.batch)
    tiles.cache[b] = tiles.reg[b] = 1;
  if (c.m != ~0u) {
    tiles.cache[c.m] = mChunk > 0 ? std::min(tiCap, roundUp(mChunk, ri)) : tiCap;
    tiles.reg[c.m] = ri;
  }
  if (c.n != ~0u) {
    tiles.cache[c.n] = tj;
    tiles.reg[c.n] = rj;
  }
  tiles.cache[c.k] = tk;
  tiles.reg[c.k] = 1;
  // Pack B when its tile is re-read by several register rows and is a 2-D
  // view (batch tiles keep their strided B).
  tiles.promote = c.batch.empty() && c.n != ~0u && c.m != ~0u &&
                  cast<MemRefType>(c.op.getDpsInputs()[c.bOperand].getType()).getRank() == 2 &&
                  (M < 0 || M > ri);
  return tiles;
}

void scheduleContraction(Schedule &s, const Contraction &c, int64_t tag,
                         const LinalgTarget &t, std::string &detail) {
  Tiles tiles = deriveTiles(c, t);
  std::string op = s.match(tag);
  if (!tiles.forall.empty())
    op = s.tileForall(op, tiles.forall);
  // Cache loops in the order i, j, k: the packed B tile (k x j) is reused by
  // every register row of the A tile.
  op = s.tileFor(op, tiles.cache).first;
  if (tiles.promote) {
    std::string p = s.fresh();
    s.line(llvm::formatv("{0} = transform.structured.promote {1} {{operands_to_promote = [{2}], "
                         "use_full_tile_buffers = [false, false, false], alignment = 64} "
                         ": (!transform.any_op) -> !transform.any_op",
                         p, op, c.bOperand));
    op = p;
    // The packing copy: one row (vector) per iteration.
    std::string parent = s.fresh();
    s.line(llvm::formatv("{0} = transform.get_parent_op {1} {{op_name = \"scf.for\"} "
                         ": (!transform.any_op) -> !transform.any_op",
                         parent, op));
    std::string copy = s.fresh();
    s.line(llvm::formatv("{0} = transform.structured.match ops{{[\"linalg.copy\"]} in {1} "
                         ": (!transform.any_op) -> !transform.any_op",
                         copy, parent));
    s.tileFor(copy, {1, 0});
  }
  auto [reg, loops] = s.tileFor(op, tiles.reg);
  // Register loops that may not divide are peeled: the main part has static
  // RI x RJ tiles, the remainders are tiled to single rows.
  auto loopIndex = [&](unsigned loop) {
    int idx = 0;
    for (unsigned l = 0; l < loop; ++l)
      idx += tiles.reg[l] != 0;
    return idx;
  };
  // A register loop also has a dynamic trip count when an enclosing tile
  // (a thread's chunk, a cache tile) does not divide its range: the last
  // chunk is shorter, so its sizes are `min`s that no longer fold, and an
  // unpeeled loop would vectorize nothing (1000^3 ran at 6 GFLOP/s, 1024^3
  // at 150).
  auto needsPeel = [&](unsigned loop, int64_t r) {
    if (loop == ~0u || r <= 1)
      return false;
    int64_t size = c.ranges[loop];
    if (ShapedType::isDynamic(size) || size % r != 0)
      return true;
    for (const SmallVector<int64_t> *outer : {&tiles.forall, &tiles.cache})
      if (loop < outer->size() && (*outer)[loop] > 0 && size % (*outer)[loop] != 0)
        return true;
    return false;
  };
  if (needsPeel(c.n, tiles.rj))
    s.peel(loops[loopIndex(c.n)]);
  if (needsPeel(c.m, tiles.ri)) {
    std::string rem = s.peel(loops[loopIndex(c.m)]);
    std::string inRem = s.fresh();
    s.line(llvm::formatv("{0} = transform.structured.match attributes{{{1} = {2} : i64} in {3} "
                         ": (!transform.any_op) -> !transform.any_op",
                         inRem, kTag, tag, rem));
    SmallVector<int64_t> rows(c.op.getNumLoops(), 0);
    rows[c.m] = 1;
    s.tileFor(inRem, rows);
  }
  auto str = [](ArrayRef<int64_t> v) { return Schedule::list(v); };
  detail = llvm::formatv("threads={0} cache={1} register={2} pack_b={3}",
                         tiles.forall.empty() ? "none" : str(tiles.forall),
                         str(tiles.cache), str(tiles.reg), tiles.promote ? 1 : 0);
}

/// Whether an elementwise op's outermost loop is worth splitting over the
/// threads (a parallel region costs ~1.5 us to start and join): a run-time
/// extent (prefill's S rows) over at least 256 elements a row, or a body
/// with a math call over at least 2^12 elements, or 2^16 elements.
bool elementwiseThreads(linalg::LinalgOp op, ArrayRef<int64_t> ranges, const LinalgTarget &t) {
  if (t.threads < 2 || ranges.size() < 2 || ranges.front() == 1)
    return false;
  // Only the outermost extent may be a run-time one: the work a row does
  // is what decides.
  uint64_t row = 1;
  for (int64_t r : ranges.drop_front()) {
    if (ShapedType::isDynamic(r))
      return false;
    row = llvm::SaturatingMultiply(row, static_cast<uint64_t>(r));
  }
  if (ShapedType::isDynamic(ranges.front()))
    return row >= 256;
  bool math = false;
  op->walk([&](Operation *inner) { math |= isa_and_nonnull<math::MathDialect>(inner->getDialect()); });
  uint64_t elements = llvm::SaturatingMultiply(row, static_cast<uint64_t>(ranges.front()));
  return elements >= (math ? (uint64_t(1) << 12) : (uint64_t(1) << 16));
}

/// All-parallel op with a static innermost extent: rows of up to four
/// vectors, innermost loop peeled; the outermost loop split over the
/// threads where elementwiseThreads says so.
bool scheduleElementwise(Schedule &s, linalg::LinalgOp op, int64_t tag,
                         const LinalgTarget &t) {
  if (!op.hasPureBufferSemantics() || op.getNumLoops() == 0 ||
      op.getNumReductionLoops() != 0)
    return false;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  // Outer extents may be known at run time only (prefill's rows): the tiles
  // are one row of static vectors whatever their number.
  if (ShapedType::isDynamic(ranges.back()))
    return false;
  // Tiling re-evaluates each operand's map on the tile's own indices, which
  // holds for projected permutations only: a block-quantized param read
  // through (i floordiv 32, i mod 32 + 2) read the wrong bytes in every
  // tile but the first. Such ops run as loops over the original maps.
  if (!llvm::all_of(op.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isProjectedPermutation(/*allowZeroInResults=*/false); }))
    return false;
  int64_t lanes = t.vectorBits / 32;
  int64_t inner = std::min<int64_t>(ranges.back(), 4 * lanes);
  SmallVector<int64_t> sizes(ranges.size(), 1);
  sizes.back() = inner;
  std::string h = s.match(tag);
  if (elementwiseThreads(op, ranges, t)) {
    SmallVector<int64_t> threads(ranges.size(), 0);
    threads.front() = t.threads;
    h = s.tileForall(h, threads, /*byThreads=*/true);
  }
  auto loops = s.tileFor(h, sizes).second;
  if (ranges.back() % inner != 0)
    s.peel(loops.back());
  return true;
}

/// Pattern sets that do not converge (seen with unit dims: a [1, S, 1]
/// result) stop after a bounded amount of work instead of hanging the build.
constexpr const char *kPatternLimits = "{max_iterations = 16 : i64, max_num_rewrites = 50000 : i64}";

void vectorizeAndLower(Schedule &s) {
  std::string f = s.fresh();
  s.line(f + " = transform.structured.match ops{[\"func.func\"]} in %root "
             ": (!transform.any_op) -> !transform.any_op");
  // Peeled bounds become static only after canonicalization.
  s.line("transform.apply_patterns to " + f +
         " {\n      transform.apply_patterns.canonicalization\n    } " + kPatternLimits + " : !transform.any_op");
  s.line("transform.apply_cse to " + f + " : !transform.any_op");
  std::string v = s.fresh();
  s.line(v + " = transform.structured.vectorize_children_and_apply_patterns " + f +
         " : (!transform.any_op) -> !transform.any_op");
  // hoist_redundant_vector_transfers ignores transfers on subviews.
  s.line("transform.apply_patterns to " + v +
         " {\n      transform.apply_patterns.memref.fold_memref_alias_ops\n"
         "      transform.apply_patterns.canonicalization\n    } " + kPatternLimits + " : !transform.any_op");
  s.line("transform.apply_cse to " + v + " : !transform.any_op");
  std::string h = s.fresh();
  s.line(h + " = transform.structured.hoist_redundant_vector_transfers " + v +
         " : (!transform.any_op) -> !transform.any_op");
  s.line("transform.apply_patterns to " + h +
         " {\n      transform.apply_patterns.vector.cast_away_vector_leading_one_dim\n"
         "      transform.apply_patterns.vector.lower_contraction lowering_strategy = \"outerproduct\"\n"
         "      transform.apply_patterns.vector.transfer_permutation_patterns\n"
         "      transform.apply_patterns.vector.lower_transfer max_transfer_rank = 1\n"
         "      transform.apply_patterns.vector.lower_outerproduct\n"
         "      transform.apply_patterns.vector.lower_multi_reduction lowering_strategy = \"innerreduction\"\n"
         "      transform.apply_patterns.vector.lower_transpose\n"
         "      transform.apply_patterns.vector.lower_shape_cast\n"
         "      transform.apply_patterns.canonicalization\n    } " + kPatternLimits + " : !transform.any_op");
}

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

DictionaryAttr choiceAttr(MLIRContext *ctx, const ImplementationChoice &c) {
  Builder b(ctx);
  SmallVector<NamedAttribute> a = {
      b.getNamedAttr("function", b.getStringAttr(c.function)),
      b.getNamedAttr("op", b.getStringAttr(c.op)),
      b.getNamedAttr("role", b.getStringAttr(c.role)),
      b.getNamedAttr("kind", b.getStringAttr(c.kind)),
      b.getNamedAttr("routine", b.getStringAttr(c.routine)),
      b.getNamedAttr("shape", b.getDenseI64ArrayAttr(c.shape)),
      b.getNamedAttr("detail", b.getStringAttr(c.detail))};
  if (c.fewRowsAtMost > 0) {
    a.push_back(b.getNamedAttr("few_rows_at_most", b.getI64IntegerAttr(c.fewRowsAtMost)));
    a.push_back(b.getNamedAttr("few_rows_per_pass", b.getI64IntegerAttr(c.fewRowsPerPass)));
    a.push_back(b.getNamedAttr("few_rows_routine", b.getStringAttr(c.fewRowsRoutine)));
  }
  return b.getDictionaryAttr(a);
}

/// On the op of a dispatch's else branch: what its branch for few rows runs
/// (dispatchOnRows), appended to the choice recorded for it.
constexpr llvm::StringLiteral kStreamedBelow = "linnet.streamed_below";

/// An f32 product against a run-time number of rows of x (prefill's
/// projections): `scf.if rows <= kMaxStreamedRows` runs the streamed product
/// (W read once per 8 rows: a short prompt costs about what decode does),
/// the else branch the op as before (BLAS here, or the tiled contraction
/// later). False, leaving the op alone, for any other product.
bool dispatchOnRows(const Contraction &c, const LinalgTarget &t, bool blas, const std::string &fname,
                    std::vector<ImplementationChoice> &choices) {
  std::optional<Matvec> mv = matchMatvec(c, /*anyRows=*/true);
  if (!mv || mv->batch >= 0 || !isF32(c.op))
    return false;
  linalg::LinalgOp op = c.op;
  OpBuilder b(op);
  Location loc = op.getLoc();
  int64_t xAxis = -1;
  for (unsigned r = 0; r < mv->maps[0].getNumResults(); ++r)
    if (mv->maps[0].getDimPosition(r) == mv->unit)
      xAxis = r;
  if (xAxis < 0)
    return false;
  Value rows = b.create<memref::DimOp>(loc, mv->x, xAxis);
  Value few = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ule, rows,
                                      b.create<arith::ConstantIndexOp>(loc, kMaxStreamedRows));
  auto branch = b.create<scf::IfOp>(loc, few, /*withElseRegion=*/true);
  b.setInsertionPointToStart(branch.thenBlock());
  auto streamed = cast<linalg::LinalgOp>(b.clone(*op));
  b.setInsertionPointToStart(branch.elseBlock());
  auto other = cast<linalg::LinalgOp>(b.clone(*op));
  op->erase();

  std::optional<Contraction> cs = matchContraction(streamed);
  std::optional<Matvec> ms = matchMatvec(*cs, /*anyRows=*/true);
  int64_t perBlock = ms->rows < 0 ? 64 : std::max<int64_t>(16, roundUp(ceilDiv(ms->rows, t.threads), 16));
  emitMatvec(*cs, *ms, t.vectorBits / 32, perBlock, t.prefetchRows);
  // One choice per op (the plan binds the contraction tasks of a function
  // to its choices in order): the implementation of more rows, BLAS where
  // it is linked, else the tiled contraction scheduled with the ops that
  // are left, its detail naming the streamed branch.
  std::string streamedNote =
      llvm::formatv(" (matvec-stream at rows<={0}: rows_per_block={1} lanes={2} prefetch_rows={3})",
                    kMaxStreamedRows, perBlock, t.vectorBits / 32, t.prefetchRows)
          .str();
  std::optional<Contraction> co = matchContraction(other);
  ImplementationChoice lib;
  lib.fewRowsAtMost = kMaxStreamedRows;
  lib.fewRowsPerPass = kMaxMatvecBatch;
  lib.fewRowsRoutine = "matvec-stream";
  lib.function = fname;
  lib.op = opName(other);
  lib.role = "matmul";
  lib.shape = shapeOf(*cs);
  if (blas && co && rewriteToSgemm(*co, lib.detail)) {
    lib.kind = "library";
    lib.routine = "cblas_sgemm";
    lib.detail += streamedNote;
    choices.push_back(lib);
  } else {
    other->setAttr(kStreamedBelow, StringAttr::get(other->getContext(), streamedNote));
  }
  return true;
}

LogicalResult lowerFunction(func::FuncOp func, ImplementationPolicy policy,
                            const LinalgTarget &t,
                            std::vector<ImplementationChoice> &choices) {
  MLIRContext *ctx = func.getContext();
  SmallVector<linalg::LinalgOp> ops;
  func.walk([&](linalg::LinalgOp op) { ops.push_back(op); });
  if (ops.empty())
    return success();
  for (linalg::LinalgOp op : ops)
    if (!op.hasPureBufferSemantics())
      return op->emitError("linnet CPU codegen expects linalg on memrefs "
                           "(bufferize first)");

  Schedule s;
  int64_t tag = 0;
  bool scheduled = false;
  bool blas = policy == ImplementationPolicy::Blas ||
              (policy == ImplementationPolicy::Auto && openBLASAvailable());
  std::string fname = func.getSymName().str();
  // Library calls and streamed matrix-vector products first: a BLAS call
  // may absorb the zero fill before it.
  for (linalg::LinalgOp op : ops) {
    // A product against a param stored in a block format (q8_0, q4_0).
    if (std::optional<BlockMatvecChoice> q = rewriteBlockMatvec(op, t.vectorBits / 32, t.threads, t.prefetchRows,
                                                                       t.int8BlockProducts, t.int8Dot > 0)) {
      ImplementationChoice choice;
      choice.function = fname;
      choice.op = "linalg.generic";
      choice.kind = "generated";
      choice.role = "matvec";
      choice.routine = q->routine;
      choice.detail = q->detail;
      choice.shape = q->shape;
      choices.push_back(choice);
      continue;
    }
    auto c = matchContraction(op);
    if (!c)
      continue;
    ImplementationChoice choice;
    choice.function = fname;
    choice.op = opName(op);
    choice.kind = "generated";
    choice.shape = shapeOf(*c);
    choice.role = c->n == ~0u || c->m == ~0u ? "matvec"
                  : c->batch.empty()         ? "matmul"
                                             : "batch-matmul";
    std::optional<Matvec> asMatvec = matchMatvec(*c);
    if (!asMatvec && choice.role == "matmul" && dispatchOnRows(*c, t, blas, fname, choices))
      continue;
    if (!asMatvec && blas && choice.role == "matmul" &&
        rewriteToSgemm(*c, choice.detail)) {
      choice.kind = "library";
      choice.routine = "cblas_sgemm";
      choices.push_back(choice);
    } else if (auto &mv = asMatvec) {
      // One contiguous block of rows per thread (static rows): a decode-size
      // W (a few MB) is done in ~100 us, where per-chunk dispatch and a
      // straggling thread cost more than any imbalance. A matmul with a unit
      // M or N (decode's [1, K] x [N, K]^T) is a matvec too.
      int64_t M = mv->rows;
      int64_t rows = M < 0 ? 64
                           : std::max<int64_t>(16, roundUp(ceilDiv(M, t.threads), 16));
      choice.role = "matvec";
      choice.routine = "matvec-stream";
      choice.detail = mv->batch > 1
                          ? llvm::formatv("rows_per_block={0} lanes={1} batch={2}", rows, t.vectorBits / 32,
                                          mv->batch)
                                .str()
                      : mv->batch < 0
                          ? llvm::formatv("rows_per_block={0} lanes={1} batch=dynamic", rows, t.vectorBits / 32).str()
                          : llvm::formatv("rows_per_block={0} lanes={1} unroll=2 row_group=1", rows,
                                          t.vectorBits / 32)
                                .str();
      choice.detail += llvm::formatv(" prefetch_rows={0}", t.prefetchRows).str();
      emitMatvec(*c, *mv, t.vectorBits / 32, rows, t.prefetchRows);
      choices.push_back(choice);
    }
  }
  ops.clear();
  func.walk([&](linalg::LinalgOp op) { ops.push_back(op); });
  for (linalg::LinalgOp op : ops) {
    ImplementationChoice choice;
    choice.function = fname;
    choice.op = opName(op);
    choice.kind = "generated";
    op->setAttr(kTag, IntegerAttr::get(IntegerType::get(ctx, 64), tag));
    if (auto c = matchContraction(op)) {
      choice.shape = shapeOf(*c);
      choice.role = c->n == ~0u || c->m == ~0u ? "matvec"
                    : c->batch.empty()         ? "matmul"
                                               : "batch-matmul";
      choice.routine = "contraction-tiled";
      scheduleContraction(s, *c, tag++, t, choice.detail);
      if (auto note = op->getAttrOfType<StringAttr>(kStreamedBelow)) {
        choice.detail += note.str();
        choice.fewRowsAtMost = kMaxStreamedRows;
        choice.fewRowsPerPass = kMaxMatvecBatch;
        choice.fewRowsRoutine = "matvec-stream";
        op->removeAttr(kStreamedBelow);
      }
      scheduled = true;
      choices.push_back(choice);
      continue;
    }
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    choice.shape.assign(ranges.begin(), ranges.end());
    for (int64_t &d : choice.shape)
      if (ShapedType::isDynamic(d))
        d = -1;
    // bool is one byte per element in memory (the runtime ABI, scalar
    // loads and stores), but a vector<Nxi1> store packs bits: ops on bool
    // buffers stay scalar loops.
    bool touchesBool = llvm::any_of(op->getOperandTypes(), [](Type ty) {
      auto st = dyn_cast<ShapedType>(ty);
      return st && st.getElementType().isInteger(1);
    });
    bool vectorized = !touchesBool && scheduleElementwise(s, op, tag, t);
    ++tag;
    if (vectorized) {
      choice.role = "elementwise";
      choice.routine = "vectorized";
      scheduled = true;
    } else {
      // Lowered now: the vectorizer below would otherwise turn a whole
      // static reduction into one huge vector.
      choice.role = "other";
      choice.routine = "loops";
      IRRewriter rewriter(ctx);
      rewriter.setInsertionPoint(op);
      if (failed(linalg::linalgOpToLoops(rewriter, op)))
        return op->emitError("cannot lower to loops");
      rewriter.eraseOp(op);
    }
    choices.push_back(choice);
  }

  if (scheduled) {
    vectorizeAndLower(s);
    std::string text = s.text();
    ParserConfig config(ctx);
    OwningOpRef<ModuleOp> library = parseSourceString<ModuleOp>(text, config);
    if (!library)
      return func.emitError("internal error: bad transform schedule:\n") << text;
    auto entry = library->lookupSymbol<transform::NamedSequenceOp>("__transform_main");
    transform::TransformOptions options;
    // Some shapes make the vector patterns cycle (unit dims: a [1, S, 1]
    // result broadcast and extracted without end) until the rewrite limit
    // stops them. The function then keeps its schedule-free body and runs
    // as plain loops: slower, never a failed build. The diagnostics of the
    // failed attempt are not the user's.
    OwningOpRef<func::FuncOp> saved = func.clone();
    LogicalResult applied = failure();
    {
      ScopedDiagnosticHandler quiet(ctx, [](Diagnostic &) { return success(); });
      applied = transform::applyTransformNamedSequence(func, entry, *library, options);
    }
    if (failed(applied)) {
      func.getBody().takeBody(saved->getBody());
      for (ImplementationChoice &c : choices)
        if (c.function == fname && (c.routine == "contraction-tiled" || c.routine == "vectorized")) {
          c.routine = "loops";
          c.detail = "vector schedule did not converge";
        }
    }
  }

  // What the schedules left (remainder tiles with dynamic sizes, reductions
  // that are not contractions, dynamic shapes) becomes loops.
  SmallVector<linalg::LinalgOp> rest;
  func.walk([&](linalg::LinalgOp op) { rest.push_back(op); });
  IRRewriter rewriter(ctx);
  for (linalg::LinalgOp op : rest) {
    rewriter.setInsertionPoint(op);
    if (failed(linalg::linalgOpToLoops(rewriter, op)))
      return op->emitError("cannot lower to loops");
    rewriter.eraseOp(op);
  }
  // Threads: scf.forall -> scf.parallel (-> OpenMP in the LLVM lowering).
  SmallVector<scf::ForallOp> foralls;
  func.walk([&](scf::ForallOp f) { foralls.push_back(f); });
  for (scf::ForallOp f : foralls) {
    rewriter.setInsertionPoint(f);
    if (failed(scf::forallToParallelLoop(rewriter, f)))
      return f->emitError("cannot convert scf.forall to scf.parallel");
  }
  func.walk([&](Operation *op) { op->removeAttr(kTag); });
  return success();
}

struct LowerLinalgPass
    : public impl::LinnetCPULowerLinalgBase<LowerLinalgPass> {
  using Base::Base;
  void getDependentDialects(DialectRegistry &registry) const override {
    registerLinalgCodegenDialects(registry);
  }
  void runOnOperation() override {
    ImplementationPolicy policy;
    if (!parseImplementationPolicy(implementation, policy)) {
      getOperation().emitError("unknown implementation policy '")
          << implementation << "' (auto | generated | blas)";
      return signalPassFailure();
    }
    LinalgTarget t;
    t.vectorBits = vectorBits;
    t.l1Bytes = l1Bytes;
    t.l2Bytes = l2Bytes;
    t.threads = threads;
    t.minParallelMacs = minParallelMacs;
    t.prefetchRows = prefetchRows;
    if (blockProducts != "exact" && blockProducts != "int8") {
      getOperation().emitError("unknown block products '") << blockProducts << "' (exact | int8)";
      return signalPassFailure();
    }
    t.int8BlockProducts = blockProducts == "int8";
    t.int8Dot = int8Dot;
    t = t.resolved();
    std::vector<ImplementationChoice> choices;
    for (auto func : llvm::to_vector(getOperation().getOps<func::FuncOp>()))
      if (failed(lowerFunction(func, policy, t, choices)))
        return signalPassFailure();
    ModuleOp module = getOperation();
    SmallVector<Attribute> attrs;
    if (auto old = module->getAttrOfType<ArrayAttr>(kChoicesAttr))
      attrs.append(old.begin(), old.end());
    for (const ImplementationChoice &c : choices) {
      attrs.push_back(choiceAttr(module.getContext(), c));
      if (remarks) {
        auto f = module.lookupSymbol<func::FuncOp>(c.function);
        emitRemark(f ? f.getLoc() : module.getLoc())
            << "implementation of " << c.op << " (" << c.role << ") in @"
            << c.function << ": " << c.kind << " " << c.routine << " "
            << c.detail;
      }
    }
    if (!attrs.empty())
      module->setAttr(kChoicesAttr, ArrayAttr::get(module.getContext(), attrs));
  }
};

} // namespace

bool parseImplementationPolicy(llvm::StringRef text, ImplementationPolicy &out) {
  if (text == "auto")
    out = ImplementationPolicy::Auto;
  else if (text == "generated")
    out = ImplementationPolicy::Generated;
  else if (text == "blas")
    out = ImplementationPolicy::Blas;
  else
    return false;
  return true;
}

LinalgTarget LinalgTarget::resolved() const {
  LinalgTarget t = *this;
  if (!t.vectorBits) {
    llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
    t.vectorBits = features.lookup("avx512f") ? 512 : features.lookup("avx2") ? 256 : 128;
  }
  if (!t.l1Bytes) {
    long v = sysconf(_SC_LEVEL1_DCACHE_SIZE);
    t.l1Bytes = v > 0 ? v : 32 * 1024;
  }
  if (!t.l2Bytes) {
    long v = sysconf(_SC_LEVEL2_CACHE_SIZE);
    t.l2Bytes = v > 0 ? v : 1024 * 1024;
  }
  if (!t.threads)
    t.threads = 1;
  if (t.prefetchRows < 0)
    t.prefetchRows = streamPrefetchRows(llvm::sys::getHostCPUName());
  if (t.int8Dot < 0) {
    llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
    t.int8Dot = features.lookup("avx512vnni") && features.lookup("avx512vl") ? 1 : 0;
  }
  return t;
}

int64_t streamPrefetchRows(llvm::StringRef cpu) {
  // Rows of W of a few hundred bytes to 2 KB end before Sapphire Rapids'
  // stream prefetchers pick them up: 8 rows ahead took a q8_0 32000 x 512
  // product from 2.65 to 0.88 ms there. AMD's Zen cores follow the one
  // sequential stream a thread reads on their own, and the extra loads
  // cost: f32 decode of the default Llama on znver4, 151 tokens/s with
  // them, 174 without (bench/llama/README.md, "Prefetching").
  return cpu.starts_with("znver") ? 0 : 8;
}

bool openBLASAvailable() {
  for (const char *dir : {"/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib",
                          "/usr/lib/aarch64-linux-gnu"})
    if (llvm::sys::fs::exists(std::string(dir) + "/libopenblas.so.0"))
      return true;
  return false;
}

void registerLinalgCodegenDialects(DialectRegistry &registry) {
  registry.insert<affine::AffineDialect, arith::ArithDialect,
                  bufferization::BufferizationDialect, func::FuncDialect,
                  linalg::LinalgDialect, LLVM::LLVMDialect,
                  memref::MemRefDialect, scf::SCFDialect,
                  tensor::TensorDialect, transform::TransformDialect,
                  vector::VectorDialect>();
  linalg::registerTransformDialectExtension(registry);
  scf::registerTransformDialectExtension(registry);
  vector::registerTransformDialectExtension(registry);
  memref::registerTransformDialectExtension(registry);
  func::registerTransformDialectExtension(registry);
  linalg::registerAllDialectInterfaceImplementations(registry);
  affine::registerValueBoundsOpInterfaceExternalModels(registry);
  arith::registerValueBoundsOpInterfaceExternalModels(registry);
  scf::registerValueBoundsOpInterfaceExternalModels(registry);
  memref::registerAllocationOpInterfaceExternalModels(registry);
}

LogicalResult lowerLinalg(ModuleOp module, ImplementationPolicy policy,
                          const LinalgTarget &target,
                          std::vector<ImplementationChoice> *choices) {
  bool any = false;
  module.walk([&](linalg::LinalgOp) { any = true; });
  if (!any)
    return success();
  LinalgTarget t = target.resolved();
  std::vector<ImplementationChoice> local;
  for (auto func : llvm::to_vector(module.getOps<func::FuncOp>()))
    if (failed(lowerFunction(func, policy, t, local)))
      return failure();
  if (choices)
    choices->insert(choices->end(), local.begin(), local.end());
  return success();
}

bool usesBLAS(ModuleOp module) {
  return static_cast<bool>(module.lookupSymbol(kSgemm));
}

std::vector<ImplementationChoice> recordedChoices(ModuleOp module) {
  std::vector<ImplementationChoice> out;
  auto attrs = module->getAttrOfType<ArrayAttr>(kChoicesAttr);
  if (!attrs)
    return out;
  for (Attribute a : attrs) {
    auto d = dyn_cast<DictionaryAttr>(a);
    if (!d)
      continue;
    ImplementationChoice c;
    auto str = [&](const char *k) {
      auto s = d.getAs<StringAttr>(k);
      return s ? s.str() : std::string();
    };
    c.function = str("function");
    c.op = str("op");
    c.role = str("role");
    c.kind = str("kind");
    c.routine = str("routine");
    c.detail = str("detail");
    if (auto s = d.getAs<DenseI64ArrayAttr>("shape"))
      c.shape.assign(s.asArrayRef().begin(), s.asArrayRef().end());
    if (auto n = d.getAs<IntegerAttr>("few_rows_at_most")) {
      c.fewRowsAtMost = n.getInt();
      if (auto p = d.getAs<IntegerAttr>("few_rows_per_pass"))
        c.fewRowsPerPass = p.getInt();
      c.fewRowsRoutine = str("few_rows_routine");
    }
    out.push_back(c);
  }
  return out;
}

std::string toJSON(const ImplementationChoice &c) {
  auto q = [](const std::string &s) {
    std::string r = "\"";
    for (char ch : s) {
      if (ch == '"' || ch == '\\')
        r += '\\';
      r += ch;
    }
    return r + "\"";
  };
  std::string shape = "[";
  for (size_t i = 0; i < c.shape.size(); ++i)
    shape += (i ? ", " : "") + std::to_string(c.shape[i]);
  shape += "]";
  return "{\"function\": " + q(c.function) + ", \"op\": " + q(c.op) +
         ", \"role\": " + q(c.role) + ", \"kind\": " + q(c.kind) +
         ", \"routine\": " + q(c.routine) + ", \"shape\": " + shape +
         ", \"detail\": " + q(c.detail) +
         (c.fewRowsAtMost > 0 ? ", \"few_rows\": {\"rows_at_most\": " + std::to_string(c.fewRowsAtMost) +
                                    ", \"rows_per_pass\": " + std::to_string(c.fewRowsPerPass) +
                                    ", \"routine\": " + q(c.fewRowsRoutine) + "}"
                              : std::string()) +
         "}";
}

const char *blasShimSource() {
  return R"C(/* linnet BLAS shim: loads OpenBLAS on first use. OpenBLAS 0.3.21
   falls back to SSE3 ("Prescott") kernels on CPUs it does not know (e.g.
   AVX-512 Xeons newer than it); unless OPENBLAS_CORETYPE is set, pick the
   kernel family from the CPU's features before OpenBLAS initializes. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
typedef void (*sgemm_t)(int, int, int, int, int, int, float, const float *,
                        int, const float *, int, float, float *, int);
static sgemm_t linnet_sgemm_fn;
static pthread_once_t linnet_blas_once = PTHREAD_ONCE_INIT;
static void linnet_blas_load(void) {
  if (!getenv("OPENBLAS_CORETYPE")) {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
      setenv("OPENBLAS_CORETYPE", "SkylakeX", 0);
    else if (__builtin_cpu_supports("avx2"))
      setenv("OPENBLAS_CORETYPE", "Haswell", 0);
  }
  void *h = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_GLOBAL);
  if (h)
    linnet_sgemm_fn = (sgemm_t)dlsym(h, "cblas_sgemm");
  if (!linnet_sgemm_fn) {
    fprintf(stderr, "linnet: cannot load cblas_sgemm from libopenblas.so.0: %s\n",
            dlerror());
    abort();
  }
}
void linnet_cblas_sgemm(int order, int ta, int tb, int m, int n, int k,
                        float alpha, const float *a, int lda, const float *b,
                        int ldb, float beta, float *c, int ldc) {
  pthread_once(&linnet_blas_once, linnet_blas_load);
  if (m == 0 || n == 0)
    return;
  linnet_sgemm_fn(order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
)C";
}

} // namespace linnet::cpu
