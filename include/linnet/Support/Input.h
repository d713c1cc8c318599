//===- Input.h - Reading untrusted files and JSON with limits ---*- C++ -*-===//
//
// Every reader of user-supplied bytes (sources, plans, binding manifests,
// safetensors headers) goes through these helpers, so that the same limits
// hold everywhere:
//
//  - a file is opened only if it is a regular file (openRegular): a FIFO,
//    a device or a socket is refused before a byte is read, and the open
//    itself cannot block (a FIFO with no writer would hang it); a file is
//    read only if it is at most `limit` bytes long;
//  - JSON is parsed with nlohmann's iterative SAX parser, refusing
//    duplicate object keys (nlohmann would keep the last silently) and
//    nesting deeper than kMaxJsonDepth (the DOM is destroyed and printed
//    recursively), and naming the JSON path of each problem.
//
// Header-only: the Syntax, Plan and Runtime libraries share it without a
// new link dependency.
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_SUPPORT_INPUT_H
#define LINNET_SUPPORT_INPUT_H

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace linnet::input {

/// Default limit of a source file (`.ln`); LINNET_MAX_SOURCE_BYTES overrides.
inline constexpr uint64_t kDefaultMaxSourceBytes = 16ull << 20;
/// Default limit of a JSON document (plan, binding manifest);
/// LINNET_MAX_JSON_BYTES overrides.
inline constexpr uint64_t kDefaultMaxJsonBytes = 256ull << 20;
/// Deepest JSON nesting accepted (objects and arrays).
inline constexpr unsigned kMaxJsonDepth = 512;

/// The limit named by environment variable `env`, else `dflt`. A value that
/// is not a positive integer is ignored.
inline uint64_t limitFromEnv(const char *env, uint64_t dflt) {
  const char *v = std::getenv(env);
  if (!v || !*v)
    return dflt;
  uint64_t n = 0;
  auto [p, ec] = std::from_chars(v, v + std::strlen(v), n);
  return ec == std::errc() && *p == '\0' && n > 0 ? n : dflt;
}
inline uint64_t maxSourceBytes() {
  return limitFromEnv("LINNET_MAX_SOURCE_BYTES", kDefaultMaxSourceBytes);
}
inline uint64_t maxJsonBytes() { return limitFromEnv("LINNET_MAX_JSON_BYTES", kDefaultMaxJsonBytes); }

/// What a file of mode `mode` is, for "is not a regular file (a FIFO)".
inline const char *fileKind(mode_t mode) {
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISSOCK(mode))
    return "a socket";
  return "not a file";
}

/// Opens `path` for reading if it is a regular file, else returns -1 with
/// `error` saying why (without the path): "is a directory", "is not a
/// regular file (a FIFO)", or the system's reason. Opened non-blocking, so
/// that a FIFO is refused instead of waiting for a writer; `st` is the open
/// file's status (its size is the size to read).
inline int openRegular(const std::string &path, struct stat &st, std::string &error) {
  st = {}; // callers may read it after a failure: never uninitialized
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    error = std::strerror(errno);
    return -1;
  }
  if (::fstat(fd, &st) != 0) {
    error = std::strerror(errno);
    ::close(fd);
    return -1;
  }
  if (!S_ISREG(st.st_mode)) {
    error = S_ISDIR(st.st_mode) ? std::string("is a directory")
                                : fmt::format("is not a regular file ({})", fileKind(st.st_mode));
    ::close(fd);
    return -1;
  }
  int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0)
    (void)::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return fd;
}

/// The source files a process has read are inputs of everything it writes:
/// the linnet command line turns recording on (recordSourceReads), the
/// SourceManager notes every module it reads, and the output guard
/// (support::checkOutput) refuses to write over any of them -- a module the
/// model imports included, which no option names. Off in the Python
/// binding, a long-lived process.
namespace detail {
struct SourceReads {
  std::mutex mutex;
  bool on = false;
  std::vector<std::string> paths;
};
inline SourceReads &sourceReads() {
  static SourceReads r;
  return r;
}
} // namespace detail
inline void recordSourceReads(bool on) {
  std::lock_guard<std::mutex> lock(detail::sourceReads().mutex);
  detail::sourceReads().on = on;
}
inline void noteSourceRead(const std::string &path) {
  detail::SourceReads &r = detail::sourceReads();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (r.on && std::find(r.paths.begin(), r.paths.end(), path) == r.paths.end())
    r.paths.push_back(path);
}
inline std::vector<std::string> sourcesRead() {
  std::lock_guard<std::mutex> lock(detail::sourceReads().mutex);
  return detail::sourceReads().paths;
}

/// Reads all of regular file `path` into `text`, refusing anything else
/// (openRegular) and anything longer than `limit` bytes (`limitVar` names
/// the limit's variable in the message). On failure `error` says why,
/// without the path.
inline bool readFile(const std::string &path, uint64_t limit, const char *limitVar,
                     std::string &text, std::string &error) {
  struct stat st;
  int fd = openRegular(path, st, error);
  if (fd < 0)
    return false;
  auto tooLarge = [&] {
    error = fmt::format("larger than the {} byte limit (set {} to raise it)", limit, limitVar);
    ::close(fd);
    return false;
  };
  if (static_cast<uint64_t>(st.st_size) > limit)
    return tooLarge();
  text.clear();
  // A file may grow while it is read: stop past the limit all the same.
  char chunk[65536];
  for (;;) {
    ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      error = std::strerror(errno);
      ::close(fd);
      return false;
    }
    if (n == 0)
      break;
    if (text.size() + static_cast<uint64_t>(n) > limit)
      return tooLarge();
    text.append(chunk, static_cast<size_t>(n));
  }
  ::close(fd);
  return true;
}

