//===- ElementLoops.cpp - A comprehension's elements in parallel ---------===//
//
// See ElementLoops.h.
//
//===----------------------------------------------------------------------===//

#include "linnet/Target/ElementLoops.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;

namespace linnet::target {

namespace {

/// Whether `v` is computed from the position of one of `loop`'s threads.
bool dependsOnElement(Value v, scf::ForOp loop) {
  SmallVector<Value> work{v};
  llvm::SmallPtrSet<Value, 16> seen;
  while (!work.empty()) {
    Value x = work.pop_back_val();
    if (!seen.insert(x).second)
      continue;
    if (auto arg = dyn_cast<BlockArgument>(x)) {
      // The loop's threads: its axis and those of the perfect nest of
      // element loops it heads (one parallel loop over all of them).
      for (scf::ForOp l = loop; l;) {
        if (arg == l.getInductionVar())
          return true;
        Block *body = l.getBody();
        auto inner = dyn_cast<scf::ForOp>(&body->front());
        l = inner && std::next(body->begin()) == std::prev(body->end()) && inner->hasAttr("linnet.elements")
                ? inner
                : scf::ForOp();
      }
      continue;
    }
    Operation *def = x.getDefiningOp();
    if (!loop->isProperAncestor(def))
      continue;
    for (Value operand : def->getOperands())
      work.push_back(operand);
  }
  return false;
}

/// A buffer allocated outside the element loops that use it, and used
/// nowhere else (bufferization gives one buffer to the per-element
/// scratch of every iteration, and reuses it from one comprehension to the
/// next once its value is dead), is each element's own: in parallel, one
/// buffer would be written by every thread at once. Elements are
/// independent and no value leaves an element loop, so each such loop gets
/// its own buffer, allocated in its body (then the thread's memory).
void privatizeElementScratch(ArrayRef<scf::ForOp> loops) {
  auto loopOf = [&](Operation *op) -> scf::ForOp {
    for (scf::ForOp l : loops)
      if (l->isProperAncestor(op))
        return l;
    return nullptr;
  };
  SmallVector<memref::AllocOp> shared;
  llvm::SmallPtrSet<Operation *, 8> seen;
  for (scf::ForOp loop : loops)
    loop.getBody()->walk([&](Operation *op) {
      for (Value v : op->getOperands()) {
        auto a = v.getDefiningOp<memref::AllocOp>();
        if (!a || loop->isAncestor(a) || !a.getType().hasStaticShape() || !seen.insert(a).second)
          continue;
        // Scratch: each element loads and stores the same locations (its
        // indices depend on no element's position). A buffer an element
        // loop writes at its elements' own indices is its result (the
        // partials of a split fold, read by the loop that combines them).
        bool scratch = llvm::all_of(a->getUsers(), [&](Operation *user) {
          if (isa<memref::DeallocOp>(user))
            return true;
          scf::ForOp l = loopOf(user);
          if (!l || !isa<memref::LoadOp, memref::StoreOp>(user))
            return false;
          ValueRange indices = isa<memref::LoadOp>(user) ? cast<memref::LoadOp>(user).getIndices()
                                                         : cast<memref::StoreOp>(user).getIndices();
          return llvm::none_of(indices, [&](Value i) { return dependsOnElement(i, l); });
        });
        if (scratch)
          shared.push_back(a);
      }
    });
  for (memref::AllocOp a : shared) {
    llvm::MapVector<Operation *, SmallVector<OpOperand *>> usesByLoop;
    for (OpOperand &use : a->getUses())
      if (scf::ForOp l = loopOf(use.getOwner()))
        usesByLoop[l].push_back(&use);
    for (auto &[l, uses] : usesByLoop) {
      // In the innermost loop of a perfect nest, which stays one parallel
      // loop over all its axes.
      Block *body = cast<scf::ForOp>(l).getBody();
      while (auto inner = dyn_cast<scf::ForOp>(&body->front())) {
        if (std::next(body->begin()) != std::prev(body->end()) || !inner->hasAttr("linnet.elements"))
          break;
        body = inner.getBody();
      }
      OpBuilder b = OpBuilder::atBlockBegin(body);
      auto own = b.create<memref::AllocOp>(a.getLoc(), a.getType(), ValueRange{}, a.getAlignmentAttr());
      for (OpOperand *use : uses)
        use->set(own);
      b.setInsertionPoint(body->getTerminator());
      b.create<memref::DeallocOp>(a.getLoc(), own);
    }
    for (Operation *user : llvm::make_early_inc_range(a->getUsers()))
      user->erase(); // its deallocations: no use is left
    a.erase();
  }
}

/// Whether every write in `loop`'s body lands where no other element of it
/// writes: in a buffer allocated inside it, or at indices computed from the
/// element's position. The run-time checks' status word is the exception:
/// it is written under an atomic (the first failure records, Importer.cpp).
/// Anything else (a write whose place is the same for every element, or
/// one this cannot see: an op without declared effects) keeps the loop
/// serial.
bool writesOwnPlaces(scf::ForOp loop) {
  auto insideLoop = [&](Value v) {
    Operation *scope = isa<BlockArgument>(v) ? cast<BlockArgument>(v).getOwner()->getParentOp() : v.getDefiningOp();
    return scope && loop->isProperAncestor(scope);
  };
  // The buffer under views, and whether a view on the way is at the
  // element's own offsets.
  auto place = [&](Value buffer, bool &ownOffsets) {
    while (Operation *def = buffer.getDefiningOp()) {
      auto view = dyn_cast<ViewLikeOpInterface>(def);
      if (!view)
        break;
      for (Value operand : def->getOperands())
        if (operand != view.getViewSource() && dependsOnElement(operand, loop))
          ownOffsets = true;
      buffer = view.getViewSource();
    }
    return buffer;
  };
  WalkResult r = loop.getBody()->walk([&](Operation *op) {
    if (op->hasTrait<OpTrait::HasRecursiveMemoryEffects>() || isa<memref::AtomicRMWOp>(op))
      return WalkResult::advance();
    auto iface = dyn_cast<MemoryEffectOpInterface>(op);
    if (!iface)
      return WalkResult::interrupt();
    SmallVector<MemoryEffects::EffectInstance> effects;
    iface.getEffects(effects);
    for (const MemoryEffects::EffectInstance &e : effects) {
      if (!isa<MemoryEffects::Write, MemoryEffects::Free>(e.getEffect()))
        continue;
      Value target = e.getValue();
      if (!target)
        return WalkResult::interrupt();
      bool own = false;
      Value buffer = place(target, own);
      if (own || insideLoop(buffer) || buffer.getDefiningOp<memref::GetGlobalOp>())
        continue;
      ValueRange indices;
      if (auto store = dyn_cast<memref::StoreOp>(op))
        indices = store.getIndices();
      else if (auto store = dyn_cast<vector::StoreOp>(op))
        indices = store.getIndices();
      else if (auto write = dyn_cast<vector::TransferWriteOp>(op))
        indices = write.getIndices();
      if (llvm::none_of(indices, [&](Value i) { return dependsOnElement(i, loop); }))
        return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return !r.wasInterrupted();
}

} // namespace

/// A host-level `scf.for` the importer marked `linnet.elements` (the
/// element loop of a comprehension whose elements are tensors or computed
/// by loops: attention's heads, each reducing over the KV cache) becomes
/// an `scf.parallel`: its iterations write disjoint elements by the
/// language's rule. Kept a loop where a thread could not run an
/// iteration: a call, a buffer of run-time size or more than 64 KiB of
/// buffers allocated inside, or work already given a schedule of its own.
void parallelizeElementLoops(ModuleOp module, llvm::function_ref<bool(Operation *)> keepsSerial) {
  SmallVector<scf::ForOp> loops;
  module.walk<WalkOrder::PreOrder>([&](scf::ForOp loop) {
    if (!loop->hasAttr("linnet.elements") || loop.getNumResults() != 0)
      return WalkResult::advance();
    for (Operation *up = loop->getParentOp(); !isa<func::FuncOp>(up); up = up->getParentOp())
      if (isa<scf::ParallelOp>(up) || keepsSerial(up) || up->getNumResults() > 0)
        return WalkResult::skip();
    int64_t privateBytes = 0;
    WalkResult blocked = loop.getBody()->walk([&](Operation *op) {
      if (isa<func::CallOp>(op) || keepsSerial(op) || op->hasAttr("linnet.schedule") ||
          op->hasAttr("linnet.lanes"))
        return WalkResult::interrupt();
      if (auto a = dyn_cast<memref::AllocOp>(op)) {
        MemRefType t = a.getType();
        if (!t.hasStaticShape() || !t.getElementType().isIntOrIndexOrFloat())
          return WalkResult::interrupt();
        unsigned bits = t.getElementType().isIndex() ? 64 : t.getElementTypeBitWidth();
        privateBytes += t.getNumElements() * std::max<int64_t>(bits / 8, 1);
      }
      return WalkResult::advance();
    });
    if (!blocked.wasInterrupted() && privateBytes <= 64 * 1024)
      loops.push_back(loop);
    return WalkResult::skip(); // an inner element loop runs in its thread
  });
  privatizeElementScratch(loops);
  for (scf::ForOp loop : loops) {
    if (!writesOwnPlaces(loop))
      continue;
    // A perfect nest of element loops (a comprehension over [s, h]: the
    // loop over s holds only the loop over h) is one parallel loop over
    // every axis, so each element, not each row of them, is a thread.
    SmallVector<scf::ForOp> nest{loop};
    while (true) {
      Block *body = nest.back().getBody();
      auto inner = dyn_cast<scf::ForOp>(&body->front());
      if (!inner || std::next(body->begin()) != std::prev(body->end()) ||
          !inner->hasAttr("linnet.elements") || inner.getNumResults() != 0)
        break;
      auto outside = [&](Value v) { return v.getParentRegion()->isProperAncestor(&loop.getRegion()); };
      if (!outside(inner.getLowerBound()) || !outside(inner.getUpperBound()) || !outside(inner.getStep()))
        break;
      nest.push_back(inner);
    }
    SmallVector<Value> lbs, ubs, steps;
    for (scf::ForOp l : nest) {
      lbs.push_back(l.getLowerBound());
      ubs.push_back(l.getUpperBound());
      steps.push_back(l.getStep());
    }
    OpBuilder b(loop);
    auto par = b.create<scf::ParallelOp>(loop.getLoc(), lbs, ubs, steps);
    Block *body = par.getBody();
    Block *innermost = nest.back().getBody();
    body->getOperations().splice(body->begin(), innermost->getOperations(), innermost->begin(),
                                 std::prev(innermost->end()));
    for (auto [l, iv] : llvm::zip(nest, par.getInductionVars()))
      l.getInductionVar().replaceAllUsesWith(iv);
    loop.erase();
  }
}

} // namespace linnet::target
