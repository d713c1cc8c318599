//===- SplitReductions.cpp - Sums read along their axis, a warp an output --===//
//
// Passes.td, LinnetCUDASplitReductions. One thread an output reads a
// linear layer's W[n, k] with a stride of a row across the warp: every
// load its own transaction. Lanes over the reduced axis read adjacent
// elements instead. The pass writes the lane-split tile the relation
// lowering writes (-gf-lower-kernel-to-loops{lane-split}), so the mapping,
// the shared-memory promotion and the CPU execution of the kernels are the
// ones relations already use.
//
//===----------------------------------------------------------------------===//

#include "linnet/Target/CUDA/Passes.h"

#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

namespace linnet::cuda {

#define GEN_PASS_DEF_LINNETCUDASPLITREDUCTIONS
#include "linnet/Target/CUDA/Passes.h.inc"

namespace {

constexpr int64_t kLanes = 32;

Value cst(OpBuilder &b, Location loc, int64_t v) { return b.create<arith::ConstantIndexOp>(loc, v); }

/// What a splittable op is: its reduced and kept loops, the body's final
/// add and the term it adds.
struct Split {
  linalg::LinalgOp op;
  SmallVector<unsigned> parallel, reduced;
  Operation *add = nullptr; // arith.addf / arith.addi yielding out + term
  Value term;
};

/// Elements of an operand, dynamic extents counted large (a run-time
/// sequence or batch is what makes a tensor big).
int64_t footprint(Type t) {
  auto shaped = dyn_cast<ShapedType>(t);
  if (!shaped)
    return 1;
  int64_t n = 1;
  for (int64_t d : shaped.getShape())
    n = std::min<int64_t>(n * (ShapedType::isDynamic(d) ? 4096 : std::max<int64_t>(d, 1)), int64_t(1) << 40);
  return n;
}

std::optional<Split> match(linalg::LinalgOp op, int64_t minExtent) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 || op.getNumReductionLoops() == 0 ||
      op->getNumRegions() != 1 || op.getBlock() == nullptr)
    return std::nullopt;
  auto out = dyn_cast<MemRefType>(op.getDpsInits()[0].getType());
  if (!out)
    return std::nullopt;
  Type elem = out.getElementType();
  // f16/bf16 sums stay in order until they accumulate in f32.
  if (!(elem.isF32() || elem.isF64() || (elem.isSignlessInteger() && !elem.isInteger(1))))
    return std::nullopt;
  Split s;
  s.op = op;
  for (auto [i, it] : llvm::enumerate(op.getIteratorTypesArray()))
    (it == utils::IteratorType::reduction ? s.reduced : s.parallel).push_back(i);
  // The output is indexed by kept loops only, each once.
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  for (AffineExpr e : outMap.getResults()) {
    auto d = dyn_cast<AffineDimExpr>(e);
    if (!d || llvm::is_contained(s.reduced, d.getPosition()))
      return std::nullopt;
  }
  // The body: yield (out + term) with out used there only.
  Block *body = op.getBlock();
  auto yield = dyn_cast<linalg::YieldOp>(body->getTerminator());
  if (!yield || yield.getNumOperands() != 1)
    return std::nullopt;
  Value outArg = body->getArguments().back();
  Operation *add = yield.getOperand(0).getDefiningOp();
  if (!add || add->getBlock() != body || !isa<arith::AddFOp, arith::AddIOp>(add) || !outArg.hasOneUse())
    return std::nullopt;
  if (add->getOperand(0) == outArg)
    s.term = add->getOperand(1);
  else if (add->getOperand(1) == outArg)
    s.term = add->getOperand(0);
  else
    return std::nullopt;
  s.add = add;
  // Worth it: enough terms to share, and the largest input read along a
  // reduced axis (otherwise one thread an output reads adjacent elements
  // across the warp already).
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t extent = 1;
  bool dynamic = false;
  for (unsigned r : s.reduced) {
    if (ShapedType::isDynamic(ranges[r]))
      dynamic = true;
    else
      extent *= ranges[r];
  }
  if (!dynamic && extent < minExtent)
    return std::nullopt;
  OpOperand *largest = nullptr;
  for (OpOperand *in : op.getDpsInputOperands())
    if (!largest || footprint(in->get().getType()) > footprint(largest->get().getType()))
      largest = in;
  if (!largest || !isa<MemRefType>(largest->get().getType()))
    return std::nullopt;
  AffineMap m = op.getMatchingIndexingMap(largest);
  if (m.getNumResults() == 0)
    return std::nullopt;
  auto inner = dyn_cast<AffineDimExpr>(m.getResults().back());
  if (!inner || !llvm::is_contained(s.reduced, inner.getPosition()))
    return std::nullopt;
  return s;
}

