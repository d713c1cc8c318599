//===- Binding.cpp - Binding manifests (§10.2) ----------------------------===//
#include "linnet/Plan/Binding.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <set>

using namespace linnet;
using namespace linnet::plan;

namespace {

/// `layers[*].q` and `layers.*.q` are the same pattern; the manifest's
/// spelling is the canonical one.
std::string toManifestSpelling(std::string p) {
  for (size_t at; (at = p.find(".*")) != std::string::npos;)
    p.replace(at, 2, "[*]");
  return p;
}
size_t stars(const std::string &s) {
  size_t n = 0;
  for (char c : s)
    n += c == '*';
  return n;
}
/// Replaces each `*` (or `[*]` in a canonical path) by the next index.
std::string expand(const std::string &pattern, const std::vector<int64_t> &idx, bool canonical) {
  std::string out;
  size_t k = 0;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (canonical && pattern.compare(i, 3, "[*]") == 0) {
      out += fmt::format(".{}", idx[k++]);
      i += 2;
    } else if (!canonical && pattern[i] == '*') {
      out += std::to_string(idx[k++]);
    } else {
      out += pattern[i];
    }
  }
  return out;
}

} // namespace

std::vector<ManifestEntry> plan::manifestOf(const json &doc) {
  std::vector<ManifestEntry> out;
  if (doc.contains("manifest") && doc["manifest"].is_array())
    for (const json &e : doc["manifest"])
      if (e.is_object() && e.contains("path") && e["path"].is_string())
        out.push_back({e["path"], e.value("kind", ""), e.value("dtype", json()),
                       e.value("shape", json::array()), e.value("repeat", json::array()),
                       e.value("optional", false)});
  return out;
}

namespace {
/// configDefines; with `config` null, only the section's shape is checked.
std::optional<std::map<std::string, std::string>> readConfig(const json &binding, const json *config,
                                                             std::vector<ir::Problem> &problems) {
  size_t before = problems.size();
  auto fail = [&](std::string path, std::string msg) { problems.push_back({std::move(path), std::move(msg)}); };
  if (!binding.is_object() || !binding.contains("config")) {
    fail("config", "the binding manifest has no config section (generic -> configuration key) to read a "
                   "configuration with");
    return std::nullopt;
  }
  const json &section = binding["config"];
  if (!section.is_object()) {
    fail("config", fmt::format("expected an object mapping generics to configuration keys, found {}",
                               section.type_name()));
    return std::nullopt;
  }
  if (config && !config->is_object()) {
    fail("$", fmt::format("a configuration is a JSON object, found {}", config->type_name()));
    return std::nullopt;
  }
  std::map<std::string, std::string> out;
  for (auto &[generic, spec] : section.items()) {
    std::string where = "config." + generic;
    const json *values = nullptr;
    std::string key;
    if (spec.is_string()) {
      key = spec.get<std::string>();
    } else if (spec.is_object() && spec.contains("key") && spec["key"].is_string() && spec.contains("values") &&
               spec["values"].is_object() && spec.size() == 2) {
      key = spec["key"].get<std::string>();
      values = &spec["values"];
      for (auto &[from, to] : values->items())
        if (!to.is_string())
          fail(where + ".values." + from, fmt::format("expected the -D value text, found {}", to.type_name()));
    } else {
      fail(where, "expected a configuration key, or {\"key\": K, \"values\": {value: -D text}}");
      continue;
    }
    if (!config)
      continue; // the section's shape only
    if (!config->contains(key)) {
      fail(key, fmt::format("missing: {} binds generic {} to it", where, generic));
      continue;
    }
    const json &v = (*config)[key];
    if (values) {
      std::string text = v.is_string() ? v.get<std::string>() : v.dump();
      if (!values->contains(text)) {
        std::vector<std::string> known;
        for (auto &[from, to] : values->items())
          known.push_back(from);
        fail(key, fmt::format("{} is not one of the values {} maps ({})", v.dump(), where, fmt::join(known, ", ")));
        continue;
      }
      out[generic] = (*values)[text].get<std::string>();
    } else if (v.is_number_integer()) {
      out[generic] = std::to_string(v.get<int64_t>());
    } else {
      fail(key, fmt::format("expected an integer for generic {}, found {} (map a non-integer value with "
                            "{{\"key\": ..., \"values\": {{...}}}} in {})",
                            generic, v.dump(), where));
    }
  }
  if (problems.size() != before)
    return std::nullopt;
  return out;
}
} // namespace

