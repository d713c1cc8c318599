//===- ProfileCommand.cpp - `linnet profile` and `linnet explain` ---------===//
//
// `linnet profile DIR --entry E [inputs]` runs an entry of an artifact built
// with `linnet build --profile` and times every command of its concrete
// plan where it runs (the library's timers, -linnet-cpu-instrument-commands),
// then writes a Chrome/Perfetto trace, the measured ObservationSet and the
// EvaluationReport with predicted and measured side by side; `--calibrate`
// fits a calibrated evaluation evidence from the measurements.
// `linnet explain DIR QUERY` maps a command, task, symbol or source line of
// an artifact to the others (docs/profiling.md).
//
//===----------------------------------------------------------------------===//
#include "ProfileCommand.h"

#include "FrontEnd.h"
#include "ArtifactCache.h"
#include "RunCommand.h"

#include "linnet/Compiler/Compiler.h"
#include "linnet/Planning/Derived.h"
#include "linnet/Profile/Profile.h"
#include "linnet/Runtime/Artifact.h"
#include "linnet/Sema/Sema.h"
#include "linnet/Support/AtomicFile.h"
#include "linnet/Support/Input.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

using namespace linnet;
using planning::Json;

namespace {

struct ProfileOptions {
  std::string model, output, evidencePolicy, calibrate, plan;
  std::vector<std::string> calibrateWith;
  tool::SourceOptions source; // for a .ln model
  tool::EntryCallOptions call;
  unsigned iterations = 10, warmup = 2;
} gProfile;

struct ExplainOptions {
  std::string artifact, query;
} gExplain;

std::optional<profile::ArtifactPlans> readPlans(const std::string &dir, const char *cmd) {
  profile::ArtifactPlans p;
  std::string error;
  if (!profile::readArtifactPlans(dir, p, error)) {
    std::cerr << fmt::format("linnet {}: error: {}\n", cmd, error);
    return std::nullopt;
  }
  return p;
}

/// The `--target=` the artifact was built with (its manifest's flags).
std::string builtTarget(const planning::ProgramManifest &m) {
  for (const std::string &f : m.flags)
    if (f.rfind("--target=", 0) == 0)
      return f.substr(9);
  return "cpu";
}

std::string ms(double ns) { return fmt::format("{:.3f} ms", ns * 1e-6); }

bool writeOut(const std::string &path, const std::string &bytes) {
  std::string err;
  if (support::writeFileAtomic(path, bytes, err))
    return true;
  std::cerr << fmt::format("linnet profile: error: cannot write '{}': {}\n", path, err);
  return false;
}

} // namespace

CLI::App *tool::addProfileCommand(CLI::App &app) {
  CLI::App *c = app.add_subcommand(
      "profile", "Run an entry of an artifact built with --profile, timing every command of its plan");
  c->add_option("artifact", gProfile.model,
                 "Artifact directory (linnet build --profile -o DIR), or a .ln model (built with "
                 "--profile into the artifact cache)")
      ->required();
  tool::addEntryCallOptions(c, gProfile.call);
  tool::addSourceOptions(c, gProfile.source);
  c->add_option("--iterations", gProfile.iterations, "Timed calls (state persists between calls)")
      ->default_val(10)
      ->check(CLI::Range(1u, 100000u));
  c->add_option("--warmup", gProfile.warmup, "Untimed calls first")
      ->default_val(2)
      ->check(CLI::Range(0u, 100000u));
  c->add_option("-o,--output", gProfile.output,
                "Directory for trace.json, observations.json and report.json (default: DIR.profile)");
  c->add_option("--evidence-policy", gProfile.evidencePolicy,
                "Evidence policy the prediction is costed with (default: the target's; a --calibrate output)");
  c->add_option("--calibrate", gProfile.calibrate,
                "Write an evidence policy whose evaluation evidence is fitted to these measurements");
  c->add_option("--plan", gProfile.plan,
                "The portable plan at this run's extents (linnet build MODEL.ln --emit portable --at S=128): "
                "the work facts the prediction and the calibration cost each command with");
  c->add_option("--calibrate-with", gProfile.calibrateWith,
                "With --calibrate: also fit to an earlier profile of the same artifact (its -o directory: "
                "observations.json and the plan.json it was costed with)")
      ->allow_extra_args(false);
  return c;
}