/// `linear` (last loop fastest) as the loops `dims` of `sizes`.
void delinearize(OpBuilder &b, Location loc, Value linear, ArrayRef<unsigned> dims, ArrayRef<Value> sizes,
                 SmallVectorImpl<Value> &ivs) {
  Value rest = linear;
  for (int i = int(dims.size()) - 1; i >= 0; --i) {
    Value size = sizes[dims[i]];
    ivs[dims[i]] = i == 0 ? rest : b.create<arith::RemUIOp>(loc, rest, size).getResult();
    if (i > 0)
      rest = b.create<arith::DivUIOp>(loc, rest, size);
  }
}

Value product(OpBuilder &b, Location loc, ArrayRef<unsigned> dims, ArrayRef<Value> sizes) {
  Value p = cst(b, loc, 1);
  for (unsigned d : dims)
    p = b.create<arith::MulIOp>(loc, p, sizes[d]);
  return p;
}

/// Loop variables (offset + iv * stride of each loop range) for `ivs`.
SmallVector<Value> operandIndices(OpBuilder &b, Location loc, AffineMap map, ArrayRef<Value> loopValues) {
  SmallVector<Value> idx;
  for (AffineExpr e : map.getResults())
    idx.push_back(affine::expandAffineExpr(b, loc, e, loopValues, ValueRange{}));
  return idx;
}

/// The body's term at the loop values `ivs`: inputs loaded, the body's ops
/// up to the term cloned.
Value emitTerm(OpBuilder &b, Location loc, const Split &s, ArrayRef<Value> ivs) {
  linalg::LinalgOp op = s.op;
  Block *body = op.getBlock();
  IRMapping map;
  for (OpOperand *in : op.getDpsInputOperands()) {
    Value v = in->get();
    Value arg = body->getArgument(in->getOperandNumber());
    if (auto type = dyn_cast<MemRefType>(v.getType()))
      map.map(arg, b.create<memref::LoadOp>(loc, v, operandIndices(b, loc, op.getMatchingIndexingMap(in), ivs)));
    else
      map.map(arg, v);
  }
  for (Operation &inner : body->without_terminator()) {
    if (&inner == s.add)
      break;
    if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
      map.map(index.getResult(), ivs[index.getDim()]);
      continue;
    }
    b.clone(inner, map);
  }
  return map.lookupOrDefault(s.term);
}

/// out + term, as the body adds (its flags kept).
Value emitAdd(OpBuilder &b, const Split &s, Value acc, Value term) {
  IRMapping map;
  map.map(s.add->getOperand(0), acc);
  map.map(s.add->getOperand(1), term);
  return b.clone(*s.add, map)->getResult(0);
}

