//===- BlockFormat.h - ggml's block formats, the one table -------*- C++ -*-===//
//
// GGUF's block formats as linnet knows them: a row of values stored as
// blocks of `blockElems` values in `blockBytes` bytes each (ggml's block_*
// structs, little-endian, packed). The language's block-quantized dtypes,
// the importer's block reads, the interpreter, the runtime's binding, the
// GGUF reader and writer and the quantizers all look formats up here.
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_SUPPORT_BLOCKFORMAT_H
#define LINNET_SUPPORT_BLOCKFORMAT_H

#include <cstdint>
#include <optional>
#include <string_view>

namespace linnet::support {

enum class BlockFormat { Q8_0, Q4_0, Q4_K, Q5_K, Q6_K };

struct BlockFormatInfo {
  BlockFormat format;
  const char *name;   // "q8_0", as ggml names it
  uint32_t ggmlType;  // ggml's type id in a GGUF file
  int64_t blockElems; // values per block
  int64_t blockBytes; // bytes per block
};

//   q8_0: f16 d, 32 x i8
//   q4_0: f16 d, 16 bytes of 4-bit pairs (low nibbles first)
//   q4_K: f16 d, f16 dmin, 12 bytes of 6-bit scales and mins, 128 of 4-bit q
//   q5_K: as q4_K with 32 bytes of fifth bits (qh) before the 128 of qs
//   q6_K: 128 bytes of low 4 bits, 64 of high 2 bits, 16 i8 scales, f16 d
inline constexpr BlockFormatInfo kBlockFormats[] = {
    {BlockFormat::Q8_0, "q8_0", 8, 32, 34},    {BlockFormat::Q4_0, "q4_0", 2, 32, 18},
    {BlockFormat::Q4_K, "q4_K", 12, 256, 144}, {BlockFormat::Q5_K, "q5_K", 13, 256, 176},
    {BlockFormat::Q6_K, "q6_K", 14, 256, 210},
};

/// The format named `name`, or nothing: a dtype name with a block format
/// is a block-quantized storage dtype (docs/language/05-types.md).
inline std::optional<BlockFormatInfo> blockFormat(std::string_view name) {
  for (const BlockFormatInfo &f : kBlockFormats)
    if (name == f.name)
      return f;
  return std::nullopt;
}

inline const BlockFormatInfo &blockFormatInfo(BlockFormat f) {
  for (const BlockFormatInfo &i : kBlockFormats)
    if (i.format == f)
      return i;
  return kBlockFormats[0];
}

/// The format of ggml's type id `ggmlType`, or null.
inline const BlockFormatInfo *blockFormatOfGgmlType(uint32_t ggmlType) {
  for (const BlockFormatInfo &f : kBlockFormats)
    if (f.ggmlType == ggmlType)
      return &f;
  return nullptr;
}

} // namespace linnet::support

#endif // LINNET_SUPPORT_BLOCKFORMAT_H
