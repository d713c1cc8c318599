//===- Binding.h - Binding manifests (§10.2) --------------------*- C++ -*-===//
//
// A binding manifest maps a model's canonical parameter paths to the tensor
// names of an external checkpoint, with `*` standing for each index of a
// repeated sub block: `model.layers.*.self_attn.q_proj.weight` ->
// `model.layers.*.self_attn.q_proj.weight`. docs/binding-manifest.md
// describes the file. Checking it against a plan's manifest finds every
// unknown path, duplicate external name and unmapped required tensor.
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_PLAN_BINDING_H
#define LINNET_PLAN_BINDING_H

#include "linnet/Plan/PlanReader.h"

#include <map>

namespace linnet::plan {

struct Binding {
  /// Canonical pattern (manifest spelling, `layers[*]`) -> external pattern.
  std::map<std::string, std::string> patterns;
  /// Every concrete canonical path (`model.layers.3.mlp.up_proj.weight`) ->
  /// its external name, for manifests whose repeats are integers.
  std::map<std::string, std::string> names;
};

/// Checks `doc` against `manifest`; returns the binding, or nullopt with
/// every problem (paths like `tensors["lm_head.weight"]`).
std::optional<Binding> checkBinding(const json &doc, const std::vector<ManifestEntry> &manifest,
                                    std::vector<ir::Problem> &problems);

/// The `-D` values a checkpoint's configuration gives (a Hugging Face
/// `config.json`), through the binding manifest's `config` section: root
/// generic -> config key, or `{"key": K, "values": {config value: text}}`
/// for a value that is not an integer (`torch_dtype: "bfloat16"` -> `bf16`).
/// Returns generic -> value text, or nullopt with every problem: a path of
/// the binding (`config.Hidden`) or of the configuration (`hidden_size`)
/// and what was expected and found.
std::optional<std::map<std::string, std::string>> configDefines(const json &binding, const json &config,
                                                                std::vector<ir::Problem> &problems);

/// The manifest of a plan document, without reading its bodies.
std::vector<ManifestEntry> manifestOf(const json &planDoc);

} // namespace linnet::plan

#endif // LINNET_PLAN_BINDING_H
