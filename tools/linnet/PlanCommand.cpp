//===- PlanCommand.cpp - `linnet plan` and Sema in `linnet check` ---------===//
#include "PlanCommand.h"

#include "linnet/Plan/PlanWriter.h"
#include "linnet/Sema/Instantiate.h"
#include "linnet/Sema/Sema.h"

#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <map>

using namespace linnet;

std::vector<std::string> linnet::tool::gIncludeDirs;

namespace {
struct PlanOptions {
  std::string file, root, output;
  std::vector<std::string> defines;
  bool functions = false;
} gPlan;

sema::SemaOptions semaOptions() {
  sema::SemaOptions o;
  o.includeDirs = tool::gIncludeDirs;
  o.stdlibDir = sema::defaultStdlibDir("/proc/self/exe");
  return o;
}
} // namespace

bool tool::semaCheck(SourceManager &sm, uint32_t buffer, const std::string &file,
                     DiagnosticEngine &diag) {
  unsigned before = diag.errorCount();
  sema::analyze(sm, buffer, file, diag, semaOptions());
  return diag.errorCount() == before;
}

CLI::App *tool::addPlanCommand(CLI::App &app) {
  CLI::App *c = app.add_subcommand("plan", "Print a model's JSON plan (version 1)");
  c->add_option("file", gPlan.file, "Source file (.ln)")->required();
  c->add_option("--root", gPlan.root, "Root block (default: the module's only pub block)");
  c->add_option("-D", gPlan.defines, "Bind a root generic: -D Name=value")->allow_extra_args(false);
  c->add_flag("--functions", gPlan.functions,
              "Print the module's functions only: root null, empty manifest");
  c->add_option("-o", gPlan.output, "Write the plan to FILE instead of stdout");
  c->add_option("-I", gIncludeDirs, "Add a module search root")->allow_extra_args(false);
  return c;
}

int tool::runPlan() {
  SourceManager sm;
  std::string err;
  std::optional<uint32_t> buf = sm.addFile(gPlan.file, err);
  if (!buf) {
    std::cerr << fmt::format("linnet: error: cannot read '{}': {}\n", gPlan.file, err);
    return 1;
  }
  std::map<std::string, std::string> defines;
  for (const std::string &d : gPlan.defines) {
    size_t eq = d.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::cerr << fmt::format("linnet plan: error: -D expects Name=value, found '{}'\n", d);
      return 2;
    }
    defines[d.substr(0, eq)] = d.substr(eq + 1);
  }
  DiagnosticEngine diag(sm, &std::cerr);
  std::unique_ptr<sema::Program> prog = sema::analyze(sm, *buf, gPlan.file, diag, semaOptions());
  if (diag.hasErrors())
    return 1;
  std::optional<sema::Instantiation> inst;
  if (!gPlan.functions) {
    const sema::BlockInfo *root = sema::findRootBlock(*prog, gPlan.root, diag);
    if (!root)
      return 1;
    inst = sema::instantiate(*root, defines, diag);
    if (!inst)
      return 1;
  }
  std::string text = plan::printPlan(plan::buildPlan(*prog, inst ? &*inst : nullptr));
  if (gPlan.output.empty() || gPlan.output == "-") {
    std::cout << text;
    return 0;
  }
  std::ofstream out(gPlan.output, std::ios::binary);
  out << text;
  if (!out) {
    std::cerr << fmt::format("linnet: error: cannot write '{}'\n", gPlan.output);
    return 1;
  }
  return 0;
}
