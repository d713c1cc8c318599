//===- Half.h - f16 and bf16 bits, to and from f32 ---------------*- C++ -*-===//
//
// The one conversion between f32 and the 16-bit float formats, rounding to
// nearest even (as hardware and ggml's GGML_FP32_TO_FP16 do), with
// subnormals, infinities and NaNs kept. The interpreter's rounding, the
// GGUF reader, `init-weights` and `quantize` all use it.
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_SUPPORT_HALF_H
#define LINNET_SUPPORT_HALF_H

#include <cmath>
#include <cstdint>
#include <cstring>

namespace linnet::support {

inline uint16_t f32ToF16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u, mag = x & 0x7fffffffu;
  if (mag >= 0x7f800000u)
    return static_cast<uint16_t>(sign | (mag > 0x7f800000u ? 0x7e00u : 0x7c00u));
  if (mag >= 0x477ff000u) // >= 65520 rounds to infinity
    return static_cast<uint16_t>(sign | 0x7c00u);
  if (mag < 0x38800000u) { // below 2^-14: a subnormal half (or zero)
    float scaled = std::fabs(f) * 16777216.0f; // in units of 2^-24, exact
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(std::nearbyint(scaled)));
  }
  uint32_t e = (mag >> 23) - 127 + 15, m = mag & 0x7fffffu;
  uint32_t h = (e << 10) | (m >> 13), rem = m & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u)))
    ++h;
  return static_cast<uint16_t>(sign | h);
}

inline float f16ToF32(uint16_t h) {
  uint32_t s = static_cast<uint32_t>(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0) {
    float v = std::ldexp(static_cast<float>(m), -24);
    return s ? -v : v;
  }
  uint32_t bits = e == 31 ? (s | 0x7f800000u | (m << 13)) : (s | ((e - 15 + 127) << 23) | (m << 13));
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

inline uint16_t f32ToBF16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((x >> 16) | 0x40u); // quiet NaN
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

inline float bf16ToF32(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

} // namespace linnet::support

#endif // LINNET_SUPPORT_HALF_H
