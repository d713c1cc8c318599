//===- HostKernels.cpp - outlined kernels as host functions ----------------===//
//
// Passes.td, LinnetCUDAHostKernels. The CUDA driver emulator runs an
// artifact's real host runtime against the kernels the device compiles,
// built for the CPU: each outlined kernel becomes a function that launches
// its own body over the grid it is given, which -linnet-cuda-cpuify then
// turns into loops. Parameters are 64-bit slots, as cuLaunchKernel's
// parameter array holds them (docs/cuda-abi.md, "The driver emulator").
//
//===----------------------------------------------------------------------===//

#include "linnet/Target/CUDA/CudaTarget.h"
#include "linnet/Target/CUDA/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;

namespace linnet::cuda {

#define GEN_PASS_DEF_LINNETCUDAHOSTKERNELS
#include "linnet/Target/CUDA/Passes.h.inc"

namespace {

/// The value of type `t` a kernel reads from the 64-bit slot `slot`.
Value fromSlot(OpBuilder &b, Location loc, Value slot, Type t) {
  if (t.isIndex())
    return b.create<arith::IndexCastUIOp>(loc, t, slot);
  if (auto it = dyn_cast<IntegerType>(t))
    return it.getWidth() == 64 ? slot : b.create<arith::TruncIOp>(loc, t, slot).getResult();
  if (auto ft = dyn_cast<FloatType>(t)) {
    Type bitsType = b.getIntegerType(ft.getWidth());
    Value bits = ft.getWidth() == 64 ? slot : b.create<arith::TruncIOp>(loc, bitsType, slot).getResult();
    return b.create<arith::BitcastOp>(loc, t, bits);
  }
  return Value();
}

/// Slots a parameter of type `t` takes: a memref's descriptor fields, else 1.
int64_t slotsOf(Type t) {
  if (auto m = dyn_cast<MemRefType>(t))
    return 3 + 2 * m.getRank();
  return 1;
}

struct HostKernelsPass : public impl::LinnetCUDAHostKernelsBase<HostKernelsPass> {
  void runOnOperation() override {
    ModuleOp top = getOperation();
    SymbolTable topSymbols(top);
    SmallVector<gpu::GPUModuleOp> modules(top.getOps<gpu::GPUModuleOp>());
    for (gpu::GPUModuleOp m : modules) {
      for (Operation &op : llvm::make_early_inc_range(m.getBody()->without_terminator())) {
        if (auto fn = dyn_cast<gpu::GPUFuncOp>(op); fn && fn.isKernel()) {
          if (failed(hostKernel(top, fn, ptxSymbolName(m.getName()))))
            return signalPassFailure();
          continue;
        }
        // Globals and device functions: once, at the top level, where the
        // kernels' symbol references now resolve.
        if (!isa<memref::GlobalOp, func::FuncOp>(op)) {
          op.emitError("host kernels: cannot move this op of a gpu.module to the host");
          return signalPassFailure();
        }
        auto sym = cast<SymbolOpInterface>(op);
        if (topSymbols.lookup(sym.getName()))
          continue;
        op.remove();
        topSymbols.insert(&op);
      }
      m.erase();
    }
    top->removeAttr("gpu.container_module");
  }

