//===- BuildCpu.h - `linnet build MODEL.ln` flags -----------------*- C++ -*-===//
//
// The flags of an artifact build, as CLI11 fills them, and their hand-over
// to the compiler library (linnet/Compiler/Compiler.h), which does the work.
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_TOOLS_BUILDCPU_H
#define LINNET_TOOLS_BUILDCPU_H

#include "linnet/Compiler/Compiler.h"

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

namespace linnet::tool {

struct BuildCpuOptions {
  std::string file, root, weights, binding, output, config;
  std::vector<std::string> defines, includeDirs;
  bool serial = false;
  bool runtimeChecks = true; // --runtime-checks=off: only to measure their cost
  bool emitMlir = false;     // also write model.mlir (tensors) and model.loops.mlir
  std::string dumpIR;        // --dump-ir=DIR
  bool profile = false;      // --profile: timers at command boundaries
  int64_t ranks = 0;         // --ranks N: a distributed artifact
  bool emulate = false;      // --emulate: a cuda build's kernels run on the CPU
  bool hostKernels = false;  // --host-kernels: also kernels.host.so, for the driver emulator
  std::string impl = "auto"; // auto | generated | blas
  std::string variants = "auto";
  std::string numerics = "as-written"; // --numerics: as-written | f32-compute
  std::string matmulPrecision = "highest"; // --matmul-precision: highest | tf32
  std::string blockProducts = "exact";     // --block-products: exact | int8
};

/// Adds --root, -D, -I, --weights, --binding, --serial, --emit-mlir,
/// --dump-ir, --runtime-checks, --impl and --variants to `build`.
void addBuildCpuOptions(CLI::App *build, BuildCpuOptions &opts);

/// The compiler's options for these flags and `target`; nullopt after
/// reporting a malformed or repeated -D.
std::optional<compiler::Options> compilerOptions(const BuildCpuOptions &opts, const std::string &target);

/// Compiles a .ln model into a CPU ProgramArtifact directory
/// (docs/runtime-abi.md) with its plans and manifest. Returns the exit
/// status; errors go to stderr.
int buildCpuArtifact(const BuildCpuOptions &opts);
/// The same for a registered `target` (cpu, cuda).
int buildArtifact(const BuildCpuOptions &opts, const std::string &target);

/// The options `build` parsed (shared with the command's own options).
BuildCpuOptions &buildCpuOptions();

} // namespace linnet::tool

#endif
