//===- Gguf.cpp - GGUF files as weights --------------------------------------===//
//
// GGUF (versions 2 and 3, llama.cpp's format): a header of typed metadata
// and tensor descriptions, then the tensors' data at aligned offsets. It is
// read as hostile input, as safetensors is: every count, length and offset
// is checked against the file before it is used, no allocation is sized by
// a count the file claims before the bytes it implies are known to exist,
// and tensors may neither overlap nor leave the data section.
//
// GGUF lists a tensor's dimensions fastest first (ne[0] is a row's length);
// the tensor seen here has them reversed, row-major like every other tensor.
// f32, f16, bf16 and integer tensors are read in place. The block formats
// q8_0, q4_0 (exactly: an f16 scale times a small integer) and the k-quants
// q4_K, q5_K and q6_K (what llama.cpp's Q4_K_M, Q5_K_M and Q6_K files hold;
// as ggml computes them) are dequantized to f32 when the file is opened, a
// copy the file object owns; the other quantized formats (q2_K, q3_K,
// i-quants, ...) are refused, naming the tensor and its type.
//
//===----------------------------------------------------------------------===//
#include "linnet/Runtime/TensorFiles.h"
#include "linnet/Runtime/Quantize.h"
#include "linnet/Support/AtomicFile.h"
#include "linnet/Support/Half.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>

using namespace linnet::rt;

namespace {

/// ggml's type ids and names (ggml.h), those a GGUF file may hold.
struct GgmlType {
  uint32_t id;
  const char *name;
  std::optional<DType> dtype; // read as this; none: not supported yet
  /// A block format (dequantized to f32): its blocks (Quantize.h's table).
  const BlockFormatInfo *block() const { return blockFormatOfGgmlType(id); }
};
constexpr GgmlType kGgmlTypes[] = {
    {0, "f32", DType::F32},  {1, "f16", DType::F16},  {2, "q4_0", DType::F32}, {3, "q4_1", {}},
    {6, "q5_0", {}},         {7, "q5_1", {}},         {8, "q8_0", DType::F32}, {9, "q8_1", {}},
    {10, "q2_K", {}},        {11, "q3_K", {}},        {12, "q4_K", DType::F32}, {13, "q5_K", DType::F32},
    {14, "q6_K", DType::F32}, {15, "q8_K", {}},       {16, "iq2_xxs", {}}, {17, "iq2_xs", {}},
    {18, "iq3_xxs", {}},     {19, "iq1_s", {}},       {20, "iq4_nl", {}},  {21, "iq3_s", {}},
    {22, "iq2_s", {}},       {23, "iq4_xs", {}},      {24, "i8", DType::I8}, {25, "i16", DType::I16},
    {26, "i32", DType::I32}, {27, "i64", DType::I64}, {28, "f64", DType::F64}, {29, "iq1_m", {}},
    {30, "bf16", DType::BF16},
};

const GgmlType *ggmlType(uint32_t id) {
  for (const GgmlType &t : kGgmlTypes)
    if (t.id == id)
      return &t;
  return nullptr;
}

/// At most this many tensors, metadata entries, array elements and
/// dimensions: far above any real model, far below what would exhaust
/// memory before the file's own size stops the reader.
constexpr uint64_t kMaxCount = uint64_t(1) << 24;
constexpr uint32_t kMaxDims = 8;
/// Arrays longer than this are kept as their length in the metadata.
constexpr uint64_t kMaxKeptArray = 64;

/// A cursor over the header that fails (with the offset) instead of reading
/// past the end.
class Reader {
public:
  Reader(const unsigned char *bytes, uint64_t size) : p_(bytes), size_(size) {}
  uint64_t offset() const { return at_; }
  const std::string &error() const { return error_; }
  bool failed() const { return !error_.empty(); }

