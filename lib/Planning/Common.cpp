//===- Common.cpp - Diagnostics, canonical JSON, SHA-256 ------------------===//
#include "linnet/Planning/Common.h"
#include "linnet/Support/Input.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace linnet::planning {

std::string render(const Diagnostic &d) {
  return "error: [" + d.code + "] " + (d.path.empty() ? "/" : d.path) + ": " + d.message;
}

support::Diag toDiag(const Diagnostic &d, const std::string &file) {
  support::Diag out = support::Diag::atPointer(d.code, file, d.path, d.message);
  out.line = d.line;
  out.column = d.column;
  return out;
}

Json toJson(const Quantity &q) { return Json{{"lower", q.lower}, {"upper", q.upper}}; }

std::string canonicalDump(const Json &j) { return j.dump(2) + "\n"; }

std::string digestOf(const Json &j) { return "sha256:" + sha256Hex(canonicalDump(j)); }

std::string formatBytes(int64_t bytes) {
  static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = double(bytes);
  int u = 0;
  while (std::fabs(v) >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[64];
  if (u == 0)
    std::snprintf(buf, sizeof buf, "%lld B", (long long)bytes);
  else
    std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
  return buf;
}

ObjReader::ObjReader(const Json &j, std::string path) : j_(j), path_(std::move(path)) {
  if (!j_.is_object())
    throw SchemaError(path_, "expected an object");
}

const Json &ObjReader::req(const char *key) {
  auto it = j_.find(key);
  if (it == j_.end())
    throw SchemaError(path_, std::string("missing key `") + key + "`");
  seen_.push_back(key);
  return *it;
}

const Json *ObjReader::opt(const char *key) {
  auto it = j_.find(key);
  if (it == j_.end())
    return nullptr;
  seen_.push_back(key);
  return &*it;
}

int64_t ObjReader::i64(const char *key) {
  const Json &v = req(key);
  if (!v.is_number_integer())
    throw SchemaError(at(key), "expected an integer");
  return v.get<int64_t>();
}

double ObjReader::f64(const char *key) {
  const Json &v = req(key);
  if (!v.is_number())
    throw SchemaError(at(key), "expected a number");
  return v.get<double>();
}

bool ObjReader::boolean(const char *key) {
  const Json &v = req(key);
  if (!v.is_boolean())
    throw SchemaError(at(key), "expected true or false");
  return v.get<bool>();
}

std::string ObjReader::str(const char *key) {
  const Json &v = req(key);
  if (!v.is_string())
    throw SchemaError(at(key), "expected a string");
  return v.get<std::string>();
}

std::string ObjReader::strOr(const char *key, std::string def) {
  return has(key) ? str(key) : def;
}

std::vector<std::string> ObjReader::strs(const char *key) {
  std::vector<std::string> out;
  each(key, [&](const Json &e, const std::string &p) {
    if (!e.is_string())
      throw SchemaError(p, "expected a string");
    out.push_back(e.get<std::string>());
  });
  return out;
}

std::vector<int64_t> ObjReader::i64s(const char *key) {
  std::vector<int64_t> out;
  each(key, [&](const Json &e, const std::string &p) {
    if (!e.is_number_integer())
      throw SchemaError(p, "expected an integer");
    out.push_back(e.get<int64_t>());
  });
  return out;
}

Quantity ObjReader::qty(const char *key) {
  ObjReader r(req(key), at(key));
  Quantity q{r.i64("lower"), r.i64("upper")};
  r.done();
  return q;
}

ObjReader ObjReader::obj(const char *key) { return ObjReader(req(key), at(key)); }

void ObjReader::done() {
  for (auto it = j_.begin(); it != j_.end(); ++it)
    if (std::find(seen_.begin(), seen_.end(), it.key()) == seen_.end())
      throw SchemaError(path_ + "/" + it.key(), "unknown key `" + it.key() + "`");
}

Json readJsonFile(const std::string &path) {
  // A regular file within the JSON limit (a FIFO would block the read).
  std::string text, why;
  if (!input::readFile(path, input::maxJsonBytes(), "LINNET_MAX_JSON_BYTES", text, why))
    throw SchemaError("", "cannot read '" + path + "': " + why);
  try {
    return Json::parse(text);
  } catch (const Json::parse_error &e) {
    throw SchemaError("", "'" + path + "' is not valid JSON: " + e.what());
  }
}

} // namespace linnet::planning
