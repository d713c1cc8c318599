//===- Cpuify.cpp - gpu.launch kernels as CPU loops ------------------------===//
//
// The CPU execution of the CUDA target's kernels (Passes.td,
// LinnetCUDACpuify), as POCL's work-group loops and Polygeist's cpuify run
// GPU code: the grid becomes a parallel loop (blocks on host threads), the
// block a sequential loop nest over its threads. Kernels without barriers
// need nothing more: a thread's work never waits on another's.
//
//===----------------------------------------------------------------------===//

#include "linnet/Target/CUDA/Passes.h"

#include "mlir/IR/IRMapping.h"

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
    bool barrier = false;
    launch.walk([&](gpu::BarrierOp) { barrier = true; });
    if (barrier)
      return launch.emitError("cpuify: kernels with gpu.barrier need barrier splitting, "
                              "which is not implemented");
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
    auto tz = pb.create<scf::ForOp>(loc, c0, block.z, c1);
    OpBuilder zb = OpBuilder::atBlockBegin(tz.getBody());
    auto ty = zb.create<scf::ForOp>(loc, c0, block.y, c1);
    OpBuilder yb = OpBuilder::atBlockBegin(ty.getBody());
    auto tx = yb.create<scf::ForOp>(loc, c0, block.x, c1);

    Block &body = launch.getBody().front();
    ValueRange bids = blocks.getInductionVars();
    IRMapping map;
    gpu::KernelDim3 ids = launch.getBlockIds(), tids = launch.getThreadIds();
    gpu::KernelDim3 gsz = launch.getGridSize(), bsz = launch.getBlockSize();
    map.map(ids.x, bids[0]);
    map.map(ids.y, bids[1]);
    map.map(ids.z, bids[2]);
    map.map(tids.x, tx.getInductionVar());
    map.map(tids.y, ty.getInductionVar());
    map.map(tids.z, tz.getInductionVar());
    map.map(gsz.x, grid.x);
    map.map(gsz.y, grid.y);
    map.map(gsz.z, grid.z);
    map.map(bsz.x, block.x);
    map.map(bsz.y, block.y);
    map.map(bsz.z, block.z);
    OpBuilder xb = OpBuilder::atBlockBegin(tx.getBody());
    for (Operation &op : body.without_terminator())
      xb.clone(op, map);
    launch.erase();
    return success();
  }
};

} // namespace
} // namespace linnet::cuda
