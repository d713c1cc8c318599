//===- LowerWorkspace.cpp - Arenas from the thread's workspace stack ------===//
//
// -linnet-cpu-lower-workspace (Passes.td): each arena -linnet-cpu-pack-arena
// made (`memref.alloc {linnet.workspace}`) becomes a push on the library's
// workspace stack and its dealloc the matching pop (the stack is the C
// shim's, CPUCodegen.cpp's workspaceShimSource). The arena's descriptor is
// built here in the LLVM dialect; an unrealized cast hands it to the
// memref ops, which the memref-to-LLVM conversion then reads through.
//
//===----------------------------------------------------------------------===//

#include "linnet/Target/CPU/Passes.h"

#include "mlir/Conversion/LLVMCommon/MemRefBuilder.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"

namespace linnet::cpu {
#define GEN_PASS_DEF_LINNETCPULOWERWORKSPACE
#include "linnet/Target/CPU/Passes.h.inc"
} // namespace linnet::cpu

using namespace mlir;

namespace {

constexpr StringLiteral kPush = "linnet_workspace_push";
constexpr StringLiteral kPop = "linnet_workspace_pop";

LLVM::LLVMFuncOp declare(ModuleOp module, StringRef name, Type result, ArrayRef<Type> args) {
  if (auto f = module.lookupSymbol<LLVM::LLVMFuncOp>(name))
    return f;
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  return b.create<LLVM::LLVMFuncOp>(module.getLoc(), name, LLVM::LLVMFunctionType::get(result, args));
}

struct LowerWorkspacePass : public linnet::cpu::impl::LinnetCPULowerWorkspaceBase<LowerWorkspacePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<memref::AllocOp> arenas;
    module.walk([&](memref::AllocOp a) {
      if (a->hasAttr("linnet.workspace"))
        arenas.push_back(a);
    });
    if (arenas.empty())
      return;
    MLIRContext *ctx = module.getContext();
    LLVMTypeConverter types(ctx);
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    auto i64 = IntegerType::get(ctx, 64);
    LLVM::LLVMFuncOp push = declare(module, kPush, ptr, {i64});
    LLVM::LLVMFuncOp pop = declare(module, kPop, LLVM::LLVMVoidType::get(ctx), {ptr});
    for (memref::AllocOp a : arenas) {
      MemRefType type = a.getType();
      if (type.getRank() != 1 || !type.getLayout().isIdentity()) {
        a.emitOpError("a workspace arena must be a 1-d buffer of bytes");
        return signalPassFailure();
      }
      Location loc = a.getLoc();
      OpBuilder b(a);
      Value bytes = type.isDynamicDim(0)
                        ? b.create<arith::IndexCastOp>(loc, i64, a.getDynamicSizes()[0]).getResult()
                        : b.create<LLVM::ConstantOp>(loc, i64, type.getDimSize(0)).getResult();
      Value base = b.create<LLVM::CallOp>(loc, push, ValueRange{bytes}).getResult();
      auto desc = MemRefDescriptor::undef(b, loc, types.convertType(type));
      desc.setAllocatedPtr(b, loc, base);
      desc.setAlignedPtr(b, loc, base);
      desc.setConstantOffset(b, loc, 0);
      desc.setSize(b, loc, 0, bytes);
      desc.setConstantStride(b, loc, 0, 1);
      Value arena = b.create<UnrealizedConversionCastOp>(loc, type, Value(desc)).getResult(0);
      for (OpOperand &use : llvm::make_early_inc_range(a.getResult().getUses())) {
        if (auto d = dyn_cast<memref::DeallocOp>(use.getOwner())) {
          OpBuilder at(d);
          at.create<LLVM::CallOp>(d.getLoc(), pop, ValueRange{base});
          d.erase();
          continue;
        }
        use.set(arena);
      }
      a.erase();
    }
  }
};

} // namespace
