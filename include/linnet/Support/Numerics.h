//===- Numerics.h - The numerics policy of a build ---------------*- C++ -*-===//
//
// How f16/bf16 values compute (docs/language/08 §8.4). The
// policy is part of what a build means: the compiler applies it to the
// imported model, the reference interpreter evaluates under it, and the
// plans and the artifact record it with each tensor's compute dtype.
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_SUPPORT_NUMERICS_H
#define LINNET_SUPPORT_NUMERICS_H

#include <optional>
#include <string>
#include <string_view>

namespace linnet::support {

enum class NumericsPolicy {
  /// Every op computes in its operands' dtype and rounds its result to it
  /// (the language as written).
  AsWritten,
  /// f16 and bf16 are storage formats: their arithmetic computes in f32 and
  /// a value is rounded to its dtype where it is kept (a tensor's element,
  /// a fold's state, a branch's or loop's result).
  F32Compute,
};

inline const char *toString(NumericsPolicy p) {
  return p == NumericsPolicy::F32Compute ? "f32-compute" : "as-written";
}

inline std::optional<NumericsPolicy> parseNumericsPolicy(std::string_view s) {
  if (s == "as-written")
    return NumericsPolicy::AsWritten;
  if (s == "f32-compute")
    return NumericsPolicy::F32Compute;
  return std::nullopt;
}

/// What f32 matrix products may do on a target with tensor cores
/// (docs/language/08 §8.4): `highest` computes them in f32; `tf32` permits
/// a product bound to a tensor-core routine to round its f32 operands to
/// TF32 (10 mantissa bits) before multiplying, the sums staying f32. A
/// permission, not a rounding rule: a target without such units, and the
/// interpreter, compute in f32.
enum class MatmulPrecision { Highest, Tf32 };

inline const char *toString(MatmulPrecision p) { return p == MatmulPrecision::Tf32 ? "tf32" : "highest"; }

inline std::optional<MatmulPrecision> parseMatmulPrecision(std::string_view s) {
  if (s == "highest")
    return MatmulPrecision::Highest;
  if (s == "tf32")
    return MatmulPrecision::Tf32;
  return std::nullopt;
}

/// How products against block-quantized weights (q8_0, q4_0) compute
/// (docs/language/08 §8.4): `exact` takes each dequantized weight times the
/// f32 activation; `int8` permits a target to round each run of 32
/// activations along the sum to q8_0 (one f16 scale, 8-bit values) and sum
/// the integer products a block, as ggml's CPU back end computes. A
/// permission with a stated bound, not a rounding rule: the interpreter and
/// a target without such kernels compute exactly.
enum class BlockProducts { Exact, Int8 };

inline const char *toString(BlockProducts p) { return p == BlockProducts::Int8 ? "int8" : "exact"; }

inline std::optional<BlockProducts> parseBlockProducts(std::string_view s) {
  if (s == "exact")
    return BlockProducts::Exact;
  if (s == "int8")
    return BlockProducts::Int8;
  return std::nullopt;
}

/// The dtype a tensor of dtype `storage` computes in under `p`.
inline std::string computeDtype(NumericsPolicy p, const std::string &storage) {
  if (p == NumericsPolicy::F32Compute && (storage == "bf16" || storage == "f16"))
    return "f32";
  return storage;
}

} // namespace linnet::support

#endif // LINNET_SUPPORT_NUMERICS_H
