//===- FrontEnd.h - Options every command that reads a model shares -*- C++ -*-===//
#ifndef LINNET_TOOLS_FRONTEND_H
#define LINNET_TOOLS_FRONTEND_H

#include "linnet/Plan/Binding.h"
#include "linnet/Sema/Sema.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace linnet::tool {

/// `-D Name=value` flags as a map; reports the first malformed or repeated
/// one to tool::diags() (code "usage") and returns nullopt.
std::optional<std::map<std::string, std::string>>
parseDefines(const std::vector<std::string> &defines);

/// `--input NAME=FILE.npy` and `--relation NAME=ROW_PTR.npy,COL_IDX.npy`
/// flags as one map from input name to file (a relation `g` gives
/// `g.row_ptr` and `g.col_idx`). A malformed or repeated name is reported
/// to tool::diags() and gives nullopt.
std::optional<std::map<std::string, std::string>>
parseInputFiles(const std::vector<std::string> &inputs, const std::vector<std::string> &relations);

/// A non-negative decimal integer (`--seed`): no sign, no wrap-around.
/// Reports to tool::diags() and returns nullopt.
std::optional<uint64_t> parseUnsigned(const std::string &text, const char *flag);

/// `--config FILE` (a checkpoint's configuration, e.g. a Hugging Face
/// config.json) read through the `config` section of the binding manifest
/// `binding`: appends `Name=value` to `defines` for every generic it maps
/// that no `-D` gives (an explicit -D wins). Reports problems about FILE
/// to tool::diags() and returns false.
/// The binding's `constants` section, read against the same configuration,
/// goes to `constants` (checked against the plan: plan::checkConstants).
bool addConfigDefines(std::vector<std::string> &defines, const std::string &config, const std::string &binding,
                      std::vector<plan::ConstantExpectation> *constants = nullptr);

/// Sema options for `includeDirs` and the standard library beside the binary.
sema::SemaOptions semaOptions(const std::vector<std::string> &includeDirs);

} // namespace linnet::tool

#endif
