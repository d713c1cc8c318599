//===- InterpretRun.h - `linnet run --interpret` ----------------*- C++ -*-===//
#ifndef LINNET_TOOLS_INTERPRETRUN_H
#define LINNET_TOOLS_INTERPRETRUN_H

#include "ArtifactCache.h"

#include <string>
#include <vector>

namespace linnet::tool {

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