void rewrite(const Split &s, int64_t rows) {
  linalg::LinalgOp op = s.op;
  OpBuilder b(op);
  Location loc = op.getLoc();
  MLIRContext *ctx = op->getContext();
  // Loop ranges start at 0 with unit steps for linalg on memrefs.
  SmallVector<Value> sizes;
  for (Range r : op.createLoopRanges(b, loc))
    sizes.push_back(getValueOrCreateConstantIndexOp(b, loc, r.size));
  Value outputs = product(b, loc, s.parallel, sizes);
  Value terms = product(b, loc, s.reduced, sizes);
  Value c0 = cst(b, loc, 0), c1 = cst(b, loc, 1), tile = cst(b, loc, rows), lanes = cst(b, loc, kLanes);
  Value tiles = b.create<arith::DivUIOp>(loc, b.create<arith::AddIOp>(loc, outputs, cst(b, loc, rows - 1)), tile);
  // Lanes that get a term: min(32, terms).
  Value used = b.create<arith::MinUIOp>(loc, lanes, terms);
  Value output = op.getDpsInits()[0];
  Type elem = cast<MemRefType>(output.getType()).getElementType();
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));

  auto schedule = DictionaryAttr::get(
      ctx, {NamedAttribute(StringAttr::get(ctx, "block_rows"), b.getI64IntegerAttr(rows)),
            NamedAttribute(StringAttr::get(ctx, "block_neighbors"), b.getI64IntegerAttr(kLanes)),
            NamedAttribute(StringAttr::get(ctx, "num_warps"), b.getI64IntegerAttr(rows))});
  auto par = b.create<scf::ParallelOp>(loc, ValueRange{c0}, ValueRange{tiles}, ValueRange{c1});
  par->setAttr("linnet.schedule", schedule);
  OpBuilder pb = OpBuilder::atBlockBegin(par.getBody());
  Value o0 = pb.create<arith::MulIOp>(loc, par.getInductionVars()[0], tile);
  auto scratch = pb.create<memref::AllocOp>(loc, MemRefType::get({rows, kLanes}, elem));
  scratch->setAttr("linnet.workgroup", pb.getUnitAttr());

  unsigned loops = op.getNumLoops();
  // Phase one: (output of the tile, lane).
  auto reduce = pb.create<scf::ParallelOp>(loc, ValueRange{c0, c0}, ValueRange{tile, lanes}, ValueRange{c1, c1});
  reduce->setAttr("linnet.lanes", pb.getUnitAttr());
  reduce->setAttr("linnet.tile_schedule", schedule);
  {
    OpBuilder rb = OpBuilder::atBlockBegin(reduce.getBody());
    Value r = reduce.getInductionVars()[0], lane = reduce.getInductionVars()[1];
    Value o = rb.create<arith::AddIOp>(loc, o0, r);
    Value live = rb.create<arith::AndIOp>(loc, rb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, o, outputs),
                                          rb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, lane, terms));
    auto inside = rb.create<scf::IfOp>(loc, live, /*withElse=*/false);
    OpBuilder ib = inside.getThenBodyBuilder();
    SmallVector<Value> ivs(loops);
    delinearize(ib, loc, o, s.parallel, sizes, ivs);
    // The lane's first term starts its partial (no identity added: a sum
    // of -0.0 stays -0.0, as in order).
    auto at = [&](OpBuilder &tb, Value j) {
      SmallVector<Value> all(ivs);
      delinearize(tb, loc, j, s.reduced, sizes, all);
      return emitTerm(tb, loc, s, all);
    };
    Value first = at(ib, lane);
    auto loop = ib.create<scf::ForOp>(loc, ib.create<arith::AddIOp>(loc, lane, lanes), terms, lanes,
                                      ValueRange{first},
                                      [&](OpBuilder &lb, Location l, Value j, ValueRange acc) {
                                        lb.create<scf::YieldOp>(l, emitAdd(lb, s, acc[0], at(lb, j)));
                                      });
    ib.create<memref::StoreOp>(loc, loop.getResult(0), scratch, ValueRange{r, lane});
  }
  // Phase two: each output adds its lanes' partials, in lane order.
  auto combine = pb.create<scf::ParallelOp>(loc, ValueRange{c0}, ValueRange{tile}, ValueRange{c1});
  combine->setAttr("linnet.lanes", pb.getUnitAttr());
  combine->setAttr("linnet.tile_schedule", schedule);
  {
    OpBuilder cb = OpBuilder::atBlockBegin(combine.getBody());
    Value r = combine.getInductionVars()[0];
    Value o = cb.create<arith::AddIOp>(loc, o0, r);
    auto inside = cb.create<scf::IfOp>(loc, cb.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, o, outputs),
                                       /*withElse=*/false);
    OpBuilder ib = inside.getThenBodyBuilder();
    SmallVector<Value> ivs(loops);
    delinearize(ib, loc, o, s.parallel, sizes, ivs);
    for (unsigned d : s.reduced)
      ivs[d] = c0; // not in the output's map
    SmallVector<Value> idx = operandIndices(ib, loc, outMap, ivs);
    Value init = ib.create<memref::LoadOp>(loc, output, idx);
    auto fold = ib.create<scf::ForOp>(loc, c0, used, c1, ValueRange{init},
                                      [&](OpBuilder &lb, Location l, Value lane, ValueRange acc) {
                                        Value p = lb.create<memref::LoadOp>(l, scratch, ValueRange{r, lane});
                                        lb.create<scf::YieldOp>(l, emitAdd(lb, s, acc[0], p));
                                      });
    ib.create<memref::StoreOp>(loc, fold.getResult(0), output, idx);
  }
  pb.create<memref::DeallocOp>(loc, scratch);
  op->erase();
}

