//===- Instantiate.h - Root block instantiation and the manifest -*- C++ -*-===//
//
// Binds the root block's generics (defaults or -D values), then every sub
// block's from its declared arguments, checks each instance's where-
// constraints with the bound values, and lists every param, buffer and state
// of the hierarchy under its canonical path. An array of sub blocks is
// visited once: its path holds `[*]` and its length goes to `repeat`.
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_SEMA_INSTANTIATE_H
#define LINNET_SEMA_INSTANTIATE_H

#include "linnet/Sema/Program.h"
#include "linnet/Syntax/Diagnostics.h"

#include <map>
#include <optional>

namespace linnet::sema {

struct ManifestEntry {
  std::string path;
  ast::MemberKind kind;
  Dtype dtype;
  Shape shape;
  std::vector<Dim> repeat;
  bool optional = false;
};

struct Instantiation {
  const BlockInfo *root = nullptr;
  std::vector<GenericValue> rootArgs;
  std::vector<ManifestEntry> manifest;
  size_t instances = 0; // block instances visited (arrays count once)
};

/// Finds the root block: `name` if given, else the only pub block of the
/// root module (or its only block). Reports and returns null on failure.
const BlockInfo *findRootBlock(const Program &p, const std::string &name, DiagnosticEngine &diag);

/// `defines` maps root generic names to their spelled values (`-D Hidden=96`).
std::optional<Instantiation> instantiate(const BlockInfo &root,
                                         const std::map<std::string, std::string> &defines,
                                         DiagnosticEngine &diag);

} // namespace linnet::sema

#endif // LINNET_SEMA_INSTANTIATE_H
