//===- QuantizeK.cpp - the k-quants' reference quantizers ----------------===//
//
// q4_K, q5_K and q6_K as ggml's quantize_row_*_ref writes them (see
// Quantize.h). A 256-value super-block is split into sub-blocks (8 x 32 for
// q4_K/q5_K, 16 x 16 for q6_K); each sub-block gets a scale (and, for
// q4_K/q5_K, a min) found by ggml's search, and those are quantized in turn
// to 6 bits (q4_K/q5_K) or 8 bits (q6_K) against one f16 super-scale.
//
// The goal is the same bytes as ggml, so every float expression keeps
// ggml's operand order and types (float, never double), and rounding uses
// ggml's nearest_int trick rather than std::lround: ties and out-of-range
// values must come out as ggml's do. No fused multiply-add either: the file
// is compiled with -ffp-contract=off (lib/Runtime/CMakeLists.txt).
//
//===----------------------------------------------------------------------===//
#include "linnet/Runtime/Quantize.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

namespace linnet::rt {

namespace {

constexpr int kSuper = 256;       // values per super-block (ggml's QK_K)
constexpr float kGroupEps = 1e-15f; // ggml's GROUP_MAX_EPS

/// ggml's nearest_int: adding 1.5 * 2^23 leaves round(f) (ties to even, the
/// FPU's mode) in the low mantissa bits. Only exact for |f| <= 2^22 - 1, but
/// ggml relies on it unchecked in release builds, so copy it bit for bit.
int nearestInt(float f) {
  float v = f + 12582912.f;
  int32_t i = std::bit_cast<int32_t>(v);
  return (i & 0x007fffff) - 0x00400000;
}

void storeHalf(unsigned char *p, uint16_t h) {
  p[0] = uint8_t(h & 0xff);
  p[1] = uint8_t(h >> 8);
}

/// ggml's make_qkx2_quants (use_mad = false): fits x ~ scale * L - min with
/// L in [0, nmax], min >= 0, minimizing the weighted squared error over
/// nstep + 1 trial inverse scales. Returns the scale, sets `theMin`; L holds
/// the best levels (kept by the caller when the sub-block's 6-bit scale
/// rounds to zero).
float makeQkx2Quants(int n, int nmax, const float *x, const float *weights,
                     uint8_t *L, float *theMin, uint8_t *Laux, float rmin,
                     float rdelta, int nstep) {
  float min = x[0], max = x[0];
  float sumW = weights[0];
  float sumX = sumW * x[0];
  for (int i = 1; i < n; ++i) {
    if (x[i] < min)
      min = x[i];
    if (x[i] > max)
      max = x[i];
    float w = weights[i];
    sumW += w;
    sumX += w * x[i];
  }
  if (min > 0)
    min = 0;
  if (max == min) {
    for (int i = 0; i < n; ++i)
      L[i] = 0;
    *theMin = -min;
    return 0.f;
  }
  float iscale = nmax / (max - min);
  float scale = 1 / iscale;
  float bestError = 0;
  for (int i = 0; i < n; ++i) {
    int l = nearestInt(iscale * (x[i] - min));
    L[i] = uint8_t(std::max(0, std::min(nmax, l)));
    float diff = scale * L[i] + min - x[i];
    bestError += weights[i] * (diff * diff);
  }
  if (nstep < 1) {
    *theMin = -min;
    return scale;
  }
  for (int is = 0; is <= nstep; ++is) {
    iscale = (rmin + rdelta * is + nmax) / (max - min);
    float sumL = 0, sumL2 = 0, sumXL = 0;
    for (int i = 0; i < n; ++i) {
      int l = nearestInt(iscale * (x[i] - min));
      l = std::max(0, std::min(nmax, l));
      Laux[i] = uint8_t(l);
      float w = weights[i];
      sumL += w * l;
      sumL2 += w * l * l;
      sumXL += w * l * x[i];
    }
    // Least squares for (scale, min) at these levels; min is clamped to 0
    // (then only the scale is refit) since the format stores min >= 0.
    float D = sumW * sumL2 - sumL * sumL;
    if (D > 0) {
      float thisScale = (sumW * sumXL - sumX * sumL) / D;
      float thisMin = (sumL2 * sumX - sumL * sumXL) / D;
      if (thisMin > 0) {
        thisMin = 0;
        thisScale = sumXL / sumL2;
      }
      float curError = 0;
      for (int i = 0; i < n; ++i) {
        float diff = thisScale * Laux[i] + thisMin - x[i];
        curError += weights[i] * (diff * diff);
      }
      if (curError < bestError) {
        std::memcpy(L, Laux, size_t(n));
        bestError = curError;
        scale = thisScale;
        min = thisMin;
      }
    }
  }
  *theMin = -min;
  return scale;
}

/// ggml's make_qx_quants with rmse_type 1 and no importance weights
/// (weights x^2): symmetric levels L - nmax in [-nmax, nmax - 1], the scale
/// picked from 19 trial inverse scales around nmax / max|x|.
float makeQxQuants(int n, int nmax, const float *x, int8_t *L) {
  float max = 0, amax = 0;
  for (int i = 0; i < n; ++i) {
    float ax = std::fabs(x[i]);
    if (ax > amax) {
      amax = ax;
      max = x[i];
    }
  }
  if (amax < kGroupEps) {
    for (int i = 0; i < n; ++i)
      L[i] = 0;
    return 0.f;
  }
  float iscale = -nmax / max;
  float sumLX = 0, sumL2 = 0;
  for (int i = 0; i < n; ++i) {
    int l = nearestInt(iscale * x[i]);
    l = std::max(-nmax, std::min(nmax - 1, l));
    L[i] = int8_t(l + nmax);
    float w = x[i] * x[i];
    sumLX += w * x[i] * l;
    sumL2 += w * l * l;
  }
  float scale = sumL2 ? sumLX / sumL2 : 0.0f;
  float best = scale * sumLX;
  for (int is = -9; is <= 9; ++is) {
    if (is == 0)
      continue;
    iscale = -(nmax + 0.1f * is) / max;
    sumLX = sumL2 = 0;
    for (int i = 0; i < n; ++i) {
      int l = nearestInt(iscale * x[i]);
      l = std::max(-nmax, std::min(nmax - 1, l));
      float w = x[i] * x[i];
      sumLX += w * x[i] * l;
      sumL2 += w * l * l;
    }
    // Better fit iff sumLX^2 / sumL2 grows (the error drop of the LS scale).
    if (sumL2 > 0 && sumLX * sumLX > best * sumL2) {
      for (int i = 0; i < n; ++i) {
        int l = nearestInt(iscale * x[i]);
        L[i] = int8_t(nmax + std::max(-nmax, std::min(nmax - 1, l)));
      }
      scale = sumLX / sumL2;
      best = scale * sumLX;
    }
  }
  return scale;
}

/// Sub-block j's 6-bit scale and min from the 12 packed bytes (ggml's
/// get_scale_min_k4): 0-3 sit whole in bytes j and j + 4; 4-7 keep their
/// low nibbles in byte j + 4 and their top two bits in bytes j - 4 and j.
void scaleMinK4(int j, const uint8_t *q, uint8_t *d, uint8_t *m) {
  if (j < 4) {
    *d = q[j] & 63;
    *m = q[j + 4] & 63;
  } else {
    *d = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
    *m = (q[j + 4] >> 4) | ((q[j - 0] >> 6) << 4);
  }
}

/// The part q4_K and q5_K share: fits each 32-value sub-block, writes the
/// 16-byte header (f16 d, f16 dmin, 12 bytes of 6-bit scales and mins) and
/// leaves the levels, in [0, nmax], in L.
void quantizeScaleMinBlock(const float *x, int nmax, float rmin, int nstep,
                           uint8_t *L, unsigned char *header) {
  float mins[kSuper / 32], scales[kSuper / 32];
  float weights[32];
  uint8_t Laux[32];
  float maxScale = 0, maxMin = 0; // both >= 0: the min is subtracted
  for (int j = 0; j < kSuper / 32; ++j) {
    // Weight by magnitude plus the sub-block's rms, so large values count
    // more without small ones counting for nothing.
    float sumX2 = 0;
    for (int l = 0; l < 32; ++l)
      sumX2 += x[32 * j + l] * x[32 * j + l];
    float avX = std::sqrt(sumX2 / 32);
    for (int l = 0; l < 32; ++l)
      weights[l] = avX + std::fabs(x[32 * j + l]);
    scales[j] = makeQkx2Quants(32, nmax, x + 32 * j, weights, L + 32 * j,
                               &mins[j], Laux, rmin, 0.1f, nstep);
    if (scales[j] > maxScale)
      maxScale = scales[j];
    if (mins[j] > maxMin)
      maxMin = mins[j];
  }

  uint8_t *packed = header + 4;
  float invScale = maxScale > 0 ? 63.f / maxScale : 0.f;
  float invMin = maxMin > 0 ? 63.f / maxMin : 0.f;
  for (int j = 0; j < kSuper / 32; ++j) {
    // Truncating to uint8_t before the clamp is ggml's: a negative scale
    // wraps and then clamps to 63.
    uint8_t ls = uint8_t(nearestInt(invScale * scales[j]));
    uint8_t lm = uint8_t(nearestInt(invMin * mins[j]));
    ls = std::min<uint8_t>(63, ls);
    lm = std::min<uint8_t>(63, lm);
    if (j < 4) {
      packed[j] = ls;
      packed[j + 4] = lm;
    } else {
      packed[j + 4] = uint8_t((ls & 0xF) | ((lm & 0xF) << 4));
      packed[j - 4] |= uint8_t((ls >> 4) << 6);
      packed[j - 0] |= uint8_t((lm >> 4) << 6);
    }
  }
  uint16_t dHalf = floatToHalf(maxScale / 63.f);
  uint16_t dminHalf = floatToHalf(maxMin / 63.f);
  storeHalf(header, dHalf);
  storeHalf(header + 2, dminHalf);

  // Requantize against the scales as stored (f16 times 6 bits), which is
  // what a reader will multiply by. A sub-block whose scale is 0 keeps the
  // levels of its fit, as ggml's does.
  for (int j = 0; j < kSuper / 32; ++j) {
    uint8_t sc, m;
    scaleMinK4(j, packed, &sc, &m);
    const float d = support::f16ToF32(dHalf) * sc;
    if (!d)
      continue;
    const float dm = support::f16ToF32(dminHalf) * m;
    for (int ii = 0; ii < 32; ++ii) {
      int l = nearestInt((x[32 * j + ii] + dm) / d);
      L[32 * j + ii] = uint8_t(std::max(0, std::min(nmax, l)));
    }
  }
}

} // namespace

void quantizeRowQ4K(const float *x, int64_t n, unsigned char *out) {
  for (int64_t b = 0; b < n / kSuper; ++b, x += kSuper, out += 144) {
    uint8_t L[kSuper];
    std::memset(out, 0, 144);
    quantizeScaleMinBlock(x, 15, -1.f, 20, L, out);
    // Each 64 values make 32 bytes: the first 32 in the low nibbles, the
    // next 32 in the high ones.
    unsigned char *qs = out + 16;
    for (int j = 0; j < kSuper; j += 64, qs += 32)
      for (int l = 0; l < 32; ++l)
        qs[l] = uint8_t(L[j + l] | (L[j + l + 32] << 4));
  }
}

void quantizeRowQ5K(const float *x, int64_t n, unsigned char *out) {
  for (int64_t b = 0; b < n / kSuper; ++b, x += kSuper, out += 176) {
    uint8_t L[kSuper];
    std::memset(out, 0, 176);
    quantizeScaleMinBlock(x, 31, -0.5f, 15, L, out);
    // Low 4 bits as q4_K lays them out; the fifth bit of value n + j (n a
    // multiple of 64) goes to qh[j] bit n / 32, of value n + j + 32 to bit
    // n / 32 + 1.
    unsigned char *qh = out + 16;
    unsigned char *ql = out + 48;
    uint8_t m1 = 1, m2 = 2;
    for (int b64 = 0; b64 < kSuper; b64 += 64, ql += 32) {
      for (int j = 0; j < 32; ++j) {
        int l1 = L[b64 + j];
        if (l1 > 15) {
          l1 -= 16;
          qh[j] |= m1;
        }
        int l2 = L[b64 + j + 32];
        if (l2 > 15) {
          l2 -= 16;
          qh[j] |= m2;
        }
        ql[j] = uint8_t(l1 | (l2 << 4));
      }
      m1 <<= 2;
      m2 <<= 2;
    }
  }
}

void quantizeRowQ6K(const float *x, int64_t n, unsigned char *out) {
  for (int64_t b = 0; b < n / kSuper; ++b, x += kSuper, out += 210) {
    unsigned char *ql = out, *qh = out + 128, *sc = out + 192, *dp = out + 208;
    int8_t L[kSuper];
    float scales[kSuper / 16];
    // The super-scale follows the sub-scale of largest magnitude, sign
    // included, so that one maps to -128 exactly.
    float maxScale = 0, maxAbsScale = 0;
    for (int ib = 0; ib < kSuper / 16; ++ib) {
      const float scale = makeQxQuants(16, 32, x + 16 * ib, L + 16 * ib);
      scales[ib] = scale;
      const float absScale = std::fabs(scale);
      if (absScale > maxAbsScale) {
        maxAbsScale = absScale;
        maxScale = scale;
      }
    }

    std::memset(out, 0, 210);
    if (maxAbsScale < kGroupEps) {
      storeHalf(dp, floatToHalf(0.f));
      continue;
    }

    float iscale = -128.f / maxScale;
    uint16_t dHalf = floatToHalf(1 / iscale);
    storeHalf(dp, dHalf);
    for (int ib = 0; ib < kSuper / 16; ++ib)
      sc[ib] = uint8_t(int8_t(std::min(127, nearestInt(iscale * scales[ib]))));

    // Requantize against the stored scales; a sub-block whose scale is 0
    // keeps the levels of its fit, as ggml's does.
    for (int j = 0; j < kSuper / 16; ++j) {
      float d = support::f16ToF32(dHalf) * int8_t(sc[j]);
      if (!d)
        continue;
      for (int ii = 0; ii < 16; ++ii) {
        int l = nearestInt(x[16 * j + ii] / d);
        l = std::max(-32, std::min(31, l));
        L[16 * j + ii] = int8_t(l + 32);
      }
    }

    // Per 128 values: low nibbles of values l and l + 64 share ql[l], of
    // l + 32 and l + 96 share ql[l + 32]; the four top 2-bit pairs share
    // qh[l].
    for (int j = 0; j < kSuper; j += 128, ql += 64, qh += 32) {
      for (int l = 0; l < 32; ++l) {
        const uint8_t q1 = L[j + l + 0] & 0xF;
        const uint8_t q2 = L[j + l + 32] & 0xF;
        const uint8_t q3 = L[j + l + 64] & 0xF;
        const uint8_t q4 = L[j + l + 96] & 0xF;
        ql[l + 0] = uint8_t(q1 | (q3 << 4));
        ql[l + 32] = uint8_t(q2 | (q4 << 4));
        qh[l] = uint8_t((L[j + l] >> 4) | ((L[j + l + 32] >> 4) << 2) |
                        ((L[j + l + 64] >> 4) << 4) |
                        ((L[j + l + 96] >> 4) << 6));
      }
    }
  }
}

} // namespace linnet::rt
