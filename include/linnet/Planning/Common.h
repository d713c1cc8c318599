//===- Common.h - Shared pieces of the planning layers ----------*- C++ -*-===//
//
// Diagnostics with JSON paths, exact-or-bounded quantities, canonical JSON
// (sorted keys, two-space indent, trailing newline: byte-identical on a
// round trip) and SHA-256 for the digests that identify every artifact.
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_PLANNING_COMMON_H
#define LINNET_PLANNING_COMMON_H

#include "linnet/Support/Diag.h"
#include "linnet/Support/Digest.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace linnet::planning {

using Json = nlohmann::json;

/// A typed finding: `code` names the check (e.g. `portable.dag`), `path` is
/// a JSON pointer into the document it is about.
struct Diagnostic {
  std::string code;
  std::string path;
  std::string message;
  /// A position in a textual document (Task IR), when there is one.
  uint32_t line = 0, column = 0;
};
using Diagnostics = std::vector<Diagnostic>;

/// "error: [code] /path: message".
std::string render(const Diagnostic &d);
/// `d` as a value about the document `file`.
support::Diag toDiag(const Diagnostic &d, const std::string &file);

/// A count known exactly (lower == upper) or only within bounds, e.g. the
/// edges of a CSR relation known only as num_dst*[degree_min, degree_max].
struct Quantity {
  int64_t lower = 0;
  int64_t upper = 0;
  static Quantity exact(int64_t v) { return {v, v}; }
  bool isExact() const { return lower == upper; }
  Quantity operator+(const Quantity &o) const { return {lower + o.lower, upper + o.upper}; }
  Quantity operator*(int64_t k) const { return {lower * k, upper * k}; }
  bool operator==(const Quantity &) const = default;
};
Json toJson(const Quantity &q);

/// Two-space indented, keys sorted (nlohmann's std::map), newline-terminated.
std::string canonicalDump(const Json &j);
/// SHA-256 of `data` as 64 lowercase hex digits (linnet's one SHA-256).
using support::sha256Hex;
/// "sha256:<hex>" of the canonical serialization of `j`.
std::string digestOf(const Json &j);
/// Human-readable bytes: "3.0 KiB", "2.1 GiB".
std::string formatBytes(int64_t bytes);

/// Thrown by the readers on a schema violation; carries the JSON path.
struct SchemaError : std::runtime_error {
  std::string path;
  SchemaError(std::string p, const std::string &msg)
      : std::runtime_error(msg), path(std::move(p)) {}
};

/// Strict reader of one JSON object: every field read is checked for its
/// type, and done() rejects keys nobody read, so that a document that reads
/// back is exactly one the writer could have produced.
class ObjReader {
public:
  ObjReader(const Json &j, std::string path);
  const Json &req(const char *key);
  const Json *opt(const char *key);
  bool has(const char *key) const { return j_.contains(key); }
  int64_t i64(const char *key);
  double f64(const char *key);
  bool boolean(const char *key);
  std::string str(const char *key);
  std::string strOr(const char *key, std::string def);
  std::vector<std::string> strs(const char *key);
  std::vector<int64_t> i64s(const char *key);
  Quantity qty(const char *key);
  ObjReader obj(const char *key);
  /// Calls f(element, path) for each element of the array at `key`.
  template <class F> void each(const char *key, F f) {
    const Json &a = req(key);
    if (!a.is_array())
      throw SchemaError(at(key), "expected an array");
    for (size_t i = 0; i < a.size(); ++i)
      f(a[i], at(key) + "/" + std::to_string(i));
  }
  void done();
  std::string at(const char *key) const { return path_ + "/" + key; }
  const std::string &path() const { return path_; }

private:
  const Json &j_;
  std::string path_;
  std::vector<std::string> seen_;
};

/// Reads and parses a JSON file; throws SchemaError("" , why) on failure.
Json readJsonFile(const std::string &path);

} // namespace linnet::planning

#endif // LINNET_PLANNING_COMMON_H
