//===- HostCpu.h - What the CPU running an artifact offers -------*- C++ -*-===//
//
// An artifact's host code is compiled for a CPU and its instruction set
// extensions (runtime.json's `cpu`: docs/runtime-abi.md). The runtime
// compares them with the CPU it runs on before loading the library, so a
// library built where AVX-512 is present is refused with the missing
// extensions named where it is not, instead of dying of SIGILL in the
// middle of a call. No LLVM: the runtime asks the CPU itself (cpuid, and
// xgetbv for the register state the OS enables).
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_RUNTIME_HOSTCPU_H
#define LINNET_RUNTIME_HOSTCPU_H

#include <string>
#include <vector>

namespace linnet::rt {

/// The CPU an artifact's host code was compiled for.
struct CpuRequirement {
  std::string arch;                  // x86_64, aarch64 (LLVM's triple arch)
  std::string name;                  // the CPU model it was tuned for (skylake-avx512, znver4)
  std::vector<std::string> features; // LLVM's names of the extensions enabled (avx2, avx512f, ...)
};

/// This process's architecture, spelled as LLVM's triples spell it.
std::string hostArch();

/// The features of `required` this CPU lacks (in the order given), among
/// those the runtime can test; features it cannot test are assumed
/// present. `LINNET_TEST_HIDE_CPU_FEATURES=a,b` makes it treat a and b as
/// absent (tests of the refusal on a machine that has them).
std::vector<std::string> missingCpuFeatures(const std::vector<std::string> &required);

/// Empty when this machine can run code compiled for `req`; otherwise the
/// sentence saying why not (the architecture, or the missing features).
std::string checkHostCpu(const CpuRequirement &req);

} // namespace linnet::rt

#endif // LINNET_RUNTIME_HOSTCPU_H