std::optional<Binding> plan::checkBinding(const json &doc, const std::vector<ManifestEntry> &manifest,
                                          std::vector<ir::Problem> &problems) {
  size_t before = problems.size();
  auto fail = [&](std::string path, std::string msg) { problems.push_back({std::move(path), std::move(msg)}); };
  if (!doc.is_object()) {
    fail("$", "a binding manifest is a JSON object {\"version\": 1, \"tensors\": {...}}");
    return std::nullopt;
  }
  for (auto it = doc.begin(); it != doc.end(); ++it)
    if (it.key() != "version" && it.key() != "model" && it.key() != "tensors" && it.key() != "config" &&
        it.key() != "constants")
      fail(it.key(), "unknown key (a binding manifest has version, model, tensors, config, constants)");
  if (doc.contains("constants")) {
    const json &c = doc["constants"];
    if (!c.is_object())
      fail("constants", "expected an object mapping module constants to configuration keys");
    else
      for (auto &[name, key] : c.items())
        if (!key.is_string())
          fail("constants." + name, fmt::format("expected a configuration key, found {}", key.type_name()));
  }
  if (doc.contains("config")) {
    // Its shape is checked here too; its values against a configuration.
    readConfig(doc, nullptr, problems);
  }
  if (!doc.contains("version") || doc["version"] != 1)
    fail("version", "expected 1");
  if (!doc.contains("tensors") || !doc["tensors"].is_object()) {
    fail("tensors", "expected an object mapping canonical paths to external names");
    return std::nullopt;
  }
  std::map<std::string, const ManifestEntry *> byPath;
  for (const ManifestEntry &e : manifest)
    byPath[e.path] = &e;

  Binding b;
  std::map<std::string, std::string> owner; // external name -> canonical path
  const json &tensors = doc["tensors"];
  for (auto it = tensors.begin(); it != tensors.end(); ++it) {
    std::string where = fmt::format("tensors[\"{}\"]", it.key());
    const json *name = &it.value();
    if (name->is_object()) {
      // {"name": N, "rotary_pairs": KEY}: N's rows are stored per head as
      // rotary pairs; KEY (the weights file's metadata) gives the head size.
      bool ok = name->contains("name") && (*name)["name"].is_string();
      for (auto &[k, v] : name->items())
        ok = ok && ((k == "name") || (k == "rotary_pairs" && v.is_string()));
      if (!ok) {
        fail(where, "expected the external tensor name, or {\"name\": NAME, \"rotary_pairs\": METADATA_KEY}");
        continue;
      }
      name = &(*name)["name"];
    }
    if (!name->is_string()) {
      fail(where, "expected the external tensor name (a string)");
      continue;
    }
    std::string canon = toManifestSpelling(it.key()), ext = *name;
    auto e = byPath.find(canon);
    if (e == byPath.end()) {
      fail(where, fmt::format("unknown path '{}': the model has no param or buffer there", it.key()));
      continue;
    }
    if (e->second->kind == "state") {
      fail(where, fmt::format("'{}' is state: the runtime keeps it, weights never hold it", it.key()));
      continue;
    }
    if (ext.empty()) {
      fail(where, "empty external name");
      continue;
    }
    if (stars(ext) != stars(canon)) {
      fail(where, fmt::format("'{}' repeats over {} index{}, but '{}' has {} '*'", it.key(), stars(canon),
                              stars(canon) == 1 ? "" : "es", ext, stars(ext)));
      continue;
    }
    if (!b.patterns.emplace(canon, ext).second) {
      fail(where, fmt::format("'{}' is mapped twice (as '{}' and '{}')", canon, b.patterns[canon], ext));
      continue;
    }
    // Expand the repeats, where they are integers, to compare real names.
    std::vector<int64_t> lens;
    bool concrete = true;
    for (const json &r : e->second->repeat) {
      if (!r.is_number_integer())
        concrete = false;
      else
        lens.push_back(r.get<int64_t>());
    }
    // Names are compared one by one: refuse a repeat too large to expand
    // (a hostile plan or -D) instead of looping or allocating without bound.
    constexpr int64_t kMaxExpanded = int64_t(1) << 20;
    int64_t total = 1;
    for (int64_t n : lens)
      if (n > 0 && __builtin_mul_overflow(total, n, &total))
        total = INT64_MAX;
    if (concrete && total > kMaxExpanded) {
      fail(where, fmt::format("'{}' repeats {} times, more than the {} names a binding check "
                              "expands",
                              it.key(), total == INT64_MAX ? std::string("over 2^63")
                                                           : std::to_string(total),
                              kMaxExpanded));
      continue;
    }
    std::vector<std::pair<std::string, std::string>> pairs;
    if (concrete) {
      std::vector<int64_t> idx(lens.size(), 0);
      bool empty = std::any_of(lens.begin(), lens.end(), [](int64_t n) { return n <= 0; });
      while (!empty) {
        pairs.push_back({expand(canon, idx, true), expand(ext, idx, false)});
        size_t k = idx.size();
        while (k > 0 && ++idx[k - 1] == lens[k - 1])
          idx[--k] = 0;
        if (k == 0)
          break;
      }
    } else {
      pairs.push_back({canon, ext});
    }
    for (auto &[c, x] : pairs) {
      auto [pos, fresh] = owner.emplace(x, c);
      if (!fresh) {
        fail(where, fmt::format("duplicate external name '{}': both '{}' and '{}' map to it", x,
                                pos->second, c));
        break;
      }
      b.names[c] = x;
    }
  }
  for (const ManifestEntry &e : manifest)
    if (e.kind != "state" && !e.optional && !b.patterns.count(e.path))
      fail("tensors", fmt::format("required {} '{}' is not mapped to an external name", e.kind, e.path));
  if (problems.size() != before)
    return std::nullopt;
  return b;
}


