//===- BuildCommand.cpp - `linnet build` ----------------------------------===//
//
// Task IR (.mlir) -> PortablePlanIR. Exit status: 0 success, 1 errors in the
// input (a plan that fails verification, an infeasible binding), 2 usage.
//
//===----------------------------------------------------------------------===//
#include "BuildCommand.h"

#include "linnet/Planning/FromTaskIR.h"
#include "linnet/Planning/Portable.h"

#include <fmt/format.h>

#include <fstream>
#include <iostream>

using namespace linnet::planning;

namespace linnet::tool {
namespace {

struct BuildOptions {
  std::string file;
  std::string target = "cpu";
  std::string deployment;
  std::string emit = "portable";
  std::string output = "-";
  bool verifyOnly = false;
} gBuild;

bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

int report(const Diagnostics &diags, const std::string &file) {
  for (const Diagnostic &d : diags)
    std::cerr << fmt::format("{}: {}\n", file, render(d));
  return diags.empty() ? 0 : 1;
}

bool writeOutput(const std::string &text, const std::string &path) {
  if (path == "-") {
    std::cout << text;
    return true;
  }
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) {
    std::cerr << fmt::format("linnet build: error: cannot write '{}'\n", path);
    return false;
  }
  return true;
}

/// Verifies a serialized planning document by its schema.
int verifyDocument(const std::string &file) {
  try {
    Json j = readJsonFile(file);
    std::string schema = j.is_object() && j.contains("schema") && j["schema"].is_string()
                             ? j["schema"].get<std::string>()
                             : "";
    Diagnostics diags;
    if (schema == kPortableSchema) {
      // Target-bound fields are named before the strict reader would call
      // them merely unknown keys.
      diags = scanTargetBoundFields(j);
      if (diags.empty())
        diags = verifyPortable(portableFromJson(j));
    } else {
      diags.push_back({"document.schema", "/schema",
                       "unknown planning document schema `" + schema + "`"});
    }
    if (report(diags, file))
      return 1;
    std::cout << fmt::format("{}: ok: {}\n", file, schema);
    return 0;
  } catch (const SchemaError &e) {
    return report({{"document.schema", e.path, e.what()}}, file);
  }
}

} // namespace

CLI::App *addBuildCommand(CLI::App &app) {
  CLI::App *cmd = app.add_subcommand("build", "Compile a model into a ProgramArtifact");
  cmd->add_option("file", gBuild.file, "Task IR (.mlir), or with --verify-only a plan (.json)")
      ->required();
  cmd->add_option("--target", gBuild.target, "cpu, cpu-avx512, cuda, cuda-h100, or a target file");
  cmd->add_option("--deployment", gBuild.deployment, "Deployment file (JSON)");
  cmd->add_option("--emit", gBuild.emit, "What to write")
      ->check(CLI::IsMember({"portable"}));
  cmd->add_option("-o", gBuild.output, "Output file ('-': standard output)");
  cmd->add_flag("--verify-only", gBuild.verifyOnly, "Run every verifier and write nothing");
  return cmd;
}

int runBuild() {
  const std::string &file = gBuild.file;
  if (endsWith(file, ".ln")) {
    std::cerr << "linnet build: error: building from .ln source needs the front end's lowering "
                 "to Task IR, which is not available yet; pass a Task IR .mlir file\n";
    return 2;
  }
  if (gBuild.verifyOnly && endsWith(file, ".json"))
    return verifyDocument(file);
  if (endsWith(file, ".json") && gBuild.emit == "portable") {
    // Re-serializing a portable plan is its round-trip check.
    try {
      PortablePlan p = portableFromJson(readJsonFile(file));
      return writeOutput(canonicalDump(toJson(p)), gBuild.output) ? 0 : 1;
    } catch (const SchemaError &e) {
      return report({{"document.schema", e.path, e.what()}}, file);
    }
  }
  Diagnostics diags;
  std::optional<PortablePlan> portable = importMlirFile(file, diags);
  if (!portable)
    return report(diags, file) ? 1 : 1;
  if (report(verifyPortable(*portable), file))
    return 1;
  if (gBuild.verifyOnly) {
    std::cout << fmt::format("{}: ok: portable plan verified\n", file);
    return 0;
  }
  return writeOutput(canonicalDump(toJson(*portable)), gBuild.output) ? 0 : 1;
}

} // namespace linnet::tool
