//===- BuildCommand.h - `linnet build` --------------------------*- C++ -*-===//
#ifndef LINNET_TOOLS_BUILDCOMMAND_H
#define LINNET_TOOLS_BUILDCOMMAND_H

#include <CLI/CLI.hpp>

namespace linnet::tool {

/// Registers `build`; returns the subcommand whose parsed() selects runBuild().
CLI::App *addBuildCommand(CLI::App &app);
int runBuild();

struct BuildCpuOptions;
/// What `linnet build MODEL.ln --target cpu -o DIR` does (artifact and
/// manifest), for callers that build on their own (run/generate's cache).
int buildCpuArtifactWithManifest(const BuildCpuOptions &opts);

} // namespace linnet::tool

#endif
