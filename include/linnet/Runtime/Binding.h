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
  };
  const std::vector<Rule> &rules() const { return rules_; }

private:
  std::vector<Rule> rules_; // exact rules first, then patterns, each in file order
};

} // namespace linnet::rt

#endif // LINNET_RUNTIME_BINDING_H
