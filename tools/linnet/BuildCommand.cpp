//===- BuildCommand.cpp - `linnet build` ----------------------------------===//
//
// Task IR (.mlir) -> PortablePlanIR candidates (a PlanSet) -> the selected
// plan -> (binding gate) ConcretePlanIR -> MachineIR, with the derived
// products (costs, projection, simulation trace, observations, timeline,
// report) and the artifact manifest; every verifier runs on the way. A
// planning document (.json) is read back (a round trip) or verified; a
// directory of stored products is checked for staleness. Exit status: 0
// success, 1 errors in the input (a plan that fails verification, an
// infeasible binding, stale products), 2 usage.
//
//===----------------------------------------------------------------------===//
#include "DiagnosticsOutput.h"
#include "FrontEnd.h"
#include "BuildCommand.h"
#include "BuildCpu.h"

#include "linnet/Config.h"
#include "linnet/Planning/Binding.h"
#include "linnet/Planning/Derived.h"
#include "linnet/Planning/FromTaskIR.h"
#include "linnet/Planning/Products.h"

#include "linnet/Support/AtomicFile.h"
#include "linnet/Support/Input.h"
#include "linnet/Compiler/ArtifactCache.h"
#include "linnet/Compiler/Compiler.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <fstream>
#include <iostream>
#include <charconv>
#include <iterator>

using namespace linnet::planning;
namespace fs = std::filesystem;