  bool fail(std::string msg) {
    if (error_.empty())
      error_ = fmt::format("at byte {}: {}", at_, msg);
    return false;
  }
  template <typename T> bool read(T &out, const char *what) {
    if (size_ - at_ < sizeof(T))
      return fail(fmt::format("the file ends inside {} ({} bytes left, {} needed)", what, size_ - at_, sizeof(T)));
    std::memcpy(&out, p_ + at_, sizeof(T)); // little-endian, as GGUF is
    at_ += sizeof(T);
    return true;
  }
  bool string(std::string &out, const char *what) {
    uint64_t n = 0;
    if (!read(n, what))
      return false;
    if (n > size_ - at_)
      return fail(fmt::format("{} claims {} bytes, the file has {} left", what, n, size_ - at_));
    if (n > (uint64_t(1) << 20))
      return fail(fmt::format("{} is {} bytes long (at most 1 MiB)", what, n));
    out.assign(reinterpret_cast<const char *>(p_ + at_), n);
    at_ += n;
    return true;
  }
  bool skip(uint64_t n, const char *what) {
    if (n > size_ - at_)
      return fail(fmt::format("{} claims {} bytes, the file has {} left", what, n, size_ - at_));
    at_ += n;
    return true;
  }

private:
  const unsigned char *p_;
  uint64_t size_, at_ = 0;
  std::string error_;
};

/// Metadata value types (gguf.h) and their fixed sizes (0: not fixed).
enum ValueType : uint32_t { U8, I8, U16, I16, U32, I32, F32, Bool, String, Array, U64, I64, F64 };
uint64_t fixedSize(uint32_t t) {
  switch (t) {
  case U8: case I8: case Bool: return 1;
  case U16: case I16: return 2;
  case U32: case I32: case F32: return 4;
  case U64: case I64: case F64: return 8;
  default: return 0;
  }
}

/// One scalar of type `t` as JSON; false after failing the reader.
bool scalar(Reader &r, uint32_t t, nlohmann::json &out) {
  auto num = [&](auto v, const char *what) {
    if (!r.read(v, what))
      return false;
    out = v;
    return true;
  };
  switch (t) {
  case U8: return num(uint8_t{}, "a u8 value");
  case I8: return num(int8_t{}, "an i8 value");
  case U16: return num(uint16_t{}, "a u16 value");
  case I16: return num(int16_t{}, "an i16 value");
  case U32: return num(uint32_t{}, "a u32 value");
  case I32: return num(int32_t{}, "an i32 value");
  case U64: return num(uint64_t{}, "a u64 value");
  case I64: return num(int64_t{}, "an i64 value");
  case F32: return num(float{}, "an f32 value");
  case F64: return num(double{}, "an f64 value");
  case Bool: {
    uint8_t b = 0;
    if (!r.read(b, "a bool value"))
      return false;
    if (b > 1)
      return r.fail(fmt::format("a bool value is {} (0 or 1)", b));
    out = b == 1;
    return true;
  }
  case String: {
    std::string s;
    if (!r.string(s, "a string value"))
      return false;
    out = std::move(s);
    return true;
  }
  default: return r.fail(fmt::format("unknown metadata value type {}", t));
  }
}

/// A metadata value (a scalar or an array of them); an array longer than
/// kMaxKeptArray becomes {"array": type, "length": n}.
bool value(Reader &r, uint32_t t, nlohmann::json &out) {
  if (t != Array)
    return scalar(r, t, out);
  uint32_t et = 0;
  uint64_t n = 0;
  if (!r.read(et, "an array's element type") || !r.read(n, "an array's length"))
    return false;
  if (et == Array)
    return r.fail("an array of arrays");
  if (n > kMaxCount)
    return r.fail(fmt::format("an array of {} elements (at most {})", n, kMaxCount));
  bool keep = n <= kMaxKeptArray;
  if (!keep && fixedSize(et))
    // Fixed-size elements are skipped at once, after checking they exist.
    return r.skip(n * fixedSize(et), "an array") && (out = {{"length", n}}, true);
  out = keep ? nlohmann::json::array() : nlohmann::json{{"length", n}};
  for (uint64_t i = 0; i < n; ++i) {
    nlohmann::json e;
    if (!scalar(r, et, e))
      return false;
    if (keep)
      out.push_back(std::move(e));
  }
  return true;
}

} // namespace

