//===- TensorFiles.h - safetensors and .npy readers and writers -*- C++ -*-===//
//
// Weights and inputs come from files a user did not necessarily produce, so
// every reader treats its input as hostile: sizes and offsets are checked
// against the file before anything is touched, and no allocation is made
// from a size the file claims. Errors name the file and the problem.
//
// safetensors files are memory-mapped: a tensor's bytes are a view into the
// mapping (zero copy), valid while the file object lives.
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_RUNTIME_TENSORFILES_H
#define LINNET_RUNTIME_TENSORFILES_H

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace linnet::rt {

enum class DType : uint8_t { Bool, U8, I8, I16, I32, I64, F16, BF16, F32, F64 };

/// Size of one element in bytes.
size_t dtypeSize(DType t);
/// A shape as diagnostics print it: `[2, 3]`.
std::string shapeString(const std::vector<int64_t> &shape);
/// linnet's name for a dtype: "f32", "bf16", "i64", "bool", ...
const char *dtypeName(DType t);
std::optional<DType> dtypeFromName(std::string_view linnetName);

/// A tensor's description and a view of its bytes (little-endian, row-major).
struct TensorView {
  DType dtype;
  std::vector<int64_t> shape;
  std::span<const std::byte> data;
  int64_t numElements() const;
};

/// A read-only, memory-mapped safetensors file, or a sharded checkpoint:
/// Hugging Face's `model.safetensors.index.json` (`weight_map`: each tensor's
/// shard file, beside the index), its shards' tensors seen as one file's.
class SafeTensorsFile {
public:
  /// Opens and validates `path`. On failure returns null and sets `error` to
  /// "<path>: <problem>". With `map` the file is mapped and its tensors are
  /// read in place: it must not change while it is open (truncated, the
  /// next read of a lost page ends the process with SIGBUS). Without, it is
  /// read whole into memory now (`--no-mmap`: for files others can write).
  /// A path ending in `.json` is a shard index: every shard it names is
  /// opened so, and each must hold exactly the tensors the index maps to it.
  /// A GGUF tensor stored in a block format is dequantized to f32 when the
  /// file is opened, unless `keepBlocks` names it: then only its stored
  /// blocks are kept (storedBlocks(); its view has its shape and no data),
  /// for a param that reads the blocks as they are.
  static std::unique_ptr<SafeTensorsFile> open(const std::string &path, std::string &error,
                                               bool map = true, const std::set<std::string> *keepBlocks = nullptr);
  /// A GGUF file's metadata alone (a configuration: --config): the file is
  /// checked as open() checks it, but its blocks are not dequantized and
  /// tensors() is empty.
  static std::unique_ptr<SafeTensorsFile> openGgufMetadata(const std::string &path, std::string &error);
  ~SafeTensorsFile();
  SafeTensorsFile(const SafeTensorsFile &) = delete;
  SafeTensorsFile &operator=(const SafeTensorsFile &) = delete;

  const std::string &path() const { return path_; }
  /// Tensors by name, in name order.
  const std::map<std::string, TensorView> &tensors() const { return tensors_; }
  const TensorView *find(const std::string &name) const;
  const std::map<std::string, std::string> &metadata() const { return metadata_; }
  /// The metadata as JSON values' text (a GGUF file's are typed: numbers,
  /// booleans, strings, short arrays, a long array as {"length": n}; a
  /// safetensors file's are strings), for reading it as a configuration.
  const std::map<std::string, std::string> &metadataJson() const { return metadataJson_; }
  /// Replaces tensor `name` (rows x ...) by a copy whose rows, in each head
  /// of `headSize` rows, go from rotary pairs (2j, 2j + 1) to halves (j,
  /// j + headSize / 2). False with `error` when the rows do not split so.
  bool permuteRotaryRows(const std::string &name, int64_t headSize, std::string &error);
  /// Tensors the file stores in a block format (GGUF q8_0, q4_0), by name,
  /// with that format: they are seen dequantized (f32).
  const std::map<std::string, std::string> &storedAs() const { return storedAs_; }
  /// The stored blocks of each tensor storedAs() names (in the mapped file).
  const std::map<std::string, std::span<const std::byte>> &storedBlocks() const { return storedBlocks_; }
  /// A GGUF file's metadata as stored, in order: each key with its value's
  /// bytes (type id, then payload), to be written again unchanged.
  const std::vector<std::pair<std::string, std::string>> &ggufMetadataRaw() const { return ggufMetadataRaw_; }

private:
  SafeTensorsFile() = default;
  static std::unique_ptr<SafeTensorsFile> openIndex(const std::string &path, std::string &error, bool map);
  /// A GGUF file (lib/Runtime/Gguf.cpp).
  static std::unique_ptr<SafeTensorsFile> openGguf(const std::string &path, std::string &error, bool map,
                                                   bool tensors = true,
                                                   const std::set<std::string> *keepBlocks = nullptr);
  /// `path` mapped (or read whole), not yet parsed.
  static std::unique_ptr<SafeTensorsFile> mapFile(const std::string &path, std::string &error, bool map);
  std::string path_;
  std::vector<std::unique_ptr<SafeTensorsFile>> shards_; // a shard index's files
  void *map_ = nullptr;
  size_t mapSize_ = 0;
  std::map<std::string, TensorView> tensors_;
  std::map<std::string, std::string> metadata_, metadataJson_;
  std::vector<std::vector<std::byte>> owned_; // permuted or dequantized copies
  std::map<std::string, std::string> storedAs_;
  std::map<std::string, std::span<const std::byte>> storedBlocks_;
  std::vector<std::pair<std::string, std::string>> ggufMetadataRaw_;
};

/// A tensor of a GGUF file to write: its row-major shape, ggml type id and
/// bytes (elements, or a block format's blocks).
struct GgufTensorOut {
  std::string name;
  std::vector<int64_t> shape;
  uint32_t ggmlType;
  std::span<const std::byte> data;
};

/// Writes a GGUF (version 3) file: `metadata` (keys with their values'
/// bytes as ggufMetadataRaw() gives them, or ggufU32Value/ggufStringValue),
/// then the tensors in order, each at the alignment (32, or the metadata's
/// general.alignment). Through a temporary file and a rename.
bool writeGguf(const std::string &path, const std::vector<std::pair<std::string, std::string>> &metadata,
               const std::vector<GgufTensorOut> &tensors, std::string &error);
std::string ggufU32Value(uint32_t v);
std::string ggufStringValue(const std::string &v);
/// ggml's type id of an element dtype (f32, f16, bf16, f64, i8-i64); none for u8.
std::optional<uint32_t> ggmlTypeOf(DType d);

/// A tensor that owns its bytes (for inputs, outputs and writers).
struct OwnedTensor {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<std::byte> data;
  TensorView view() const { return {dtype, shape, {data.data(), data.size()}}; }
};

/// Writes tensors (sorted by name) as a safetensors file, 8-byte aligned.
bool writeSafeTensors(const std::string &path, const std::map<std::string, TensorView> &tensors,
                      std::string &error);

/// Reads a .npy file (format 1.0-3.0, C order, little-endian or byte-free
/// dtypes: |b1 |u1 |i1 <i2 <i4 <i8 <f2 <f4 <f8).
std::optional<OwnedTensor> readNpy(const std::string &path, std::string &error);
/// readNpy for an input of dtype `want`: a bf16 input (numpy has none)
/// takes a float32 array whose values are all bf16 values, narrowed
/// exactly; other values are refused, naming the first.
std::optional<OwnedTensor> readNpyFor(const std::string &path, DType want, std::string &error);
/// Writes a .npy file (format 1.0); a bf16 tensor as f32, exactly (numpy
/// has no bf16).
bool writeNpy(const std::string &path, const TensorView &tensor, std::string &error);

} // namespace linnet::rt

#endif // LINNET_RUNTIME_TENSORFILES_H
