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

#include "linnet/Target/CPU/CPUCodegen.h"

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
#include "mlir/Pass/PassManager.h"
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

LogicalResult lowerImportedToLoops(ModuleOp module) {
  PassManager pm(module.getContext());
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
  pm.addPass(createCanonicalizerPass());
  bufferization::BufferDeallocationPipelineOptions dealloc;
  bufferization::buildBufferDeallocationPipeline(pm, dealloc);
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  return pm.run(module);
}

} // namespace linnet::import
