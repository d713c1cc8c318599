//===- Compiler.h - One compilation, source to artifact -----------*- C++ -*-===//
//
// A Compiler owns one compilation of a .ln model for one target:
//
//   source -> Sema -> plan -> plan importer (MLIR on tensors)
//     -> task pipeline (gf Domain -> Task IR, the target's schedule contract)
//     -> the portable plan, read from that Task IR
//     -> the target's code generator (the same module) -> library
//     -> ConcretePlanIR, MachineIR and the manifest, from the code's facts
//     -> the ProgramArtifact directory, moved into place whole.
//
// The gf passes run once; the plans and the library come from one module.
// All of a build's settings are in Options; nothing is global and nothing
// calls back into the tool. Errors are reported as values (support::Diag)
// to the sink given, located at the model's source where they have a place.
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_COMPILER_COMPILER_H
#define LINNET_COMPILER_COMPILER_H

#include "linnet/Plan/Binding.h"
#include "linnet/Support/Diag.h"
#include "linnet/Support/Numerics.h"
#include "linnet/Import/PlanImporter.h"
#include "linnet/Plan/PlanReader.h"
#include "linnet/Planning/Derived.h"
#include "linnet/Sema/Sema.h"
#include "linnet/Target/Target.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <iosfwd>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace linnet::compiler {

struct Options {
  std::string file;                 // the .ln model
  std::string root;                 // --root: the root block (default: the only pub one)
  /// -D Name=value, in the order given (names unique: the tool checked).
  std::vector<std::pair<std::string, std::string>> defines;
  sema::SemaOptions sema;           // -I and the standard library
  /// Weights (.safetensors) that decide which optional tensors are present
  /// (and the binding manifest that names them); without weights, optional
  /// tensors are bound at load time (`variants`).
  std::string weights, binding;
  /// auto | each | none: presence sets of the optional tensors that get a
  /// library when there are no weights (optionalVariants).
  std::string variants = "auto";
  /// A target name (cpu, cuda, ...) or a target file, and the planning inputs
  /// (empty: the defaults beside the target files).
  std::string target = "cpu";
  std::string deployment, implementationPolicy, evidencePolicy, simulationPolicy;
  bool serial = false;        // no threads
  bool runtimeChecks = true;  // off only to measure what the checks cost
  std::string impl = "auto";  // contractions: auto | generated | blas
  support::NumericsPolicy numerics = support::NumericsPolicy::AsWritten; // --numerics
  support::MatmulPrecision matmulPrecision = support::MatmulPrecision::Highest; // --matmul-precision
  support::BlockProducts blockProducts = support::BlockProducts::Exact;         // --block-products
  /// Module constants a checkpoint's configuration must agree with
  /// (--config through a binding's `constants`), checked against the plan.
  std::vector<plan::ConstantExpectation> constants;
  bool emitMlir = false;      // also model.mlir and model.loops.mlir
  std::string dumpIR;         // --dump-ir=DIR: each stage's IR
  bool profile = false;       // --profile: timers at every command's boundaries
  int64_t ranks = 0;          // --ranks N: a distributed artifact for N ranks (0: not)
  bool emulate = false;       // --emulate: the target's kernels run on the CPU (cuda)
  bool hostKernels = false;   // --host-kernels: kernels.host.so for the driver emulator (cuda)
  std::string output;         // the artifact directory
  /// --at NAME=VALUE: plan one call at these run-time extents (an entry's
  /// dim generic or integer scalar input; import::ImportOptions::extents).
  /// Planning products only: no artifact is built so.
  std::map<std::string, int64_t> extents;
};

/// A .ln model through the front end, the plan and the importer.
struct ImportedModel {
  nlohmann::json doc; // the plan document, as plan.json holds it
  plan::Plan plan;
  std::vector<import::ModelTensor> tensors;
  mlir::OwningOpRef<mlir::ModuleOp> module; // func/linalg/tensor/scf/gf on tensors
};

/// The planning inputs of a target: its description and the policies.
struct PlanningInputs {
  planning::Target target;
  planning::Deployment deployment;
  planning::ImplementationPolicy implementations;
  planning::EvidencePolicy evidence;
  planning::SimulationPolicy simulation;
};
/// Reads the target file `target` names and the deployment and policies
/// (defaults beside it where empty); throws planning::SchemaError naming the
/// file.
PlanningInputs loadPlanningInputs(const std::string &target, const std::string &deployment,
                                  const std::string &implementationPolicy,
                                  const std::string &evidencePolicy, const std::string &simulationPolicy);

/// The compilation target for target files of `kind`: the CPU target for
/// "cpu", a planning-only target (provider-neutral-v1) for others.
const target::Target &targetForKind(const std::string &kind);

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

class Compiler {
public:
  /// Throws nothing; an unreadable target file is reported by the calls.
  /// `diags` outlives the compiler (variants report from worker threads).
  Compiler(Options options, support::DiagSink &diags);
  ~Compiler();

  /// Builds the ProgramArtifact directory (docs/runtime-abi.md) in a staging
  /// directory beside options.output, moved into place only when whole.
  /// Returns the exit status: 0, 1 (errors in the input), 2 (usage).
  int buildArtifact();

  /// The model's portable plan for the target (`linnet build --emit`):
  /// imported, through the task pipeline, read. nullopt with `diags` (and
  /// front-end errors reported to the sink) when it cannot be made.
  std::optional<planning::PortablePlan> portablePlan(planning::Diagnostics &diags);

  /// The front end, the plan and the importer; the optional tensors present
  /// are those of `present` when given, else those the weights hold, else
  /// none. nullopt after reporting.
  std::optional<ImportedModel> importModel(mlir::MLIRContext &context,
                                           const std::set<std::string> *present = nullptr);

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace linnet::compiler

#endif // LINNET_COMPILER_COMPILER_H
