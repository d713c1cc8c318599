//===- Cpuify.cpp - gpu.launch kernels as CPU loops ------------------------===//
//
// The CPU execution of the CUDA target's kernels (Passes.td,
// LinnetCUDACpuify), as POCL's work-group loops and Polygeist's cpuify run
// GPU code: the grid becomes a parallel loop (blocks on host threads), the
// block a sequential loop nest over its threads. A barrier splits the
// thread loop: each piece between barriers runs over every thread before
// the next begins, pure values of an earlier piece are computed again, and
// a block's shared scratch is allocated per block. A relation's neighbor
// tile loop (its phases and barriers inside) runs once for the block, the
// pieces inside it over the threads, its bounds computed once
// (`linnet.uniform`).
//
//===----------------------------------------------------------------------===//

#include "linnet/Target/CUDA/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;

namespace linnet::cuda {

#define GEN_PASS_DEF_LINNETCUDACPUIFY
#include "linnet/Target/CUDA/Passes.h.inc"

namespace {

struct CpuifyPass : public impl::LinnetCUDACpuifyBase<CpuifyPass> {
  void runOnOperation() override {
    SmallVector<gpu::LaunchOp> launches;
    getOperation().walk([&](gpu::LaunchOp l) { launches.push_back(l); });
    for (gpu::LaunchOp launch : launches)
      if (failed(cpuify(launch)))
        return signalPassFailure();
  }

  LogicalResult cpuify(gpu::LaunchOp launch) {
    if (launch.getBody().getBlocks().size() != 1)
      return launch.emitError("cpuify: a kernel of several blocks is not supported");
    Block &body = launch.getBody().front();
    // Barriers split the block's threads: every thread runs the code before
    // a barrier before any runs the code after it. A barrier must be
    // reached by every thread: at the kernel's top level, or in a neighbor
    // tile loop there (`linnet.neighbor_tiles`, its bounds alike in every
    // thread), which then runs once for the block with its pieces inside.
    WalkResult nested = launch.getBody().walk([&](gpu::BarrierOp barrier) {
      for (Operation *up = barrier->getParentOp(); up != launch; up = up->getParentOp())
        if (!isa<scf::ForOp>(up) || !up->hasAttr("linnet.neighbor_tiles")) {
          barrier.emitError("cpuify: a barrier inside control flow cannot be split");
          return WalkResult::interrupt();
        }
      return WalkResult::advance();
    });
    if (nested.wasInterrupted())
      return failure();
    collectWritten(launch);
    if (!launch.getWorkgroupAttributions().empty() || !launch.getPrivateAttributions().empty())
      return launch.emitError("cpuify: kernels with memory attributions are not supported");
    launch_ = launch;
    OpBuilder b(launch);
    Location loc = launch.getLoc();
    c0_ = b.create<arith::ConstantIndexOp>(loc, 0);
    c1_ = b.create<arith::ConstantIndexOp>(loc, 1);
    gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
    block_ = launch.getBlockSizeOperandValues();
    auto blocks = b.create<scf::ParallelOp>(loc, ValueRange{c0_, c0_, c0_}, ValueRange{grid.x, grid.y, grid.z},
                                            ValueRange{c1_, c1_, c1_});
    OpBuilder pb = OpBuilder::atBlockBegin(blocks.getBody());
    SmallVector<Value> bids(blocks.getInductionVars()); // owned: not a view of a temporary
    gpu::KernelDim3 ids = launch.getBlockIds(), gsz = launch.getGridSize(), bsz = launch.getBlockSize();
    tids_ = launch.getThreadIds();
    IRMapping blockMap;
    blockMap.map(ids.x, bids[0]);
    blockMap.map(ids.y, bids[1]);
    blockMap.map(ids.z, bids[2]);
    blockMap.map(gsz.x, grid.x);
    blockMap.map(gsz.y, grid.y);
    blockMap.map(gsz.z, grid.z);
    blockMap.map(bsz.x, block_.x);
    blockMap.map(bsz.y, block_.y);
    blockMap.map(bsz.z, block_.z);

    // The block's shared scratch (linnet.workgroup): one per block, for
    // all its threads.
    shared_.clear();
    for (Operation &op : body.without_terminator())
      if (auto a = dyn_cast<memref::AllocOp>(op); a && a->hasAttr("linnet.workgroup")) {
        if (!a.getDynamicSizes().empty())
          return a.emitError("cpuify: block scratch of run-time size");
        Value m = pb.create<memref::AllocOp>(a.getLoc(), a.getType());
        blockMap.map(a.getResult(), m);
        shared_.push_back(m);
      }
    if (failed(emitBlock(body, pb, blockMap)))
      return failure();
    for (Value m : shared_)
      pb.create<memref::DeallocOp>(loc, m);
    launch.erase();
    return success();
  }

private:
  gpu::LaunchOp launch_;
  gpu::KernelDim3 block_, tids_;
  Value c0_, c1_;
  SmallVector<Value> shared_;

