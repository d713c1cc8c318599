//===- InspectCommand.h - `linnet inspect` ----------------------*- C++ -*-===//
#ifndef LINNET_TOOLS_INSPECTCOMMAND_H
#define LINNET_TOOLS_INSPECTCOMMAND_H

#include <CLI/CLI.hpp>

namespace linnet::tool {
CLI::App *addInspectCommand(CLI::App &app);
int runInspect();
} // namespace linnet::tool

#endif
