//===- PlanCommand.cpp - `linnet plan` and Sema in `linnet check` ---------===//
#include "DiagnosticsOutput.h"
#include "FrontEnd.h"
#include "linnet/Support/AtomicFile.h"
#include "PlanCommand.h"

#include "linnet/Plan/Binding.h"
#include "linnet/Plan/FrontEnd.h"
#include "linnet/Plan/PlanReader.h"
#include "linnet/Plan/PlanWriter.h"
#include "linnet/Sema/Instantiate.h"
#include "linnet/Sema/Sema.h"
#include "linnet/Support/Input.h"
#include "linnet/ir/ir.hpp"

#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <map>
#include <set>

using namespace linnet;
using support::Diag;

std::vector<std::string> linnet::tool::gIncludeDirs;

namespace {
struct PlanOptions {
  std::string file, root, output, binding, config;
  std::vector<std::string> defines;
  bool functions = false;
} gPlan;

struct IrOptions {
  std::string file, root;
  bool all = false;
} gIr;

/// Reads a JSON document (plan, binding manifest), at most
/// LINNET_MAX_JSON_BYTES long.
bool readFile(const std::string &path, std::string &text) {
  std::string err;
  if (!input::readFile(path, input::maxJsonBytes(), "LINNET_MAX_JSON_BYTES", text, err)) {
    tool::diags().report(Diag::error("io", fmt::format("cannot read '{}': {}", path, err)));
    return false;
  }
  return true;
}

/// Loads a plan file through the plan reader; reports every problem with
/// its JSON path.
std::optional<plan::Plan> loadPlan(const std::string &path) {
  std::string text;
  if (!readFile(path, text))
    return std::nullopt;
  std::vector<ir::Problem> problems;
  std::optional<plan::Plan> p = plan::readPlanText(text, problems);
  for (const ir::Problem &pr : problems)
    tool::diags().report(Diag::inFile("plan", path, pr.str()));
  return p;
}
} // namespace

bool tool::semaCheck(SourceManager &sm, uint32_t buffer, const std::string &file,
                     DiagnosticEngine &diag) {
  unsigned before = diag.errorCount();
  sema::analyze(sm, buffer, file, diag, tool::semaOptions(tool::gIncludeDirs));
  return diag.errorCount() == before;
}

CLI::App *tool::addPlanCommand(CLI::App &app) {
  CLI::App *c = app.add_subcommand("plan", "Print a model's JSON plan (version 1)");
  c->add_option("file", gPlan.file,
                "Source file (.ln), or a plan (.json) to read, verify and write back")
      ->required();
  c->add_option("--root", gPlan.root, "Root block (default: the module's only pub block)");
  c->add_option("-D", gPlan.defines, "Bind a root generic: -D Name=value")->allow_extra_args(false);
  c->add_flag("--functions", gPlan.functions,
              "Print the module's functions only: root null, empty manifest");
  c->add_option("-o", gPlan.output, "Write the plan to FILE instead of stdout");
  c->add_option("--binding", gPlan.binding,
                "Check a binding manifest (JSON) against the plan's manifest");
  c->add_option("--config", gPlan.config, "A checkpoint's configuration (a Hugging Face config.json): the generics the --binding manifest's config section maps become -D values (an explicit -D wins)");
  c->add_option("-I", gIncludeDirs, "Add a module search root")->allow_extra_args(false);
  return c;
}

/// The plan of a source file (through Sema and lowering), its constants
/// checked against `constants`, or nullopt after reporting why not.
static std::optional<nlohmann::json> planOfSource(const std::string &file, const std::string &rootName,
                                                  const std::vector<std::string> &defineList,
                                                  bool functionsOnly,
                                                  std::vector<plan::ConstantExpectation> constants = {}) {
  std::optional<std::map<std::string, std::string>> defines = tool::parseDefines(defineList);
  if (!defines)
    return std::nullopt;
  plan::SourceRequest r;
  r.file = file;
  r.root = rootName;
  r.defines = std::move(*defines);
  r.sema = tool::semaOptions(tool::gIncludeDirs);
  r.constants = std::move(constants);
  r.functionsOnly = functionsOnly;
  return plan::planSource(r, tool::diags());
}

