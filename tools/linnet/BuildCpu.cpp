//===- BuildCpu.cpp - `linnet build MODEL.ln` flags -----------------------===//
#include "DiagnosticsOutput.h"
#include "FrontEnd.h"
#include "BuildCpu.h"
#include "ArtifactCache.h"

#include <iostream>

namespace linnet::tool {

BuildCpuOptions &buildCpuOptions() {
  static BuildCpuOptions opts;
  return opts;
}

void addBuildCpuOptions(CLI::App *c, BuildCpuOptions &o) {
  c->add_option("--root", o.root, "Root block of a .ln model (default: its only pub block)");
  c->add_option("-D", o.defines, "Bind a root generic of a .ln model: -D Name=value")
      ->allow_extra_args(false);
  c->add_option("-I", o.includeDirs, "Add a module search root")->allow_extra_args(false);
  c->add_option("--weights", o.weights,
                "Weights (.safetensors) that decide which optional tensors are present");
  c->add_option("--binding", o.binding, "Binding manifest mapping canonical paths to weight names");
  c->add_flag("--serial", o.serial, "No OpenMP: run every loop in the calling thread");
  c->add_flag("--emit-mlir", o.emitMlir, "Also write model.mlir and model.loops.mlir");
  c->add_option("--dump-ir", o.dumpIR,
                "Write the primary library's IR after each stage into DIR: 00-imported.mlir, "
                "01-tasks.mlir, 02-bufferized.mlir, 03-loops.mlir, 04-llvm.mlir (linnet-opt's "
                "-linnet-gf-to-tasks, -linnet-bufferize, -linnet-cpu-lower-to-loops, "
                "-linnet-cpu-lower-to-llvm reproduce each from the one before) and 05-model.ll "
                "(optimized LLVM IR)")
      ->type_name("DIR");
  c->add_flag("--profile", o.profile,
              "Time every command of the concrete plan where it runs (timers compiled in at "
              "command boundaries): the artifact `linnet profile` runs");
  c->add_option("--ranks", o.ranks,
                "A distributed artifact for N ranks: relation kernels exchange halo rows between "
                "ranks (linnet run --ranks N; docs/distributed.md)")
      ->check(CLI::Range(int64_t(1), int64_t(4096)));
  c->add_flag("--emulate", o.emulate,
              "With --target cuda: the artifact's library runs the generated GPU kernels on the "
              "CPU (grid and block as loops), in the CPU runtime ABI, for tests without a GPU; "
              "kernels.ptx, kernels.cubin and kernels.json are written as for the GPU");
  c->add_flag("--host-kernels", o.hostKernels,
              "With --target cuda: also write kernels.host.so, the kernels compiled for this CPU, "
              "which the CUDA driver emulator (docs/cuda-abi.md) runs in "
              "place of the cubin, so the artifact's real CUDA runtime is tested without a GPU");
  c->add_option("--runtime-checks", o.runtimeChecks,
                "on (default): indices read from data and integer divisors are checked at run "
                "time; off: unchecked, to measure what the checks cost")
      ->transform(CLI::IsMember(std::map<std::string, bool>{{"on", true}, {"off", false}}));
  c->add_option("--impl", o.impl,
                 "Contractions: auto (BLAS where installed), generated (libraries disabled), blas")
      ->check(CLI::IsMember({"auto", "generated", "blas"}));
  addNumericsOption(c, o.numerics);
  addMatmulPrecisionOption(c, o.matmulPrecision);
  addBlockProductsOption(c, o.blockProducts);
  c->add_option("--config", o.config, "A checkpoint's configuration (a Hugging Face config.json): the generics the --binding manifest's config section maps become -D values (an explicit -D wins)");
  c->add_option("--variants", o.variants,
                "Without --weights, which presences of the optional tensors get a library (the "
                "weights choose one at load time): auto (none or all present), each (every "
                "combination), none (all absent)")
      ->check(CLI::IsMember({"auto", "each", "none"}));
}

std::optional<compiler::Options> compilerOptions(const BuildCpuOptions &b, const std::string &target) {
  std::vector<std::string> defines = b.defines;
  std::vector<plan::ConstantExpectation> constants;
  if (!addConfigDefines(defines, b.config, b.binding, &constants))
    return std::nullopt;
  std::optional<std::map<std::string, std::string>> parsed = parseDefines(defines);
  if (!parsed)
    return std::nullopt;
  compiler::Options o;
  o.file = b.file;
  o.root = b.root;
  for (const std::string &d : defines) {
    size_t eq = d.find('=');
    o.defines.emplace_back(d.substr(0, eq), d.substr(eq + 1));
  }
  o.sema = semaOptions(b.includeDirs);
  o.weights = b.weights;
  o.binding = b.binding;
  o.variants = b.variants;
  o.target = target;
  o.serial = b.serial;
  o.runtimeChecks = b.runtimeChecks;
  o.impl = b.impl;
  o.numerics = *support::parseNumericsPolicy(b.numerics); // CLI11 checked the name
  o.matmulPrecision = *support::parseMatmulPrecision(b.matmulPrecision);
  o.blockProducts = *support::parseBlockProducts(b.blockProducts);
  o.constants = std::move(constants);
  o.emitMlir = b.emitMlir;
  o.dumpIR = b.dumpIR;
  o.profile = b.profile;
  o.ranks = b.ranks;
  o.emulate = b.emulate;
  o.hostKernels = b.hostKernels;
  o.output = b.output;
  return o;
}

int buildCpuArtifact(const BuildCpuOptions &b) { return buildArtifact(b, "cpu"); }

int buildArtifact(const BuildCpuOptions &b, const std::string &target) {
  std::optional<compiler::Options> o = compilerOptions(b, target);
  if (!o)
    return 2;
  return compiler::Compiler(std::move(*o), diags()).buildArtifact();
}

} // namespace linnet::tool
