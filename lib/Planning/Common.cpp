//===- Common.cpp - Diagnostics, canonical JSON, SHA-256 ------------------===//
#include "linnet/Planning/Common.h"

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

Json toJson(const Quantity &q) { return Json{{"lower", q.lower}, {"upper", q.upper}}; }

std::string canonicalDump(const Json &j) { return j.dump(2) + "\n"; }

namespace {
constexpr std::array<uint32_t, 64> K = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
    0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
    0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
    0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
    0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
    0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
    0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2};
inline uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }
} // namespace

std::string sha256Hex(std::string_view data) {
  uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  // Message + 0x80 + zero padding + 64-bit big-endian bit length.
  std::string msg(data);
  uint64_t bits = uint64_t(data.size()) * 8;
  msg.push_back(char(0x80));
  while (msg.size() % 64 != 56)
    msg.push_back(0);
  for (int i = 7; i >= 0; --i)
    msg.push_back(char((bits >> (8 * i)) & 0xff));
  for (size_t off = 0; off < msg.size(); off += 64) {
    uint32_t w[64];
    for (int i = 0; i < 16; ++i)
      w[i] = uint32_t(uint8_t(msg[off + 4 * i])) << 24 |
             uint32_t(uint8_t(msg[off + 4 * i + 1])) << 16 |
             uint32_t(uint8_t(msg[off + 4 * i + 2])) << 8 | uint32_t(uint8_t(msg[off + 4 * i + 3]));
    for (int i = 16; i < 64; ++i) {
      uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
      uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
    for (int i = 0; i < 64; ++i) {
      uint32_t S1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
      uint32_t ch = (e & f) ^ (~e & g);
      uint32_t t1 = hh + S1 + ch + K[i] + w[i];
      uint32_t S0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
      uint32_t mj = (a & b) ^ (a & c) ^ (b & c);
      uint32_t t2 = S0 + mj;
      hh = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
    }
    h[0] += a; h[1] += b; h[2] += c; h[3] += d; h[4] += e; h[5] += f; h[6] += g; h[7] += hh;
  }
  char out[65];
  for (int i = 0; i < 8; ++i)
    std::snprintf(out + 8 * i, 9, "%08x", h[i]);
  return std::string(out, 64);
}

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
  std::ifstream in(path);
  if (!in)
    throw SchemaError("", "cannot read '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  try {
    return Json::parse(ss.str());
  } catch (const Json::parse_error &e) {
    throw SchemaError("", "'" + path + "' is not valid JSON: " + e.what());
  }
}

} // namespace linnet::planning
