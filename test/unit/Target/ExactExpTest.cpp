//===- ExactExpTest.cpp - the expf mirror against the C library -----------===//
//
// -linnet-cpu-exact-exp writes out the algorithm of ExactExp.h; the mirror
// must be this machine's expf bit for bit. 2^24 arguments spread over every
// bit pattern (every exponent, both signs, NaNs), plus the edges of each
// special range. (The whole 2^32 agreed when the pass was written.)
//
//===----------------------------------------------------------------------===//

#include "ExactExp.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

using namespace linnet::cpu::exactexp;

namespace {

uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

TEST(ExactExp, MirrorsTheCLibrary) {
  if (!__builtin_cpu_supports("fma") || !__builtin_cpu_supports("avx2"))
    GTEST_SKIP() << "the C library's expf is its non-FMA variant here";
  int64_t differ = 0;
  uint32_t first = 0;
  auto check = [&](uint32_t u) {
    float x = asFloat(u);
    if (bitsOf(exactExpf(x)) != bitsOf(std::exp(x)) && differ++ == 0)
      first = u;
  };
  for (uint64_t u = 0; u < (1ull << 32); u += 255)
    check(static_cast<uint32_t>(u));
  for (uint32_t edge : {kOverflow, kUnderflow, kMayUnderflow, 0x7f800000u, 0xff800000u, 0x42b00000u,
                        0xc2b00000u, 0x3f800000u, 0u, 0x80000000u})
    for (int d = -64; d <= 64; ++d)
      check(edge + d);
  EXPECT_EQ(differ, 0) << "first argument that differs: 0x" << std::hex << first;
}

} // namespace