std::string shapeText(linalg::LinalgOp op) {
  std::string s;
  llvm::raw_string_ostream os(s);
  llvm::interleave(
      op.getStaticLoopRanges(), os,
      [&](int64_t d) {
        if (ShapedType::isDynamic(d))
          os << "?";
        else
          os << d;
      },
      "x");
  return s;
}

struct SplitReductionsPass : public impl::LinnetCUDASplitReductionsBase<SplitReductionsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (rows < 1 || rows > 32) {
      module.emitError("-linnet-cuda-split-reductions: rows must be 1 to 32 (a block is rows warps)");
      return signalPassFailure();
    }
    // Every contraction is recorded, split or not, in program order (the
    // concrete plan pairs them with the contraction tasks); other sums
    // only where split.
    SmallVector<std::pair<linalg::LinalgOp, std::optional<Split>>> ops;
    module.walk([&](linalg::LinalgOp op) {
      std::optional<Split> s = match(op, minExtent);
      if (s || linalg::isaContractionOpInterface(op))
        ops.push_back({op, s});
    });
    MLIRContext *ctx = module.getContext();
    SmallVector<Attribute> record;
    if (auto prior = module->getAttrOfType<ArrayAttr>("linnet.cuda.implementations"))
      llvm::append_range(record, prior);
    auto named = [&](StringRef name, StringRef value) {
      return NamedAttribute(StringAttr::get(ctx, name), StringAttr::get(ctx, value));
    };
    for (auto &[op, s] : ops) {
      auto fn = op->getParentOfType<func::FuncOp>();
      std::string role = "reduction";
      if (linalg::isaContractionOpInterface(op)) {
        FailureOr<linalg::ContractionDimensions> dims = linalg::inferContractionDims(op);
        role = failed(dims) || dims->m.empty() || dims->n.empty() ? "matvec"
               : dims->batch.empty()                             ? "matmul"
                                                                 : "batch-matmul";
      }
      std::string detail = s ? llvm::formatv("loops={0} rows={1} lanes={2}", shapeText(op), int64_t(rows), kLanes).str()
                             : llvm::formatv("loops={0}", shapeText(op)).str();
      StringRef generated = s ? "warp-split" : "thread-per-output";
      // A product bound to a library (-linnet-cuda-bind-library) is that
      // routine, with this kernel as its fallback.
      auto library = op->getAttrOfType<StringAttr>("linnet.cuda.library");
      if (library)
        detail += " fallback=" + generated.str();
      record.push_back(DictionaryAttr::get(
          ctx, {named("function", fn ? fn.getSymName() : ""), named("op", op->getName().getStringRef()),
                named("role", role), named("kind", library ? "library" : "generated"),
                named("routine", library ? library.getValue() : generated), named("detail", detail)}));
      if (s)
        rewrite(*s, rows);
    }
    if (!record.empty())
      module->setAttr("linnet.cuda.implementations", ArrayAttr::get(ctx, record));
  }
};

} // namespace
} // namespace linnet::cuda
