//===- FrontEnd.h - Source to checked program to plan -----------*- C++ -*-===//
//
// The one front end of every command that starts from a `.ln` model
// (`plan`, `run --interpret`, `init-weights`, `build`, and the compiler's
// library): read the file, check it with Sema, instantiate the root block
// with the build's generics, write the plan and hold its constants against
// a checkpoint's configuration. Errors go to one sink as values, located in
// the source where they have a place there.
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_PLAN_FRONTEND_H
#define LINNET_PLAN_FRONTEND_H

#include "linnet/Plan/Binding.h"
#include "linnet/Sema/Instantiate.h"
#include "linnet/Sema/Sema.h"
#include "linnet/Support/Diag.h"
#include "linnet/Syntax/SourceManager.h"

#include <nlohmann/json.hpp>

#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace linnet::plan {

struct SourceRequest {
  std::string file;
  std::string root; // the root block's name; empty: the module's only pub block
  std::map<std::string, std::string> defines; // -D, already parsed
  sema::SemaOptions sema;
  /// A checkpoint's configuration the plan's constants must equal
  /// (`--config` with a binding manifest's `constants`).
  std::vector<ConstantExpectation> constants;
  /// `linnet plan --functions`: no root block is instantiated.
  bool functionsOnly = false;
  /// The compiled back ends take dim generics on the root only: a shape
  /// generic there is refused at its declaration.
  bool refuseRootShapeGenerics = false;
};

/// A checked source: the program and (unless functionsOnly) its root block
/// instantiated. The source manager outlives both.
struct CheckedSource {
  std::unique_ptr<SourceManager> sources;
  std::unique_ptr<sema::Program> program;
  std::optional<sema::Instantiation> instance;
};

/// Reads, checks and instantiates; the errors go to `diags`.
std::optional<CheckedSource> checkSource(const SourceRequest &request, support::DiagSink &diags);

/// The plan (version 1) of a checked source, its constants checked.
std::optional<nlohmann::json> planChecked(const CheckedSource &checked, const SourceRequest &request,
                                          support::DiagSink &diags);

/// checkSource, then planChecked.
std::optional<nlohmann::json> planSource(const SourceRequest &request, support::DiagSink &diags);

} // namespace linnet::plan

#endif // LINNET_PLAN_FRONTEND_H
