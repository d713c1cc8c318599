//===- LowerLaunches.cpp - gpu.launch_func to the CUDA host runtime --------===//
//
// Passes.td, LinnetCUDALowerLaunches. The host code of a CUDA artifact is
// compiled by the CPU pipeline; a launch there is a plain C call into the
// runtime (docs/cuda-abi.md), which owns the module loaded from the
// artifact's digest-checked kernel file. No module image is embedded in the
// host library.
//
//===----------------------------------------------------------------------===//

#include "linnet/Target/CUDA/CudaTarget.h"
#include "linnet/Target/CUDA/Passes.h"

using namespace mlir;

namespace linnet::cuda {

#define GEN_PASS_DEF_LINNETCUDALOWERLAUNCHES
#include "linnet/Target/CUDA/Passes.h.inc"

namespace {

constexpr const char *kLaunchFn = "linnet_cuda_launch_slots";
constexpr const char *kReadFn = "linnet_cuda_copy_to_host";

/// One argument as the 64-bit slots the NVVM kernel's parameters read.
LogicalResult appendSlots(OpBuilder &b, Location loc, Value v, SmallVectorImpl<Value> &slots) {
  Type i64 = b.getI64Type();
  Type t = v.getType();
  auto toI64 = [&](Value x) -> Value {
    Type xt = x.getType();
    if (xt.isIndex())
      return b.create<arith::IndexCastUIOp>(loc, i64, x);
    if (auto f = dyn_cast<FloatType>(xt)) {
      Value bits = b.create<arith::BitcastOp>(loc, b.getIntegerType(f.getWidth()), x);
      return f.getWidth() == 64 ? bits : b.create<arith::ExtUIOp>(loc, i64, bits).getResult();
    }
    if (auto it = dyn_cast<IntegerType>(xt))
      return it.getWidth() == 64 ? x : b.create<arith::ExtUIOp>(loc, i64, x).getResult();
    return Value();
  };
  if (auto m = dyn_cast<MemRefType>(t)) {
    // (allocated, aligned, offset, sizes..., strides...): the kernel reads
    // through the aligned pointer only, so it stands for both.
    Value ptr = toI64(b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, v));
    auto meta = b.create<memref::ExtractStridedMetadataOp>(loc, v);
    slots.push_back(ptr);
    slots.push_back(ptr);
    slots.push_back(toI64(meta.getOffset()));
    for (Value s : meta.getSizes())
      slots.push_back(toI64(s));
    for (Value s : meta.getStrides())
      slots.push_back(toI64(s));
    (void)m;
    return success();
  }
  Value s = toI64(v);
  if (!s)
    return emitError(loc) << "the cuda target cannot pass a kernel argument of type " << t;
  slots.push_back(s);
  return success();
}

/// A scalar the host reads from device memory (`linnet.cuda.host_read`,
/// placed by -linnet-cuda-map-to-gpu): copied into a host slot by the
/// runtime after the kernels before it, then loaded there.
LogicalResult lowerHostReads(ModuleOp module) {
  SmallVector<memref::LoadOp> reads;
  module.walk([&](memref::LoadOp l) {
    if (l->hasAttr("linnet.cuda.host_read"))
      reads.push_back(l);
  });
  if (reads.empty())
    return success();
  OpBuilder b(module.getContext());
  Type i64 = b.getI64Type();
  if (!module.lookupSymbol(kReadFn)) {
    b.setInsertionPointToEnd(module.getBody());
    auto decl = b.create<func::FuncOp>(module.getLoc(), kReadFn, b.getFunctionType({i64, i64, i64}, {}));
    decl.setPrivate();
  }
  for (memref::LoadOp read : reads) {
    Location loc = read.getLoc();
    auto type = cast<MemRefType>(read.getMemRef().getType());
    Type elem = type.getElementType();
    int64_t bytes = elem.isIndex() ? 8 : std::max<int64_t>(elem.getIntOrFloatBitWidth() / 8, 1);
    auto fn = read->getParentOfType<func::FuncOp>();
    OpBuilder eb = OpBuilder::atBlockBegin(&fn.getBody().front());
    Value slot = eb.create<memref::AllocaOp>(loc, MemRefType::get({1}, elem));
    b.setInsertionPoint(read);
    auto ptr = [&](Value m) {
      return b.create<arith::IndexCastUIOp>(loc, i64, b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, m))
          .getResult();
    };
    // The source element's address: the buffer's base plus its index.
    Value index = read.getIndices().empty() ? b.create<arith::ConstantIndexOp>(loc, 0).getResult()
                                            : read.getIndices()[0];
    Value offset = b.create<arith::MulIOp>(loc, b.create<arith::IndexCastUIOp>(loc, i64, index),
                                           b.create<arith::ConstantIntOp>(loc, bytes, 64));
    Value src = b.create<arith::AddIOp>(loc, ptr(read.getMemRef()), offset);
    b.create<func::CallOp>(loc, kReadFn, TypeRange{},
                           ValueRange{ptr(slot), src, b.create<arith::ConstantIntOp>(loc, bytes, 64)});
    Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
    Value v = b.create<memref::LoadOp>(loc, slot, ValueRange{zero});
    read.replaceAllUsesWith(v);
    read.erase();
  }
  return success();
}

