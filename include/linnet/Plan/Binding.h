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

#include "linnet/Support/Diag.h"

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

/// A module constant a configuration must agree with: the binding's
/// `constants` section maps a constant (`ROPE_THETA`) to a configuration
/// key (`rope_theta`); a model written with 10000 cannot run a checkpoint
/// trained with 500000, and only the check says so.
struct ConstantExpectation {
  std::string constant; // the name in the model's module
  std::string key;      // the configuration's key
  std::string config;   // the configuration file, for messages
  json value;           // the configuration's value
};

/// The binding's `constants` section read against a configuration (none
/// when it has no such section); problems as configDefines'.
std::vector<ConstantExpectation> configConstants(const json &binding, const json &config,
                                                 const std::string &configFile,
                                                 std::vector<ir::Problem> &problems);

/// Each expectation against the plan document's module constants: a
/// literal constant must equal the configuration's value (floats within a
/// relative 1e-6); a constant the plan computes, or one it lacks, is
/// refused too. Each error is about the configuration file, reading
/// "<key>: ..." with the constant's source location.
std::vector<support::Diag> checkConstants(const std::vector<ConstantExpectation> &expected, const json &planDoc);

/// The manifest of a plan document, without reading its bodies.
std::vector<ManifestEntry> manifestOf(const json &planDoc);

} // namespace linnet::plan

#endif // LINNET_PLAN_BINDING_H
