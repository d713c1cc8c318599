//===- Pipeline.cpp - Imported tensors to loops over memrefs --------------===//
//
// One-shot bufferization of the imported entries (their arguments are
// already memrefs, so no function-boundary bufferization), copies as
// linalg.copy, and ownership-based buffer deallocation so that no call leaks
// its temporaries. Memref-level linalg ops stay: the CPU code generator's
// linalg stage (-linnet-cpu-lower-linalg) tiles and vectorizes contractions
// and elementwise ops, and lowers the rest to loops.
//
//===----------------------------------------------------------------------===//
#include "linnet/Import/PlanImporter.h"

#include "linnet/Dialect/Gf/Transforms/Passes.h"
#include "linnet/Target/CPU/CPUCodegen.h"
#include "linnet/Target/CPU/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotAnalysis.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/AllocationOpInterfaceImpl.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "linnet/Support/Timing.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace linnet::import {

void registerImportDialects(DialectRegistry &registry) {
  cpu::registerCPUCodegenDialects(registry);
  registry.insert<arith::ArithDialect, bufferization::BufferizationDialect, func::FuncDialect,
                  linalg::LinalgDialect, math::MathDialect, memref::MemRefDialect,
                  scf::SCFDialect, tensor::TensorDialect>();
  arith::registerBufferizableOpInterfaceExternalModels(registry);
  arith::registerBufferDeallocationOpInterfaceExternalModels(registry);
  bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(registry);
  cf::registerBufferDeallocationOpInterfaceExternalModels(registry);
  linalg::registerBufferizableOpInterfaceExternalModels(registry);
  memref::registerAllocationOpInterfaceExternalModels(registry);
  scf::registerBufferizableOpInterfaceExternalModels(registry);
  scf::registerBufferDeallocationOpInterfaceExternalModels(registry);
  tensor::registerBufferizableOpInterfaceExternalModels(registry);
}

