//===- PromoteWorkgroup.cpp - Block scratch to shared memory ---------------===//
//
// -linnet-cuda-promote-workgroup (Passes.td). The mapping leaves a tile's
// scratch as a marked allocation so that the CPU execution and the device
// share every step before this one; only the device build promotes it.
//
//===----------------------------------------------------------------------===//

#include "linnet/Target/CUDA/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace linnet::cuda {

#define GEN_PASS_DEF_LINNETCUDAPROMOTEWORKGROUP
#include "linnet/Target/CUDA/Passes.h.inc"

using namespace mlir;

namespace {

struct PromoteWorkgroupPass : public impl::LinnetCUDAPromoteWorkgroupBase<PromoteWorkgroupPass> {
  void runOnOperation() override {
    SmallVector<memref::AllocOp> scratch;
    getOperation().walk([&](memref::AllocOp a) {
      if (a->hasAttr("linnet.workgroup"))
        scratch.push_back(a);
    });
    for (memref::AllocOp a : scratch) {
      auto launch = dyn_cast<gpu::LaunchOp>(a->getParentOp());
      if (!launch || !a.getType().hasStaticShape()) {
        a.emitError("block scratch must be a static allocation at the top of a kernel");
        return signalPassFailure();
      }
      MemRefType t = a.getType();
      auto shared = MemRefType::get(
          t.getShape(), t.getElementType(), t.getLayout(),
          gpu::AddressSpaceAttr::get(&getContext(), gpu::GPUDialect::getWorkgroupAddressSpace()));
      for (Operation *user : llvm::make_early_inc_range(a->getUsers())) {
        if (isa<memref::DeallocOp>(user)) {
          user->erase();
          continue;
        }
        if (!isa<memref::LoadOp, memref::StoreOp>(user)) {
          user->emitError("block scratch is read and written by loads and stores only");
          return signalPassFailure();
        }
      }
      BlockArgument memory = launch.addWorkgroupAttribution(shared, a.getLoc());
      a.replaceAllUsesWith(memory);
      a.erase();
    }
  }
};

} // namespace
} // namespace linnet::cuda