std::unique_ptr<SafeTensorsFile> SafeTensorsFile::openGgufMetadata(const std::string &path, std::string &error) {
  return openGguf(path, error, /*map=*/true, /*tensors=*/false);
}

std::unique_ptr<SafeTensorsFile> SafeTensorsFile::openGguf(const std::string &path, std::string &error, bool map,
                                                           bool tensors, const std::set<std::string> *keepBlocks) {
  std::unique_ptr<SafeTensorsFile> f = mapFile(path, error, map);
  if (!f)
    return nullptr;
  auto fail = [&](std::string msg) -> std::unique_ptr<SafeTensorsFile> {
    error = fmt::format("{}: {}", path, msg);
    return nullptr;
  };
  const auto *bytes = static_cast<const unsigned char *>(f->map_);
  Reader r(bytes, f->mapSize_);
  if (f->mapSize_ < 4 || std::memcmp(bytes, "GGUF", 4) != 0)
    return fail("not a GGUF file (it does not begin with \"GGUF\")");
  r.skip(4, "the magic");
  uint32_t version = 0;
  uint64_t tensorCount = 0, kvCount = 0;
  if (!r.read(version, "the version") || !r.read(tensorCount, "the tensor count") ||
      !r.read(kvCount, "the metadata count"))
    return fail(r.error());
  if (version != 2 && version != 3)
    return fail(fmt::format("GGUF version {} (this reader reads versions 2 and 3)", version));
  if (tensorCount > kMaxCount || kvCount > kMaxCount)
    return fail(fmt::format("{} tensors and {} metadata entries claimed (at most {} each)", tensorCount, kvCount,
                            kMaxCount));

  uint64_t alignment = 32;
  for (uint64_t i = 0; i < kvCount; ++i) {
    std::string key;
    uint32_t type = 0;
    if (!r.string(key, "a metadata key"))
      return fail(r.error());
    uint64_t rawStart = r.offset();
    if (!r.read(type, "a metadata value's type"))
      return fail(r.error());
    nlohmann::json v;
    if (!value(r, type, v))
      return fail(fmt::format("metadata '{}': {}", key, r.error()));
    f->ggufMetadataRaw_.emplace_back(key, std::string(reinterpret_cast<const char *>(bytes) + rawStart,
                                                      size_t(r.offset() - rawStart)));
    if (f->metadata_.count(key))
      return fail(fmt::format("metadata '{}' appears twice", key));
    if (key == "general.alignment") {
      if (type != U32 || v.get<uint64_t>() == 0 || (v.get<uint64_t>() & (v.get<uint64_t>() - 1)) != 0)
        return fail(fmt::format("metadata 'general.alignment' must be a power of two (u32), found {}",
                                v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)));
      alignment = v.get<uint64_t>();
    }
    // A string need not be UTF-8 (JSON's dump would throw): replaced.
    std::string text = v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    f->metadata_[key] = v.is_string() ? v.get<std::string>() : text;
    f->metadataJson_[key] = text;
  }

  struct Info {
    std::string name;
    TensorView view;
    uint64_t offset, bytes;
    const GgmlType *type;
  };
  std::vector<Info> infos;
  for (uint64_t i = 0; i < tensorCount; ++i) {
    Info t;
    uint32_t dims = 0, type = 0;
    if (!r.string(t.name, "a tensor name") || !r.read(dims, "a tensor's dimension count"))
      return fail(r.error());
    auto where = [&](std::string msg) { return fmt::format("tensor '{}': {}", t.name, msg); };
    if (dims > kMaxDims)
      return fail(where(fmt::format("{} dimensions (at most {})", dims, kMaxDims)));
    std::vector<int64_t> ne(dims);
    for (uint32_t d = 0; d < dims; ++d) {
      uint64_t n = 0;
      if (!r.read(n, "a tensor dimension"))
        return fail(r.error());
      if (n > uint64_t(INT64_MAX))
        return fail(where(fmt::format("dimension {} is {}", d, n)));
      ne[d] = int64_t(n);
    }
    if (!r.read(type, "a tensor's type") || !r.read(t.offset, "a tensor's offset"))
      return fail(r.error());
    const GgmlType *gt = ggmlType(type);
    if (!gt)
      return fail(where(fmt::format("unknown ggml type {}", type)));
    if (!gt->dtype)
      return fail(where(fmt::format("its type is {}: linnet reads f32, f16, bf16, f64, integer, q8_0, q4_0, "
                                    "q4_K, q5_K and q6_K GGUF tensors (other quantized formats are not "
                                    "supported yet)",
                                    gt->name)));
    const BlockFormatInfo *bf = gt->block();
    if (bf && (ne.empty() || ne[0] % bf->blockElems != 0))
      return fail(where(fmt::format("a {} tensor's rows are whole blocks of {}, but a row has {} elements", gt->name,
                                    bf->blockElems, ne.empty() ? 0 : ne[0])));
    std::reverse(ne.begin(), ne.end()); // fastest last: row-major
    t.view = {*gt->dtype, ne, {}};
    t.type = gt;
    // Bytes in the file: elements times the element size, or blocks times
    // the block size (a row of a block format is whole blocks).
    int64_t n = 1;
    for (int64_t d : ne)
      if (__builtin_mul_overflow(n, d, &n))
        return fail(where(fmt::format("shape {} is too large", shapeString(ne))));
    int64_t unit = bf ? bf->blockBytes : int64_t(dtypeSize(*gt->dtype));
    if (bf)
      n /= bf->blockElems;
    if (__builtin_mul_overflow(n, unit, &n))
      return fail(where(fmt::format("shape {} is too large", shapeString(ne))));
    t.bytes = uint64_t(n);
    if (t.offset % alignment != 0)
      return fail(where(fmt::format("offset {} is not a multiple of the alignment {}", t.offset, alignment)));
    infos.push_back(std::move(t));
  }
  // The data section starts at the first aligned offset after the header.
  uint64_t dataStart = (r.offset() + alignment - 1) / alignment * alignment;
  if (dataStart > f->mapSize_)
    return fail(fmt::format("the data section would start at byte {}, past the end of the file ({} bytes)", dataStart,
                            f->mapSize_));
  uint64_t dataLen = f->mapSize_ - dataStart;
  std::sort(infos.begin(), infos.end(), [](const Info &a, const Info &b) { return a.offset < b.offset; });
  uint64_t end = 0;
  const Info *prev = nullptr;
  for (Info &t : infos) {
    if (t.offset > dataLen || t.bytes > dataLen - t.offset)
      return fail(fmt::format("tensor '{}': shape {} of {} needs {} bytes at offset {}, past the data section ({} "
                              "bytes)",
                              t.name, shapeString(t.view.shape), dtypeName(t.view.dtype), t.bytes, t.offset, dataLen));
    if (prev && t.offset < end)
      return fail(fmt::format("tensors '{}' and '{}' overlap", prev->name, t.name));
    end = t.offset + t.bytes;
    prev = &t;
    t.view.data = {reinterpret_cast<const std::byte *>(bytes + dataStart + t.offset), size_t(t.bytes)};
    if (const BlockFormatInfo *bf = t.type->block(); tensors && bf && keepBlocks && keepBlocks->count(t.name)) {
      // Read as blocks: only the stored blocks are kept, no f32 copy.
      f->storedBlocks_[t.name] = t.view.data;
      f->storedAs_[t.name] = t.type->name;
      t.view.data = {};
    } else if (tensors && bf) {
      // Dequantized now: f32, four bytes an element, a copy the file owns
      // (its size is bounded by the blocks the file was checked to hold).
      int64_t blocks = int64_t(t.bytes) / bf->blockBytes;
      std::vector<std::byte> out(size_t(blocks * bf->blockElems) * sizeof(float));
      dequantizeBlocks(*bf, bytes + dataStart + t.offset, blocks, reinterpret_cast<float *>(out.data()));
      f->storedBlocks_[t.name] = {reinterpret_cast<const std::byte *>(bytes + dataStart + t.offset), size_t(t.bytes)};
      f->owned_.push_back(std::move(out));
      t.view.data = {f->owned_.back().data(), f->owned_.back().size()};
      f->storedAs_[t.name] = t.type->name;
    }
    if (!f->tensors_.emplace(t.name, t.view).second)
      return fail(fmt::format("tensor '{}' appears twice", t.name));
  }
  if (!tensors)
    f->tensors_.clear(); // checked; the metadata is what was asked for
  return f;
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

