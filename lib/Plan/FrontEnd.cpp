//===- FrontEnd.cpp - Source to checked program to plan -------------------===//

#include "linnet/Plan/FrontEnd.h"

#include "linnet/Plan/PlanWriter.h"
#include "linnet/Syntax/Diagnostics.h"

#include <fmt/format.h>

namespace linnet::plan {

std::optional<CheckedSource> checkSource(const SourceRequest &r, support::DiagSink &diags) {
  CheckedSource out;
  out.sources = std::make_unique<SourceManager>();
  std::string err;
  std::optional<uint32_t> buf = out.sources->addFile(r.file, err);
  if (!buf) {
    diags.report(support::Diag::error("io", fmt::format("cannot read '{}': {}", r.file, err)));
    return std::nullopt;
  }
  DiagnosticEngine diag(*out.sources, diags);
  out.program = sema::analyze(*out.sources, *buf, r.file, diag, r.sema);
  if (diag.hasErrors())
    return std::nullopt;
  if (r.functionsOnly)
    return out;
  const sema::BlockInfo *root = sema::findRootBlock(*out.program, r.root, diag);
  if (!root)
    return std::nullopt;
  if (r.refuseRootShapeGenerics) {
    for (const sema::GenericParam &g : root->generics)
      if (g.kind == ast::GenericKind::Shape)
        diag.error(g.loc, fmt::format("root generic '{}': a shape generic on the root block is not "
                                      "supported by the CPU back end yet (give the block a dim "
                                      "generic per axis)",
                                      g.name));
    if (diag.hasErrors())
      return std::nullopt;
  }
  out.instance = sema::instantiate(*root, r.defines, diag);
  if (!out.instance)
    return std::nullopt;
  return out;
}

std::optional<nlohmann::json> planSource(const SourceRequest &r, support::DiagSink &diags) {
  std::optional<CheckedSource> checked = checkSource(r, diags);
  if (!checked)
    return std::nullopt;
  return planChecked(*checked, r, diags);
}

std::optional<nlohmann::json> planChecked(const CheckedSource &checked, const SourceRequest &r,
                                          support::DiagSink &diags) {
  nlohmann::json doc;
  try {
    doc = buildPlan(*checked.program, checked.instance ? &*checked.instance : nullptr);
  } catch (const std::exception &e) {
    // The plan writer throws only on its own bugs (Core IR that does not
    // verify): "internal error: ...".
    std::string what = e.what();
    bool internal = what.rfind("internal error: ", 0) == 0;
    diags.report(support::Diag::error(internal ? "internal" : "plan", what));
    return std::nullopt;
  }
  std::vector<support::Diag> mismatched = checkConstants(r.constants, doc);
  for (const support::Diag &m : mismatched)
    diags.report(m);
  if (!mismatched.empty())
    return std::nullopt;
  return doc;
}

} // namespace linnet::plan
