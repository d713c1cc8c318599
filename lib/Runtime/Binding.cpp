//===- Binding.cpp - Binding manifests ------------------------------------===//
#include "linnet/Runtime/Binding.h"
#include "linnet/Support/Input.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

using namespace linnet::rt;
using json = nlohmann::json;

namespace {
std::vector<std::string> split(const std::string &s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == '.') {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

bool isIndex(const std::string &s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

/// Matches `path` against `pattern`; collects what each `*` matched.
bool match(const std::vector<std::string> &pattern, const std::vector<std::string> &path,
           std::vector<std::string> &stars) {
  if (pattern.size() != path.size())
    return false;
  for (size_t i = 0; i < path.size(); ++i) {
    if (pattern[i] == "*") {
      if (!isIndex(path[i]))
        return false;
      stars.push_back(path[i]);
    } else if (pattern[i] != path[i]) {
      return false;
    }
  }
  return true;
}
} // namespace

std::unique_ptr<BindingMap> BindingMap::load(const std::string &path, std::string &error) {
  std::string text, err;
  if (!linnet::input::readFile(path, linnet::input::maxJsonBytes(), "LINNET_MAX_JSON_BYTES", text, err)) {
    error = fmt::format("{}: cannot read binding manifest: {}", path, err);
    return nullptr;
  }
  return parse(text, path, error);
}

std::unique_ptr<BindingMap> BindingMap::parse(const std::string &text, const std::string &origin,
                                              std::string &error) {
  // Strict parse: a path given twice (nlohmann keeps the last) is refused.
  std::string where, jerr;
  std::optional<json> parsed = linnet::input::parseJson(text, where, jerr);
  if (!parsed) {
    error = fmt::format("{}: {}: {}", origin, where, jerr);
    return nullptr;
  }
  const json &j = *parsed;
  if (!j.is_object() || !j.contains("tensors") || !j["tensors"].is_object()) {
    error = fmt::format("{}: expected an object with a 'tensors' object", origin);
    return nullptr;
  }
  // Compared as JSON, so a string or float version is an error, not a throw.
  if (j.contains("version") && j["version"] != 1) {
    error = fmt::format("{}: version: unsupported binding manifest version {} (expected 1)", origin,
                        linnet::input::dumpJson(j["version"]));
    return nullptr;
  }
  auto map = std::make_unique<BindingMap>();
  std::vector<Rule> exact, patterns;
  std::map<std::vector<std::string>, std::string> seen; // split path -> as written
  for (auto &[from, value] : j["tensors"].items()) {
    const json *target = &value;
    std::string rotary;
    if (value.is_object()) {
      for (auto &[k, v] : value.items())
        if (!((k == "name" && v.is_string()) || (k == "rotary_pairs" && v.is_string()))) {
          error = fmt::format("{}: tensors.{}: expected {{\"name\": NAME, \"rotary_pairs\": METADATA_KEY}}, found key "
                              "'{}'",
                              origin, from, k);
          return nullptr;
        }
      if (!value.contains("name")) {
        error = fmt::format("{}: tensors.{}: an entry object needs 'name'", origin, from);
        return nullptr;
      }
      target = &value["name"];
      rotary = value.value("rotary_pairs", "");
    }
    const json &to = *target;
    if (!to.is_string()) {
      error = fmt::format("{}: tensors.{}: expected a tensor name (string)", origin, from);
      return nullptr;
    }
    // `layers[*].q` and `layers.*.q` are one pattern (docs/binding-manifest.md).
    std::string fromDots = from;
    for (size_t at; (at = fromDots.find("[*]")) != std::string::npos;)
      fromDots.replace(at, 3, ".*");
    Rule r{split(fromDots), split(to.get<std::string>()), rotary};
    if (auto [at, fresh] = seen.emplace(r.from, from); !fresh) {
      error = fmt::format("{}: tensors.{}: the path is mapped twice (also as '{}')", origin, from,
                          at->second);
      return nullptr;
    }
    auto stars = [](const std::vector<std::string> &v) {
      return std::count(v.begin(), v.end(), std::string("*"));
    };
    if (stars(r.from) != stars(r.to)) {
      error = fmt::format("{}: tensors.{}: '*' occurs {} time(s) in the path and {} in the "
                          "name '{}'",
                          origin, from, stars(r.from), stars(r.to), to.get<std::string>());
      return nullptr;
    }
    (stars(r.from) ? patterns : exact).push_back(std::move(r));
  }
  map->rules_ = std::move(exact);
  map->rules_.insert(map->rules_.end(), patterns.begin(), patterns.end());
  return map;
}

bool BindingMap::maps(const std::string &canonicalPath) const {
  std::vector<std::string> path = split(canonicalPath), stars;
  for (const Rule &r : rules_) {
    stars.clear();
    if (match(r.from, path, stars))
      return true;
  }
  return false;
}

std::string BindingMap::externalName(const std::string &canonicalPath) const {
  std::vector<std::string> path = split(canonicalPath), stars;
  for (const Rule &r : rules_) {
    stars.clear();
    if (!match(r.from, path, stars))
      continue;
    std::string out;
    size_t k = 0;
    for (size_t i = 0; i < r.to.size(); ++i) {
      if (i)
        out += '.';
      out += r.to[i] == "*" ? stars[k++] : r.to[i];
    }
    return out;
  }
  return canonicalPath;
}

bool linnet::rt::applyBindingTransforms(SafeTensorsFile &weights, const BindingMap &binding, std::string &error) {
  for (const BindingMap::Rule &r : binding.rules()) {
    if (r.rotaryPairs.empty())
      continue;
    auto meta = weights.metadataJson().find(r.rotaryPairs);
    int64_t d = 0;
    if (meta != weights.metadataJson().end()) {
      json v = json::parse(meta->second, nullptr, /*allow_exceptions=*/false);
      if (v.is_number_unsigned())
        d = int64_t(std::min<uint64_t>(v.get<uint64_t>(), uint64_t(1) << 40));
    }
    std::vector<std::string> names;
    for (const auto &[name, view] : weights.tensors()) {
      std::vector<std::string> stars;
      if (match(r.to, split(name), stars))
        names.push_back(name);
    }
    if (names.empty())
      continue;
    if (d <= 0 || d % 2 != 0) {
      error = fmt::format("{}: metadata '{}' must be an even positive integer (the head size of {}'s rotary pairs), "
                          "found {}",
                          weights.path(), r.rotaryPairs, names.front(),
                          meta == weights.metadataJson().end() ? std::string("nothing") : meta->second);
      return false;
    }
    for (const std::string &name : names)
      if (!weights.permuteRotaryRows(name, d, error))
        return false;
  }
  return true;
}
