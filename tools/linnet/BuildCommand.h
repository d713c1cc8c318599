//===- BuildCommand.h - `linnet build` --------------------------*- C++ -*-===//
#ifndef LINNET_TOOLS_BUILDCOMMAND_H
#define LINNET_TOOLS_BUILDCOMMAND_H

#include <CLI/CLI.hpp>

namespace linnet::tool {

/// Registers `build`; returns the subcommand whose parsed() selects runBuild().
CLI::App *addBuildCommand(CLI::App &app);
int runBuild();

} // namespace linnet::tool

#endif
