//===- InitWeightsCommand.h - `linnet init-weights` -------------*- C++ -*-===//
#ifndef LINNET_TOOLS_INITWEIGHTSCOMMAND_H
#define LINNET_TOOLS_INITWEIGHTSCOMMAND_H

#include <CLI/CLI.hpp>

namespace linnet::tool {
CLI::App *addInitWeightsCommand(CLI::App &app);
int runInitWeights();
} // namespace linnet::tool

#endif
