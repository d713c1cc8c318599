//===- Binding.h - Binding manifests: canonical path -> tensor name -*- C++ -*-===//
//
// A binding manifest maps a model's canonical parameter paths to the tensor
// names of an external weights file:
//
//   {"version": 1,
//    "tensors": {"layers.*.attn.q.weight": "model.layers.*.self_attn.q_proj.weight",
//                "embed.weight": "model.embed_tokens.weight"}}
//
// `*` stands for one array index segment and must occur as often on both
// sides; the n-th `*` on the right takes the n-th index on the left. Exact
// entries win over patterns; a path no entry matches keeps its own name.
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_RUNTIME_BINDING_H
#define LINNET_RUNTIME_BINDING_H

#include "linnet/Runtime/TensorFiles.h"

#include <memory>
#include <string>
#include <vector>

namespace linnet::rt {

class BindingMap {
public:
  static std::unique_ptr<BindingMap> load(const std::string &path, std::string &error);
  static std::unique_ptr<BindingMap> parse(const std::string &text, const std::string &origin,
                                           std::string &error);
  /// The external name of `canonicalPath`.
  std::string externalName(const std::string &canonicalPath) const;
  /// True if some entry maps `canonicalPath`.
  bool maps(const std::string &canonicalPath) const;

  struct Rule {
    std::vector<std::string> from, to; // dot-separated segments, "*" wildcards
    /// The external tensor's rows are stored per head as rotary pairs
    /// (llama.cpp's order); this weights-file metadata key gives the head
    /// size. Empty: stored as the model reads them.
    std::string rotaryPairs;
  };
  const std::vector<Rule> &rules() const { return rules_; }

private:
  std::vector<Rule> rules_; // exact rules first, then patterns, each in file order
};

/// Puts the tensors of `weights` that a rule of `binding` says are stored as
/// rotary pairs into the model's order: in each head of d rows (d read from
/// the file's metadata key), row 2j + t of the file becomes row t * d/2 + j
/// (the inverse of llama.cpp's conversion of Hugging Face's q/k
/// projections). The permuted tensors are copies the file object owns.
bool applyBindingTransforms(SafeTensorsFile &weights, const BindingMap &binding, std::string &error);

} // namespace linnet::rt

#endif // LINNET_RUNTIME_BINDING_H
