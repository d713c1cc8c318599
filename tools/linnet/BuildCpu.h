//===- BuildCpu.h - `linnet build MODEL.ln --target cpu` --------*- C++ -*-===//
#ifndef LINNET_TOOLS_BUILDCPU_H
#define LINNET_TOOLS_BUILDCPU_H

#include "linnet/Import/PlanImporter.h"
#include "linnet/Plan/PlanReader.h"
#include "linnet/Target/CPU/LinalgCodegen.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <CLI/CLI.hpp>

#include <functional>
#include <optional>

#include <string>
#include <vector>

namespace linnet::tool {

struct BuildCpuOptions {
  std::string file, root, weights, binding, output;
  std::vector<std::string> defines, includeDirs;
  bool serial = false;
  bool runtimeChecks = true; // --runtime-checks=off: only to measure their cost
  bool emitMlir = false; // also write model.mlir (tensors) and model.loops.mlir
  /// Implementation policy of linalg contractions: auto | generated | blas.
  std::string impl = "auto";
  /// Called after model.so is written, with the imported module (tensors,
  /// before bufferization), the linalg stage's implementation choices and
  /// the artifact directory: writes the ProgramArtifact manifest. Returns an
  /// exit status.
  std::function<int(mlir::ModuleOp imported, const std::vector<cpu::ImplementationChoice> &choices,
                    const std::string &dir)>
      writeManifest;
};

/// A .ln model through Sema, the plan and the plan importer.
struct ImportedModel {
  nlohmann::json doc; // the plan document
  plan::Plan plan;
  std::vector<import::ModelTensor> tensors;
  mlir::OwningOpRef<mlir::ModuleOp> module; // func/linalg/tensor/scf on tensors
};
/// Returns nullopt after printing the errors to stderr.
std::optional<ImportedModel> importModel(const BuildCpuOptions &opts, mlir::MLIRContext &context);

/// Adds --root, -D, -I, --weights, --binding, --serial, --emit-mlir to `build`.
void addBuildCpuOptions(CLI::App *build, BuildCpuOptions &opts);

/// Compiles a .ln model into a CPU ProgramArtifact directory (docs/runtime-abi.md).
/// Returns the exit status; errors go to stderr.
int buildCpuArtifact(const BuildCpuOptions &opts);

/// The options `build` parsed (shared with the command's own options).
BuildCpuOptions &buildCpuOptions();

} // namespace linnet::tool

#endif
