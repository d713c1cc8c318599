//===- TensorFiles.cpp - safetensors and .npy readers and writers ---------===//
#include "linnet/Runtime/TensorFiles.h"
#include "linnet/Support/AtomicFile.h"
#include "linnet/Support/Input.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <set>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace linnet::rt;
using json = nlohmann::json;

namespace {
struct DTypeInfo {
  DType dtype;
  const char *linnet;      // linnet's spelling
  const char *safetensors; // safetensors' spelling
  const char *npy;         // numpy descr
  size_t size;
};
constexpr DTypeInfo kDTypes[] = {
    {DType::Bool, "bool", "BOOL", "|b1", 1}, {DType::U8, "u8", "U8", "|u1", 1},
    {DType::I8, "i8", "I8", "|i1", 1},       {DType::I16, "i16", "I16", "<i2", 2},
    {DType::I32, "i32", "I32", "<i4", 4},    {DType::I64, "i64", "I64", "<i8", 8},
    {DType::F16, "f16", "F16", "<f2", 2},    {DType::BF16, "bf16", "BF16", nullptr, 2},
    {DType::F32, "f32", "F32", "<f4", 4},    {DType::F64, "f64", "F64", "<f8", 8},
};
const DTypeInfo &info(DType t) { return kDTypes[static_cast<size_t>(t)]; }

/// A header larger than this is rejected before it is parsed.
constexpr uint64_t kMaxHeaderBytes = 100u << 20;

bool mulOverflow(int64_t a, int64_t b, int64_t &out) {
  return __builtin_mul_overflow(a, b, &out);
}

/// Number of bytes of `shape` x `dtype`, or nullopt on overflow.
std::optional<int64_t> byteSize(const std::vector<int64_t> &shape, DType t) {
  int64_t n = static_cast<int64_t>(dtypeSize(t));
  for (int64_t d : shape)
    if (d < 0 || mulOverflow(n, d, n))
      return std::nullopt;
  return n;
}
} // namespace