/// A JSON path in the plan reader's spelling: `functions[0].body`, `$` for
/// the document, `tensors["a.b"]` for keys that are not identifiers.
inline std::string pathKey(const std::string &base, const std::string &key) {
  bool ident = !key.empty() && !(key[0] >= '0' && key[0] <= '9');
  for (char c : key)
    ident = ident && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
  std::string k = ident ? key : nlohmann::json(key).dump(-1, ' ', false,
                                                         nlohmann::json::error_handler_t::replace);
  if (!ident)
    return (base == "$" ? std::string() : base) + "[" + k + "]";
  return base == "$" || base.empty() ? k : base + "." + k;
}

namespace detail {
/// SAX handler: builds the DOM through nlohmann's own builder, and checks
/// keys and depth on the way.
class StrictSax {
public:
  using json = nlohmann::json;
  explicit StrictSax(json &out) : dom_(out, /*allow_exceptions=*/false) {}

  std::string errorPath, errorMessage;

  bool null() { return value() && dom_.null(); }
  bool boolean(bool v) { return value() && dom_.boolean(v); }
  bool number_integer(json::number_integer_t v) { return value() && dom_.number_integer(v); }
  bool number_unsigned(json::number_unsigned_t v) { return value() && dom_.number_unsigned(v); }
  bool number_float(json::number_float_t v, const std::string &s) {
    return value() && dom_.number_float(v, s);
  }
  bool string(std::string &v) { return value() && dom_.string(v); }
  bool binary(json::binary_t &v) { return value() && dom_.binary(v); }
  bool start_object(std::size_t n) { return open(true) && dom_.start_object(n); }
  bool key(std::string &k) {
    Frame &f = frames_.back();
    if (!f.keys.insert(k).second)
      return fail(pathKey(path(frames_.size() - 1), k), "duplicate key (each key may appear once)");
    f.key = k;
    return dom_.key(k);
  }
  bool end_object() {
    frames_.pop_back();
    return dom_.end_object();
  }
  bool start_array(std::size_t n) { return open(false) && dom_.start_array(n); }
  bool end_array() {
    frames_.pop_back();
    return dom_.end_array();
  }
  bool parse_error(std::size_t pos, const std::string &, const nlohmann::detail::exception &e) {
    // nlohmann's message: "[json.exception.parse_error.101] parse error at line 1, column 5: ..."
    std::string m = e.what();
    if (size_t at = m.find("parse error"); at != std::string::npos)
      m = m.substr(at);
    // A syntax error has no meaningful JSON path: the byte says where.
    return fail("$", fmt::format("not valid JSON (byte {}): {}", pos, m));
  }

private:
  struct Frame {
    bool object;
    std::string key;  // object: the current key
    size_t index = 0; // array: the next element's index
    std::set<std::string> keys;
  };
  nlohmann::detail::json_sax_dom_parser<json> dom_;
  std::vector<Frame> frames_;

  /// The path of the value being read, through the first `n` frames (all
  /// by default; the frames an object's own keys are inside of with n - 1).
  std::string path(size_t n = SIZE_MAX) const {
    std::string p = "$";
    for (size_t i = 0; i < frames_.size() && i < n; ++i) {
      const Frame &f = frames_[i];
      p = f.object ? pathKey(p, f.key)
                   : fmt::format("{}[{}]", p == "$" ? "" : p, f.index == 0 ? 0 : f.index - 1);
    }
    return p;
  }
  bool fail(std::string p, std::string msg) {
    if (errorMessage.empty()) {
      errorPath = std::move(p);
      errorMessage = std::move(msg);
    }
    return false;
  }
  /// Every value, and every object or array, counts as one element of its array.
  bool value() {
    if (!frames_.empty() && !frames_.back().object)
      ++frames_.back().index;
    return true;
  }
  bool open(bool object) {
    value();
    if (frames_.size() >= kMaxJsonDepth)
      return fail(path(), fmt::format("JSON nested deeper than {} levels", kMaxJsonDepth));
    frames_.push_back({object, {}, 0, {}});
    return true;
  }
};
} // namespace detail

/// Parses `text` as one JSON document; on failure returns nullopt with the
/// JSON path (`$` for the document) and what is wrong.
inline std::optional<nlohmann::json> parseJson(std::string_view text, std::string &errorPath,
                                               std::string &error) {
  nlohmann::json out;
  detail::StrictSax sax(out);
  bool ok = false;
  try {
    ok = nlohmann::json::sax_parse(text.begin(), text.end(), &sax,
                                   nlohmann::json::input_format_t::json, /*strict=*/true);
  } catch (const std::exception &e) { // nothing should throw; never let it escape
    sax.errorMessage = sax.errorMessage.empty() ? e.what() : sax.errorMessage;
  }
  if (!ok || !sax.errorMessage.empty()) {
    errorPath = sax.errorPath.empty() ? "$" : sax.errorPath;
    error = sax.errorMessage.empty() ? "not valid JSON" : sax.errorMessage;
    return std::nullopt;
  }
  return out;
}

/// `j.dump()` that never throws: invalid UTF-8 in strings is replaced.
inline std::string dumpJson(const nlohmann::json &j, int indent = -1) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

} // namespace linnet::input

#endif
