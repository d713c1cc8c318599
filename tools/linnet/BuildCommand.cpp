//===- BuildCommand.cpp - `linnet build` ----------------------------------===//
//
// Task IR (.mlir) -> PortablePlanIR -> (binding gate) ConcretePlanIR ->
// MachineIR, with the derived timeline and report and the artifact
// manifest; every verifier runs on the way. Exit status: 0 success, 1 errors in the
// input (a plan that fails verification, an infeasible binding), 2 usage.
//
//===----------------------------------------------------------------------===//
#include "BuildCommand.h"

#include "linnet/Config.h"
#include "linnet/Planning/Binding.h"
#include "linnet/Planning/Derived.h"
#include "linnet/Planning/FromTaskIR.h"

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
  std::string implementationPolicy;
  std::string evidencePolicy;
  std::string emit = "manifest";
  std::string output = "-";
  bool verifyOnly = false;
  CLI::Option *targetOpt = nullptr;
} gBuild;

struct Inputs {
  Target target;
  Deployment deployment;
  ImplementationPolicy implementations;
  EvidencePolicy evidence;
};

/// Reads the target, deployment and policies; throws SchemaError with the
/// file named in the message.
Inputs loadInputs() {
  std::string dir = defaultTargetsDir();
  auto load = [](const std::string &file, auto parse) {
    try {
      return parse(readJsonFile(file));
    } catch (const SchemaError &e) {
      throw SchemaError(e.path, file + ": " + e.what());
    }
  };
  Inputs in;
  in.target = load(resolveTargetFile(gBuild.target, dir), targetFromJson);
  in.deployment = load(gBuild.deployment.empty() ? defaultDeploymentFile(in.target, dir) : gBuild.deployment,
                       deploymentFromJson);
  in.implementations = load(gBuild.implementationPolicy.empty() ? dir + "/policies/implementation-default.json"
                                                                : gBuild.implementationPolicy,
                            implementationPolicyFromJson);
  in.evidence = load(gBuild.evidencePolicy.empty() ? dir + "/policies/evidence-default.json" : gBuild.evidencePolicy,
                     evidencePolicyFromJson);
  return in;
}

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
    std::optional<Inputs> in;
    if (gBuild.targetOpt->count() || !gBuild.deployment.empty())
      in = loadInputs();
    if (schema == kConcreteSchema) {
      ConcreteContext ctx;
      if (in) {
        ctx.target = &in->target;
        ctx.deployment = &in->deployment;
      }
      diags = verifyConcrete(concreteFromJson(j), ctx);
    } else if (schema == kMachineSchema) {
      diags = verifyMachine(machineFromJson(j), nullptr, in ? &in->target : nullptr);
    } else if (schema == kPortableSchema) {
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
  gBuild.targetOpt = cmd->add_option("--target", gBuild.target, "cpu, cpu-avx512, cuda, cuda-h100, or a target file");
  cmd->add_option("--deployment", gBuild.deployment, "Deployment file (JSON)");
  cmd->add_option("--emit", gBuild.emit, "What to write")
      ->check(CLI::IsMember({"portable", "concrete", "machine", "timeline", "report", "manifest"}));
  cmd->add_option("--implementation-policy", gBuild.implementationPolicy, "Implementation policy file");
  cmd->add_option("--evidence-policy", gBuild.evidencePolicy, "Evidence policy file");
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
    return report(diags, file), 1;
  if (report(verifyPortable(*portable), file))
    return 1;
  if (gBuild.emit == "portable" && !gBuild.verifyOnly)
    return writeOutput(canonicalDump(toJson(*portable)), gBuild.output) ? 0 : 1;

  Inputs in;
  try {
    in = loadInputs();
  } catch (const SchemaError &e) {
    return report({{"input.schema", e.path, e.what()}}, file);
  }
  std::optional<ConcretePlan> concrete =
      bind({*portable, in.target, in.deployment, in.implementations, in.evidence}, diags);
  if (!concrete)
    return report(diags, file);
  if (report(verifyConcrete(*concrete, {&*portable, &in.target, &in.deployment}), file))
    return 1;
  MachineIR machine = lowerToMachine(*concrete, in.target);
  if (report(verifyMachine(machine, &*concrete, &in.target), file))
    return 1;
  if (gBuild.verifyOnly) {
    std::cout << fmt::format("{}: ok: portable, concrete ({}) and machine verified\n", file, in.target.id);
    return 0;
  }
  Json out;
  if (gBuild.emit == "concrete") {
    out = toJson(*concrete);
  } else if (gBuild.emit == "machine") {
    out = toJson(machine);
  } else if (gBuild.emit == "manifest") {
    out = artifactManifest({*portable, *concrete, machine, in.target, in.deployment, LINNET_VERSION,
                            LINNET_GIT_COMMIT, {"--target=" + gBuild.target, "--emit=" + gBuild.emit}});
  } else {
    CostedTaskView costs = costTasks(*portable, in.target, in.deployment, in.evidence);
    TimingProjection tp = project(*concrete, costs, in.target);
    out = gBuild.emit == "timeline" ? timelineBundle(*concrete, tp, in.evidence, {})
                                    : evaluationReport(*portable, *concrete, costs, tp, in.evidence);
  }
  return writeOutput(canonicalDump(out), gBuild.output) ? 0 : 1;
}

} // namespace linnet::tool
