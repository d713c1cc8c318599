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
#include <set>

#include <string>
#include <string_view>
#include <vector>

namespace linnet::tool {

/// The files of an artifact being built, written into its staging
/// directory: each file's digest is taken from the bytes written, never
/// read back from disk.
struct ArtifactOutputs {
  struct File {
    std::string path, sha256;
    int64_t bytes = 0;
  };
  std::string dir;     // the staging directory
  std::string library; // model.so's bytes, as linked
  std::vector<File> files;
  /// Writes `bytes` to dir/name and records its digest; false after
  /// reporting to stderr.
  bool write(const std::string &name, std::string_view bytes);
};

struct BuildCpuOptions {
  std::string file, root, weights, binding, output;
  std::vector<std::string> defines, includeDirs;
  bool serial = false;
  bool runtimeChecks = true; // --runtime-checks=off: only to measure their cost
  bool emitMlir = false; // also write model.mlir (tensors) and model.loops.mlir
  /// --dump-ir=DIR: the primary library's IR after each stage, numbered
  /// (00-imported.mlir ... 04-model.ll); linnet-opt's registered pipelines
  /// reproduce each .mlir stage from the one before.
  std::string dumpIR;
  /// Implementation policy of linalg contractions: auto | generated | blas.
  std::string impl = "auto";
  /// Without --weights, the presence sets of the optional tensors that get
  /// a library, chosen at load time: auto | each | none (optionalVariants).
  std::string variants = "auto";
  /// Called after model.so, runtime.json and plan.json are written, with
  /// the imported module (tensors, before bufferization), the linalg
  /// stage's implementation choices and the artifact's outputs so far:
  /// writes the planning documents and manifest.json (listing `files`).
  /// Returns an exit status. Unset: a manifest with the files only.
  std::function<int(mlir::ModuleOp imported, const std::vector<cpu::ImplementationChoice> &choices,
                    ArtifactOutputs &outputs)>
      writeManifest;
};

/// A .ln model through Sema, the plan and the plan importer.
struct ImportedModel {
  nlohmann::json doc; // the plan document
  plan::Plan plan;
  std::vector<import::ModelTensor> tensors;
  mlir::OwningOpRef<mlir::ModuleOp> module; // func/linalg/tensor/scf on tensors
};
/// Returns nullopt after printing the errors to stderr. The optional
/// tensors present are those of `present` when given, else those the
/// weights (opts.weights) hold, else none.
std::optional<ImportedModel> importModel(const BuildCpuOptions &opts, mlir::MLIRContext &context,
                                         const std::set<std::string> *present = nullptr);
/// Imports `m.plan` with the optional tensors in `present` (expanded
/// paths), filling m.tensors and m.module; false after printing the errors.
bool importPresence(const BuildCpuOptions &opts, ImportedModel &m, const std::set<std::string> &present,
                    mlir::MLIRContext &context);

/// `--variants each` builds a library per combination of at most this many
/// optional manifest entries.
inline constexpr size_t kMaxOptionalUnitsForEach = 4;
/// The presence sets (expanded paths of optional tensors) an artifact built
/// without weights carries besides the primary one, where none is present:
/// for mode "auto" all of them present, for "each" every non-empty
/// combination of the optional manifest entries (a layer array's copies of
/// one entry go together), for "none" or a model without optional tensors
/// nothing. Sets `error` when "each" would need too many.
std::vector<std::set<std::string>> optionalVariants(const plan::Plan &p, const std::string &mode,
                                                    std::string &error);

/// Adds --root, -D, -I, --weights, --binding, --serial, --emit-mlir to `build`.
void addBuildCpuOptions(CLI::App *build, BuildCpuOptions &opts);

/// Compiles a .ln model into a CPU ProgramArtifact directory (docs/runtime-abi.md).
/// The artifact is built in a staging directory beside opts.output and moved
/// into place only when whole: a failed build leaves the previous one.
/// Returns the exit status; errors go to stderr.
int buildCpuArtifact(const BuildCpuOptions &opts);

/// The options `build` parsed (shared with the command's own options).
BuildCpuOptions &buildCpuOptions();

} // namespace linnet::tool

#endif