struct LowerLaunchesPass : public impl::LinnetCUDALowerLaunchesBase<LowerLaunchesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = module.getContext();
    OpBuilder b(ctx);
    Type i64 = b.getI64Type();
    SmallVector<Attribute> kernels;
    llvm::StringMap<int64_t> ids;
    SmallVector<gpu::LaunchFuncOp> launches;
    module.walk([&](gpu::LaunchFuncOp l) { launches.push_back(l); });
    if (failed(lowerHostReads(module)))
      return signalPassFailure();
    if (launches.empty())
      return;
    if (!module.lookupSymbol(kLaunchFn)) {
      b.setInsertionPointToEnd(module.getBody());
      SmallVector<Type> params(10, i64);
      auto decl = b.create<func::FuncOp>(module.getLoc(), kLaunchFn, b.getFunctionType(params, {}));
      decl.setPrivate();
    }
    for (gpu::LaunchFuncOp launch : launches) {
      if (launch.getAsyncToken() || !launch.getAsyncDependencies().empty()) {
        launch.emitError("asynchronous launches are not supported by the cuda host runtime");
        return signalPassFailure();
      }
      // Outlining names every kernel after its function, each in a module
      // of a unique name: the module's name is the kernel's in the image.
      std::string name = launch.getKernelModuleName().getValue().str();
      auto [it, added] = ids.try_emplace(name, int64_t(kernels.size()));
      if (added)
        kernels.push_back(b.getStringAttr(ptxSymbolName(name)));
      Location loc = launch.getLoc();
      b.setInsertionPoint(launch);
      SmallVector<Value> slots;
      for (Value arg : launch.getKernelOperands())
        if (failed(appendSlots(b, loc, arg, slots)))
          return signalPassFailure();
      // The slot array lives in the function's entry block: one per launch
      // site, not one per iteration of a host loop around it.
      auto fn = launch->getParentOfType<func::FuncOp>();
      OpBuilder eb = OpBuilder::atBlockBegin(&fn.getBody().front());
      auto slotType = MemRefType::get({int64_t(std::max<size_t>(slots.size(), 1))}, i64);
      Value array = eb.create<memref::AllocaOp>(loc, slotType);
      for (auto [i, s] : llvm::enumerate(slots))
        b.create<memref::StoreOp>(loc, s, array, ValueRange{b.create<arith::ConstantIndexOp>(loc, i)});
      auto asI64 = [&](Value idx) { return b.create<arith::IndexCastUIOp>(loc, i64, idx).getResult(); };
      Value base = asI64(b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, array));
      gpu::KernelDim3 g = launch.getGridSizeOperandValues(), t = launch.getBlockSizeOperandValues();
      Value shared = launch.getDynamicSharedMemorySize()
                         ? b.create<arith::ExtUIOp>(loc, i64, launch.getDynamicSharedMemorySize()).getResult()
                         : b.create<arith::ConstantIntOp>(loc, 0, 64).getResult();
      SmallVector<Value> args = {b.create<arith::ConstantIntOp>(loc, it->second, 64),
                                 asI64(g.x), asI64(g.y), asI64(g.z), asI64(t.x), asI64(t.y), asI64(t.z),
                                 shared, base,
                                 b.create<arith::ConstantIntOp>(loc, int64_t(slots.size()), 64)};
      b.create<func::CallOp>(loc, kLaunchFn, TypeRange{}, args);
      launch.erase();
    }
    module->setAttr("linnet.cuda.kernels", b.getArrayAttr(kernels));
  }
};

} // namespace
} // namespace linnet::cuda