  LogicalResult hostKernel(ModuleOp top, gpu::GPUFuncOp kernel, const std::string &name) {
    if (!kernel.getBody().hasOneBlock())
      return kernel.emitError("host kernels: a kernel of several blocks");
    Location loc = kernel.getLoc();
    OpBuilder b(top.getBodyRegion());
    b.setInsertionPointToEnd(top.getBody());
    Type i64 = b.getI64Type();
    FunctionType kernelType = kernel.getFunctionType();
    SmallVector<Type> inputs(6, i64);
    int64_t slots = 0;
    for (Type t : kernelType.getInputs()) {
      inputs.push_back(isa<MemRefType>(t) ? t : i64);
      slots += slotsOf(t);
    }
    auto fn = b.create<func::FuncOp>(loc, "linnet_host_" + name, b.getFunctionType(inputs, {}));
    fn->setAttr("linnet.host_kernel", b.getStringAttr(name));
    fn->setAttr("linnet.host_kernel_slots", b.getI64IntegerAttr(slots));
    Block *entry = fn.addEntryBlock();
    b.setInsertionPointToStart(entry);
    SmallVector<Value> dims;
    for (unsigned d = 0; d < 6; ++d)
      dims.push_back(b.create<arith::IndexCastUIOp>(loc, b.getIndexType(), entry->getArgument(d)));
    IRMapping map;
    Block &body = kernel.getBody().front();
    for (auto [i, t] : llvm::enumerate(kernelType.getInputs())) {
      Value arg = entry->getArgument(6 + i);
      Value v = isa<MemRefType>(t) ? arg : fromSlot(b, loc, arg, t);
      if (!v)
        return kernel.emitError("host kernels: a kernel parameter of type ") << t;
      map.map(body.getArgument(i), v);
    }
    auto launch = b.create<gpu::LaunchOp>(loc, dims[0], dims[1], dims[2], dims[3], dims[4], dims[5]);
    b.create<func::ReturnOp>(loc);
    OpBuilder lb = OpBuilder::atBlockBegin(&launch.getBody().front());
    // Shared memory: the block scratch cpuify allocates once per block, in
    // the host's address space; a thread's private memory: its stack.
    auto plain = [](BlockArgument a) {
      auto t = cast<MemRefType>(a.getType());
      return MemRefType::get(t.getShape(), t.getElementType(), t.getLayout());
    };
    for (BlockArgument a : kernel.getWorkgroupAttributions()) {
      auto alloc = lb.create<memref::AllocOp>(loc, plain(a));
      alloc->setAttr("linnet.workgroup", lb.getUnitAttr());
      map.map(a, alloc.getResult());
    }
    for (BlockArgument a : kernel.getPrivateAttributions())
      map.map(a, lb.create<memref::AllocaOp>(loc, plain(a)).getResult());
    gpu::KernelDim3 ids = launch.getBlockIds(), tids = launch.getThreadIds();
    gpu::KernelDim3 grid = launch.getGridSize(), block = launch.getBlockSize();
    auto pick = [](gpu::KernelDim3 v, gpu::Dimension d) {
      return d == gpu::Dimension::x ? v.x : d == gpu::Dimension::y ? v.y : v.z;
    };
    for (Operation &op : body) {
      if (isa<gpu::ReturnOp>(op)) {
        lb.create<gpu::TerminatorOp>(op.getLoc());
        continue;
      }
      lb.clone(op, map);
    }
    // The ids and sizes the body reads are the launch's.
    WalkResult unsupported = launch.getBody().walk([&](Operation *op) {
      Value v;
      if (auto o = dyn_cast<gpu::BlockIdOp>(op))
        v = pick(ids, o.getDimension());
      else if (auto o = dyn_cast<gpu::ThreadIdOp>(op))
        v = pick(tids, o.getDimension());
      else if (auto o = dyn_cast<gpu::GridDimOp>(op))
        v = pick(grid, o.getDimension());
      else if (auto o = dyn_cast<gpu::BlockDimOp>(op))
        v = pick(block, o.getDimension());
      else if (isa<gpu::BarrierOp, gpu::TerminatorOp, gpu::LaunchOp>(op) || !isa<gpu::GPUDialect>(op->getDialect()))
        return WalkResult::advance();
      else {
        op->emitError("host kernels: cannot run '") << op->getName() << "' on the host";
        return WalkResult::interrupt();
      }
      op->getResult(0).replaceAllUsesWith(v);
      op->erase();
      return WalkResult::advance();
    });
    return failure(unsupported.wasInterrupted());
  }
};

} // namespace
} // namespace linnet::cuda