int tool::runProfile() {
  if (!gProfile.calibrateWith.empty() && gProfile.calibrate.empty()) {
    std::cerr << "linnet profile: error: --calibrate-with adds runs to a fit: give --calibrate FILE too\n";
    return 2;
  }
  std::optional<std::map<std::string, std::string>> files =
      tool::parseInputFiles(gProfile.call.inputs, gProfile.call.relations);
  if (!files)
    return 2;
  std::optional<std::string> artifact = tool::resolveArtifact(
      gProfile.model, gProfile.source, gProfile.call.weights, gProfile.call.binding, /*profile=*/true);
  if (!artifact)
    return 1;
  const std::string &dir = *artifact;
  // A .ln model's results go beside it, not into the cache.
  std::string base = dir == gProfile.model ? dir : std::filesystem::path(gProfile.model).replace_extension().string();
  std::string out = gProfile.output.empty() ? base + ".profile" : gProfile.output;
  std::optional<profile::ArtifactPlans> plans = readPlans(dir, "profile");
  if (!plans)
    return 1;
  std::unique_ptr<rt::Model> model = tool::loadArtifact(dir, gProfile.call.weights, gProfile.call.binding, "profile");
  if (!model)
    return 1;
  std::optional<std::vector<rt::OwnedTensor>> inputs =
      tool::readEntryInputs(*model, gProfile.call.entry, std::move(*files), "profile");
  if (!inputs)
    return 1;
  if (!model->profiled())
    std::cerr << fmt::format("linnet profile: warning: '{}' has no command timers (built without "
                             "--profile): timing whole calls only; rebuild with `linnet build ... "
                             "--profile` to time each command\n",
                             dir);
  // Inputs first, so that nothing but the calls is timed.
  std::vector<rt::TensorView> views;
  for (const rt::OwnedTensor &t : *inputs)
    views.push_back(t.view());
  profile::Measurement measured;
  std::string error;
  if (!profile::measure(*model, gProfile.call.entry, views, {gProfile.warmup, gProfile.iterations}, measured,
                        error)) {
    std::cerr << "linnet profile: error: " << error << "\n";
    return 1;
  }
  if (measured.droppedEvents)
    std::cerr << fmt::format("linnet profile: warning: {} timer events did not fit the library's buffer; "
                             "use fewer --iterations\n",
                             measured.droppedEvents);
  planning::ObservationSet obs =
      profile::observations(measured, plans->concrete, plans->manifest.libraryDigest.value_or(""));

  // The prediction: the artifact's plans re-costed with the evaluation
  // evidence (the target's default, or --evidence-policy).
  compiler::PlanningInputs in;
  try {
    in = compiler::loadPlanningInputs(builtTarget(plans->manifest), "", "", gProfile.evidencePolicy, "");
  } catch (const planning::SchemaError &e) {
    std::cerr << fmt::format("linnet profile: error: {}: {}\n", e.path, e.what());
    return 1;
  }
  // The facts: the artifact's plan (dynamic extents counted as 1), or the
  // plan at this run's extents (--plan), which must hold every task the
  // artifact's commands run.
  auto readPortable = [&](const std::string &path, planning::PortablePlan &out) {
    try {
      out = planning::portableFromJson(planning::readJsonFile(path));
    } catch (const planning::SchemaError &e) {
      std::cerr << fmt::format("linnet profile: error: {}: {}: {}\n", path, e.path, e.what());
      return false;
    }
    for (const planning::Command &cmd : plans->concrete.commands)
      if (!out.task(cmd.portableTask)) {
        std::cerr << fmt::format("linnet profile: error: {}: no task '{}', which the artifact's command '{}' "
                                 "runs: a plan of another model or build\n",
                                 path, cmd.portableTask, cmd.id);
        return false;
      }
    return true;
  };
  planning::PortablePlan portable = plans->portable;
  if (!gProfile.plan.empty() && !readPortable(gProfile.plan, portable))
    return 1;
  planning::CostedTaskView costs =
      planning::costTasks(portable, in.target, in.deployment, in.evidence, &plans->concrete);
  planning::TimingProjection tp = planning::project(plans->concrete, costs, in.target, in.simulation);
  tp.phases = planning::projectPhases(portable, plans->concrete, tp,
                                      planning::launchOverheadNs(costs, in.target, in.simulation));
  planning::EvaluationReport report = planning::evaluate(portable, plans->concrete, costs, tp, in.evidence);
  report.validation = planning::validate(plans->concrete, tp, obs);

  // The trace: one thread for the entry's calls, one for its commands.
  Json trace = planning::toJson(
      profile::measuredTimeline(measured, plans->portable, plans->concrete, plans->manifest, obs, dir));
  std::map<std::string, const planning::Task *> taskById;
  for (const planning::Task &t : plans->portable.tasks)
    taskById[t.id] = &t;

  std::string err;
  if (!support::prepareOutputDir(out, err)) {
    std::cerr << fmt::format("linnet profile: error: {}\n", err);
    return 1;
  }
  if (!writeOut(out + "/trace.json", trace.dump(1) + "\n") ||
      !writeOut(out + "/observations.json", planning::canonicalDump(planning::toJson(obs))) ||
      !writeOut(out + "/report.json", planning::canonicalDump(planning::toJson(report))) ||
      !writeOut(out + "/plan.json", planning::canonicalDump(planning::toJson(portable))))
    return 1;
  if (!gProfile.calibrate.empty()) {
    // This run, then the earlier ones with the plans they were costed with.
    std::vector<planning::PortablePlan> earlierPlans(gProfile.calibrateWith.size());
    std::vector<planning::ObservationSet> earlierObs(gProfile.calibrateWith.size());
    std::vector<planning::CalibrationRun> runs = {{&portable, &obs}};
    for (size_t i = 0; i < gProfile.calibrateWith.size(); ++i) {
      const std::string &d = gProfile.calibrateWith[i];
      if (!readPortable(d + "/plan.json", earlierPlans[i]))
        return 1;
      try {
        earlierObs[i] = planning::observationsFromJson(planning::readJsonFile(d + "/observations.json"));
      } catch (const planning::SchemaError &e) {
        std::cerr << fmt::format("linnet profile: error: {}/observations.json: {}: {}\n", d, e.path, e.what());
        return 1;
      }
      runs.push_back({&earlierPlans[i], &earlierObs[i]});
    }
    std::string why;
    std::optional<Json> cal = planning::calibrateEvidence(in.evidence, runs, plans->concrete, in.target, why);
    if (!cal) {
      std::cerr << "linnet profile: error: cannot calibrate: " << why << "\n";
      return 1;
    }
    if (!writeOut(gProfile.calibrate, planning::canonicalDump(*cal)))
      return 1;
  }

  // The summary: the entry, then the commands that took longest.
  std::cout << fmt::format("{}: {} calls of `{}` (after {} warm-up)\n", dir, gProfile.iterations, gProfile.call.entry,
                           gProfile.warmup);
  for (const planning::PhaseValidation &p : report.validation->phases) {
    if (p.entry != gProfile.call.entry)
      continue;
    std::cout << fmt::format("  measured  {} per call (median){}\n", ms(p.measuredNs),
                             model->profiled() ? fmt::format(", {} inside timed commands", ms(p.attributedNs)) : "");
    std::cout << fmt::format("  predicted {} (phase {}, evidence {}): {:+.1f}%\n", ms(p.predictedNs), p.phase,
                             in.evidence.evaluation.revision,
                             p.measuredNs > 0 ? (p.predictedNs / p.measuredNs - 1) * 100 : 0.0);
  }
  std::vector<planning::CommandValidation> top = report.validation->commands;
  std::sort(top.begin(), top.end(), [](const auto &a, const auto &b) {
    return a.measuredNs * double(a.executions) > b.measuredNs * double(b.executions);
  });
  if (!top.empty())
    std::cout << "  commands by measured time per call (predicted per execution):\n";
  for (size_t i = 0; i < std::min<size_t>(top.size(), 8); ++i) {
    const planning::CommandValidation &c = top[i];
    auto t = taskById.find(c.portableTask);
    std::cout << fmt::format("    {:>10}  {} x {:<4} predicted {:>10}  {}  {}\n", ms(c.measuredNs * double(c.executions)),
                             ms(c.measuredNs), c.executions, ms(c.predictedNs), c.command,
                             t == taskById.end() ? "" : t->second->provenance.location);
  }
  std::cout << fmt::format("  wrote {0}/trace.json (chrome://tracing, ui.perfetto.dev), {0}/observations.json, "
                           "{0}/report.json{1}\n",
                           out, gProfile.calibrate.empty() ? "" : ", " + gProfile.calibrate);
  return 0;
}

