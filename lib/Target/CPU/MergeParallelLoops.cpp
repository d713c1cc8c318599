//===- MergeParallelLoops.cpp - Sibling thread loops as one ---------------===//
//
// -linnet-cpu-merge-parallel-loops (Passes.td): two `scf.parallel` loops of
// one block over the same constant iterations (the streamed products' one
// block of rows per thread) whose work is independent become one loop, so
// one OpenMP region runs both: the q, k and v projections of a layer, or
// its gate and up projections, fork and join the threads once.
//
//===----------------------------------------------------------------------===//

#include "linnet/Target/CPU/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace linnet::cpu {
#define GEN_PASS_DEF_LINNETCPUMERGEPARALLELLOOPS
#include "linnet/Target/CPU/Passes.h.inc"
} // namespace linnet::cpu

using namespace mlir;

namespace {

/// The buffer a memref value views (through subviews, casts and
/// reinterpretations).
Value rootOf(Value v) {
  while (Operation *d = v.getDefiningOp()) {
    if (auto view = dyn_cast<ViewLikeOpInterface>(d))
      v = view.getViewSource();
    else
      break;
  }
  return v;
}

/// The buffers `op` (and what it holds) reads and writes; false where an
/// effect names no buffer, or where a write lands anywhere but on a buffer
/// the function allocates (whose every alias is then visible here).
bool accesses(Operation *op, llvm::SmallPtrSetImpl<Value> &reads, llvm::SmallPtrSetImpl<Value> &writes) {
  bool known = true;
  op->walk([&](Operation *o) {
    if (!known)
      return WalkResult::interrupt();
    if (isa<CallOpInterface>(o)) {
      known = false;
      return WalkResult::interrupt();
    }
    if (isa<memref::PrefetchOp>(o)) // no effect on what the program computes
      return WalkResult::advance();
    // An intrinsic on values alone (vpdpbusd: the VNNI block products).
    if (isa<LLVM::CallIntrinsicOp>(o) && llvm::none_of(o->getOperandTypes(), [](Type t) {
          return isa<LLVM::LLVMPointerType, BaseMemRefType>(t);
        }))
      return WalkResult::advance();
    auto iface = dyn_cast<MemoryEffectOpInterface>(o);
    if (!iface) {
      if (!o->hasTrait<OpTrait::HasRecursiveMemoryEffects>() && !isPure(o) && o->getNumRegions() == 0)
        known = false;
      return WalkResult::advance();
    }
    SmallVector<MemoryEffects::EffectInstance> effects;
    iface.getEffects(effects);
    for (const MemoryEffects::EffectInstance &e : effects) {
      if (isa<MemoryEffects::Allocate>(e.getEffect()))
        continue;
      Value v = e.getValue();
      if (!v || !isa<BaseMemRefType>(v.getType())) {
        known = false;
        break;
      }
      Value root = rootOf(v);
      if (isa<MemoryEffects::Read>(e.getEffect())) {
        reads.insert(root);
        continue;
      }
      if (!root.getDefiningOp<memref::AllocOp>() && !root.getDefiningOp<memref::AllocaOp>()) {
        known = false;
        break;
      }
      writes.insert(root);
    }
    return known ? WalkResult::advance() : WalkResult::interrupt();
  });
  return known;
}

bool disjoint(const llvm::SmallPtrSetImpl<Value> &a, const llvm::SmallPtrSetImpl<Value> &b) {
  return llvm::none_of(a, [&](Value v) { return b.contains(v); });
}

/// Whether `a` and `b` iterate the same constant space.
bool sameSpace(scf::ParallelOp a, scf::ParallelOp b) {
  if (a.getNumLoops() != b.getNumLoops() || a.getNumResults() || b.getNumResults())
    return false;
  for (unsigned i = 0; i < a.getNumLoops(); ++i)
    for (auto [x, y] : {std::pair(a.getLowerBound()[i], b.getLowerBound()[i]),
                        std::pair(a.getUpperBound()[i], b.getUpperBound()[i]),
                        std::pair(a.getStep()[i], b.getStep()[i])}) {
      std::optional<int64_t> cx = getConstantIntValue(x), cy = getConstantIntValue(y);
      if (!cx || cx != cy)
        return false;
    }
  return true;
}

bool staticSchedule(scf::ParallelOp p) {
  auto name = dyn_cast<NameLoc>(p.getLoc());
  return name && name.getName() == "linnet.static_schedule";
}

/// Merges `second` into `first` where the ops between them can go before
/// `first` and the two loops touch no buffer the other writes.
bool merge(scf::ParallelOp first, scf::ParallelOp second) {
  llvm::SmallPtrSet<Value, 8> r1, w1, r2, w2, rm, wm;
  if (!accesses(first, r1, w1) || !accesses(second, r2, w2))
    return false;
  if (!disjoint(w1, r2) || !disjoint(w1, w2) || !disjoint(w2, r1))
    return false;
  SmallVector<Operation *> between, after;
  for (Operation *op = first->getNextNode(); op != second.getOperation(); op = op->getNextNode()) {
    // The first product's scratch (its quantized x) freed: after both.
    if (auto free = dyn_cast<memref::DeallocOp>(op)) {
      Value root = rootOf(free.getMemref());
      if (r2.contains(root) || w2.contains(root))
        return false;
      after.push_back(op);
      continue;
    }
    // Nothing between reads what the first loop defines or writes, and the
    // first loop reads nothing it writes: it may run before the first loop.
    for (Value operand : op->getOperands())
      if (operand.getDefiningOp() == first.getOperation())
        return false;
    if (!accesses(op, rm, wm))
      return false;
    between.push_back(op);
  }
  if (!disjoint(w1, rm) || !disjoint(wm, r1) || !disjoint(wm, w1))
    return false;
  // The second loop's bounds are constants: defined before or between.
  for (Operation *op : between)
    op->moveBefore(first);
  for (Operation *op : llvm::reverse(after))
    op->moveAfter(second);
  Block *into = first.getBody();
  IRMapping map;
  for (auto [from, to] : llvm::zip(second.getInductionVars(), first.getInductionVars()))
    map.map(from, to);
  OpBuilder b(into->getTerminator());
  for (Operation &op : second.getBody()->without_terminator())
    b.clone(op, map);
  second.erase();
  return true;
}

struct MergeParallelLoopsPass
    : public linnet::cpu::impl::LinnetCPUMergeParallelLoopsBase<MergeParallelLoopsPass> {
  void runOnOperation() override {
    SmallVector<Block *> blocks;
    getOperation().walk([&](Block *b) { blocks.push_back(b); });
    for (Block *block : blocks) {
      bool changed = true;
      while (changed) {
        changed = false;
        scf::ParallelOp last;
        for (Operation &op : *block) {
          auto p = dyn_cast<scf::ParallelOp>(&op);
          if (!p || !staticSchedule(p))
            continue;
          if (last && sameSpace(last, p) && merge(last, p)) {
            changed = true;
            break;
          }
          last = p;
        }
      }
    }
  }
};

} // namespace
