//===- RunCommand.cpp - `linnet run` --------------------------------------===//
//
// Loads an artifact with its weights, reads the entry's inputs from .npy
// files (by input name), calls the entry and writes its results in order.
//
//===----------------------------------------------------------------------===//
#include "RunCommand.h"

#include "ArtifactCache.h"
#include "DistributedRun.h"
#include "InterpretRun.h"

#include "linnet/Runtime/Binding.h"
#include "linnet/Runtime/Runtime.h"
#include "FrontEnd.h"

#include <fmt/format.h>

#include <iostream>
#include <set>

using namespace linnet;

namespace {
struct Options {
  std::string model;
  tool::EntryCallOptions call;
  std::vector<std::string> outputs;
  unsigned repeat = 1;
  bool interpret = false;
  int64_t ranks = 0;
  std::string partition;
  double timeout = 60;
  bool distStats = false;
  bool memory = false;
  tool::SourceOptions source;
} gOpts;

} // namespace

CLI::App *tool::addRunCommand(CLI::App &app) {
  CLI::App *c = app.add_subcommand("run", "Run an entry of a compiled model");
  c->add_option("model", gOpts.model, "Artifact directory (from linnet build), or a .ln model "
                                      "(built into the cache first)")
      ->required();
  tool::addSourceOptions(c, gOpts.source);
  tool::addEntryCallOptions(c, gOpts.call);
  c->add_option("--output", gOpts.outputs, "Files for the results, in order (.npy)")
      ->allow_extra_args(false);
  c->add_option("--repeat", gOpts.repeat, "Call the entry this many times (state persists)")
      ->default_val(1);
  c->add_option("--ranks", gOpts.ranks,
                 "Run a distributed artifact (linnet build --ranks N) on N OpenMPI ranks: starts mpirun, or "
                 "joins the one it runs under (docs/distributed.md)")
      ->check(CLI::Range(int64_t(1), int64_t(4096)));
  c->add_option("--partition", gOpts.partition,
                "With --ranks: an i64 .npy giving each entity's part (default: contiguous blocks of rows)");
  c->add_option("--timeout", gOpts.timeout,
                "With --ranks: seconds a halo exchange may wait before the run ends with an error")
      ->default_val(60)
      ->check(CLI::PositiveNumber);
  c->add_flag("--dist-stats", gOpts.distStats,
              "With --ranks: print the halo sizes and, per rank, bytes sent and interior/exchange overlap");
  c->add_flag("--memory", gOpts.memory,
              "Print the workspace the calls took from the library's workspace stack: the most one thread "
              "held, beside the bound the build gave, and the chunks it allocated after the first call "
              "(none at steady state; docs/cpu-abi.md)");
  c->add_flag("--interpret", gOpts.interpret,
              "Run the entry with the reference interpreter of Core IR (nothing is compiled)");
  return c;
}

int tool::runRun() {
  // Usage first: nothing is loaded, run or written before these pass.
  std::optional<std::map<std::string, std::string>> inputFiles =
      tool::parseInputFiles(gOpts.call.inputs, gOpts.call.relations);
  if (!inputFiles)
    return 2;
  // An output that is an input, a link or given twice was refused with the
  // command's other outputs (linnet.cpp, checkCommandOutputs).
  if (gOpts.ranks == 0 && (!gOpts.partition.empty() || gOpts.distStats)) {
    std::cerr << "linnet run: error: --partition and --dist-stats need --ranks N\n";
    return 2;
  }
  if (gOpts.interpret && gOpts.ranks > 0) {
    std::cerr << "linnet run: error: --interpret runs in one process: it takes no --ranks\n";
    return 2;
  }
  if (gOpts.interpret)
    return tool::runInterpreted({gOpts.model, gOpts.call.weights, gOpts.call.binding, gOpts.call.entry, gOpts.call.inputs,
                                 gOpts.call.relations, gOpts.outputs, gOpts.repeat, gOpts.source});
  std::optional<std::string> dir =
      tool::resolveArtifact(gOpts.model, gOpts.source, gOpts.call.weights, gOpts.call.binding);
  if (!dir)
    return 1;
  if (gOpts.ranks > 0) {
    if (!tool::underMpirun())
      return tool::launchUnderMpirun(*dir, gOpts.ranks);
    tool::DistributedRunOptions d;
    d.artifact = *dir;
    d.weights = gOpts.call.weights;
    d.binding = gOpts.call.binding;
    d.entry = gOpts.call.entry;
    d.inputs = std::move(*inputFiles);
    d.outputs = gOpts.outputs;
    d.ranks = gOpts.ranks;
    d.repeat = gOpts.repeat;
    d.partition = gOpts.partition;
    d.timeoutSeconds = gOpts.timeout;
    d.stats = gOpts.distStats;
    return tool::runDistributed(d);
  }
  std::unique_ptr<rt::Model> model = tool::loadArtifact(*dir, gOpts.call.weights, gOpts.call.binding, "run");
  if (!model)
    return 1;
  std::optional<std::vector<rt::OwnedTensor>> owned =
      tool::readEntryInputs(*model, gOpts.call.entry, std::move(*inputFiles), "run");
  if (!owned)
    return 1;
  const rt::EntrySig *sig = model->findEntry(gOpts.call.entry);
  std::string error;
  if (gOpts.outputs.size() > sig->results.size()) {
    std::cerr << fmt::format("linnet run: error: entry '{}' has {} result(s), {} --output given\n",
                             gOpts.call.entry, sig->results.size(), gOpts.outputs.size());
    return 2;
  }
  std::vector<rt::TensorView> views;
  for (const rt::OwnedTensor &t : *owned)
    views.push_back(t.view());
  std::vector<rt::OwnedTensor> results;
  std::optional<rt::WorkspaceStats> before = model->workspaceStats(/*resetPeak=*/true), afterFirst;
  for (unsigned i = 0; i < std::max(1u, gOpts.repeat); ++i) {
    if (!model->call(gOpts.call.entry, views, results, error)) {
      std::cerr << "linnet run: error: " << error << "\n";
      return 1;
    }
    if (i == 0)
      afterFirst = model->workspaceStats();
  }
  if (gOpts.memory) {
    std::optional<rt::WorkspaceStats> now = model->workspaceStats();
    if (!now) {
      std::cout << "workspace: none (the library takes no workspace from a stack: ABI "
                << model->info().abi << ")\n";
    } else {
      auto bound = model->info().workspacePeak.find(gOpts.call.entry);
      std::string planned = bound == model->info().workspacePeak.end() ? "not recorded"
                            : bound->second ? fmt::format("{} bytes", *bound->second)
                                            : std::string("unbounded");
      std::cout << fmt::format("workspace: peak {} bytes on one thread (the build's bound: {}); chunks "
                               "allocated: {} ({} bytes), {} of them after the first call\n",
                               now->peak, planned, now->chunks - before->chunks,
                               now->chunkBytes - before->chunkBytes, now->chunks - afterFirst->chunks);
    }
  }
  for (size_t r = 0; r < gOpts.outputs.size(); ++r)
    if (!rt::writeNpy(gOpts.outputs[r], results[r].view(), error)) {
      std::cerr << "linnet run: error: " << error << "\n";
      return 1;
    }
  return 0;
}

