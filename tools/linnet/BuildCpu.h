//===- BuildCpu.h - `linnet build MODEL.ln --target cpu` --------*- C++ -*-===//
#ifndef LINNET_TOOLS_BUILDCPU_H
#define LINNET_TOOLS_BUILDCPU_H

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace linnet::tool {

struct BuildCpuOptions {
  std::string file, root, weights, binding, output;
  std::vector<std::string> defines, includeDirs;
  bool serial = false;
  bool emitMlir = false; // also write model.mlir (tensors) and model.loops.mlir
};

/// Adds --root, -D, -I, --weights, --binding, --serial, --emit-mlir to `build`.
void addBuildCpuOptions(CLI::App *build, BuildCpuOptions &opts);

/// Compiles a .ln model into a CPU ProgramArtifact directory (docs/runtime-abi.md).
/// Returns the exit status; errors go to stderr.
int buildCpuArtifact(const BuildCpuOptions &opts);

/// The options `build` parsed (shared with the command's own options).
BuildCpuOptions &buildCpuOptions();

} // namespace linnet::tool

#endif
