//===- OutlineRelationKernels.cpp - Scheduled launches to kernel calls ----===//
//
// -linnet-outline-relation-kernels: each scheduled gf_kernel.launch of an
// entry becomes a private kernel function lowered to loops, and a call.
//
//===----------------------------------------------------------------------===//
#include "linnet/Target/CPU/Passes.h"

#include "linnet/Dialect/Gf/IR/Gf.h"
#include "linnet/Dialect/GfKernel/IR/GfKernel.h"
#include "linnet/Support/Timing.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringMap.h"

using namespace mlir;

namespace linnet::cpu {

#define GEN_PASS_DEF_LINNETCPUOUTLINERELATIONKERNELS
#include "linnet/Target/CPU/Passes.h.inc"

/// Relation reductions (`gf.apply`, docs/importer.md "Relation
/// reductions") reach this pass as scheduled `gf_kernel.launch`es on
/// tensors inside the entry (the task pipeline, -linnet-gf-to-tasks with
/// the cpu-simd-v1 contract, ran once before it). Each launch is
/// outlined into a kernel function of its own module, lowered there by
/// -gf-lower-kernel-to-loops (which rewrites whole functions to memrefs in
/// destination-passing style) and moved back as a private function; in the
/// entry the launch becomes `bufferization.to_memref` (read_only) of its
/// operands, output buffers, a `func.call` and `bufferization.to_tensor`
/// (restrict) of the outputs, which one-shot bufferization then folds. An
/// output that the entry only stores into its result memref is computed
/// straight into it.
static LogicalResult outlineRelationKernels(ModuleOp module, bool laneSplit) {
  WalkResult unscheduled = module.walk([&](linnet::gf::ApplyOp apply) {
    apply.emitOpError("is not scheduled: run the task pipeline (-linnet-gf-to-tasks) first");
    return WalkResult::interrupt();
  });
  if (unscheduled.wasInterrupted())
    return failure();
  MLIRContext *ctx = module.getContext();

  SmallVector<linnet::gf_kernel::LaunchOp> launches;
  module.walk([&](linnet::gf_kernel::LaunchOp l) { launches.push_back(l); });
  SymbolTable symbols(module);
  // The i-th launch of function F becomes kernel function `F.k<i>`: the
  // name the plans give its task (task.F.k<i>.*) and its implementation.
  llvm::StringMap<unsigned> perFunction;
  for (linnet::gf_kernel::LaunchOp launch : launches) {
    Location loc = launch.getLoc();
    if (launch.getTraversal() != "csr-row")
      return launch.emitOpError("the importer's pipeline outlines csr-row launches only");
    auto parent = launch->getParentOfType<func::FuncOp>();
    std::string name = (parent.getName() + ".k" + Twine(perFunction[parent.getName()]++)).str();
    OwningOpRef<ModuleOp> kmod = ModuleOp::create(loc);
    OpBuilder kb = OpBuilder::atBlockEnd(kmod->getBody());
    for (Attribute a : launch.getReducers()) {
      StringRef r = cast<FlatSymbolRefAttr>(a).getValue();
      if (!kmod->lookupSymbol(r))
        kb.clone(*symbols.lookup(r));
    }
    auto kf = kb.create<func::FuncOp>(
        loc, name, kb.getFunctionType(launch->getOperandTypes(), launch->getResultTypes()));
    Block *entry = kf.addEntryBlock();
    OpBuilder fb = OpBuilder::atBlockEnd(entry);
    IRMapping map;
    map.map(launch->getOperands(), entry->getArguments());
    Operation *cloned = fb.clone(*launch, map);
    fb.create<func::ReturnOp>(loc, cloned->getResults());
    PassManager kpm(ctx);
    linnet::support::enablePassTiming(kpm);
    GfLowerKernelToLoopsOptions lowering;
    lowering.laneSplit = laneSplit;
    kpm.addPass(createGfLowerKernelToLoops(lowering));
    if (failed(kpm.run(*kmod)))
      return failure();
    auto lowered = kmod->lookupSymbol<func::FuncOp>(name);
    lowered->removeAttr("llvm.emit_c_interface");
    lowered.setPrivate();
    // What each argument is, for -linnet-cpu-distribute-kernels: the
    // topology (row_ptr, col_idx), the inputs by role, then the outputs.
    SmallVector<Attribute> argRoles;
    if (launch.getNumTopologyOperands() == 2) {
      argRoles.push_back(StringAttr::get(ctx, "row_ptr"));
      argRoles.push_back(StringAttr::get(ctx, "col_idx"));
      for (Attribute r : launch.getInputRoles())
        argRoles.push_back(r);
      for (unsigned i = 0; i < launch->getNumResults(); ++i)
        argRoles.push_back(StringAttr::get(ctx, "out"));
      if (argRoles.size() == lowered.getNumArguments())
        lowered->setAttr("linnet.kernel_roles", ArrayAttr::get(ctx, argRoles));
    }
    ArrayRef<Type> loweredArgs = lowered.getArgumentTypes();
    unsigned nIn = launch->getNumOperands();

    OpBuilder b(launch);
    SmallVector<Value> callArgs;
    for (auto [v, t] : llvm::zip(launch->getOperands(), loweredArgs.take_front(nIn)))
      callArgs.push_back(b.create<bufferization::ToMemrefOp>(loc, t, v, /*read_only=*/true));
    SmallVector<Value> outs;
    SmallVector<Operation *> stored;
    for (auto [i, r] : llvm::enumerate(launch->getResults())) {
      auto mt = cast<MemRefType>(loweredArgs[nIn + i]);
      // Computed in place: the result's only use stores it into a result
      // memref of the entry that nothing else touches.
      if (r.hasOneUse())
        if (auto mat = dyn_cast<bufferization::MaterializeInDestinationOp>(*r.getUsers().begin()))
          if (auto dest = dyn_cast<BlockArgument>(mat.getDest()))
            if (dest.hasOneUse() && isa<MemRefType>(dest.getType()) &&
                memref::CastOp::areCastCompatible(dest.getType(), mt)) {
              Value d = dest;
              if (d.getType() != mt)
                d = b.create<memref::CastOp>(loc, mt, d);
              outs.push_back(d);
              stored.push_back(mat);
              continue;
            }
      SmallVector<Value> dyn;
      if (mt.isDynamicDim(0)) {
        Value n = b.create<tensor::DimOp>(loc, launch.getTopology()[0], 0);
        dyn.push_back(b.create<arith::SubIOp>(loc, n, b.create<arith::ConstantIndexOp>(loc, 1)));
      }
      outs.push_back(b.create<memref::AllocOp>(loc, mt, dyn, b.getI64IntegerAttr(64)));
      stored.push_back(nullptr);
    }
    SmallVector<Value> all(callArgs);
    all.append(outs.begin(), outs.end());
    auto call = b.create<func::CallOp>(loc, lowered.getName(), TypeRange{}, all);
    // The launch's task (linnet build --profile) is the call's.
    if (Attribute task = launch->getAttr("linnet.task"))
      call->setAttr("linnet.task", task);
    for (auto [i, r] : llvm::enumerate(launch->getResults())) {
      if (stored[i]) {
        stored[i]->erase();
        continue;
      }
      r.replaceAllUsesWith(b.create<bufferization::ToTensorOp>(loc, r.getType(), outs[i],
                                                               /*restrict=*/true,
                                                               /*writable=*/true));
    }
    launch.erase();
    lowered->remove();
    module.getBody()->push_back(lowered);
  }
  // The relations and reducers were copied into the kernels.
  SmallVector<Operation *> dead;
  module.walk([&](Operation *op) {
    if (isa<linnet::gf::RelationOp>(op) ||
        (isa<linnet::gf::ReducerOp>(op) && op->getParentOp() == module.getOperation()))
      dead.push_back(op);
  });
  for (Operation *op : dead) {
    if (!op->use_empty())
      return op->emitOpError("is still used after the relation kernels were outlined");
    op->erase();
  }
  return success();
}

namespace {
struct OutlineRelationKernels
    : public impl::LinnetCPUOutlineRelationKernelsBase<OutlineRelationKernels> {
  using LinnetCPUOutlineRelationKernelsBase::LinnetCPUOutlineRelationKernelsBase;
  void runOnOperation() override {
    if (failed(outlineRelationKernels(getOperation(), laneSplit)))
      signalPassFailure();
  }
};
} // namespace

} // namespace linnet::cpu