void tool::addEntryCallOptions(CLI::App *c, EntryCallOptions &o) {
  c->add_option("--weights", o.weights, "Weights (.safetensors)");
  c->add_option("--binding", o.binding, "Binding manifest (canonical path -> tensor name)");
  c->add_option("--entry", o.entry, "Entry to call")->required();
  c->add_option("--input", o.inputs, "An input: NAME=FILE.npy")->allow_extra_args(false);
  c->add_option("--relation", o.relations, "A relation input: NAME=ROW_PTR.npy,COL_IDX.npy")
      ->allow_extra_args(false);
  tool::addNoMmapOption(c);
}

namespace {
bool gNoMmap = false;
}

void tool::addNoMmapOption(CLI::App *c) {
  c->add_flag("--no-mmap", gNoMmap,
              "Read the weights into memory instead of mapping them (for weights files other "
              "processes can write: a mapped file truncated during the run ends it with SIGBUS)");
}

bool tool::mapWeights() { return !gNoMmap; }

std::unique_ptr<rt::Model> tool::loadArtifact(const std::string &dir, const std::string &weights,
                                              const std::string &binding, const char *cmd) {
  std::string error;
  rt::LoadOptions lo;
  lo.weightsPath = weights;
  lo.mapWeights = tool::mapWeights();
  std::shared_ptr<rt::BindingMap> map;
  if (!binding.empty()) {
    map = rt::BindingMap::load(binding, error);
    if (!map) {
      std::cerr << fmt::format("linnet {}: error: {}\n", cmd, error);
      return nullptr;
    }
    lo.externalName = [map](const std::string &p) { return map->externalName(p); };
    lo.binding = map;
  }
  std::unique_ptr<rt::Model> model = rt::Model::load(dir, lo, error);
  if (!model)
    std::cerr << fmt::format("linnet {}: error: {}\n", cmd, error);
  return model;
}

std::optional<std::vector<rt::OwnedTensor>> tool::readEntryInputs(const rt::Model &model, const std::string &entry,
                                                                  std::map<std::string, std::string> files,
                                                                  const char *cmd) {
  const rt::EntrySig *sig = model.findEntry(entry);
  if (!sig) {
    std::vector<std::string> names;
    for (const rt::EntrySig &e : model.info().entries)
      names.push_back(e.name);
    std::cerr << fmt::format("linnet {}: error: no entry '{}' (entries: {})\n", cmd, entry, fmt::join(names, ", "));
    return std::nullopt;
  }
  std::string error;
  std::vector<rt::OwnedTensor> owned;
  std::vector<std::string> problems;
  std::set<std::string> missingRelations;
  for (const rt::TensorSig &s : sig->inputs) {
    auto it = files.find(s.name);
    if (it == files.end()) {
      if (s.relation.empty())
        problems.push_back(fmt::format("missing input '{}' (--input {}=FILE.npy)", s.name, s.name));
      else if (missingRelations.insert(s.relation).second)
        problems.push_back(fmt::format(
            "missing relation '{}' (--relation {}=ROW_PTR.npy,COL_IDX.npy)", s.relation, s.relation));
      continue;
    }
    std::optional<rt::OwnedTensor> t = rt::readNpyFor(it->second, s.dtype, error);
    files.erase(it); // given, even if unreadable: not an unknown input
    if (!t) {
      problems.push_back(error);
      continue;
    }
    owned.push_back(std::move(*t));
  }
  for (auto &[name, file] : files)
    problems.push_back(fmt::format("entry '{}' has no input '{}'", entry, name));
  if (!problems.empty()) {
    std::string lead = fmt::format("linnet {}: error: ", cmd);
    std::cerr << lead << fmt::format("{}", fmt::join(problems, "\n" + lead)) << "\n";
    return std::nullopt;
  }
  return owned;
}
