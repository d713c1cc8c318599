//===- Quantize.cpp - q8_0 and q4_0, written -----------------------------===//
//
// ggml's reference quantizers of the 32-value block formats (Quantize.h):
// the same f32 operations in the same order, so the same bytes.
//
//===----------------------------------------------------------------------===//
#include "linnet/Runtime/Quantize.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace linnet::rt {

namespace {

void putHalf(unsigned char *p, float f) {
  uint16_t h = floatToHalf(f);
  std::memcpy(p, &h, 2);
}

/// q8_0: d = max |x| / 127; q = round(x / d), ties away from zero (roundf).
void quantizeQ8_0(const float *x, int64_t n, unsigned char *out) {
  for (int64_t b = 0; b < n / 32; ++b, x += 32, out += 34) {
    float amax = 0.0f;
    for (int j = 0; j < 32; ++j)
      amax = std::max(amax, std::fabs(x[j]));
    const float d = amax / 127;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    putHalf(out, d);
    for (int j = 0; j < 32; ++j)
      out[2 + j] = static_cast<unsigned char>(static_cast<int8_t>(std::roundf(x[j] * id)));
  }
}

/// q4_0: d = (the value of largest magnitude) / -8, so that value maps to
/// -8 exactly and the other end of the range to at most 7; q = x / d + 8,
/// truncated after adding 8.5 (rounds half up), capped at 15.
void quantizeQ4_0(const float *x, int64_t n, unsigned char *out) {
  for (int64_t b = 0; b < n / 32; ++b, x += 32, out += 18) {
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < 32; ++j)
      if (amax < std::fabs(x[j])) {
        amax = std::fabs(x[j]);
        max = x[j];
      }
    const float d = max / -8;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    putHalf(out, d);
    for (int j = 0; j < 16; ++j) {
      const float x0 = x[j] * id, x1 = x[16 + j] * id;
      const uint8_t q0 = static_cast<uint8_t>(std::min<int>(15, static_cast<int8_t>(x0 + 8.5f)));
      const uint8_t q1 = static_cast<uint8_t>(std::min<int>(15, static_cast<int8_t>(x1 + 8.5f)));
      out[2 + j] = static_cast<unsigned char>(q0 | (q1 << 4));
    }
  }
}

} // namespace

std::optional<BlockFormatInfo> blockFormat(const std::string &name) {
  for (const BlockFormatInfo &f : kBlockFormats)
    if (name == f.name)
      return f;
  return std::nullopt;
}

const BlockFormatInfo *blockFormatOfGgmlType(uint32_t ggmlType) {
  for (const BlockFormatInfo &f : kBlockFormats)
    if (f.ggmlType == ggmlType)
      return &f;
  return nullptr;
}

const BlockFormatInfo &blockFormatInfo(BlockFormat f) {
  for (const BlockFormatInfo &i : kBlockFormats)
    if (i.format == f)
      return i;
  return kBlockFormats[0];
}

void quantizeRow(BlockFormat f, const float *x, int64_t n, unsigned char *out) {
  switch (f) {
  case BlockFormat::Q8_0: return quantizeQ8_0(x, n, out);
  case BlockFormat::Q4_0: return quantizeQ4_0(x, n, out);
  case BlockFormat::Q4_K: return quantizeRowQ4K(x, n, out);
  case BlockFormat::Q5_K: return quantizeRowQ5K(x, n, out);
  case BlockFormat::Q6_K: return quantizeRowQ6K(x, n, out);
  }
}

} // namespace linnet::rt