int tool::runPlan() {
  nlohmann::json doc;
  if (gPlan.file.ends_with(".json")) {
    std::optional<plan::Plan> p = loadPlan(gPlan.file);
    if (!p)
      return 1;
    doc = plan::writePlan(*p);
  } else {
    std::vector<plan::ConstantExpectation> constants;
    if (!tool::addConfigDefines(gPlan.defines, gPlan.config, gPlan.binding, &constants))
      return 1;
    std::optional<nlohmann::json> d =
        planOfSource(gPlan.file, gPlan.root, gPlan.defines, gPlan.functions, std::move(constants));
    if (!d)
      return 1;
    doc = std::move(*d);
  }
  if (!gPlan.binding.empty()) {
    if (doc["root"].is_null()) {
      tool::diags().report(
          Diag::error("usage", "--binding needs an instantiated root block (not --functions)"));
      return 1;
    }
    std::string text;
    if (!readFile(gPlan.binding, text))
      return 1;
    std::string where, error;
    std::optional<nlohmann::json> b = input::parseJson(text, where, error);
    std::vector<ir::Problem> problems;
    if (!b)
      problems.push_back({where, error});
    else
      plan::checkBinding(*b, plan::manifestOf(doc), problems);
    for (const ir::Problem &pr : problems)
      tool::diags().report(Diag::inFile("binding", gPlan.binding, pr.str()));
    if (!problems.empty())
      return 1;
  }
  std::string text = plan::printPlan(doc);
  if (gPlan.output.empty() || gPlan.output == "-") {
    std::cout << text;
    return 0;
  }
  std::string err;
  if (!support::writeFileAtomic(gPlan.output, text, err)) {
    tool::diags().report(Diag::error("io", fmt::format("cannot write '{}': {}", gPlan.output, err)));
    return 1;
  }
  return 0;
}

CLI::App *tool::addIrCommand(CLI::App &app) {
  CLI::App *c = app.add_subcommand("ir", "Print the Core IR of a file's functions, reducers and constants");
  c->add_option("file", gIr.file, "Source file (.ln) or plan (.json)")->required();
  c->add_option("--root", gIr.root, "Only the methods of this block and what they call");
  c->add_flag("--all", gIr.all, "Also the imported modules' items");
  c->add_option("-I", gIncludeDirs, "Add a module search root")->allow_extra_args(false);
  return c;
}

/// Prints what the plan reader loads, so `linnet ir` shows exactly what a
/// backend reads.
int tool::runIr() {
  std::set<std::string> wanted; // qualified names; empty: by module
  std::string prefix;
  std::optional<plan::Plan> p;
  if (gIr.file.ends_with(".json")) {
    p = loadPlan(gIr.file);
    if (!p)
      return 1;
  } else {
    SourceManager sm;
    std::string err;
    std::optional<uint32_t> buf = sm.addFile(gIr.file, err);
    if (!buf) {
      tool::diags().report(Diag::error("io", fmt::format("cannot read '{}': {}", gIr.file, err)));
      return 1;
    }
    DiagnosticEngine diag(sm, tool::diags());
    std::unique_ptr<sema::Program> prog = sema::analyze(sm, *buf, gIr.file, diag, tool::semaOptions(tool::gIncludeDirs));
    if (diag.hasErrors())
      return 1;
    if (!gIr.root.empty()) {
      const sema::BlockInfo *root = sema::findRootBlock(*prog, gIr.root, diag);
      if (!root)
        return 1;
      std::vector<const sema::FunctionInfo *> work(root->methods.begin(), root->methods.end());
      while (!work.empty()) {
        const sema::FunctionInfo *f = work.back();
        work.pop_back();
        if (wanted.insert(f->qualified()).second)
          work.insert(work.end(), f->callees.begin(), f->callees.end());
      }
    }
    if (!gIr.all)
      prefix = prog->root->name + "::";
    std::vector<ir::Problem> problems;
    try {
      p = plan::readPlan(plan::buildPlan(*prog, nullptr), problems);
    } catch (const std::exception &e) {
      tool::diags().report(Diag::error("internal", e.what()));
      return 1;
    }
    for (const ir::Problem &pr : problems)
      tool::diags().report(Diag::error("internal", "internal error: " + pr.str()));
    if (!p)
      return 1;
  }
  auto shown = [&](const std::string &name) {
    if (!wanted.empty())
      return wanted.count(name) > 0;
    return name.starts_with(prefix);
  };
  std::string out;
  for (const plan::Function &f : p->functions) {
    if (!shown(f.name))
      continue;
    std::vector<std::string> gens, results;
    for (const nlohmann::json &g : f.generics)
      gens.push_back(g.value("name", "?"));
    for (const nlohmann::json &r : f.results)
      results.push_back(ir::typeStr(r));
    std::string g = gens.empty() ? "" : fmt::format("<{}>", fmt::join(gens, ", "));
    out += fmt::format("{} {}{} -> ({}) {{\n", f.kind, f.name, g, fmt::join(results, ", "));
    out += ir::print(f.body, 2) + "}\n";
  }
  for (const plan::Constant &c : p->constants)
    if (wanted.empty() && shown(c.name))
      out += fmt::format("const {} : {} {{\n{}}}\n", c.name, ir::typeStr(c.type), ir::print(c.body, 2));
  std::cout << out;
  return 0;
}
