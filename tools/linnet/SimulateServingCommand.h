//===- SimulateServingCommand.h - `linnet simulate-serving` -----*- C++ -*-===//
#ifndef LINNET_TOOLS_SIMULATESERVINGCOMMAND_H
#define LINNET_TOOLS_SIMULATESERVINGCOMMAND_H

#include <CLI/CLI.hpp>

namespace linnet::tool {
CLI::App *addSimulateServingCommand(CLI::App &app);
int runSimulateServing();
} // namespace linnet::tool

#endif
