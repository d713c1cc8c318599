//===- Sema.h - Semantic analysis entry points ------------------*- C++ -*-===//
//
// Loads a root file and its imports (module `a.b.c` is `a/b/c.ln` under the
// search roots), resolves names, checks types, shapes, generics and the
// block-member rules, and reports every error through the DiagnosticEngine.
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_SEMA_SEMA_H
#define LINNET_SEMA_SEMA_H

#include "linnet/Sema/Program.h"
#include "linnet/Syntax/Diagnostics.h"

#include <memory>
#include <string>
#include <vector>

namespace linnet::sema {

struct SemaOptions {
  std::vector<std::string> includeDirs; // -I, searched after the root's folder
  std::string stdlibDir;                // holds std/nn.ln; searched last
};

/// The standard library root (it holds std/nn.ln): the data directory the
/// tools ship with, <bin>/../share/linnet (support::dataDir).
std::string defaultStdlibDir();

/// Analyzes the module in `rootBuffer` (already added to `sm`) and everything
/// it imports. Always returns a program; check `diag.hasErrors()`.
std::unique_ptr<Program> analyze(SourceManager &sm, uint32_t rootBuffer,
                                 const std::string &rootFile, DiagnosticEngine &diag,
                                 const SemaOptions &opts);

} // namespace linnet::sema

#endif // LINNET_SEMA_SEMA_H
