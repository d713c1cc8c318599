//===- Quantize.h - ggml's block formats, written ----------------*- C++ -*-===//
//
// The quantizers of GGUF's block formats, what `linnet quantize` writes. A
// row of `n` values (n a multiple of the format's block) becomes n / block
// blocks, each laid out as ggml's block_* structs (little-endian, packed):
//   q8_0: 32 values, 34 bytes (f16 d, 32 x i8)
//   q4_0: 32 values, 18 bytes (f16 d, 16 bytes of 4-bit pairs)
//   q4_K: 256 values, 144 bytes; q5_K: 256, 176; q6_K: 256, 210
// Each is ggml's reference quantizer (quantize_row_*_ref, no importance
// matrix): the same bytes from the same f32 values, so a file linnet writes
// is the file llama.cpp's quantizer writes.
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_RUNTIME_QUANTIZE_H
#define LINNET_RUNTIME_QUANTIZE_H

#include "linnet/Support/BlockFormat.h"
#include "linnet/Support/Half.h"

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>
#include <optional>
#include <string>

namespace linnet::rt {

using support::BlockFormat;
using support::BlockFormatInfo;
using support::blockFormat;
using support::blockFormatInfo;
using support::blockFormatOfGgmlType;
using support::kBlockFormats;

/// Quantizes `n` values (a multiple of the format's block) into
/// n / blockElems blocks at `out`.
void quantizeRow(BlockFormat f, const float *x, int64_t n, unsigned char *out);

/// `blocks` blocks of format `f` at `in` as f32, each value as ggml's
/// dequantize_row_* computes it (q8_0 and q4_0 exactly: d * q).
void dequantizeBlocks(const BlockFormatInfo &f, const unsigned char *in, int64_t blocks, float *out);

class SafeTensorsFile;
struct TensorView;
/// The blocks of format `f` a param reads from tensor `w` (named `name`) of
/// `file`: the file's own blocks, in place, when it stores the tensor so;
/// else `w`'s f32, f16 or bf16 values quantized as `linnet quantize` would
/// (into `owned`). False with `error` for a tensor the file stores in
/// another block format, or of another dtype.
bool blocksFor(const SafeTensorsFile &file, const std::string &name, const TensorView &w, BlockFormat f,
               std::span<const std::byte> &out, std::vector<std::byte> &owned, std::string &error);

/// A q4_0 param's blocks (`rows` rows of `blocksPerRow` blocks, rows a
/// multiple of 8) in the layout "q4_0x8" the CPU's integer products read
/// (docs/cpu-abi.md): per 8 rows and block, the 8 rows' f16 scales, then
/// their 16 quant bytes each, row after row (144 bytes).
std::vector<std::byte> repackQ4_0x8(std::span<const std::byte> blocks, int64_t rows, int64_t blocksPerRow);

/// The k-quants (QuantizeK.cpp).
void quantizeRowQ4K(const float *x, int64_t n, unsigned char *out);
void quantizeRowQ5K(const float *x, int64_t n, unsigned char *out);
void quantizeRowQ6K(const float *x, int64_t n, unsigned char *out);

/// IEEE half precision, rounded to nearest even (ggml's GGML_FP32_TO_FP16).
inline uint16_t floatToHalf(float f) { return support::f32ToF16(f); }

} // namespace linnet::rt

#endif // LINNET_RUNTIME_QUANTIZE_H