/// Relation reductions (`gf.apply`, docs/importer.md "Relation
/// reductions"): the gf passes take them, on tensors inside the entry, to
/// scheduled `gf_kernel.launch`es (cpu-simd-v1). Each launch is then
/// outlined into a kernel function of its own module, lowered there by
/// -gf-lower-kernel-to-loops (which rewrites whole functions to memrefs in
/// destination-passing style) and moved back as a private function; in the
/// entry the launch becomes `bufferization.to_memref` (read_only) of its
/// operands, output buffers, a `func.call` and `bufferization.to_tensor`
/// (restrict) of the outputs, which one-shot bufferization then folds. An
/// output that the entry only stores into its result memref is computed
/// straight into it.
/// `runPipeline` runs the gf passes on `module` (the pass's own).
static LogicalResult
lowerRelationApplies(ModuleOp module,
                     llvm::function_ref<LogicalResult(OpPassManager &, ModuleOp)> runPipeline) {
  bool any = false;
  module.walk([&](linnet::gf::ApplyOp) { any = true; });
  if (!any)
    return success();
  MLIRContext *ctx = module.getContext();
  OpPassManager pm(ModuleOp::getOperationName());
  linnet::cpu::buildGfKernelSchedulePipeline(pm);
  if (failed(runPipeline(pm, module)))
    return failure();

  SmallVector<linnet::gf_kernel::LaunchOp> launches;
  module.walk([&](linnet::gf_kernel::LaunchOp l) { launches.push_back(l); });
  SymbolTable symbols(module);
  unsigned counter = 0;
  for (linnet::gf_kernel::LaunchOp launch : launches) {
    Location loc = launch.getLoc();
    if (launch.getTraversal() != "csr-row")
      return launch.emitOpError("the importer's pipeline outlines csr-row launches only");
    auto parent = launch->getParentOfType<func::FuncOp>();
    std::string name = (parent.getName() + ".gf" + Twine(counter++)).str();
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
    kpm.addPass(linnet::cpu::createGfLowerKernelToLoops());
    if (failed(kpm.run(*kmod)))
      return failure();
    auto lowered = kmod->lookupSymbol<func::FuncOp>(name);
    lowered->removeAttr("llvm.emit_c_interface");
    lowered.setPrivate();
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
    b.create<func::CallOp>(loc, lowered.getName(), TypeRange{}, all);
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

/// A generic on buffers whose input is its own output buffer and whose body
/// never reads that input (`0 * t[n]` folded to 0 after in-place
/// bufferization) loses the input: MLIR 19's canonicalizer erases such a
/// generic as an identity copy without looking at its body.
static void dropUnreadAliasedInputs(ModuleOp module) {
  SmallVector<linalg::GenericOp> todo;
  module.walk([&](linalg::GenericOp g) {
    if (!g.hasPureBufferSemantics())
      return;
    for (OpOperand *in : g.getDpsInputOperands())
      for (OpOperand &init : g.getDpsInitsMutable())
        if (in->get() == init.get() && !g.payloadUsesValueFromOperand(in)) {
          todo.push_back(g);
          return;
        }
  });
  for (linalg::GenericOp g : todo) {
    SmallVector<Value> ins;
    SmallVector<AffineMap> maps;
    SmallVector<unsigned> dropArgs;
    for (OpOperand *in : g.getDpsInputOperands()) {
      bool aliased = llvm::any_of(g.getDpsInitsMutable(),
                                  [&](OpOperand &init) { return init.get() == in->get(); });
      if (aliased && !g.payloadUsesValueFromOperand(in)) {
        dropArgs.push_back(in->getOperandNumber());
        continue;
      }
      ins.push_back(in->get());
      maps.push_back(g.getMatchingIndexingMap(in));
    }
    SmallVector<Value> outs;
    for (OpOperand &init : g.getDpsInitsMutable()) {
      outs.push_back(init.get());
      maps.push_back(g.getMatchingIndexingMap(&init));
    }
    OpBuilder b(g);
    auto ng = b.create<linalg::GenericOp>(g.getLoc(), TypeRange{}, ins, outs, maps,
                                          g.getIteratorTypesArray());
    ng.getRegion().takeBody(g.getRegion());
    Block &body = ng.getRegion().front();
    for (auto it = dropArgs.rbegin(); it != dropArgs.rend(); ++it)
      body.eraseArgument(*it);
    g.erase();
  }
}

namespace {

/// -linnet-outline-relation-kernels: lowerRelationApplies as a pass.
struct OutlineRelationKernelsPass
    : public PassWrapper<OutlineRelationKernelsPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(OutlineRelationKernelsPass)
  StringRef getArgument() const override { return "linnet-outline-relation-kernels"; }
  StringRef getDescription() const override {
    return "Schedule gf.apply relation reductions (cpu-simd-v1), outline each launch into a "
           "private kernel function lowered to loops, and call it from the entry";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    // The dynamic pipeline's, and what the entry gets around each call.
    OpPassManager pm(ModuleOp::getOperationName());
    linnet::cpu::buildGfKernelSchedulePipeline(pm);
    pm.getDependentDialects(registry);
    registry.insert<arith::ArithDialect, bufferization::BufferizationDialect, func::FuncDialect,
                    memref::MemRefDialect, tensor::TensorDialect>();
  }
  void runOnOperation() override {
    if (failed(lowerRelationApplies(getOperation(), [&](OpPassManager &pm, ModuleOp m) {
          return runPipeline(pm, m);
        })))
      signalPassFailure();
  }
};

/// -linnet-drop-unread-aliased-inputs: dropUnreadAliasedInputs as a pass.
struct DropUnreadAliasedInputsPass
    : public PassWrapper<DropUnreadAliasedInputsPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(DropUnreadAliasedInputsPass)
  StringRef getArgument() const override { return "linnet-drop-unread-aliased-inputs"; }
  StringRef getDescription() const override {
    return "Drop a buffer generic's input that is its own output buffer and is never read "
           "(MLIR 19's canonicalizer would erase the generic as a copy)";
  }
  void runOnOperation() override { dropUnreadAliasedInputs(getOperation()); }
};

} // namespace

void buildBufferizePipeline(OpPassManager &pm) {
  pm.addPass(std::make_unique<OutlineRelationKernelsPass>());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  bufferization::OneShotBufferizationOptions opts;
  opts.bufferizeFunctionBoundaries = false;
  opts.allowReturnAllocsFromLoops = true;
  opts.setFunctionBoundaryTypeConversion(bufferization::LayoutMapOption::IdentityLayoutMap);
  // Copies as linalg.copy: they become loops with the rest, so the library
  // needs no memrefCopy runtime function.
  opts.memCpyFn = [](OpBuilder &b, Location loc, Value from, Value to) {
    b.create<linalg::CopyOp>(loc, from, to);
    return success();
  };
  pm.addPass(bufferization::createOneShotBufferizePass(opts));
  pm.addPass(std::make_unique<DropUnreadAliasedInputsPass>());
  pm.addPass(createCanonicalizerPass());
  bufferization::BufferDeallocationPipelineOptions dealloc;
  bufferization::buildBufferDeallocationPipeline(pm, dealloc);
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void registerImportPipelines() {
  PassRegistration<OutlineRelationKernelsPass>();
  PassRegistration<DropUnreadAliasedInputsPass>();
  PassPipelineRegistration<>(
      "linnet-bufferize",
      "linnet build's stage 01: the imported module (tensors) to memrefs: relation kernels "
      "outlined, one-shot bufferization, buffer deallocation",
      [](OpPassManager &pm) { buildBufferizePipeline(pm); });
}

LogicalResult lowerImportedToLoops(ModuleOp module) {
  linnet::support::TimingStage stage("bufferize");
  PassManager pm(module.getContext());
  linnet::support::enablePassTiming(pm);
  buildBufferizePipeline(pm);
  return pm.run(module);
}

} // namespace linnet::import
