//===- Quantize.cpp - q8_0 and q4_0, written -----------------------------===//
//
// ggml's reference quantizers of the 32-value block formats (Quantize.h):
// the same f32 operations in the same order, so the same bytes.
//
//===----------------------------------------------------------------------===//
#include "linnet/Runtime/Quantize.h"
#include "linnet/Runtime/TensorFiles.h"

#include <fmt/format.h>

#include <bit>

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

/// The 6-bit scale and min of sub-block j of a q4_K/q5_K block's 12 bytes
/// (ggml's get_scale_min_k4): sub-blocks 0-3 in the low 6 bits of bytes 0-3
/// and 4-7; 4-7 in the nibbles of bytes 8-11 and the top bits of 0-7.
void scaleMinK4(int j, const unsigned char *q, int &sc, int &m) {
  if (j < 4) {
    sc = q[j] & 63;
    m = q[j + 4] & 63;
  } else {
    sc = (q[j + 4] & 0x0f) | ((q[j - 4] >> 6) << 4);
    m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
  }
}

/// Blocks of a block format as f32, each value as ggml's dequantize_row_*
/// computes it (f32 operations in the same order, no fused multiply-add):
/// - q8_0: f16 d, 32 x i8: d * q (exact);
/// - q4_0: f16 d, 16 bytes of two 4-bit values (low nibbles first), offset
///   by 8: d * (q - 8) (exact);
/// - q4_K, q5_K: 256 values in 8 sub-blocks of 32, f16 d and dmin, 6-bit
///   scales and mins: (d * sc) * q - (dmin * m), q of 4 bits (q5_K: a fifth
///   from qh);
/// - q6_K: 256 values in 16 sub-blocks of 16, 6-bit q (4 low bits in ql, 2
///   high in qh) offset by 32, i8 scales, f16 d last: (d * sc) * q.
void dequantizeBlocksImpl(const BlockFormatInfo &t, const unsigned char *in, int64_t blocks, float *out) {
  auto half = [](const unsigned char *p) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return linnet::support::f16ToF32(h);
  };
  for (int64_t b = 0; b < blocks; ++b, in += t.blockBytes, out += t.blockElems) {
    switch (t.format) {
    case BlockFormat::Q8_0: {
      float d = half(in);
      for (int j = 0; j < 32; ++j)
        out[j] = d * float(int8_t(in[2 + j]));
      break;
    }
    case BlockFormat::Q4_0: {
      float d = half(in);
      for (int j = 0; j < 16; ++j) {
        out[j] = d * float(int(in[2 + j] & 0x0f) - 8);
        out[j + 16] = d * float(int(in[2 + j] >> 4) - 8);
      }
      break;
    }
    case BlockFormat::Q4_K:   // d, dmin, scales[12], qs[128]
    case BlockFormat::Q5_K: { // d, dmin, scales[12], qh[32], qs[128]
      float d = half(in), dmin = half(in + 2);
      const unsigned char *scales = in + 4, *qh = in + 16;
      bool q5 = t.format == BlockFormat::Q5_K;
      const unsigned char *qs = q5 ? in + 48 : in + 16;
      float *y = out;
      for (int j = 0, is = 0; j < 256; j += 64, is += 2, qs += 32) {
        int sc, m;
        scaleMinK4(is, scales, sc, m);
        float d1 = d * float(sc), m1 = dmin * float(m);
        scaleMinK4(is + 1, scales, sc, m);
        float d2 = d * float(sc), m2 = dmin * float(m);
        int u1 = 1 << (j / 32), u2 = 2 << (j / 32); // q5_K: the fifth bit's place in qh
        for (int l = 0; l < 32; ++l) {
          int q = (qs[l] & 0x0f) + (q5 && (qh[l] & u1) ? 16 : 0);
          float p = d1 * float(q);
          *y++ = p - m1;
        }
        for (int l = 0; l < 32; ++l) {
          int q = (qs[l] >> 4) + (q5 && (qh[l] & u2) ? 16 : 0);
          float p = d2 * float(q);
          *y++ = p - m2;
        }
      }
      break;
    }
    case BlockFormat::Q6_K: { // ql[128], qh[64], scales[16] (i8), d
      const unsigned char *ql = in, *qh = in + 128;
      const auto *sc = reinterpret_cast<const int8_t *>(in + 192);
      float d = half(in + 208);
      float *y = out;
      for (int n = 0; n < 256; n += 128, y += 128, ql += 64, qh += 32, sc += 8)
        for (int l = 0; l < 32; ++l) {
          int is = l / 16;
          int q1 = int((ql[l] & 0x0f) | (((qh[l] >> 0) & 3) << 4)) - 32;
          int q2 = int((ql[l + 32] & 0x0f) | (((qh[l] >> 2) & 3) << 4)) - 32;
          int q3 = int((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
          int q4 = int((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
          float d1 = d * float(sc[is]), d2 = d * float(sc[is + 2]), d3 = d * float(sc[is + 4]),
                d4 = d * float(sc[is + 6]);
          y[l] = d1 * float(q1);
          y[l + 32] = d2 * float(q2);
          y[l + 64] = d3 * float(q3);
          y[l + 96] = d4 * float(q4);
        }
      break;
    }
    }
  }
}

} // namespace

void dequantizeBlocks(const BlockFormatInfo &f, const unsigned char *in, int64_t blocks, float *out) {
  dequantizeBlocksImpl(f, in, blocks, out);
}

std::vector<std::byte> repackQ4_0x8(std::span<const std::byte> blocks, int64_t rows, int64_t blocksPerRow) {
  constexpr int64_t kRows = 8, kBlock = 18, kGroup = 144;
  std::vector<std::byte> out(blocks.size());
  for (int64_t g = 0; g < rows / kRows; ++g)
    for (int64_t kb = 0; kb < blocksPerRow; ++kb) {
      std::byte *dst = out.data() + (g * blocksPerRow + kb) * kGroup;
      for (int64_t r = 0; r < kRows; ++r) {
        const std::byte *src = blocks.data() + ((g * kRows + r) * blocksPerRow + kb) * kBlock;
        std::memcpy(dst + 2 * r, src, 2);
        std::memcpy(dst + 16 + 16 * r, src + 2, 16);
      }
    }
  return out;
}

bool blocksFor(const SafeTensorsFile &file, const std::string &name, const TensorView &w, BlockFormat f,
               std::span<const std::byte> &out, std::vector<std::byte> &owned, std::string &error) {
  const BlockFormatInfo &bf = blockFormatInfo(f);
  auto stored = file.storedAs().find(name);
  if (stored != file.storedAs().end()) {
    if (stored->second == bf.name) {
      out = file.storedBlocks().at(name); // the file's own blocks, in place
      return true;
    }
    error = fmt::format("stored as {}, but the artifact reads {} blocks (requantizing loses precision: "
                        "`linnet quantize --type {} --allow-requantize`, or build with -D for {})",
                        stored->second, bf.name, bf.name, stored->second);
    return false;
  }
  if (w.dtype != DType::F32 && w.dtype != DType::F16 && w.dtype != DType::BF16) {
    error = fmt::format("expected a float tensor to quantize to {}, found {}", bf.name, dtypeName(w.dtype));
    return false;
  }
  int64_t n = w.numElements(), row = w.shape.empty() ? 0 : w.shape.back();
  if (row <= 0 || row % bf.blockElems != 0) {
    error = fmt::format("{} needs rows of whole blocks of {} values, found shape {}", bf.name, bf.blockElems,
                        shapeString(w.shape));
    return false;
  }
  // ggml's reference quantizer, row by row: the bytes `linnet quantize`
  // writes for the same values.
  owned.assign(size_t(n / bf.blockElems * bf.blockBytes), std::byte{0});
  std::vector<float> x(static_cast<size_t>(row));
  size_t es = dtypeSize(w.dtype);
  for (int64_t r = 0; r < n / row; ++r) {
    const std::byte *src = w.data.data() + size_t(r * row) * es;
    for (int64_t j = 0; j < row; ++j) {
      uint32_t bits = 0;
      std::memcpy(&bits, src + size_t(j) * es, es);
      x[size_t(j)] = w.dtype == DType::F32    ? std::bit_cast<float>(bits)
                     : w.dtype == DType::F16 ? support::f16ToF32(uint16_t(bits))
                                             : support::bf16ToF32(uint16_t(bits));
    }
    quantizeRow(f, x.data(), row,
                reinterpret_cast<unsigned char *>(owned.data()) + size_t(r * row / bf.blockElems * bf.blockBytes));
  }
  out = {owned.data(), owned.size()};
  return true;
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
