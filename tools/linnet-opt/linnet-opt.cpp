//===- linnet-opt.cpp - MlirOptMain with linnet's dialects and passes -----===//
//
// Registers only what linnet's IR uses (InitAllDialects.h costs ~48 s and
// 2.5 GB to compile): the five gf dialects, their passes, and func, arith,
// math, scf, tensor, memref, vector, linalg and bufferization (what the
// importer and the CPU code generator produce) plus the upstream
// canonicalize/cse passes. The pipelines `linnet build` runs are registered
// under their names (-linnet-gf-to-tasks, -linnet-bufferize,
// -linnet-cpu-lower-to-loops, -linnet-cpu-lower-to-llvm,
// -linnet-cuda-lower-to-gpu), with the dialects and interfaces every
// registered target (AllTargets.h) registers in a build, so each stage of
// `linnet build --dump-ir` can be reproduced from the previous one.
//
//===----------------------------------------------------------------------===//

#include "linnet/Dialect/Gf/Transforms/Passes.h"
#include "linnet/Import/PlanImporter.h"
#include "linnet/Target/AllTargets.h"
#include "linnet/Target/Target.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<linnet::gf::GfDialect, linnet::gf_iter::GfIterDialect,
                  linnet::gf_kernel::GfKernelDialect,
                  linnet::gf_task::GfTaskDialect,
                  linnet::gf_storage::GfStorageDialect>();
  registry.insert<mlir::arith::ArithDialect, mlir::func::FuncDialect,
                  mlir::math::MathDialect, mlir::scf::SCFDialect,
                  mlir::tensor::TensorDialect, mlir::memref::MemRefDialect,
                  mlir::vector::VectorDialect, mlir::linalg::LinalgDialect,
                  mlir::bufferization::BufferizationDialect>();
  linnet::import::registerImportDialects(registry);
  linnet::target::registerAllTargetDialects(registry);
  linnet::gf::registerGfPasses();
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::registerSymbolDCEPass();
  mlir::registerInlinerPass();
  linnet::target::registerTaskPipeline();
  linnet::target::registerAllTargetPasses();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "linnet MLIR optimizer: gf Domain/Iter/Kernel/Task IR\n",
      registry));
}
