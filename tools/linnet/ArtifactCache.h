//===- ArtifactCache.h - .ln models for run/generate/profile -----*- C++ -*-===//
#ifndef LINNET_TOOLS_ARTIFACTCACHE_H
#define LINNET_TOOLS_ARTIFACTCACHE_H

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

namespace linnet::tool {

/// The front-end options `run` and `generate` accept for a .ln model.
struct SourceOptions {
  std::string root;
  std::vector<std::string> defines, includeDirs;
  std::string target = "cpu"; // the registered target the model is built for
  bool emulate = false;       // with a GPU target: its kernels run on the CPU
  bool hostKernels = false;   // with cuda: kernels.host.so for the driver emulator
  std::string numerics = "as-written"; // how f16/bf16 compute (--numerics)
  std::string matmulPrecision = "highest"; // what f32 products may round to (--matmul-precision)
  std::string blockProducts = "exact";     // how products against block-quantized weights compute
  std::string config;                  // --config: a checkpoint's configuration
};
void addSourceOptions(CLI::App *cmd, SourceOptions &opts);
/// --numerics NAME (as-written | f32-compute), checked.
void addNumericsOption(CLI::App *cmd, std::string &numerics);
/// --matmul-precision NAME (highest | tf32), checked.
void addMatmulPrecisionOption(CLI::App *cmd, std::string &precision);
/// --block-products NAME (exact | int8), checked.
void addBlockProductsOption(CLI::App *cmd, std::string &products);

/// `model` itself if it is an artifact directory; for a .ln file, the
/// artifact built from it (with `weights` deciding optional tensors, and
/// timers compiled in when `profile`) in the artifact cache
/// (linnet/Compiler/ArtifactCache.h). Returns nullopt after reporting to
/// tool::diags().
std::optional<std::string> resolveArtifact(const std::string &model, const SourceOptions &opts,
                                           const std::string &weights, const std::string &binding,
                                           bool profile = false);

} // namespace linnet::tool

#endif