namespace linnet::tool {
namespace {

using support::Diag;

struct BuildOptions {
  std::string file;
  std::string target = "cpu";
  std::string deployment;
  std::string implementationPolicy;
  std::string evidencePolicy;
  std::string simulationPolicy;
  std::string emit = "manifest";
  std::string output = "-";
  std::string checkProducts;
  std::string supersedes;
  bool verifyOnly = false;
  bool cached = false;     // --cached: into the artifact cache, its path printed
  std::string sourceName;  // --source-name: with --cached, the name of a source read from stdin
  std::vector<std::string> at; // --at NAME=VALUE: run-time extents of a phase plan
  std::string implementationsFrom; // --implementations-from DIR: an artifact's implementation choices
  CLI::Option *targetOpt = nullptr;
  CLI::Option *emitOpt = nullptr;
} gBuild;

using Inputs = compiler::PlanningInputs;

/// Reads the target, deployment and policies; throws SchemaError with the
/// file named in the message.
Inputs loadInputs() {
  return compiler::loadPlanningInputs(gBuild.target, gBuild.deployment, gBuild.implementationPolicy,
                                      gBuild.evidencePolicy, gBuild.simulationPolicy);
}

bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

int report(const Diagnostics &diags, const std::string &file) {
  for (const planning::Diagnostic &d : diags)
    tool::diags().report(toDiag(d, file));
  return diags.empty() ? 0 : 1;
}

bool writeOutput(const std::string &text, const std::string &path) {
  if (path == "-") {
    std::cout << text;
    return true;
  }
  std::string err;
  if (!support::writeFileAtomic(path, text, err)) {
    tool::diags().report(Diag::error("io", fmt::format("cannot write '{}': {}", path, err)));
    return false;
  }
  return true;
}

/// Verifies a serialized planning document by its schema.
int verifyDocument(const std::string &file) {
  try {
    Json j = readJsonFile(file);
    std::optional<Inputs> in;
    if (gBuild.targetOpt->count() || !gBuild.deployment.empty())
      in = loadInputs();
    Diagnostics diags = planning::verifyDocument(j, in ? &in->target : nullptr, in ? &in->deployment : nullptr);
    if (report(diags, file))
      return 1;
    std::cout << fmt::format("{}: ok: {}\n", file, schemaOf(j));
    return 0;
  } catch (const SchemaError &e) {
    return report({{"document.schema", e.path, e.what()}}, file);
  }
}

/// Reads any planning document and writes it back: the round trip.
int readBackDocument(const std::string &file) {
  try {
    return writeOutput(canonicalDump(readBack(readJsonFile(file))), gBuild.output) ? 0 : 1;
  } catch (const SchemaError &e) {
    return report({{"document.schema", e.path, e.what()}}, file);
  }
}

/// Every candidate bound, costed and projected; the PlanSet picks one.
struct Selection {
  std::vector<PortableCandidate> candidates;
  std::vector<std::optional<Products>> products;
  std::vector<Diagnostics> rejections;
  PlanSet set;
  int selected = -1;
};

/// --implementations-from: the artifact's choices, read before planning.
std::vector<ImplementationRef> gImplementationOverrides;

Selection selectPlan(std::vector<PortableCandidate> cands, const Inputs &in) {
  Selection s;
  s.candidates = std::move(cands);
  std::vector<Candidate> list;
  for (size_t i = 0; i < s.candidates.size(); ++i) {
    const PortablePlan &p = s.candidates[i].plan;
    Diagnostics diags;
    std::optional<Products> prod = buildProducts(
        {p, in.target, in.deployment, in.implementations, in.evidence, in.simulation, LINNET_VERSION,
         LINNET_GIT_COMMIT, {"--target=" + gBuild.target, "--emit=" + gBuild.emit},
         gBuild.implementationsFrom.empty() ? nullptr : &gImplementationOverrides},
        diags);
    Candidate c;
    c.id = p.id;
    c.digest = digestOf(toJson(p));
    c.description = s.candidates[i].description;
    c.feasible = prod.has_value();
    if (prod)
      c.objectives = objectiveValues(prod->concrete, prod->projection);
    else if (!diags.empty())
      c.rejection = "[" + diags.front().code + "] " + diags.front().message;
    list.push_back(std::move(c));
    s.products.push_back(std::move(prod));
    s.rejections.push_back(std::move(diags));
  }
  s.set = planSet(std::move(list), s.candidates.front().plan.objectives);
  for (size_t i = 0; i < s.candidates.size(); ++i)
    if (s.candidates[i].plan.id == s.set.selected) s.selected = int(i);
  return s;
}

int checkStoredProducts(const Products &current) {
  std::vector<std::pair<std::string, Json>> stored;
  std::error_code ec;
  std::vector<fs::path> files;
  for (const auto &e : fs::directory_iterator(gBuild.checkProducts, ec))
    if (e.path().extension() == ".json") files.push_back(e.path());
  if (ec) {
    tool::diags().report(Diag::error("io", fmt::format("cannot read directory '{}'", gBuild.checkProducts)));
    return 2;
  }
  std::sort(files.begin(), files.end());
  std::vector<std::pair<std::string, Json>> docs;
  try {
    for (const fs::path &f : files) {
      Json j = readJsonFile(f.string());
      if (schemaOf(j) == kPlanSetSchema) continue; // a choice, not a derived product
      docs.push_back({f.filename().string(), std::move(j)});
    }
    int stale = 0;
    for (const ProductStatus &st : planning::checkProducts(docs, current)) {
      std::string what;
      for (const std::string &c : st.changes) what += (what.empty() ? "" : ", ") + c.substr(0, c.find(':'));
      if (st.stale) {
        ++stale;
        std::cout << fmt::format("{}: stale: {} changed\n", st.file, what);
        for (const std::string &c : st.changes) std::cout << fmt::format("  {}\n", c);
      } else if (st.needsNewRevision) {
        std::cout << fmt::format("{}: superseded: {} changed; observations are never rewritten, "
                                 "write a new revision with --emit observations --supersedes {}\n",
                                 st.file, what, st.file);
      } else {
        std::cout << fmt::format("{}: fresh\n", st.file);
      }
    }
    return stale ? 1 : 0;
  } catch (const SchemaError &e) {
    return report({{"document.schema", e.path, e.what()}}, gBuild.checkProducts);
  }
}

int writeAll(const Products &p, const PlanSet &set) {
  if (gBuild.output == "-") {
    tool::diags().report(Diag::error("usage", "--emit all writes a directory: pass -o DIR"));
    return 2;
  }
  std::string err;
  if (!support::prepareOutputDir(gBuild.output, err)) {
    tool::diags().report(Diag::error("io", err));
    return 1;
  }
  for (const auto &[name, doc] : productDocuments(p))
    if (!writeOutput(canonicalDump(doc), (fs::path(gBuild.output) / name).string()))
      return 1;
  return writeOutput(canonicalDump(toJson(set)), (fs::path(gBuild.output) / "planset.json").string()) ? 0 : 1;
}

/// The compiler's options for this build of a .ln model; nullopt after
/// reporting a bad -D.
std::optional<compiler::Options> lnOptions() {
  std::optional<compiler::Options> o = compilerOptions(buildCpuOptions(), gBuild.target);
  if (o) {
    o->deployment = gBuild.deployment;
    o->implementationPolicy = gBuild.implementationPolicy;
    o->evidencePolicy = gBuild.evidencePolicy;
    o->simulationPolicy = gBuild.simulationPolicy;
    for (const std::string &a : gBuild.at) {
      size_t eq = a.find('=');
      int64_t v = 0;
      std::string name = a.substr(0, eq);
      const char *end = a.data() + a.size();
      if (eq == std::string::npos || name.empty() ||
          std::from_chars(a.data() + eq + 1, end, v).ptr != end || eq + 1 == a.size() || v < 0) {
        tool::diags().report(Diag::error(
            "usage", fmt::format("--at {}: expected NAME=VALUE, an entry's dim generic or integer input "
                                 "and a non-negative integer (--at S=512, --at pos=1000)",
                                 a)));
        return std::nullopt;
      }
      if (!o->extents.emplace(name, v).second) {
        tool::diags().report(Diag::error("usage", fmt::format("--at {}: '{}' is given twice", a, name)));
        return std::nullopt;
      }
    }
  }
  return o;
}

/// `--emit phases`: the report's phase plans, one call of each entry at
/// the extents the build was planned at, with the memory the plan holds.
Json phasesDocument(const Products &p, const std::map<std::string, int64_t> &extents) {
  Json phases = Json::array();
  for (const PhaseTiming &t : p.report.phases)
    phases.push_back({{"entry", t.entry},
                      {"executions", t.executions},
                      {"makespan_ns", t.makespanNs},
                      {"serial_ns", t.serialNs},
                      {"calls_per_s", t.makespanNs > 0 ? 1e9 / t.makespanNs : 0.0}});
  Json memory = Json::array();
  for (const ArenaReport &a : p.report.memory)
    memory.push_back({{"memory_space", a.memorySpace},
                      {"persistent_bytes", a.persistentBytes},
                      {"arena_bytes", a.arenaBytes},
                      {"total_bytes", a.persistentBytes + a.arenaBytes}});
  Json at = Json::object();
  for (const auto &[name, value] : extents)
    at[name] = value;
  return {{"schema", "linnet.phase-plans/1"},
          {"extents", at},
          {"evidence", p.report.key.count("evaluation_evidence") ? p.report.key.at("evaluation_evidence") : ""},
          {"phases", phases},
          {"memory", memory}};
}

} // namespace

CLI::App *addBuildCommand(CLI::App &app) {
  CLI::App *cmd = app.add_subcommand("build", "Compile a model into a ProgramArtifact");
  cmd->add_option("file", gBuild.file,
                  "A model (.ln: builds a CPU artifact), Task IR (.mlir), or with --verify-only a plan (.json)")
      ->required();
  addBuildCpuOptions(cmd, buildCpuOptions());
  gBuild.targetOpt = cmd->add_option("--target", gBuild.target, "cpu (portable: x86-64-v3, AVX2), cpu-native (this machine's CPU, every extension it has), cpu-avx512 (x86-64-v4), cuda, cuda-h100, or a target file");
  cmd->add_option("--deployment", gBuild.deployment, "Deployment file (JSON)");
  gBuild.emitOpt = cmd->add_option("--emit", gBuild.emit, "What to write (all: every product into the directory -o names)")
      ->check(CLI::IsMember({"portable", "concrete", "machine", "costs", "projection", "trace", "observations",
                             "timeline", "report", "manifest", "planset", "phases", "all"}));
  cmd->add_option("--implementations-from", gBuild.implementationsFrom,
                  "With --emit: bind each task to the implementation an artifact built from the same model (DIR) "
                  "runs it with (its code generator's choices: a streamed matvec, a BLAS call), so the plans cost "
                  "what that code runs");
  cmd->add_option("--at", gBuild.at,
                  "With --emit: plan one call at run-time extents, an entry's dim generic or integer scalar "
                  "input: --at S=512 (prefill of 512 tokens), --at pos=1000 (decode at position 1000)")
      ->allow_extra_args(false);
  cmd->add_option("--implementation-policy", gBuild.implementationPolicy, "Implementation policy file");
  cmd->add_option("--evidence-policy", gBuild.evidencePolicy, "Evidence policy file");
  cmd->add_option("--simulation-policy", gBuild.simulationPolicy, "Simulation policy file");
  cmd->add_option("--supersedes", gBuild.supersedes,
                  "With --emit observations: the ObservationSet the new revision supersedes");
  cmd->add_option("--check-products", gBuild.checkProducts,
                  "Report which products stored in DIR are stale for the current inputs");
  cmd->add_option("-o", gBuild.output, "Output file ('-': standard output; a directory for --emit all)");
  cmd->add_flag("--verify-only", gBuild.verifyOnly, "Run every verifier and write nothing");
  cmd->add_flag("--cached", gBuild.cached,
                "Build a .ln model into the artifact cache (or reuse its entry) and print the "
                "artifact directory (what `run MODEL.ln` and the Python package use)");
  cmd->add_option("--source-name", gBuild.sourceName,
                  "With --cached and the file '-': the model's text is read from standard input and "
                  "kept in the cache as NAME.ln");
  return cmd;
}

/// The build's -o through the one output guard (AtomicFile.h), with what
/// it is: an artifact directory replaced whole, a folder of products
/// (--emit all), or a file. Its inputs are the command's (linnet.cpp).
bool checkBuildOutput(bool artifactDir) {
  support::OutputKind kind = artifactDir            ? support::OutputKind::Artifact
                             : gBuild.emit == "all" ? support::OutputKind::Directory
                                                    : support::OutputKind::File;
  return support::checkCommandOutput("build", gBuild.output, kind);
}

/// `build --cached`: the artifact cache's entry for the model, printed.
int runCachedBuild() {
  BuildCpuOptions &o = buildCpuOptions();
  const char *conflict = gBuild.output != "-"          ? "-o"
                         : gBuild.emitOpt->count()     ? "--emit"
                         : gBuild.verifyOnly           ? "--verify-only"
                         : !gBuild.checkProducts.empty() ? "--check-products"
                         : !o.dumpIR.empty()           ? "--dump-ir"
                                                       : nullptr;
  if (conflict) {
    tool::diags().report(
        Diag::error("usage", fmt::format("--cached builds into the artifact cache and takes no {}", conflict)));
    return 2;
  }
  std::string file = gBuild.file;
  if (file == "-") {
    if (gBuild.sourceName.empty()) {
      tool::diags().report(Diag::error("usage", "--cached with the file '-' needs --source-name NAME"));
      return 2;
    }
    // Standard input is the one stream linnet reads on purpose: within the
    // source limit, as a source file is.
    std::string text, err;
    uint64_t limit = input::maxSourceBytes();
    for (char chunk[65536]; std::cin.read(chunk, sizeof chunk) || std::cin.gcount() > 0;) {
      text.append(chunk, static_cast<size_t>(std::cin.gcount()));
      if (text.size() > limit) {
        tool::diags().report(Diag::error("io", fmt::format("standard input: larger than the {} byte limit (set "
                                                           "LINNET_MAX_SOURCE_BYTES to raise it)",
                                                           limit)));
        return 1;
      }
    }
    std::optional<std::string> path = compiler::cachedSource(text, gBuild.sourceName, err);
    if (!path) {
      tool::diags().report(Diag::error("io", err));
      return 1;
    }
    file = *path;
  } else if (!gBuild.sourceName.empty()) {
    tool::diags().report(
        Diag::error("usage", "--source-name names a source read from standard input (the file '-')"));
    return 2;
  } else if (!endsWith(file, ".ln")) {
    tool::diags().report(Diag::error("usage", fmt::format("--cached builds a .ln model, not '{}'", file)));
    return 2;
  }
  o.file = file;
  std::optional<compiler::Options> options = lnOptions();
  if (!options)
    return 2;
  std::optional<std::string> dir = compiler::cachedArtifact(std::move(*options), tool::diags());
  if (!dir)
    return 1;
  std::cout << *dir << "\n";
  return 0;
}

int runBuild() {
  std::map<std::string, int64_t> lnExtents;
  if (gBuild.cached)
    return runCachedBuild();
  const std::string &file = gBuild.file;
  bool artifactDir = endsWith(file, ".ln") && !gBuild.emitOpt->count() && !gBuild.verifyOnly &&
                     gBuild.checkProducts.empty();
  if (!checkBuildOutput(artifactDir))
    return 2;
  std::vector<PortableCandidate> cands;
  if (endsWith(file, ".ln")) {
    // No --emit, --verify-only or --check-products: the CPU artifact. Else
    // the model goes through the importer and the gf passes to Task IR
    // and on into planning, for any target.
    bool planning = gBuild.emitOpt->count() || gBuild.verifyOnly || !gBuild.checkProducts.empty();
    BuildCpuOptions &o = buildCpuOptions();
    o.file = file;
    if (!planning)
      o.output = gBuild.output;
    std::optional<compiler::Options> options = lnOptions();
    if (!options)
      return 2;
    if (!options->extents.empty() && !planning) {
      tool::diags().report(Diag::error("usage", "--at plans one call at run-time extents: give it with --emit "
                                                "(phases, report, ...); an artifact runs every extent"));
      return 2;
    }
    lnExtents = options->extents;
    if (!gBuild.implementationsFrom.empty()) {
      if (!planning) {
        tool::diags().report(Diag::error("usage", "--implementations-from binds the plans of --emit products; "
                                                  "an artifact binds its own"));
        return 2;
      }
      try {
        gImplementationOverrides =
            concreteFromJson(readJsonFile(gBuild.implementationsFrom + "/concrete.json")).implementations;
      } catch (const SchemaError &e) {
        return report({{"input.schema", e.path, e.what()}}, gBuild.implementationsFrom + "/concrete.json");
      }
    }
    compiler::Compiler c(std::move(*options), tool::diags());
    if (!planning)
      return c.buildArtifact();
    Diagnostics diags;
    std::optional<PortablePlan> plan = c.portablePlan(diags);
    if (!plan)
      return report(diags, file), 1;
    cands.push_back({"the source's plan", std::move(*plan)});
  } else if (gBuild.verifyOnly && endsWith(file, ".json")) {
    return verifyDocument(file);
  } else if (endsWith(file, ".json")) {
    return readBackDocument(file);
  }

  Diagnostics diags;
  if (cands.empty())
    cands = importMlirCandidates(file, diags);
  if (cands.empty())
    return report(diags, file), 1;
  for (const PortableCandidate &c : cands)
    if (report(verifyPortable(c.plan), file))
      return 1;

  Inputs in;
  try {
    in = loadInputs();
  } catch (const SchemaError &e) {
    // The portable plan needs no target.
    if (gBuild.emit == "portable" && !gBuild.verifyOnly && !gBuild.targetOpt->count())
      return writeOutput(canonicalDump(toJson(cands.front().plan)), gBuild.output) ? 0 : 1;
    return report({{"input.schema", e.path, e.what()}}, file);
  }
  Selection sel = selectPlan(std::move(cands), in);
  if (gBuild.emit == "planset" && !gBuild.verifyOnly) {
    // Written even when no candidate binds: the set says why.
    if (!writeOutput(canonicalDump(toJson(sel.set)), gBuild.output))
      return 1;
    return sel.selected < 0 ? report(sel.rejections.front(), file) : 0;
  }
  if (sel.selected < 0) {
    // No candidate binds: the source's own plan says why.
    if (gBuild.emit == "portable" && !gBuild.verifyOnly)
      return writeOutput(canonicalDump(toJson(sel.candidates.front().plan)), gBuild.output) ? 0 : 1;
    return report(sel.rejections.front(), file);
  }
  const Products &p = *sel.products[sel.selected];
  if (!gBuild.checkProducts.empty())
    return checkStoredProducts(p);
  if (gBuild.verifyOnly) {
    std::cout << fmt::format("{}: ok: portable, concrete ({}) and machine verified\n", file, in.target.id);
    return 0;
  }
  Json out;
  if (gBuild.emit == "all")
    return writeAll(p, sel.set);
  if (gBuild.emit == "observations" && !gBuild.supersedes.empty()) {
    try {
      ObservationSet prev = observationsFromJson(readJsonFile(gBuild.supersedes));
      ObservationSet next = supersede(prev, p.observations.subject, p.observations.source, p.observations.records);
      if (report(verifyObservations(next, &prev), gBuild.supersedes))
        return 1;
      return writeOutput(canonicalDump(toJson(next)), gBuild.output) ? 0 : 1;
    } catch (const SchemaError &e) {
      return report({{"document.schema", e.path, e.what()}}, gBuild.supersedes);
    }
  }
  if (gBuild.emit == "phases")
    return writeOutput(canonicalDump(phasesDocument(p, lnExtents)), gBuild.output) ? 0 : 1;
  for (const auto &[name, doc] : productDocuments(p))
    if (name == gBuild.emit + ".json")
      out = doc;
  return writeOutput(canonicalDump(out), gBuild.output) ? 0 : 1;
}

} // namespace linnet::tool
