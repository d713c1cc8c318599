//===- PlanImporter.h - A linnet plan to MLIR, and on to loops ---*- C++ -*-===//
//
// The plan importer turns the plan of an instantiated root block (read
// through the plan reader) into an MLIR module with one `func.func` per
// root entry, fully specialized: block generics are constants, entry
// generics are dynamic (`?`). Calls are inlined, arrays of sub blocks are
// unrolled, optional members are resolved from the build's presence set,
// and state reads and writes stay in program order. docs/importer.md gives
// the mapping of every Core IR construct.
//
// Each entry function takes memrefs in the runtime ABI order (inputs, every
// present tensor, results; docs/runtime-abi.md) and carries
// llvm.emit_c_interface, so the CPU code generator exports it as
// `linnet_entry_<name>(void **args)`.
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_IMPORT_PLANIMPORTER_H
#define LINNET_IMPORT_PLANIMPORTER_H

#include "linnet/Plan/PlanReader.h"

#include "linnet/Support/Diag.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/OwningOpRef.h"

#include <nlohmann/json.hpp>

#include <map>
#include <set>
#include <string>
#include <vector>

namespace linnet::import {

/// One tensor of the instantiated model, arrays of sub blocks expanded
/// (`model.layers.0.self_attn.q_proj.weight`), in the ABI order.
struct ModelTensor {
  std::string path;  // canonical, expanded
  std::string kind;  // param, buffer, state
  std::string dtype; // concrete dtype name
  std::vector<int64_t> shape;
  bool optional = false, present = true;
  /// The innermost optional sub block the tensor belongs to (expanded
  /// path), if any, and whether that block requires it (declared without `?`).
  std::string block;
  bool required = false;
};

/// Most tensors a model may have once arrays of sub blocks are expanded:
/// beyond it expandManifest refuses the plan instead of exhausting memory.
inline constexpr uint64_t kMaxModelTensors = uint64_t(1) << 20;

/// Expands the plan's manifest in manifest order; an optional tensor is
/// present when `presentOptional` names it (the tensors of the weights file).
/// An optional sub block is present when `presentOptional` holds every tensor
/// it requires (and its enclosing optional blocks are present, §9.4); its
/// tensors, state included, are present with it and absent without it.
std::vector<ModelTensor> expandManifest(const plan::Plan &p,
                                        const std::set<std::string> &presentOptional,
                                        std::string &error);

/// The `runtime.json` document of a CPU artifact built from `p`.
/// The run-time checks the importer put into `module` (its `linnet.checks`
/// attribute): runtime.json's `checks`.
nlohmann::json runtimeChecks(mlir::ModuleOp module);
nlohmann::json runtimeJson(const plan::Plan &p, const std::vector<ModelTensor> &tensors,
                           const nlohmann::json &checks = nlohmann::json::array());

/// Registers the dialects the importer creates (a target adds its own).
void registerImportDialects(mlir::DialectRegistry &registry);

/// Imports every entry of the plan's root. On failure returns null and sets
/// `error` (naming the function, the op and the construct), located at the
/// model's source where the plan op has a position.
struct ImportOptions {
  /// Compile the run-time checks (data-dependent indices, integer divisors;
  /// docs/runtime-abi.md). Off only to measure what they cost.
  bool runtimeChecks = true;
  /// At least 2: a comprehension whose elements each fold a long axis with
  /// an associative user reducer (attention over a KV cache) folds it in up
  /// to this many chunks, in parallel, then combines them in order
  /// (flash-decoding; docs/importer.md). 0: every fold runs in order.
  unsigned foldChunks = 0;
  /// At least 2: a fold with std.nn's online softmax (attention) goes over
  /// its keys in blocks of this many: the block's scores, their maximum,
  /// then the weights e^(score - max) and the weighted sum of the values,
  /// combined into the state once a block (docs/importer.md). Exactly the
  /// reducer's algebra, regrouped; 0 folds key by key.
  unsigned softmaxBlock = 0;
  /// A phase plan at run-time extents (docs/planning.md, "Phase plans by
  /// length"): an entry generic (`S`) or an integer scalar input (`pos`)
  /// named here is that constant in every entry that has one, so shapes and
  /// loop bounds are static and the plans cost one call at these extents.
  /// The module is for planning only: its code would run no other extents.
  /// A name no entry has is an error.
  std::map<std::string, int64_t> extents;
};
mlir::OwningOpRef<mlir::ModuleOp> importPlan(const plan::Plan &p,
                                             const std::vector<ModelTensor> &tensors,
                                             mlir::MLIRContext &context, support::Diag &error,
                                             const ImportOptions &options = {});


} // namespace linnet::import

#endif // LINNET_IMPORT_PLANIMPORTER_H
