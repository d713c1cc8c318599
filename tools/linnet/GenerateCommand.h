//===- GenerateCommand.h - `linnet generate` --------------------*- C++ -*-===//
#ifndef LINNET_TOOLS_GENERATECOMMAND_H
#define LINNET_TOOLS_GENERATECOMMAND_H

#include <CLI/CLI.hpp>

namespace linnet::tool {
CLI::App *addGenerateCommand(CLI::App &app);
int runGenerate();
} // namespace linnet::tool

#endif
