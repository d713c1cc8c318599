//===- Cpuify.cpp - gpu.launch kernels as CPU loops ------------------------===//
//
// The CPU execution of the CUDA target's kernels (Passes.td,
// LinnetCUDACpuify), as POCL's work-group loops and Polygeist's cpuify run
// GPU code: the grid becomes a parallel loop (blocks on host threads), the
// block a sequential loop nest over its threads. A barrier at the kernel's
// top level splits the thread loop: each piece between barriers runs over
// every thread before the next begins, pure values of an earlier piece are
// computed again, and a block's shared scratch is allocated per block.
//
//===----------------------------------------------------------------------===//

#include "linnet/Target/CUDA/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

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
    // a barrier before any runs the code after it. Only barriers at the
    // kernel's top level (reached by every thread) can be split.
    WalkResult nested = launch.getBody().walk([&](gpu::BarrierOp barrier) {
      if (barrier->getBlock() == &body)
        return WalkResult::advance();
      barrier.emitError("cpuify: a barrier inside control flow cannot be split");
      return WalkResult::interrupt();
    });
    if (nested.wasInterrupted())
      return failure();
    if (!launch.getWorkgroupAttributions().empty() || !launch.getPrivateAttributions().empty())
      return launch.emitError("cpuify: kernels with memory attributions are not supported");
    OpBuilder b(launch);
    Location loc = launch.getLoc();
    Value c0 = b.create<arith::ConstantIndexOp>(loc, 0), c1 = b.create<arith::ConstantIndexOp>(loc, 1);
    gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
    gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
    auto blocks = b.create<scf::ParallelOp>(loc, ValueRange{c0, c0, c0}, ValueRange{grid.x, grid.y, grid.z},
                                            ValueRange{c1, c1, c1});
    OpBuilder pb = OpBuilder::atBlockBegin(blocks.getBody());
    SmallVector<Value> bids(blocks.getInductionVars()); // owned: not a view of a temporary
    gpu::KernelDim3 ids = launch.getBlockIds(), tids = launch.getThreadIds();
    gpu::KernelDim3 gsz = launch.getGridSize(), bsz = launch.getBlockSize();
    IRMapping blockMap;
    blockMap.map(ids.x, bids[0]);
    blockMap.map(ids.y, bids[1]);
    blockMap.map(ids.z, bids[2]);
    blockMap.map(gsz.x, grid.x);
    blockMap.map(gsz.y, grid.y);
    blockMap.map(gsz.z, grid.z);
    blockMap.map(bsz.x, block.x);
    blockMap.map(bsz.y, block.y);
    blockMap.map(bsz.z, block.z);

    // The block's shared scratch (linnet.workgroup): one per block, for
    // all its threads.
    SmallVector<Value> shared;
    for (Operation &op : body.without_terminator())
      if (auto a = dyn_cast<memref::AllocOp>(op); a && a->hasAttr("linnet.workgroup")) {
        if (!a.getDynamicSizes().empty())
          return a.emitError("cpuify: block scratch of run-time size");
        Value m = pb.create<memref::AllocOp>(a.getLoc(), a.getType());
        blockMap.map(a.getResult(), m);
        shared.push_back(m);
      }

    // The code between barriers, each piece over every thread in turn.
    SmallVector<SmallVector<Operation *>> pieces(1);
    for (Operation &op : body.without_terminator()) {
      if (isa<gpu::BarrierOp>(op)) {
        pieces.emplace_back();
        continue;
      }
      if (auto a = dyn_cast<memref::AllocOp>(op); a && a->hasAttr("linnet.workgroup"))
        continue;
      pieces.back().push_back(&op);
    }
    DenseMap<Operation *, unsigned> pieceOf;
    for (auto [k, piece] : llvm::enumerate(pieces))
      for (Operation *op : piece)
        pieceOf[op] = k;

    for (auto [k, piece] : llvm::enumerate(pieces)) {
      if (piece.empty())
        continue;
      auto tz = pb.create<scf::ForOp>(loc, c0, block.z, c1);
      OpBuilder zb = OpBuilder::atBlockBegin(tz.getBody());
      auto ty = zb.create<scf::ForOp>(loc, c0, block.y, c1);
      OpBuilder yb = OpBuilder::atBlockBegin(ty.getBody());
      auto tx = yb.create<scf::ForOp>(loc, c0, block.x, c1);
      IRMapping map = blockMap;
      map.map(tids.x, tx.getInductionVar());
      map.map(tids.y, ty.getInductionVar());
      map.map(tids.z, tz.getInductionVar());
      OpBuilder xb = OpBuilder::atBlockBegin(tx.getBody());
      // A value of an earlier piece is computed again here when it is pure
      // (index arithmetic on the ids); anything else would need per-thread
      // storage across the barrier.
      std::function<LogicalResult(Operation *)> operandsReady = [&](Operation *op) -> LogicalResult {
        SmallVector<Value> used;
        op->walk([&](Operation *inner) {
          for (Value v : inner->getOperands())
            used.push_back(v);
        });
        for (Value v : used) {
          Operation *def = v.getDefiningOp();
          if (!def || map.contains(v) || def->getBlock() != &body || !pieceOf.count(def) || pieceOf[def] >= k)
            continue;
          if (!isMemoryEffectFree(def) || def->getNumRegions() > 0)
            return op->emitError("cpuify: a value computed before a barrier is used after it");
          if (failed(operandsReady(def)))
            return failure();
          xb.clone(*def, map);
        }
        return success();
      };
      // A thread's private buffers (stack memory on the device) come from
      // the heap here, freed when the thread ends: an alloca in the thread
      // loop would grow the host stack with every thread of the grid.
      SmallVector<Value> privates;
      for (Operation *op : piece) {
        if (failed(operandsReady(op)))
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
        if (auto d = dyn_cast<memref::DeallocOp>(op); d && llvm::is_contained(shared, map.lookupOrDefault(d.getMemref())))
          continue; // the block's scratch is freed after its last piece
        xb.clone(*op, map);
      }
      for (Value p : privates)
        xb.create<memref::DeallocOp>(loc, p);
    }
    for (Value m : shared)
      pb.create<memref::DeallocOp>(loc, m);
    launch.erase();
    return success();
  }
};

} // namespace
} // namespace linnet::cuda
