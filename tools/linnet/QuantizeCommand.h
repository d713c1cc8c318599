//===- QuantizeCommand.h - `linnet quantize` --------------------*- C++ -*-===//
#ifndef LINNET_TOOLS_QUANTIZECOMMAND_H
#define LINNET_TOOLS_QUANTIZECOMMAND_H

#include <CLI/CLI.hpp>

namespace linnet::tool {
CLI::App *addQuantizeCommand(CLI::App &app);
int runQuantize();
} // namespace linnet::tool

#endif
