//===- InterpretRun.h - `linnet run --interpret` ----------------*- C++ -*-===//
#ifndef LINNET_TOOLS_INTERPRETRUN_H
#define LINNET_TOOLS_INTERPRETRUN_H

#include "ArtifactCache.h"

#include <memory>
#include <string>
#include <vector>

namespace linnet::interp {
class Interpreter;
}

namespace linnet::tool {

/// The interpreter of `model` (a .ln file, planned in process, or an
/// artifact directory's plan.json) with its weights bound. Returns null
/// after reporting to stderr as "linnet <command>: error: ...".
std::unique_ptr<interp::Interpreter> loadInterpreter(const std::string &model, const SourceOptions &source,
                                                     const std::string &weights, const std::string &binding,
                                                     const char *command);

struct InterpretRunOptions {
  std::string model, weights, binding, entry;
  std::vector<std::string> inputs, relations, outputs;
  unsigned repeat = 1;
  SourceOptions source;
};

/// Runs an entry with the reference interpreter: a .ln model is planned in
/// process (nothing is compiled), an artifact directory gives its plan.json.
/// Same inputs, outputs and messages as a compiled `linnet run`.
int runInterpreted(const InterpretRunOptions &opts);

} // namespace linnet::tool

#endif