std::optional<std::map<std::string, std::string>> plan::configDefines(const json &binding, const json &config,
                                                                      std::vector<ir::Problem> &problems) {
  return readConfig(binding, &config, problems);
}

std::vector<plan::ConstantExpectation> plan::configConstants(const json &binding, const json &config,
                                                             const std::string &configFile,
                                                             std::vector<ir::Problem> &problems) {
  std::vector<ConstantExpectation> out;
  if (!binding.is_object() || !binding.contains("constants") || !binding["constants"].is_object())
    return out;
  for (auto &[name, key] : binding["constants"].items()) {
    if (!key.is_string()) {
      problems.push_back({"constants." + name, fmt::format("expected a configuration key, found {}", key.type_name())});
      continue;
    }
    std::string k = key.get<std::string>();
    if (!config.is_object() || !config.contains(k)) {
      problems.push_back({k, fmt::format("missing: constants.{} checks the model's {} against it", name, name)});
      continue;
    }
    out.push_back({name, k, configFile, config[k]});
  }
  return out;
}

std::vector<support::Diag> plan::checkConstants(const std::vector<ConstantExpectation> &expected,
                                                const json &planDoc) {
  std::vector<support::Diag> errors;
  if (expected.empty())
    return errors;
  std::string module = planDoc.is_object() && planDoc.contains("module") && planDoc["module"].is_string()
                           ? planDoc["module"].get<std::string>()
                           : "";
  for (const ConstantExpectation &e : expected) {
    auto fail = [&](std::string msg) {
      errors.push_back(support::Diag::inFile("config", e.config, fmt::format("{}: {}", e.key, msg)));
    };
    const json *found = nullptr;
    if (planDoc.contains("constants") && planDoc["constants"].is_array())
      for (const json &c : planDoc["constants"])
        if (c.is_object() && c.value("name", "") == module + "::" + e.constant)
          found = &c;
    if (!found) {
      fail(fmt::format("the model's module {} has no constant {} to check it against", module, e.constant));
      continue;
    }
    // A literal: one `const` op, yielded.
    const json *ops = found->contains("body") ? &(*found)["body"]["ops"] : nullptr;
    const json *op = ops && ops->is_array() && ops->size() == 2 ? &(*ops)[0] : nullptr;
    if (!op || op->value("kind", "") != "const" || !(*op)["attrs"].contains("value")) {
      fail(fmt::format("the model's {} is computed, not a literal: it cannot be checked against the "
                       "configuration",
                       e.constant));
      continue;
    }
    const json &have = (*op)["attrs"]["value"];
    std::string where = op->value("loc", "");
    bool same;
    if (have.is_number() && e.value.is_number()) {
      double a = have.get<double>(), b = e.value.get<double>();
      same = a == b || std::abs(a - b) <= 1e-6 * std::max(std::abs(a), std::abs(b));
    } else {
      same = have == e.value;
    }
    if (!same)
      fail(fmt::format("{}, but the model's {} is {}{}: this model does not compute what the checkpoint was "
                       "trained with (change the constant, or use a model that matches)",
                       e.value.dump(), e.constant, have.dump(), where.empty() ? "" : " (" + where + ")"));
  }
  return errors;
}
