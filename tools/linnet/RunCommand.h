//===- RunCommand.h - `linnet run` ------------------------------*- C++ -*-===//
#ifndef LINNET_TOOLS_RUNCOMMAND_H
#define LINNET_TOOLS_RUNCOMMAND_H

#include <CLI/CLI.hpp>

namespace linnet::tool {
CLI::App *addRunCommand(CLI::App &app);
int runRun();
} // namespace linnet::tool

#endif
