//===- FrontEnd.h - Options every command that reads a model shares -*- C++ -*-===//
#ifndef LINNET_TOOLS_FRONTEND_H
#define LINNET_TOOLS_FRONTEND_H

#include "linnet/Sema/Sema.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace linnet::tool {

/// `-D Name=value` flags as a map; reports the first malformed one as
/// "linnet <command>: error: ..." and returns nullopt.
std::optional<std::map<std::string, std::string>>
parseDefines(const std::vector<std::string> &defines, const char *command);

/// Sema options for `includeDirs` and the standard library beside the binary.
sema::SemaOptions semaOptions(const std::vector<std::string> &includeDirs);

} // namespace linnet::tool

#endif