std::string linnet::rt::ggufU32Value(uint32_t v) {
  std::string out(8, '\0');
  uint32_t t = U32;
  std::memcpy(out.data(), &t, 4);
  std::memcpy(out.data() + 4, &v, 4);
  return out;
}

std::string linnet::rt::ggufStringValue(const std::string &v) {
  std::string out(12, '\0');
  uint32_t t = String;
  uint64_t n = v.size();
  std::memcpy(out.data(), &t, 4);
  std::memcpy(out.data() + 4, &n, 8);
  return out + v;
}

std::optional<uint32_t> linnet::rt::ggmlTypeOf(DType d) {
  for (const GgmlType &t : kGgmlTypes)
    if (t.dtype == d && !t.block())
      return t.id;
  return std::nullopt;
}

bool linnet::rt::writeGguf(const std::string &path, const std::vector<std::pair<std::string, std::string>> &metadata,
                           const std::vector<GgufTensorOut> &tensors, std::string &error) {
  auto put = [](std::string &out, const auto &v) { out.append(reinterpret_cast<const char *>(&v), sizeof v); };
  auto putString = [&](std::string &out, const std::string &v) {
    put(out, uint64_t(v.size()));
    out += v;
  };
  uint64_t alignment = 32;
  std::string head = "GGUF";
  put(head, uint32_t(3));
  put(head, uint64_t(tensors.size()));
  put(head, uint64_t(metadata.size()));
  for (const auto &[key, raw] : metadata) {
    putString(head, key);
    head += raw;
    uint32_t type = 0;
    if (key == "general.alignment" && raw.size() == 8 && (std::memcpy(&type, raw.data(), 4), type == U32)) {
      uint32_t a;
      std::memcpy(&a, raw.data() + 4, 4);
      alignment = a;
    }
  }
  // Each tensor at the next aligned offset of the data section, in order.
  std::vector<uint64_t> offsets;
  uint64_t offset = 0;
  for (const GgufTensorOut &t : tensors) {
    putString(head, t.name);
    put(head, uint32_t(t.shape.size()));
    for (auto d = t.shape.rbegin(); d != t.shape.rend(); ++d) // fastest first
      put(head, uint64_t(*d));
    put(head, t.ggmlType);
    put(head, offset);
    offsets.push_back(offset);
    offset = (offset + t.data.size() + alignment - 1) / alignment * alignment;
  }
  head.resize((head.size() + alignment - 1) / alignment * alignment, '\0');
  std::string why;
  linnet::support::AtomicOutput out(path, why);
  bool ok = out.ok() && out.write(head, why);
  uint64_t at = 0;
  static const std::string zeros(4096, '\0');
  for (size_t i = 0; ok && i < tensors.size(); ++i) {
    ok = out.write(zeros.substr(0, size_t(offsets[i] - at)), why) &&
         out.write({reinterpret_cast<const char *>(tensors[i].data.data()), tensors[i].data.size()}, why);
    at = offsets[i] + tensors[i].data.size();
  }
  if (!ok || !out.commit(why)) {
    error = fmt::format("{}: {}", path, why);
    return false;
  }
  return true;
}
