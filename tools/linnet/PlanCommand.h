//===- PlanCommand.h - `linnet plan` and Sema in `linnet check` -*- C++ -*-===//
#ifndef LINNET_TOOLS_PLANCOMMAND_H
#define LINNET_TOOLS_PLANCOMMAND_H

#include "linnet/Syntax/Diagnostics.h"

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace linnet::tool {

/// -I directories shared by check and plan.
extern std::vector<std::string> gIncludeDirs;

/// Semantic checks of a parsed chunk (after a clean parse). Returns false on errors.
bool semaCheck(SourceManager &sm, uint32_t buffer, const std::string &file, DiagnosticEngine &diag);

/// Registers `plan`; returns the subcommand whose parsed() selects runPlan().
CLI::App *addPlanCommand(CLI::App &app);
int runPlan();

/// Registers `ir` (Core IR printer); runIr() runs it.
CLI::App *addIrCommand(CLI::App &app);
int runIr();

} // namespace linnet::tool

#endif
