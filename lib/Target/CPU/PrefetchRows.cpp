//===- PrefetchRows.cpp - Prefetch the rows a loop reads, ahead -----------===//
//
// -linnet-cpu-prefetch-rows (Passes.td): in a loop the importer marked
// `linnet.rows` (one key or value row of the KV cache a step), the rows its
// reads of function arguments will touch `distance` iterations on are
// prefetched at the top of each iteration, a 64-byte line at a time.
//
//===----------------------------------------------------------------------===//

#include "linnet/Target/CPU/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace linnet::cpu {
#define GEN_PASS_DEF_LINNETCPUPREFETCHROWS
#include "linnet/Target/CPU/Passes.h.inc"
} // namespace linnet::cpu

using namespace mlir;

namespace {

/// One row to prefetch: the read's memref and indices, the last index
/// stepping over `elems` elements from its value (an inner loop's lower
/// bound, or a vector read's first element).
struct Row {
  Value memref;
  SmallVector<Value> indices;
  int64_t elems = 1;
};

/// The inner `scf.for` (between `loop` and the read) whose induction
/// variable `v` is, with constant bounds and step 1: its trip count.
static std::optional<std::pair<Value, int64_t>> innerSpan(scf::ForOp loop, Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg)
    return std::nullopt;
  auto inner = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp());
  if (!inner || inner == loop || !loop->isProperAncestor(inner) || inner.getInductionVar() != v)
    return std::nullopt;
  std::optional<int64_t> lb = getConstantIntValue(inner.getLowerBound());
  std::optional<int64_t> ub = getConstantIntValue(inner.getUpperBound());
  std::optional<int64_t> step = getConstantIntValue(inner.getStep());
  if (!lb || !ub || !step || *step != 1 || *ub <= *lb)
    return std::nullopt;
  return std::make_pair(inner.getLowerBound(), *ub - *lb);
}

/// Whether `v` is computed in `loop`'s body from its induction variable
/// and values defined outside the loop by pure ops alone (what the
/// prefetch can recompute for a later iteration); its ops into `slice`.
static bool recomputable(scf::ForOp loop, Value v, llvm::SetVector<Operation *> &slice, bool &usesIv) {
  if (v == loop.getInductionVar()) {
    usesIv = true;
    return true;
  }
  if (!loop->isAncestor(v.getParentRegion()->getParentOp()))
    return true; // from outside the loop
  Operation *def = v.getDefiningOp();
  if (!def || def->getNumRegions() != 0 || !isPure(def) || def->getBlock() != loop.getBody())
    return false;
  for (Value operand : def->getOperands())
    if (!recomputable(loop, operand, slice, usesIv))
      return false;
  slice.insert(def);
  return true;
}

void prefetchRows(scf::ForOp loop, int64_t distance) {
  auto fn = loop->getParentOfType<func::FuncOp>();
  if (!fn || fn.isExternal())
    return;
  Block *entry = &fn.getBody().front();
  SmallVector<Row> rows;
  llvm::SetVector<Operation *> slice;
  auto consider = [&](Value memref, ValueRange indices, int64_t vectorElems) {
    auto arg = dyn_cast<BlockArgument>(memref);
    auto type = dyn_cast<MemRefType>(memref.getType());
    if (!arg || arg.getOwner() != entry || !type || indices.empty() || !type.getElementType().isIntOrFloat())
      return;
    Row row{memref, {}, vectorElems};
    bool usesIv = false;
    llvm::SetVector<Operation *> mine;
    for (auto [k, index] : llvm::enumerate(indices)) {
      if (std::optional<std::pair<Value, int64_t>> span = innerSpan(loop, index)) {
        if (k + 1 != indices.size() || vectorElems != 1)
          return; // an inner loop over a row's outer axis: too many lines
        row.indices.push_back(span->first);
        row.elems = span->second;
        continue;
      }
      if (!recomputable(loop, index, mine, usesIv))
        return;
      row.indices.push_back(index);
    }
    if (!usesIv)
      return; // the same row every iteration
    for (const Row &r : rows)
      if (r.memref == row.memref && r.indices == row.indices && r.elems == row.elems)
        return;
    slice.insert(mine.begin(), mine.end());
    rows.push_back(std::move(row));
  };
  loop.getBody()->walk([&](Operation *op) {
    if (auto load = dyn_cast<memref::LoadOp>(op))
      consider(load.getMemRef(), load.getIndices(), 1);
    else if (auto load = dyn_cast<vector::LoadOp>(op))
      if (load.getVectorType().getRank() == 1)
        consider(load.getBase(), load.getIndices(), load.getVectorType().getNumElements());
  });
  if (rows.empty())
    return;

  OpBuilder b = OpBuilder::atBlockBegin(loop.getBody());
  Location loc = loop.getLoc();
  IRMapping ahead;
  ahead.map(loop.getInductionVar(),
            b.create<arith::AddIOp>(loc, loop.getInductionVar(), b.create<arith::ConstantIndexOp>(loc, distance)));
  // The slice in the body's order, so each op follows what it reads.
  SmallVector<Operation *> ordered(slice.begin(), slice.end());
  llvm::sort(ordered, [](Operation *x, Operation *y) { return x->isBeforeInBlock(y); });
  for (Operation *op : ordered)
    b.clone(*op, ahead);
  for (const Row &row : rows) {
    auto type = cast<MemRefType>(row.memref.getType());
    SmallVector<Value> at;
    for (auto [k, index] : llvm::enumerate(row.indices)) {
      Value v = ahead.lookupOrDefault(index);
      if (v != index) {
        // An index past its axis fetches the axis's last row: in bounds.
        Value last = type.isDynamicDim(k)
                         ? b.create<arith::SubIOp>(loc, b.create<memref::DimOp>(loc, row.memref, k),
                                                   b.create<arith::ConstantIndexOp>(loc, 1))
                         : b.create<arith::ConstantIndexOp>(loc, type.getDimSize(k) - 1).getResult();
        v = b.create<arith::MinSIOp>(loc, v, last);
      }
      at.push_back(v);
    }
    int64_t perLine = std::max<int64_t>(1, 512 / type.getElementTypeBitWidth());
    int64_t lines = std::min<int64_t>((row.elems + perLine - 1) / perLine, 16);
    for (int64_t l = 0; l < lines; ++l) {
      SmallVector<Value> line = at;
      if (l > 0)
        line.back() = b.create<arith::AddIOp>(loc, at.back(), b.create<arith::ConstantIndexOp>(loc, l * perLine));
      b.create<memref::PrefetchOp>(loc, row.memref, line, /*isWrite=*/false, /*localityHint=*/3,
                                   /*isDataCache=*/true);
    }
  }
}

struct PrefetchRowsPass : public linnet::cpu::impl::LinnetCPUPrefetchRowsBase<PrefetchRowsPass> {
  using LinnetCPUPrefetchRowsBase::LinnetCPUPrefetchRowsBase;
  void runOnOperation() override {
    if (distance <= 0)
      return;
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](scf::ForOp loop) {
      if (loop->hasAttr("linnet.rows"))
        loops.push_back(loop);
    });
    for (scf::ForOp loop : loops)
      prefetchRows(loop, distance);
  }
};

} // namespace
