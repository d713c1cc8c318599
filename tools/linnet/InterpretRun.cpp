//===- InterpretRun.cpp - `linnet run --interpret` ------------------------===//
//
// The same command line as a compiled run, executed by the reference
// interpreter (lib/Interp): inputs by name from .npy files, relations as
// row_ptr/col_idx pairs, results written as .npy in the entry's dtypes so
// a compiled and an interpreted run can be compared file to file.
//
//===----------------------------------------------------------------------===//
#include "DiagnosticsOutput.h"
#include "InterpretRun.h"

#include "FrontEnd.h"
#include "RunCommand.h"
#include "linnet/Interp/Interpreter.h"
#include "linnet/Plan/PlanReader.h"
#include "linnet/Plan/FrontEnd.h"
#include "linnet/Runtime/Artifact.h"
#include "linnet/Runtime/Binding.h"
#include "linnet/Sema/Instantiate.h"
#include "linnet/Sema/Sema.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>

using namespace linnet;
namespace fs = std::filesystem;

namespace {
const char *gCommand = "run";

void report(const std::string &msg) {
  // Errors located in the model already read `file:line:col: error: ...`.
  if (msg.find(": error: ") != std::string::npos)
    std::cerr << msg << "\n";
  else
    std::cerr << "linnet " << gCommand << ": error: " << msg << "\n";
}

/// The plan of a .ln model, through Sema and lowering, as `linnet plan` makes it.
std::optional<plan::Plan> planOfSource(const std::string &model, const tool::SourceOptions &source,
                                       const std::string &binding) {
  std::vector<std::string> defineList = source.defines;
  plan::SourceRequest r;
  r.file = model;
  r.root = source.root;
  r.sema = tool::semaOptions(source.includeDirs);
  if (!tool::addConfigDefines(defineList, source.config, binding, &r.constants))
    return std::nullopt;
  std::optional<std::map<std::string, std::string>> defines = tool::parseDefines(defineList);
  if (!defines)
    return std::nullopt;
  r.defines = std::move(*defines);
  std::optional<nlohmann::json> doc = plan::planSource(r, tool::diags());
  if (!doc)
    return std::nullopt;
  std::vector<ir::Problem> problems;
  std::optional<plan::Plan> p = plan::readPlan(*doc, problems);
  for (const ir::Problem &pr : problems)
    report(fmt::format("{}: plan: {}", model, pr.str()));
  return p;
}

std::optional<plan::Plan> planOfArtifact(const std::string &dir, std::string &numerics) {
  // plan.json is read like the library: through the manifest's digest.
  std::string path = dir + "/plan.json", text, error;
  std::unique_ptr<rt::VerifiedArtifact> art = rt::VerifiedArtifact::open(dir, error);
  if (!art || !art->read("plan.json", text, error)) {
    report(error);
    return std::nullopt;
  }
  numerics = art->manifest().numerics;
  std::vector<ir::Problem> problems;
  std::optional<plan::Plan> p = plan::readPlanText(text, problems);
  for (const ir::Problem &pr : problems)
    std::cerr << fmt::format("{}: error: {}\n", path, pr.str());
  return p;
}
} // namespace

