//===- RunCommand.h - `linnet run` ------------------------------*- C++ -*-===//
#ifndef LINNET_TOOLS_RUNCOMMAND_H
#define LINNET_TOOLS_RUNCOMMAND_H

#include "linnet/Runtime/Runtime.h"

#include <CLI/CLI.hpp>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace linnet::tool {
CLI::App *addRunCommand(CLI::App &app);
int runRun();

/// What calling an entry takes on the command line (run, profile).
struct EntryCallOptions {
  std::string weights, binding, entry;
  std::vector<std::string> inputs, relations;
};
/// --weights, --binding, --entry (required), --input, --relation, --no-mmap.
void addEntryCallOptions(CLI::App *c, EntryCallOptions &o);

/// --no-mmap: the weights are read into memory when loaded instead of
/// mapped, so that a file another process truncates or rewrites during the
/// run cannot end it with SIGBUS (docs/security.md). One setting for the
/// command, which every load of weights in it follows (loadArtifact,
/// loadInterpreter, generate).
void addNoMmapOption(CLI::App *c);
bool mapWeights();

/// The artifact in `dir` loaded with `weights` (and a binding manifest), or
/// null after writing `linnet CMD: error: ...`.
std::unique_ptr<rt::Model> loadArtifact(const std::string &dir, const std::string &weights,
                                        const std::string &binding, const char *cmd);
/// The inputs of `entry` read from `files` (input or relation name ->
/// .npy), in signature order, or nullopt after writing every problem.
std::optional<std::vector<rt::OwnedTensor>> readEntryInputs(const rt::Model &model, const std::string &entry,
                                                            std::map<std::string, std::string> files,
                                                            const char *cmd);
} // namespace linnet::tool

#endif
