//===- ProfileCommand.h - `linnet profile`, `linnet explain` ----*- C++ -*-===//
#ifndef LINNET_TOOLS_PROFILECOMMAND_H
#define LINNET_TOOLS_PROFILECOMMAND_H

#include <CLI/CLI.hpp>

namespace linnet::tool {
CLI::App *addProfileCommand(CLI::App &app);
int runProfile();
CLI::App *addExplainCommand(CLI::App &app);
int runExplain();
} // namespace linnet::tool

#endif