std::unique_ptr<interp::Interpreter> tool::loadInterpreter(const std::string &model, const SourceOptions &source,
                                                           const std::string &weights, const std::string &binding,
                                                           const char *command) {
  gCommand = command;
  std::error_code ec;
  std::optional<plan::Plan> p;
  // An artifact is interpreted under the numerics policy it was built with.
  std::string numerics = source.numerics;
  if (fs::is_directory(model, ec)) {
    p = planOfArtifact(model, numerics);
  } else if (fs::path(model).extension() == ".ln" && fs::is_regular_file(model, ec)) {
    p = planOfSource(model, source, binding);
  } else {
    report(fmt::format("'{}' is neither an artifact directory nor a .ln model", model));
    return nullptr;
  }
  if (!p)
    return nullptr;
  std::string error;
  interp::LoadOptions lo;
  lo.weightsPath = weights;
  lo.mapWeights = tool::mapWeights();
  lo.numerics = support::parseNumericsPolicy(numerics).value_or(support::NumericsPolicy::AsWritten);
  if (!binding.empty()) {
    std::shared_ptr<rt::BindingMap> b = rt::BindingMap::load(binding, error);
    if (!b) {
      report(error);
      return nullptr;
    }
    lo.externalName = [b](const std::string &path) { return b->externalName(path); };
    lo.binding = b;
  }
  std::unique_ptr<interp::Interpreter> in = interp::Interpreter::load(std::move(*p), lo, error);
  if (!in)
    report(error);
  return in;
}

int tool::runInterpreted(const InterpretRunOptions &o) {
  std::string error;
  std::unique_ptr<interp::Interpreter> in = loadInterpreter(o.model, o.source, o.weights, o.binding, "run");
  if (!in)
    return 1;
  std::optional<std::vector<interp::InputSig>> sigs = in->inputs(o.entry);
  if (!sigs) {
    report(fmt::format("no entry '{}' (entries: {})", o.entry, fmt::join(in->entries(), ", ")));
    return 1;
  }
  std::optional<std::map<std::string, std::string>> parsed = tool::parseInputFiles(o.inputs, o.relations);
  if (!parsed)
    return 2;
  std::map<std::string, std::string> files = std::move(*parsed);
  std::vector<rt::OwnedTensor> owned;
  std::vector<std::string> problems;
  std::set<std::string> missingRelations;
  for (const interp::InputSig &s : *sigs) {
    auto it = files.find(s.name);
    if (it == files.end()) {
      if (s.relation.empty())
        problems.push_back(fmt::format("missing input '{}' (--input {}=FILE.npy)", s.name, s.name));
      else if (missingRelations.insert(s.relation).second)
        problems.push_back(
            fmt::format("missing relation '{}' (--relation {}=ROW_PTR.npy,COL_IDX.npy)", s.relation, s.relation));
      continue;
    }
    // The element dtype from the source spelling: `Tensor[S; bf16]`, `bf16`.
    std::string_view ty = s.type;
    if (size_t semi = ty.rfind(';'); semi != std::string_view::npos)
      ty = ty.substr(semi + 1, ty.find(']', semi) - semi - 1);
    while (!ty.empty() && ty.front() == ' ')
      ty.remove_prefix(1);
    std::optional<rt::OwnedTensor> t =
        rt::readNpyFor(it->second, rt::dtypeFromName(ty).value_or(rt::DType::F32), error);
    files.erase(it); // given, even if unreadable: not an unknown input
    if (!t) {
      problems.push_back(error);
      continue;
    }
    owned.push_back(std::move(*t));
  }
  for (auto &[name, file] : files)
    problems.push_back(fmt::format("entry '{}' has no input '{}'", o.entry, name));
  if (!problems.empty()) {
    for (const std::string &pr : problems)
      report(pr);
    return 1;
  }
  size_t nres = in->resultCount(o.entry);
  if (o.outputs.size() > nres) {
    report(fmt::format("entry '{}' has {} result(s), {} --output given", o.entry, nres, o.outputs.size()));
    return 2;
  }
  std::vector<rt::TensorView> views;
  for (const rt::OwnedTensor &t : owned)
    views.push_back(t.view());
  std::vector<rt::OwnedTensor> results;
  for (unsigned i = 0; i < std::max(1u, o.repeat); ++i)
    if (!in->call(o.entry, views, results, error)) {
      report(error);
      return 1;
    }
  for (size_t r = 0; r < o.outputs.size(); ++r)
    if (!rt::writeNpy(o.outputs[r], results[r].view(), error)) {
      report(error);
      return 1;
    }
  return 0;
}