  /// Memrefs (their roots, through views) the kernel writes.
  llvm::DenseSet<Value> written_;

  bool inKernel(Operation *op) const { return op && launch_->isProperAncestor(op); }

  static Value root(Value m) {
    while (auto view = m.getDefiningOp<ViewLikeOpInterface>())
      m = view.getViewSource();
    return m;
  }

  void collectWritten(gpu::LaunchOp launch) {
    written_.clear();
    launch.getBody().walk([&](Operation *op) {
      auto effects = dyn_cast<MemoryEffectOpInterface>(op);
      if (!effects) {
        if (!isMemoryEffectFree(op))
          for (Value o : op->getOperands())
            if (isa<MemRefType>(o.getType()))
              written_.insert(root(o));
        return;
      }
      SmallVector<MemoryEffects::EffectInstance> list;
      effects.getEffects(list);
      for (const MemoryEffects::EffectInstance &e : list)
        if (isa<MemoryEffects::Write>(e.getEffect()))
          if (Value v = e.getValue(); v && isa<MemRefType>(v.getType()))
            written_.insert(root(v));
    });
  }

  /// A read of memory no thread of this kernel writes (a relation's row
  /// pointers): every thread reads the same value, so it may be computed
  /// once for the block like a pure value. Canonicalization inlines the
  /// loop marked `linnet.uniform` where it has one iteration (a tile of
  /// one row), leaving such reads unmarked.
  bool readOnlyLoad(Operation *def) const {
    Value m;
    if (auto load = dyn_cast<memref::LoadOp>(def))
      m = load.getMemRef();
    else
      return false;
    return !written_.contains(root(m));
  }

  /// `v` at the block's level (outside the thread loops): a value every
  /// thread computes alike, cloned once for the block.
  LogicalResult atBlock(Value v, OpBuilder &outer, IRMapping &blockMap, Operation *user) {
    if (blockMap.contains(v))
      return success();
    Operation *def = v.getDefiningOp();
    if (!def)
      return v.getParentBlock()->getParentOp() == launch_ || inKernel(v.getParentBlock()->getParentOp())
                 ? user->emitError("cpuify: a value every thread must compute alike depends on the thread")
                 : success();
    if (!inKernel(def))
      return success();
    if (!def->hasAttr("linnet.uniform") && !readOnlyLoad(def) &&
        (!isMemoryEffectFree(def) || def->getNumRegions() > 0))
      return def->emitError("cpuify: a value every thread must compute alike has effects");
    // What it uses from outside itself, first.
    SmallVector<Value> used;
    def->walk([&](Operation *inner) {
      for (Value o : inner->getOperands())
        if (Operation *d = o.getDefiningOp(); !d || !def->isAncestor(d))
          if (!(isa<BlockArgument>(o) && def->isAncestor(o.getParentBlock()->getParentOp())))
            used.push_back(o);
    });
    for (Value o : used)
      if (failed(atBlock(o, outer, blockMap, user)))
        return failure();
    outer.clone(*def, blockMap);
    return success();
  }