std::string linnet::rt::shapeString(const std::vector<int64_t> &shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

size_t linnet::rt::dtypeSize(DType t) { return info(t).size; }
const char *linnet::rt::dtypeName(DType t) { return info(t).linnet; }
std::optional<DType> linnet::rt::dtypeFromName(std::string_view name) {
  for (const DTypeInfo &d : kDTypes)
    if (name == d.linnet)
      return d.dtype;
  return std::nullopt;
}

int64_t TensorView::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

//===----------------------------------------------------------------------===//
// safetensors
//===----------------------------------------------------------------------===//

SafeTensorsFile::~SafeTensorsFile() {
  if (map_)
    ::munmap(map_, mapSize_);
}

bool SafeTensorsFile::permuteRotaryRows(const std::string &name, int64_t headSize, std::string &error) {
  auto it = tensors_.find(name);
  if (it == tensors_.end())
    return true;
  TensorView &t = it->second;
  int64_t rows = t.shape.empty() ? 0 : t.shape[0];
  if (rows <= 0 || headSize <= 0 || headSize % 2 != 0 || rows % headSize != 0) {
    error = fmt::format("{}: tensor '{}': {} rows do not split into heads of {} rotary pairs", path_, name, rows,
                        headSize / 2);
    return false;
  }
  const int64_t half = headSize / 2;
  // Rows (whole blocks in a block format) move as units: the values and,
  // for a tensor stored in blocks, its stored blocks alike.
  auto permute = [&](std::span<const std::byte> &data) {
    size_t rowBytes = data.size() / size_t(rows);
    std::vector<std::byte> out(data.size());
    for (int64_t h = 0; h < rows / headSize; ++h)
      for (int64_t j = 0; j < half; ++j)
        for (int64_t k = 0; k < 2; ++k)
          std::memcpy(out.data() + size_t(h * headSize + k * half + j) * rowBytes,
                      data.data() + size_t(h * headSize + 2 * j + k) * rowBytes, rowBytes);
    owned_.push_back(std::move(out));
    data = {owned_.back().data(), owned_.back().size()};
  };
  permute(t.data);
  if (auto b = storedBlocks_.find(name); b != storedBlocks_.end())
    permute(b->second);
  return true;
}

const TensorView *SafeTensorsFile::find(const std::string &name) const {
  auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : &it->second;
}

std::unique_ptr<SafeTensorsFile> SafeTensorsFile::openIndex(const std::string &path, std::string &error,
                                                            bool map) {
  auto fail = [&](std::string msg) -> std::unique_ptr<SafeTensorsFile> {
    error = fmt::format("{}: {}", path, msg);
    return nullptr;
  };
  std::string text, why;
  if (!input::readFile(path, input::maxJsonBytes(), "LINNET_MAX_JSON_BYTES", text, why))
    return fail(why.rfind("is ", 0) == 0 ? why : "cannot open: " + why);
  std::string where, jerr;
  std::optional<json> parsed = input::parseJson(text, where, jerr);
  if (!parsed)
    return fail(jerr.starts_with("not valid JSON") ? fmt::format("shard index is {}", jerr)
                                                   : fmt::format("{}: {}", where, jerr));
  const json &index = *parsed;
  if (!index.is_object() || !index.contains("weight_map") || !index["weight_map"].is_object())
    return fail("a shard index is a JSON object with a 'weight_map' object (tensor name -> shard "
                "file), as Hugging Face's model.safetensors.index.json");
  std::unique_ptr<SafeTensorsFile> f(new SafeTensorsFile());
  f->path_ = path;
  if (auto m = index.find("metadata"); m != index.end()) {
    if (!m->is_object())
      return fail("'metadata' is not an object");
    for (auto &[k, v] : m->items())
      f->metadata_[k] = v.is_string() ? v.get<std::string>() : v.dump();
  }
  // Shards by file name, in order of first mention; the names each must hold.
  std::map<std::string, std::vector<std::string>> expected;
  for (auto &[name, file] : index["weight_map"].items()) {
    if (!file.is_string())
      return fail(fmt::format("weight_map.{}: expected a shard file name, found {}", name, file.dump()));
    std::string shard = file.get<std::string>();
    // A shard lies beside its index: a plain relative path, never outside.
    std::filesystem::path rel(shard);
    bool escapes = shard.empty() || rel.is_absolute() ||
                   std::any_of(rel.begin(), rel.end(), [](const std::filesystem::path &c) { return c == ".."; });
    if (escapes)
      return fail(fmt::format("weight_map.{}: shard '{}' is not a file beside the index (a relative path "
                              "without '..')",
                              name, shard));
    expected[shard].push_back(name);
  }
  if (expected.empty())
    return fail("weight_map names no tensor");
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  for (auto &[shard, names] : expected) {
    std::string shardError;
    std::unique_ptr<SafeTensorsFile> s = open((dir / shard).string(), shardError, map);
    if (!s) {
      error = fmt::format("{}: shard '{}': {}", path, shard, shardError);
      return nullptr;
    }
    for (const std::string &n : names)
      if (!s->find(n))
        return fail(fmt::format("weight_map.{}: shard '{}' has no tensor '{}'", n, shard, n));
    for (auto &[n, view] : s->tensors()) {
      auto listed = index["weight_map"].find(n);
      if (listed == index["weight_map"].end() || listed->get<std::string>() != shard)
        return fail(fmt::format("shard '{}' holds tensor '{}', which weight_map {}", shard, n,
                                listed == index["weight_map"].end()
                                    ? std::string("does not list")
                                    : "maps to '" + listed->get<std::string>() + "'"));
      f->tensors_.emplace(n, view);
    }
    f->shards_.push_back(std::move(s));
  }
  return f;
}

std::unique_ptr<SafeTensorsFile> SafeTensorsFile::mapFile(const std::string &path, std::string &error, bool map) {
  auto fail = [&](std::string msg) -> std::unique_ptr<SafeTensorsFile> {
    error = fmt::format("{}: {}", path, msg);
    return nullptr;
  };
  struct stat st;
  std::string why;
  int fd = input::openRegular(path, st, why);
  if (fd < 0)
    return fail(why.rfind("is ", 0) == 0 ? why : "cannot open: " + why);
  uint64_t fileSize = static_cast<uint64_t>(st.st_size);
  if (fileSize == 0) {
    ::close(fd);
    return fail("file is empty");
  }
  // Mapped, the file's pages are read as they are used: truncated by another
  // process meanwhile, the next read of a lost page kills this one (SIGBUS).
  // Not mapped (--no-mmap), it is read whole into private, page-aligned
  // memory now, and what happens to the file afterwards does not matter.
  void *mem = map ? ::mmap(nullptr, fileSize, PROT_READ, MAP_PRIVATE, fd, 0)
                  : ::mmap(nullptr, fileSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) {
    ::close(fd);
    return fail(fmt::format("cannot {}: {}", map ? "map" : "allocate memory for", std::strerror(errno)));
  }
  std::unique_ptr<SafeTensorsFile> f(new SafeTensorsFile());
  f->path_ = path;
  f->map_ = mem;
  f->mapSize_ = fileSize;
  if (!map) {
    uint64_t got = 0;
    while (got < fileSize) {
      ssize_t n = ::pread(fd, static_cast<char *>(mem) + got, fileSize - got, static_cast<off_t>(got));
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      got += static_cast<uint64_t>(n);
    }
    struct stat after;
    bool changed = got != fileSize || ::fstat(fd, &after) != 0 || uint64_t(after.st_size) != fileSize;
    ::close(fd);
    if (changed)
      return fail(fmt::format("changed while it was read ({} bytes when opened, {} read): "
                              "weights must not change during a run",
                              fileSize, got));
  } else {
    ::close(fd);
  }
  return f;
}

std::unique_ptr<SafeTensorsFile> SafeTensorsFile::open(const std::string &path, std::string &error, bool map,
                                                       const std::set<std::string> *keepBlocks) {
  auto fail = [&](std::string msg) -> std::unique_ptr<SafeTensorsFile> {
    error = fmt::format("{}: {}", path, msg);
    return nullptr;
  };
  if (path.size() > 5 && path.compare(path.size() - 5, 5, ".json") == 0)
    return openIndex(path, error, map);
  if (path.size() > 5 && path.compare(path.size() - 5, 5, ".gguf") == 0)
    return openGguf(path, error, map, /*tensors=*/true, keepBlocks);
  std::unique_ptr<SafeTensorsFile> f = mapFile(path, error, map);
  if (!f)
    return nullptr;
  uint64_t fileSize = f->mapSize_;
  if (fileSize < 8)
    return fail(fmt::format("file is {} bytes, too short for a safetensors header "
                            "(8-byte length, then JSON)",
                            fileSize));
  const auto *bytes = static_cast<const unsigned char *>(f->map_);

  uint64_t headerLen = 0;
  for (int i = 7; i >= 0; --i)
    headerLen = (headerLen << 8) | bytes[i];
  if (headerLen > fileSize - 8)
    return fail(fmt::format("header length {} runs past the end of the file ({} bytes)",
                            headerLen, fileSize));
  if (headerLen > kMaxHeaderBytes)
    return fail(fmt::format("header length {} exceeds the {} byte limit", headerLen,
                            kMaxHeaderBytes));
  const char *hdr = reinterpret_cast<const char *>(bytes + 8);
  if (headerLen == 0 || hdr[0] != '{')
    return fail("header is not a JSON object (expected '{' after the length)");
  // Strict: a repeated tensor name (nlohmann would keep the last) is refused.
  std::string where, jerr;
  std::optional<json> parsed = input::parseJson(std::string_view(hdr, headerLen), where, jerr);
  if (!parsed)
    return fail(jerr.starts_with("not valid JSON")
                    ? fmt::format("header is {}", jerr)
                    : fmt::format("header: {}: {}", where, jerr));
  json &header = *parsed;
  if (!header.is_object())
    return fail("header is not a JSON object");

  const std::byte *data = reinterpret_cast<const std::byte *>(bytes + 8 + headerLen);
  uint64_t dataLen = fileSize - 8 - headerLen;
  struct Range {
    uint64_t begin, end;
    std::string name;
  };
  std::vector<Range> ranges;
  for (auto &[name, entry] : header.items()) {
    if (name == "__metadata__") {
      if (!entry.is_object())
        return fail("'__metadata__' is not an object of strings");
      for (auto &[k, v] : entry.items()) {
        if (!v.is_string())
          return fail(fmt::format("'__metadata__.{}' is not a string", k));
        f->metadata_[k] = v.get<std::string>();
        f->metadataJson_[k] = v.dump(-1, ' ', false, json::error_handler_t::replace);
      }
      continue;
    }
    // A named copy: clang 14 (the fuzz build) cannot capture a structured binding.
    const std::string &tensorName = name;
    auto where = [&](const char *field) { return fmt::format("tensor '{}': {}", tensorName, field); };
    if (!entry.is_object())
      return fail(where("entry is not an object"));
    auto dt = entry.find("dtype");
    if (dt == entry.end() || !dt->is_string())
      return fail(where("missing 'dtype' string"));
    std::string dtName = dt->get<std::string>();
    const DTypeInfo *di = nullptr;
    for (const DTypeInfo &d : kDTypes)
      if (dtName == d.safetensors)
        di = &d;
    if (!di)
      return fail(where(fmt::format("unknown dtype '{}' (supported: BOOL, U8, I8, I16, "
                                    "I32, I64, F16, BF16, F32, F64)",
                                    dtName)
                            .c_str()));
    auto sh = entry.find("shape");
    if (sh == entry.end() || !sh->is_array())
      return fail(where("missing 'shape' array"));
    TensorView view{di->dtype, {}, {}};
    for (const json &d : *sh) {
      if (!d.is_number_unsigned() || d.get<uint64_t>() > uint64_t(INT64_MAX))
        return fail(where("shape entries must be non-negative integers"));
      view.shape.push_back(static_cast<int64_t>(d.get<uint64_t>()));
    }
    auto off = entry.find("data_offsets");
    if (off == entry.end() || !off->is_array() || off->size() != 2 ||
        !(*off)[0].is_number_unsigned() || !(*off)[1].is_number_unsigned())
      return fail(where("'data_offsets' must be [begin, end] with non-negative integers"));
    uint64_t begin = (*off)[0].get<uint64_t>(), end = (*off)[1].get<uint64_t>();
    if (begin > end)
      return fail(where(fmt::format("data_offsets [{}, {}] are reversed", begin, end).c_str()));
    if (end > dataLen)
      return fail(where(fmt::format("data_offsets [{}, {}] run past the data section "
                                    "({} bytes)",
                                    begin, end, dataLen)
                            .c_str()));
    std::optional<int64_t> expect = byteSize(view.shape, di->dtype);
    if (!expect)
      return fail(where(fmt::format("shape {} is too large", shapeString(view.shape)).c_str()));
    if (static_cast<uint64_t>(*expect) != end - begin)
      return fail(where(fmt::format("shape {} of {} needs {} bytes, data_offsets [{}, {}] "
                                    "hold {}",
                                    shapeString(view.shape), dtName, *expect, begin, end,
                                    end - begin)
                            .c_str()));
    view.data = {data + begin, static_cast<size_t>(end - begin)};
    ranges.push_back({begin, end, name});
    f->tensors_.emplace(name, std::move(view));
  }
  std::sort(ranges.begin(), ranges.end(),
            [](const Range &a, const Range &b) { return a.begin < b.begin; });
  for (size_t i = 1; i < ranges.size(); ++i)
    if (ranges[i].begin < ranges[i - 1].end)
      return fail(fmt::format("tensors '{}' and '{}' overlap (bytes [{}, {}) and [{}, {}))",
                              ranges[i - 1].name, ranges[i].name, ranges[i - 1].begin,
                              ranges[i - 1].end, ranges[i].begin, ranges[i].end));
  // The tensors tile the data section exactly (as the safetensors format
  // requires): bytes no tensor owns are damage or a hiding place.
  uint64_t covered = 0;
  for (const Range &r : ranges) {
    if (r.begin != covered)
      return fail(fmt::format("bytes [{}, {}) of the data section belong to no tensor (before "
                              "tensor '{}')",
                              covered, r.begin, r.name));
    covered = r.end;
  }
  if (covered != dataLen)
    return fail(fmt::format("{} trailing bytes after the last tensor's data (the data section is "
                            "{} bytes, the tensors cover {})",
                            dataLen - covered, dataLen, covered));
  return f;
}

bool linnet::rt::writeSafeTensors(const std::string &path,
                                  const std::map<std::string, TensorView> &tensors,
                                  std::string &error) {
  json header = json::object();
  uint64_t offset = 0;
  for (auto &[name, t] : tensors) {
    std::optional<int64_t> n = byteSize(t.shape, t.dtype);
    if (!n || static_cast<size_t>(*n) != t.data.size()) {
      error = fmt::format("{}: tensor '{}' has {} bytes, its shape {} needs {}", path, name,
                          t.data.size(), shapeString(t.shape), n ? *n : -1);
      return false;
    }
    header[name] = {{"dtype", info(t.dtype).safetensors},
                    {"shape", t.shape},
                    {"data_offsets", {offset, offset + t.data.size()}}};
    offset += t.data.size();
  }
  std::string text = header.dump();
  while ((8 + text.size()) % 8 != 0) // keep the data section 8-byte aligned
    text += ' ';
  // Through a temporary file and a rename: never a truncated output, and
  // the previous file survives a failure (AtomicFile.h).
  std::string why;
  support::AtomicOutput out(path, why);
  uint64_t len = text.size();
  char lenBytes[8];
  for (int i = 0; i < 8; ++i)
    lenBytes[i] = static_cast<char>(len >> (8 * i));
  bool ok = out.ok() && out.write({lenBytes, 8}, why) && out.write(text, why);
  for (auto &[name, t] : tensors)
    ok = ok && out.write({reinterpret_cast<const char *>(t.data.data()), t.data.size()}, why);
  if (!ok || !out.commit(why)) {
    error = fmt::format("{}: {}", path, why);
    return false;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// .npy
//===----------------------------------------------------------------------===//

namespace {
/// The header of a .npy file: a Python dict literal with exactly the keys
/// 'descr' (a string), 'fortran_order' (True/False) and 'shape' (a tuple of
/// integers), as numpy.lib.format writes and reads it. numpy refuses other
/// keys; a repeated key (which Python's dict would resolve last-wins) is
/// refused here too, so no file means two things.
struct NpyHeader {
  std::string descr;
  bool fortran = false;
  std::vector<int64_t> shape;
};

std::optional<NpyHeader> parseNpyHeader(std::string_view h, std::string &error) {
  size_t i = 0;
  auto ws = [&] {
    while (i < h.size() && (h[i] == ' ' || h[i] == '\t' || h[i] == '\n' || h[i] == '\r'))
      ++i;
  };
  auto eat = [&](char c) {
    ws();
    if (i < h.size() && h[i] == c) {
      ++i;
      return true;
    }
    return false;
  };
  auto bad = [&](std::string what) -> std::optional<NpyHeader> {
    error = fmt::format("malformed header at byte {}: {}", i, what);
    return std::nullopt;
  };
  auto str = [&](std::string &out) {
    ws();
    if (i >= h.size() || (h[i] != '\'' && h[i] != '"'))
      return false;
    char q = h[i++];
    size_t e = h.find(q, i);
    if (e == std::string_view::npos)
      return false;
    out = std::string(h.substr(i, e - i));
    i = e + 1;
    return true;
  };
  NpyHeader out;
  std::set<std::string> seen;
  if (!eat('{'))
    return bad("expected '{'");
  while (!eat('}')) {
    std::string key;
    if (!str(key))
      return bad("expected a quoted key");
    if (!seen.insert(key).second)
      return bad(fmt::format("duplicate key '{}'", key));
    if (!eat(':'))
      return bad("expected ':'");
    ws();
    if (key == "descr") {
      if (!str(out.descr))
        return bad("'descr' must be a string");
    } else if (key == "fortran_order") {
      if (h.substr(i, 4) == "True") {
        out.fortran = true;
        i += 4;
      } else if (h.substr(i, 5) == "False") {
        i += 5;
      } else {
        return bad("'fortran_order' must be True or False");
      }
    } else if (key == "shape") {
      if (!eat('('))
        return bad("'shape' must be a tuple");
      while (!eat(')')) {
        ws();
        size_t b = i;
        int64_t v = 0;
        while (i < h.size() && h[i] >= '0' && h[i] <= '9') {
          if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, h[i] - '0', &v))
            return bad("a shape entry does not fit in 64 bits");
          ++i;
        }
        if (i == b)
          return bad("'shape' entries must be non-negative integers");
        if (i < h.size() && h[i] == 'L') // Python 2's long suffix
          ++i;
        out.shape.push_back(v);
        if (!eat(',')) {
          if (!eat(')'))
            return bad("expected ',' or ')' in 'shape'");
          break;
        }
      }
    } else {
      return bad(fmt::format("unexpected key '{}' (a .npy header has 'descr', 'fortran_order' "
                             "and 'shape')",
                             key));
    }
    if (!eat(',')) {
      if (!eat('}'))
        return bad("expected ',' or '}'");
      break;
    }
  }
  ws();
  if (i != h.size())
    return bad("text after the closing '}'");
  for (const char *k : {"descr", "fortran_order", "shape"})
    if (!seen.count(k)) {
      error = fmt::format("header lacks '{}'", k);
      return std::nullopt;
    }
  return out;
}
} // namespace

std::optional<OwnedTensor> linnet::rt::readNpy(const std::string &path, std::string &error) {
  auto fail = [&](std::string msg) -> std::optional<OwnedTensor> {
    error = fmt::format("{}: {}", path, msg);
    return std::nullopt;
  };
  // Checked through an open that cannot block (a FIFO is refused, not
  // waited on); the stream reopens that same file through its descriptor.
  struct stat st;
  std::string why;
  int fd = input::openRegular(path, st, why);
  if (fd < 0)
    return fail(why.rfind("is ", 0) == 0 ? why : "cannot open: " + why);
  std::ifstream in(fmt::format("/proc/self/fd/{}", fd), std::ios::binary);
  ::close(fd);
  if (!in) // no /proc: the path, checked just above
    in.open(path, std::ios::binary);
  if (!in)
    return fail(fmt::format("cannot open: {}", std::strerror(errno)));
  in.seekg(0, std::ios::end);
  uint64_t fileSize = static_cast<uint64_t>(in.tellg());
  in.seekg(0);
  unsigned char pre[10];
  if (fileSize < 10 || !in.read(reinterpret_cast<char *>(pre), 10) ||
      std::memcmp(pre, "\x93NUMPY", 6) != 0)
    return fail("not a .npy file (missing the \\x93NUMPY magic)");
  unsigned major = pre[6];
  uint64_t hdrLen, hdrStart;
  if (major == 1) {
    hdrLen = pre[8] | (uint64_t(pre[9]) << 8);
    hdrStart = 10;
  } else if (major == 2 || major == 3) {
    unsigned char more[2];
    if (!in.read(reinterpret_cast<char *>(more), 2))
      return fail("truncated header");
    hdrLen = pre[8] | (uint64_t(pre[9]) << 8) | (uint64_t(more[0]) << 16) |
             (uint64_t(more[1]) << 24);
    hdrStart = 12;
  } else {
    return fail(fmt::format("unsupported .npy format version {}", major));
  }
  if (hdrLen > fileSize - hdrStart)
    return fail(fmt::format("header length {} runs past the end of the file ({} bytes)",
                            hdrLen, fileSize));
  std::string hdr(hdrLen, '\0');
  if (!in.read(hdr.data(), static_cast<std::streamsize>(hdrLen)))
    return fail("truncated header");
  std::string herr;
  std::optional<NpyHeader> header = parseNpyHeader(hdr, herr);
  if (!header)
    return fail(herr);
  const std::string *descr = &header->descr;
  OwnedTensor t;
  const DTypeInfo *di = nullptr;
  for (const DTypeInfo &d : kDTypes)
    if (d.npy && (*descr == d.npy ||
                  (d.size == 1 && descr->size() == 3 && descr->substr(1) == std::string_view(d.npy).substr(1))))
      di = &d;
  if (!di)
    return fail(fmt::format("unsupported dtype '{}' (supported: |b1 |u1 |i1 <i2 <i4 <i8 "
                            "<f2 <f4 <f8)",
                            *descr));
  t.dtype = di->dtype;
  if (header->fortran)
    return fail("Fortran-ordered arrays are not supported; save with C order");
  t.shape = header->shape;
  std::optional<int64_t> bytes = byteSize(t.shape, t.dtype);
  uint64_t available = fileSize - hdrStart - hdrLen;
  if (!bytes)
    return fail(fmt::format("shape {} is too large", shapeString(t.shape)));
  if (static_cast<uint64_t>(*bytes) != available)
    return fail(fmt::format("data is {} bytes, shape {} of {} needs {}{}", available,
                            shapeString(t.shape), *descr, *bytes,
                            available < static_cast<uint64_t>(*bytes) ? " (truncated file)" : ""));
  t.data.resize(static_cast<size_t>(*bytes)); // bounded by the real file size
  if (!in.read(reinterpret_cast<char *>(t.data.data()), *bytes))
    return fail("read failed");
  return t;
}

std::optional<OwnedTensor> linnet::rt::readNpyFor(const std::string &path, DType want, std::string &error) {
  std::optional<OwnedTensor> t = readNpy(path, error);
  if (!t || want != DType::BF16 || t->dtype != DType::F32)
    return t;
  // numpy has no bf16: f32 values that are bf16 values (what writeNpy
  // writes for a bf16 result), narrowed exactly; any other is refused
  // rather than rounded behind the user's back.
  OwnedTensor narrow{DType::BF16, t->shape, std::vector<std::byte>(t->data.size() / 2)};
  for (size_t i = 0; i + 3 < t->data.size(); i += 4) {
    if (t->data[i] != std::byte{0} || t->data[i + 1] != std::byte{0}) {
      float v;
      std::memcpy(&v, &t->data[i], 4);
      error = fmt::format("{}: element {} ({}) of this float32 array is not a bf16 value, which input of "
                          "dtype bf16 takes (numpy has no bf16: give float32 values rounded to bf16, "
                          "e.g. torch's x.to(torch.bfloat16).float())",
                          path, i / 4, v);
      return std::nullopt;
    }
    narrow.data[i / 2] = t->data[i + 2];
    narrow.data[i / 2 + 1] = t->data[i + 3];
  }
  return narrow;
}

bool linnet::rt::writeNpy(const std::string &path, const TensorView &t, std::string &error) {
  if (t.dtype == DType::BF16) {
    // numpy has no bf16: its values as f32, exactly (a bf16 is the top
    // half of the f32 it stands for).
    OwnedTensor wide{DType::F32, t.shape, std::vector<std::byte>(t.data.size() * 2)};
    for (size_t i = 0; i + 1 < t.data.size(); i += 2) {
      wide.data[2 * i + 2] = t.data[i];
      wide.data[2 * i + 3] = t.data[i + 1];
    }
    return writeNpy(path, wide.view(), error);
  }
  if (!info(t.dtype).npy) {
    error = fmt::format("{}: numpy has no {} dtype", path, dtypeName(t.dtype));
    return false;
  }
  // Python tuple syntax: (), (4,), (2, 3)
  std::string shape = fmt::format("{}", fmt::join(t.shape, ", "));
  if (t.shape.size() == 1)
    shape += ",";
  std::string hdr = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}",
                                info(t.dtype).npy, shape);
  while ((10 + hdr.size() + 1) % 64 != 0)
    hdr += ' ';
  hdr += '\n';
  std::string why;
  support::AtomicOutput out(path, why);
  char len[2] = {static_cast<char>(hdr.size() & 0xff), static_cast<char>(hdr.size() >> 8)};
  if (!out.ok() || !out.write({"\x93NUMPY\x01\x00", 8}, why) || !out.write({len, 2}, why) ||
      !out.write(hdr, why) ||
      !out.write({reinterpret_cast<const char *>(t.data.data()), t.data.size()}, why) || !out.commit(why)) {
    error = fmt::format("{}: {}", path, why);
    return false;
  }
  return true;
}
