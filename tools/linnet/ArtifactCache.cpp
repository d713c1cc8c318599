//===- ArtifactCache.cpp - .ln models for run/generate/profile ------------===//
//
// The flags of a .ln model handed to the artifact cache of the compiler
// library (linnet/Compiler/ArtifactCache.h), which keys, checks and builds.
//
//===----------------------------------------------------------------------===//
#include "DiagnosticsOutput.h"
#include "ArtifactCache.h"

#include "BuildCpu.h"
#include "linnet/Compiler/ArtifactCache.h"

#include <fmt/format.h>

#include <filesystem>
#include <iostream>

namespace fs = std::filesystem;
using namespace linnet;

void tool::addSourceOptions(CLI::App *cmd, SourceOptions &opts) {
  cmd->add_option("--root", opts.root, "For a .ln model: the root block");
  cmd->add_option("-D", opts.defines, "For a .ln model: bind a root generic, Name=value")
      ->allow_extra_args(false);
  cmd->add_option("-I", opts.includeDirs, "For a .ln model: a module search root")
      ->allow_extra_args(false);
  // The cache's artifacts run where they are built: this CPU, every
  // extension it has (the entry is keyed on it).
  cmd->add_option("--target", opts.target,
                  "For a .ln model: the target it is built for (cpu-native: this machine's CPU; cpu: "
                  "portable x86-64-v3; cuda)")
      ->default_val("cpu-native");
  cmd->add_flag("--emulate", opts.emulate,
                "For a .ln model built for cuda: its GPU kernels run on the CPU (tests without a GPU)");
  cmd->add_flag("--host-kernels", opts.hostKernels,
                "For a .ln model built for cuda: also its kernels for the CUDA driver emulator "
                "(kernels.host.so; tests of the CUDA runtime without a GPU)");
  addNumericsOption(cmd, opts.numerics);
  addMatmulPrecisionOption(cmd, opts.matmulPrecision);
  addBlockProductsOption(cmd, opts.blockProducts);
  cmd->add_option("--config", opts.config, "For a .ln model: ""A checkpoint's configuration (a Hugging Face config.json): the generics the --binding manifest's config section maps become -D values (an explicit -D wins)");
}

void tool::addNumericsOption(CLI::App *cmd, std::string &numerics) {
  cmd->add_option("--numerics", numerics,
                  "How f16/bf16 compute (docs/language/08): as-written (each op rounds to its dtype) or "
                  "f32-compute (half tensors are stored as such and computed in f32, rounded where "
                  "kept); an artifact records its policy")
      ->check(CLI::IsMember({"as-written", "f32-compute"}));
}

void tool::addMatmulPrecisionOption(CLI::App *cmd, std::string &precision) {
  cmd->add_option("--matmul-precision", precision,
                  "What f32 matrix products may do (docs/language/08): highest (f32) or tf32 (a "
                  "product bound to tensor cores may round its operands to TF32; the CPU and the "
                  "interpreter still compute in f32); an artifact records it")
      ->check(CLI::IsMember({"highest", "tf32"}));
}

void tool::addBlockProductsOption(CLI::App *cmd, std::string &products) {
  cmd->add_option("--block-products", products,
                  "How products against block-quantized weights compute (docs/language/08): exact "
                  "(dequantized weight times f32 activation) or int8 (the CPU may round each 32 "
                  "activations along the sum to q8_0 and sum integer products, as llama.cpp does; "
                  "the interpreter still computes exactly); an artifact records it")
      ->check(CLI::IsMember({"exact", "int8"}));
}

std::optional<std::string> tool::resolveArtifact(const std::string &model, const SourceOptions &opts,
                                                 const std::string &weights,
                                                 const std::string &binding, bool profile) {
  std::error_code ec;
  if (fs::is_directory(model, ec))
    return model;
  if (fs::path(model).extension() != ".ln" || !fs::is_regular_file(model, ec)) {
    tool::diags().report(support::Diag::error(
        "usage", fmt::format("'{}' is neither an artifact directory nor a .ln model", model)));
    return std::nullopt;
  }
  BuildCpuOptions b;
  b.file = model;
  b.root = opts.root;
  b.defines = opts.defines;
  b.includeDirs = opts.includeDirs;
  b.weights = weights;
  b.binding = binding;
  b.emulate = opts.emulate;
  b.hostKernels = opts.hostKernels;
  b.numerics = opts.numerics;
  b.matmulPrecision = opts.matmulPrecision;
  b.blockProducts = opts.blockProducts;
  b.config = opts.config;
  b.profile = profile;
  std::optional<compiler::Options> o = compilerOptions(b, opts.target);
  if (!o)
    return std::nullopt;
  return compiler::cachedArtifact(std::move(*o), tool::diags());
}