  /// The ops of `block` (the kernel's body, or a neighbor tile loop's): the
  /// code between barriers runs over every thread in turn; uniform values
  /// and neighbor tile loops run once for the block.
  LogicalResult emitBlock(Block &block, OpBuilder &outer, IRMapping &blockMap) {
    SmallVector<Operation *> piece;
    auto flush = [&]() -> LogicalResult {
      if (piece.empty())
        return success();
      LogicalResult r = emitPiece(piece, outer, blockMap);
      piece.clear();
      return r;
    };
    for (Operation &op : block.without_terminator()) {
      if (isa<gpu::BarrierOp>(op)) {
        if (failed(flush()))
          return failure();
        continue;
      }
      if (auto a = dyn_cast<memref::AllocOp>(op); a && a->hasAttr("linnet.workgroup"))
        continue;
      if (op.hasAttr("linnet.uniform")) {
        if (failed(flush()) || failed(atBlock(op.getResult(0), outer, blockMap, &op)))
          return failure();
        continue;
      }
      if (auto loop = dyn_cast<scf::ForOp>(op); loop && loop->hasAttr("linnet.neighbor_tiles")) {
        if (failed(flush()) || failed(atBlock(loop.getLowerBound(), outer, blockMap, loop)) ||
            failed(atBlock(loop.getUpperBound(), outer, blockMap, loop)) ||
            failed(atBlock(loop.getStep(), outer, blockMap, loop)))
          return failure();
        if (loop.getNumResults() > 0)
          return loop.emitError("cpuify: a neighbor tile loop carries no values");
        auto tiles = outer.create<scf::ForOp>(loop.getLoc(), blockMap.lookupOrDefault(loop.getLowerBound()),
                                              blockMap.lookupOrDefault(loop.getUpperBound()),
                                              blockMap.lookupOrDefault(loop.getStep()));
        IRMapping inner = blockMap;
        inner.map(loop.getInductionVar(), tiles.getInductionVar());
        OpBuilder ib = OpBuilder::atBlockBegin(tiles.getBody());
        if (failed(emitBlock(*loop.getBody(), ib, inner)))
          return failure();
        continue;
      }
      piece.push_back(&op);
    }
    return flush();
  }

  /// One piece between barriers, over every thread of the block.
  LogicalResult emitPiece(ArrayRef<Operation *> piece, OpBuilder &outer, IRMapping &blockMap) {
    Location loc = launch_.getLoc();
    auto tz = outer.create<scf::ForOp>(loc, c0_, block_.z, c1_);
    OpBuilder zb = OpBuilder::atBlockBegin(tz.getBody());
    auto ty = zb.create<scf::ForOp>(loc, c0_, block_.y, c1_);
    OpBuilder yb = OpBuilder::atBlockBegin(ty.getBody());
    auto tx = yb.create<scf::ForOp>(loc, c0_, block_.x, c1_);
    IRMapping map = blockMap;
    map.map(tids_.x, tx.getInductionVar());
    map.map(tids_.y, ty.getInductionVar());
    map.map(tids_.z, tz.getInductionVar());
    OpBuilder xb = OpBuilder::atBlockBegin(tx.getBody());
    // A value of the kernel computed outside this piece is computed again
    // here when it is pure (index arithmetic on the ids); anything else
    // would need per-thread storage across the barrier.
    std::function<LogicalResult(Value)> ready = [&](Value v) -> LogicalResult {
      if (map.contains(v))
        return success();
      Operation *def = v.getDefiningOp();
      if (!def) {
        Operation *owner = v.getParentBlock()->getParentOp();
        if (inKernel(owner) && !llvm::any_of(piece, [&](Operation *p) { return p->isAncestor(owner); }))
          return emitError(v.getLoc(), "cpuify: a loop's value is used after a barrier in it");
        return success();
      }
      if (!inKernel(def) || llvm::any_of(piece, [&](Operation *p) { return p->isAncestor(def); }))
        return success();
      if (!isMemoryEffectFree(def) || def->getNumRegions() > 0)
        return def->emitError("cpuify: a value computed before a barrier is used after it");
      for (Value o : def->getOperands())
        if (failed(ready(o)))
          return failure();
      xb.clone(*def, map);
      return success();
    };
    // A thread's private buffers (stack memory on the device) come from
    // the heap here, freed when the thread ends: an alloca in the thread
    // loop would grow the host stack with every thread of the grid.
    SmallVector<Value> privates;
    for (Operation *op : piece) {
      SmallVector<Value> used;
      op->walk([&](Operation *inner) {
        for (Value v : inner->getOperands())
          used.push_back(v);
      });
      for (Value v : used)
        if (failed(ready(v)))
          return failure();
      if (auto a = dyn_cast<memref::AllocaOp>(op)) {
        SmallVector<Value> sizes;
        for (Value v : a.getDynamicSizes())
          sizes.push_back(map.lookupOrDefault(v));
        auto heap = xb.create<memref::AllocOp>(a.getLoc(), a.getType(), sizes, a.getAlignmentAttr());
        map.map(a.getResult(), heap.getResult());
        privates.push_back(heap);
        continue;
      }
      if (auto d = dyn_cast<memref::DeallocOp>(op); d && llvm::is_contained(shared_, map.lookupOrDefault(d.getMemref())))
        continue; // the block's scratch is freed after its last piece
      xb.clone(*op, map);
    }
    for (Value p : privates)
      xb.create<memref::DeallocOp>(loc, p);
    return success();
  }
};

} // namespace
} // namespace linnet::cuda
