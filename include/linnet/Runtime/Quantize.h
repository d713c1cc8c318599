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

#include "linnet/Support/Half.h"

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>
#include <optional>
#include <string>

namespace linnet::rt {

enum class BlockFormat { Q8_0, Q4_0, Q4_K, Q5_K, Q6_K };

struct BlockFormatInfo {
  BlockFormat format;
  const char *name;   // "q8_0", as ggml names it
  uint32_t ggmlType;  // ggml's type id in a GGUF file
  int64_t blockElems; // values per block
  int64_t blockBytes; // bytes per block
};

/// The block formats, the one table the GGUF reader and writer and the
/// quantizers share.
inline constexpr BlockFormatInfo kBlockFormats[] = {
    {BlockFormat::Q8_0, "q8_0", 8, 32, 34},    {BlockFormat::Q4_0, "q4_0", 2, 32, 18},
    {BlockFormat::Q4_K, "q4_K", 12, 256, 144}, {BlockFormat::Q5_K, "q5_K", 13, 256, 176},
    {BlockFormat::Q6_K, "q6_K", 14, 256, 210},
};

/// The format named `name` ("q8_0", "q4_0", "q4_K", "q5_K", "q6_K").
std::optional<BlockFormatInfo> blockFormat(const std::string &name);
const BlockFormatInfo &blockFormatInfo(BlockFormat f);
/// The format of ggml's type id `ggmlType`, or null (not a block format
/// linnet reads).
const BlockFormatInfo *blockFormatOfGgmlType(uint32_t ggmlType);

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

/// The k-quants (QuantizeK.cpp).
void quantizeRowQ4K(const float *x, int64_t n, unsigned char *out);
void quantizeRowQ5K(const float *x, int64_t n, unsigned char *out);
void quantizeRowQ6K(const float *x, int64_t n, unsigned char *out);

/// IEEE half precision, rounded to nearest even (ggml's GGML_FP32_TO_FP16).
inline uint16_t floatToHalf(float f) { return support::f32ToF16(f); }

} // namespace linnet::rt

#endif // LINNET_RUNTIME_QUANTIZE_H
