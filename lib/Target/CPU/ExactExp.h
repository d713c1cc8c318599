//===- ExactExp.h - The f32 exponential as the C library computes it -------===//
//
// The reference interpreter evaluates an f32 `exp` with the C library's
// expf, so a compiled exponential that is to agree with it bit for bit must
// compute what expf computes. glibc's expf (2.28 and later; the variant its
// loader selects where the CPU has FMA and AVX2) is straight-line double
// arithmetic over a 32-entry table once its argument is below 88 in
// magnitude:
//
//   kd = fma(N/ln2, x, shift)      (x in double; shift = 1.5 * 2^52)
//   ki = bits(kd),  kd = kd - shift,  r = fma(N/ln2, x, -kd)
//   s  = double(T[ki mod 32] + (ki << 47))          = 2^(ki/32)
//   y  = fma(fma(C0, r, C1), r*r, fma(C2, r, 1)) * s
//   expf(x) = float(y)
//
// with its own results for -inf, NaN, +inf and the arguments that overflow
// or underflow. The constants below are that algorithm's (T[i] is
// bits(2^(i/32)) - (i << 47), 2^(i/32) rounded to nearest); `exactExpf` is
// the same computation in scalar C++, which -linnet-cpu-exact-exp checks
// against this process's expf before it emits the vector form.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_LIB_TARGET_CPU_EXACTEXP_H
#define LINNET_LIB_TARGET_CPU_EXACTEXP_H

#include <cmath>
#include <cstdint>
#include <cstring>

namespace linnet::cpu::exactexp {

inline constexpr uint64_t kTable[32] = {
    0x3ff0000000000000, 0x3fefd9b0d3158574, 0x3fefb5586cf9890f, 0x3fef9301d0125b51,
    0x3fef72b83c7d517b, 0x3fef54873168b9aa, 0x3fef387a6e756238, 0x3fef1e9df51fdee1,
    0x3fef06fe0a31b715, 0x3feef1a7373aa9cb, 0x3feedea64c123422, 0x3feece086061892d,
    0x3feebfdad5362a27, 0x3feeb42b569d4f82, 0x3feeab07dd485429, 0x3feea47eb03a5585,
    0x3feea09e667f3bcd, 0x3fee9f75e8ec5f74, 0x3feea11473eb0187, 0x3feea589994cce13,
    0x3feeace5422aa0db, 0x3feeb737b0cdc5e5, 0x3feec49182a3f090, 0x3feed503b23e255d,
    0x3feee89f995ad3ad, 0x3feeff76f2fb5e47, 0x3fef199bdd85529c, 0x3fef3720dcef9069,
    0x3fef5818dcfba487, 0x3fef7c97337b9b5f, 0x3fefa4afa2a490da, 0x3fefd0765b6e4540};

// Bit patterns of the double constants: N/ln2 (N = 32), the rounding
// shift, and the polynomial's coefficients (scaled by powers of 1/N).
inline constexpr uint64_t kInvLn2N = 0x40471547652b82fe;
inline constexpr uint64_t kShift = 0x4338000000000000;
inline constexpr uint64_t kC0 = 0x3ebc6af84b912394;
inline constexpr uint64_t kC1 = 0x3f2ebfce50fac4f3;
inline constexpr uint64_t kC2 = 0x3f962e42ff0c52d6;

// The argument classes, on the f32 bits: |x| >= 88 (or NaN) when the
// exponent field's top 11 bits exceed kSpecialTop; above kOverflow the
// result is +inf, below kUnderflow 0, below kMayUnderflow the smallest
// subnormal (what glibc's underflow helper rounds to).
inline constexpr uint32_t kSpecialTop = 0x42a;
inline constexpr uint32_t kInfTop = 0x7f7;
inline constexpr uint32_t kOverflow = 0x42b17217;     // 0x1.62e42ep6f
inline constexpr uint32_t kUnderflow = 0xc2cff1b4;    // -0x1.9fe368p6f
inline constexpr uint32_t kMayUnderflow = 0xc2ce8ecf; // -0x1.9d1d9ep6f

inline double asDouble(uint64_t b) {
  double d;
  std::memcpy(&d, &b, sizeof d);
  return d;
}
inline float asFloat(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

/// The computation -linnet-cpu-exact-exp emits, one element at a time.
inline float exactExpf(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  uint32_t top = (u >> 20) & 0x7ff;
  if (top > kSpecialTop) {
    if (u == 0xff800000u)
      return 0.0f;
    if (top > kInfTop)
      return x + x;
    if (x > asFloat(kOverflow))
      return INFINITY;
    if (x < asFloat(kUnderflow))
      return 0.0f;
    if (x < asFloat(kMayUnderflow))
      return asFloat(1); // 0x1p-149
  }
  double xd = x;
  double kd = std::fma(asDouble(kInvLn2N), xd, asDouble(kShift));
  uint64_t ki;
  std::memcpy(&ki, &kd, sizeof ki);
  kd -= asDouble(kShift);
  double r = std::fma(asDouble(kInvLn2N), xd, -kd);
  double s = asDouble(kTable[ki & 31] + (ki << 47));
  double z = std::fma(asDouble(kC0), r, asDouble(kC1));
  double r2 = r * r;
  double y = std::fma(asDouble(kC2), r, 1.0);
  y = std::fma(z, r2, y);
  return static_cast<float>(y * s);
}

} // namespace linnet::cpu::exactexp

#endif // LINNET_LIB_TARGET_CPU_EXACTEXP_H
