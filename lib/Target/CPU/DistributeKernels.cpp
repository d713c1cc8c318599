//===- DistributeKernels.cpp - Kernel calls through the distributed hook --===//
//
// -linnet-cpu-distribute-kernels: `linnet build --ranks N` routes every
// relation kernel call through `linnet_dist_<kernel>`, which the
// distributed shim forwards to the runtime's halo-exchanging hook
// (docs/distributed.md).
//
//===----------------------------------------------------------------------===//
#include "linnet/Target/CPU/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;

namespace linnet::cpu {

#define GEN_PASS_DEF_LINNETCPUDISTRIBUTEKERNELS
#include "linnet/Target/CPU/Passes.h.inc"

static void distributeKernels(ModuleOp module) {
  MLIRContext *ctx = module.getContext();
  SmallVector<func::FuncOp> kernels;
  for (auto fn : module.getOps<func::FuncOp>())
    if (fn->hasAttr("linnet.kernel_roles"))
      kernels.push_back(fn);
  if (kernels.empty())
    return;
  SmallVector<Attribute> table;
  OpBuilder b(ctx);
  for (func::FuncOp k : kernels) {
    std::string hook = ("linnet_dist_" + k.getSymName()).str();
    k.setPublic();
    k->setAttr("llvm.emit_c_interface", UnitAttr::get(ctx));
    b.setInsertionPoint(k);
    auto decl = b.create<func::FuncOp>(k.getLoc(), hook, k.getFunctionType());
    decl.setPrivate();
    decl->setAttr("llvm.emit_c_interface", UnitAttr::get(ctx));
    module.walk([&](func::CallOp call) {
      if (call.getCallee() == k.getSymName())
        call.setCallee(hook);
    });
    // The descriptor layout of each argument (its rank) and its element
    // size: what the hook needs to view and move rows.
    SmallVector<int64_t> ranks, bytes;
    for (Type t : k.getArgumentTypes()) {
      auto m = cast<MemRefType>(t);
      ranks.push_back(m.getRank());
      Type el = m.getElementType();
      bytes.push_back(el.isIndex() ? 8 : std::max<int64_t>(1, (el.getIntOrFloatBitWidth() + 7) / 8));
    }
    table.push_back(DictionaryAttr::get(
        ctx, {b.getNamedAttr("name", k.getSymNameAttr()), b.getNamedAttr("roles", k->getAttr("linnet.kernel_roles")),
              b.getNamedAttr("ranks", b.getI64ArrayAttr(ranks)), b.getNamedAttr("elem_bytes", b.getI64ArrayAttr(bytes))}));
    k->removeAttr("linnet.kernel_roles");
  }
  module->setAttr("linnet.distributed.kernels", ArrayAttr::get(ctx, table));
}

namespace {
struct DistributeKernels : public impl::LinnetCPUDistributeKernelsBase<DistributeKernels> {
  void runOnOperation() override { distributeKernels(getOperation()); }
};
} // namespace

} // namespace linnet::cpu