// --- linnet explain ----------------------------------------------------------

CLI::App *tool::addExplainCommand(CLI::App &app) {
  CLI::App *c = app.add_subcommand(
      "explain", "Map a command, task, symbol or source line of an artifact to the others");
  c->add_option("artifact", gExplain.artifact, "Artifact directory (from linnet build)")->required();
  c->add_option("query", gExplain.query,
                "A command id (cmd.…), a task id (task.…), a symbol of the library (linnet_entry_decode, "
                "_mlir_ciface_…, a BLAS routine) or a source position FILE:LINE[:COL]")
      ->required();
  return c;
}

namespace {
/// The text of line `line` of `file` (the model's own path, or a standard
/// library module), or "".
std::string sourceLine(const std::string &file, int64_t line) {
  std::vector<std::string> candidates = {file};
  if (file.rfind("std/", 0) == 0)
    candidates.push_back(sema::defaultStdlibDir() + "/" + file);
  for (const std::string &path : candidates) {
    // The path comes from the artifact's lineage: only a regular source
    // file within the source limit is shown (not a FIFO, not /dev/zero).
    std::string text, why;
    if (!input::readFile(path, input::maxSourceBytes(), "LINNET_MAX_SOURCE_BYTES", text, why))
      continue;
    std::istringstream in(text);
    std::string l;
    for (int64_t i = 1; std::getline(in, l); ++i)
      if (i == line)
        return l;
    return "";
  }
  return "";
}

/// FILE:LINE[:COL] split; nullopt when `s` is not one.
std::optional<std::tuple<std::string, int64_t, int64_t>> splitLocation(const std::string &s) {
  size_t a = s.rfind(':');
  if (a == std::string::npos || a == 0)
    return std::nullopt;
  auto num = [](const std::string &t) -> std::optional<int64_t> {
    if (t.empty() || t.size() > 9 || !std::all_of(t.begin(), t.end(), ::isdigit))
      return std::nullopt;
    return std::stoll(t);
  };
  std::optional<int64_t> last = num(s.substr(a + 1));
  if (!last)
    return std::nullopt;
  size_t b = s.rfind(':', a - 1);
  if (b != std::string::npos && b > 0)
    if (std::optional<int64_t> line = num(s.substr(b + 1, a - b - 1)))
      return std::make_tuple(s.substr(0, b), *line, *last);
  return std::make_tuple(s.substr(0, a), *last, int64_t(0));
}

bool namesFile(const std::string &given, const std::string &recorded) {
  if (given == recorded)
    return true;
  // A suffix on a path boundary: `llama.ln` names `examples/llama.ln`.
  return recorded.size() > given.size() && recorded.compare(recorded.size() - given.size(), given.size(), given) == 0 &&
         recorded[recorded.size() - given.size() - 1] == '/';
}
} // namespace

