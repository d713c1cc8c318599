//===- HostCpu.cpp - What the CPU running an artifact offers ---------------===//

#include "linnet/Runtime/HostCpu.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string_view>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define LINNET_HOST_X86 1
#endif

namespace linnet::rt {

std::string hostArch() {
#if defined(__x86_64__)
  return "x86_64";
#elif defined(__aarch64__)
  return "aarch64";
#elif defined(__riscv) && __riscv_xlen == 64
  return "riscv64";
#else
  return "unknown";
#endif
}

namespace {

#ifdef LINNET_HOST_X86
enum Reg { EAX, EBX, ECX, EDX };
/// State the OS must enable (XCR0) for the feature's registers.
enum State { None, Avx, Avx512 };

/// The extensions LLVM's x86 code generator may use on its own (vector
/// ISAs, bit manipulation, conversions), by LLVM's feature name, with the
/// cpuid leaf, subleaf, register and bit that report them (Intel SDM
/// vol. 2A, "CPUID"; AMD APM vol. 3, appendix E).
struct Feature {
  std::string_view name;
  unsigned leaf, subleaf;
  Reg reg;
  unsigned bit;
  State state;
};

constexpr Feature kFeatures[] = {
    {"cmov", 1, 0, EDX, 15, None},          {"mmx", 1, 0, EDX, 23, None},
    {"fxsr", 1, 0, EDX, 24, None},          {"sse", 1, 0, EDX, 25, None},
    {"sse2", 1, 0, EDX, 26, None},          {"sse3", 1, 0, ECX, 0, None},
    {"pclmul", 1, 0, ECX, 1, None},         {"ssse3", 1, 0, ECX, 9, None},
    {"fma", 1, 0, ECX, 12, Avx},            {"cx16", 1, 0, ECX, 13, None},
    {"sse4.1", 1, 0, ECX, 19, None},        {"sse4.2", 1, 0, ECX, 20, None},
    {"movbe", 1, 0, ECX, 22, None},         {"popcnt", 1, 0, ECX, 23, None},
    {"aes", 1, 0, ECX, 25, None},           {"xsave", 1, 0, ECX, 26, None},
    {"avx", 1, 0, ECX, 28, Avx},            {"f16c", 1, 0, ECX, 29, Avx},
    {"rdrnd", 1, 0, ECX, 30, None},         {"bmi", 7, 0, EBX, 3, None},
    {"avx2", 7, 0, EBX, 5, Avx},            {"bmi2", 7, 0, EBX, 8, None},
    {"avx512f", 7, 0, EBX, 16, Avx512},     {"avx512dq", 7, 0, EBX, 17, Avx512},
    {"rdseed", 7, 0, EBX, 18, None},        {"adx", 7, 0, EBX, 19, None},
    {"avx512ifma", 7, 0, EBX, 21, Avx512},  {"avx512cd", 7, 0, EBX, 28, Avx512},
    {"sha", 7, 0, EBX, 29, None},           {"avx512bw", 7, 0, EBX, 30, Avx512},
    {"avx512vl", 7, 0, EBX, 31, Avx512},    {"avx512vbmi", 7, 0, ECX, 1, Avx512},
    {"avx512vbmi2", 7, 0, ECX, 6, Avx512},  {"gfni", 7, 0, ECX, 8, None},
    {"vaes", 7, 0, ECX, 9, Avx},            {"vpclmulqdq", 7, 0, ECX, 10, Avx},
    {"avx512vnni", 7, 0, ECX, 11, Avx512},  {"avx512bitalg", 7, 0, ECX, 12, Avx512},
    {"avx512vpopcntdq", 7, 0, ECX, 14, Avx512}, {"avx512vp2intersect", 7, 0, EDX, 8, Avx512},
    {"avx512fp16", 7, 0, EDX, 23, Avx512},  {"avxvnni", 7, 1, EAX, 4, Avx},
    {"avx512bf16", 7, 1, EAX, 5, Avx512},   {"sahf", 0x80000001, 0, ECX, 0, None},
    {"lzcnt", 0x80000001, 0, ECX, 5, None}, {"sse4a", 0x80000001, 0, ECX, 6, None},
    {"prfchw", 0x80000001, 0, ECX, 8, None}, {"xop", 0x80000001, 0, ECX, 11, Avx},
    {"fma4", 0x80000001, 0, ECX, 16, Avx},  {"tbm", 0x80000001, 0, ECX, 21, None},
};

bool cpuid(unsigned leaf, unsigned subleaf, unsigned (&r)[4]) {
  unsigned max = __get_cpuid_max(leaf & 0x80000000u, nullptr);
  if (max < leaf)
    return false;
  __cpuid_count(leaf, subleaf, r[0], r[1], r[2], r[3]);
  return true;
}

/// XCR0: the register state the OS saves (0 where xgetbv is unavailable).
uint64_t enabledState() {
  unsigned r[4];
  if (!cpuid(1, 0, r) || !(r[ECX] & (1u << 27))) // OSXSAVE
    return 0;
  uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (uint64_t(hi) << 32) | lo;
}

bool present(const Feature &f, uint64_t xcr0) {
  unsigned r[4];
  if (!cpuid(f.leaf, f.subleaf, r) || !(r[f.reg] & (1u << f.bit)))
    return false;
  switch (f.state) {
  case None:
    return true;
  case Avx:
    return (xcr0 & 0x6) == 0x6; // SSE and AVX state
  case Avx512:
    return (xcr0 & 0xE6) == 0xE6; // and opmask, ZMM_Hi256, Hi16_ZMM
  }
  return false;
}
#endif

std::set<std::string> hiddenForTests() {
  std::set<std::string> out;
  const char *env = std::getenv("LINNET_TEST_HIDE_CPU_FEATURES");
  std::string_view s = env ? env : "";
  while (!s.empty()) {
    size_t comma = s.find(',');
    std::string_view item = s.substr(0, comma);
    if (!item.empty())
      out.insert(std::string(item));
    s = comma == std::string_view::npos ? std::string_view() : s.substr(comma + 1);
  }
  return out;
}

} // namespace

std::vector<std::string> missingCpuFeatures(const std::vector<std::string> &required) {
  std::vector<std::string> missing;
  std::set<std::string> hidden = hiddenForTests();
#ifdef LINNET_HOST_X86
  uint64_t xcr0 = enabledState();
#endif
  for (const std::string &name : required) {
    if (hidden.count(name)) {
      missing.push_back(name);
      continue;
    }
#ifdef LINNET_HOST_X86
    for (const Feature &f : kFeatures)
      if (f.name == name && !present(f, xcr0))
        missing.push_back(name);
#endif
  }
  return missing;
}

std::string checkHostCpu(const CpuRequirement &req) {
  std::string here = hostArch();
  if (!req.arch.empty() && req.arch != here)
    return fmt::format("its code is for {} ({}), and this machine is {}: build it again here", req.arch,
                       req.name, here);
  std::vector<std::string> missing = missingCpuFeatures(req.features);
  if (missing.empty())
    return "";
  return fmt::format("its code uses {} (it was built for {}), which this CPU lacks: build it again here "
                     "(--target cpu-native for this CPU, --target cpu for any x86-64-v3 one)",
                     fmt::join(missing, ", "), req.name.empty() ? req.arch : req.name);
}

} // namespace linnet::rt
