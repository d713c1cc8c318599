//===- Bufferize.cpp - Task IR on tensors to memrefs ----------------------===//
//
// -linnet-bufferize, the CPU target's first stage after the task pipeline:
// scheduled relation kernels outlined into private functions, counted
// while loops as scf.for (which bufferization carries in place), one-shot
// bufferization of the entries (their arguments are already memrefs, so no
// function-boundary bufferization; copies as linalg.copy), and
// ownership-based buffer deallocation so that no call leaks its
// temporaries. Memref-level linalg ops stay: -linnet-cpu-lower-linalg tiles
// and vectorizes contractions and elementwise ops, and lowers the rest to
// loops.
//
//===----------------------------------------------------------------------===//
#include "linnet/Target/CPU/CPUCodegen.h"
#include "linnet/Target/CPU/Passes.h"

#include "linnet/Support/Timing.h"

#include "mlir/Dialect/Arith/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotAnalysis.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/MemRef/Transforms/AllocationOpInterfaceImpl.h"
#include "mlir/Dialect/SCF/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace linnet::cpu {

void registerBufferizationInterfaces(DialectRegistry &registry) {
  registry.insert<bufferization::BufferizationDialect, linalg::LinalgDialect, memref::MemRefDialect,
                  tensor::TensorDialect>();
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

void buildBufferizePipeline(OpPassManager &pm, bool laneSplit) {
  pm.addPass(createLinnetCPUGenerateHaloKernels());
  LinnetCPUOutlineRelationKernelsOptions outline;
  outline.laneSplit = laneSplit;
  pm.addPass(createLinnetCPUOutlineRelationKernels(outline));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createLinnetUpliftCountedWhile());
  // Rotary embeddings' sin and cos once per (position, d), not per head.
  pm.addPass(createLinnetCPUHoistInvariantMath());
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
  pm.addPass(createLinnetCPUDropUnreadAliasedInputs());
  pm.addPass(createCanonicalizerPass());
  bufferization::BufferDeallocationPipelineOptions dealloc;
  bufferization::buildBufferDeallocationPipeline(pm, dealloc);
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void registerBufferizePipeline() {
  PassPipelineRegistration<>(
      "linnet-bufferize",
      "linnet build's CPU stage 02: Task IR on tensors to memrefs: relation kernels "
      "outlined, one-shot bufferization, buffer deallocation",
      [](OpPassManager &pm) { buildBufferizePipeline(pm); });
}

LogicalResult bufferize(ModuleOp module, bool laneSplit) {
  linnet::support::TimingStage stage("bufferize");
  PassManager pm(module.getContext());
  linnet::support::enablePassTiming(pm);
  buildBufferizePipeline(pm, laneSplit);
  return pm.run(module);
}

} // namespace linnet::cpu