int tool::runExplain() {
  std::optional<profile::ArtifactPlans> plans = readPlans(gExplain.artifact, "explain");
  if (!plans)
    return 1;
  const std::string &q = gExplain.query;
  std::map<std::string, const planning::Task *> taskById;
  for (const planning::Task &t : plans->portable.tasks)
    taskById[t.id] = &t;
  std::optional<std::tuple<std::string, int64_t, int64_t>> loc = splitLocation(q);
  // A lineage entry (entry point -> command -> implementation -> symbol ->
  // task -> ops -> source) matches by any of its names.
  std::vector<const planning::LineageEntry *> hits;
  for (const planning::LineageEntry &l : plans->manifest.lineage) {
    bool hit = l.command == q || l.portableTask == q || l.entryPoint == q || l.implementation == q ||
               l.machineSymbol == q;
    if (!hit && loc && l.sourceLocation) {
      std::optional<std::tuple<std::string, int64_t, int64_t>> at = splitLocation(*l.sourceLocation);
      hit = at && namesFile(std::get<0>(*loc), std::get<0>(*at)) && std::get<1>(*loc) == std::get<1>(*at) &&
            (std::get<2>(*loc) == 0 || std::get<2>(*loc) == std::get<2>(*at));
    }
    if (hit)
      hits.push_back(&l);
  }
  if (hits.empty()) {
    std::cerr << fmt::format("linnet explain: error: nothing in '{}' is named or located '{}' (expected a command "
                             "id, a task id, an entry point or symbol of its library, or FILE:LINE[:COL] of "
                             "its source)\n",
                             gExplain.artifact, q);
    return 1;
  }
  // One block per command (an entry point reaching it is listed once each).
  std::map<std::string, std::vector<const planning::LineageEntry *>> byCommand;
  std::vector<std::string> order;
  for (const planning::LineageEntry *l : hits) {
    if (!byCommand.count(l->command))
      order.push_back(l->command);
    byCommand[l->command].push_back(l);
  }
  std::map<std::string, int64_t> executions; // "phase.entry/task" -> per call
  for (const planning::Phase &ph : plans->portable.phases)
    for (const planning::PhaseTask &t : ph.tasks)
      executions[ph.entry + "/" + t.task] = t.executions;
  for (const std::string &cmd : order) {
    const planning::LineageEntry &l = *byCommand[cmd].front();
    auto t = taskById.find(l.portableTask);
    std::cout << fmt::format("{}  (task {}{})\n", cmd, l.portableTask,
                             t == taskById.end() ? "" : ": " + t->second->name);
    if (l.implementation)
      std::cout << fmt::format("  implementation  {}{}\n", *l.implementation,
                               l.machineSymbol ? " -> symbol " + *l.machineSymbol : "");
    for (const planning::LineageEntry *e : byCommand[cmd]) {
      std::string entry = e->entryPoint.rfind("linnet_entry_", 0) == 0 ? e->entryPoint.substr(13) : e->entryPoint;
      auto n = executions.find(entry + "/" + e->portableTask);
      std::cout << fmt::format("  entry point     {}{}\n", e->entryPoint,
                               n == executions.end() ? "" : fmt::format(" ({}x per call)", n->second));
    }
    if (t != taskById.end())
      std::cout << fmt::format("  work            {}\n", t->second->facts.derivation);
    if (l.ops)
      std::cout << fmt::format("  lineage         {}\n", fmt::join(*l.ops, " <- "));
    if (l.sourceLocation) {
      std::cout << fmt::format("  source          {}\n", *l.sourceLocation);
      if (std::optional<std::tuple<std::string, int64_t, int64_t>> at = splitLocation(*l.sourceLocation)) {
        std::string text = sourceLine(std::get<0>(*at), std::get<1>(*at));
        if (!text.empty()) {
          std::cout << fmt::format("  {:>5} | {}\n", std::get<1>(*at), text);
          if (std::get<2>(*at) > 0)
            std::cout << fmt::format("        | {}^\n", std::string(size_t(std::get<2>(*at) - 1), ' '));
        }
      }
    }
  }
  return 0;
}
