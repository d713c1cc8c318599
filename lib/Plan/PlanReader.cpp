//===- PlanReader.cpp - Loading a JSON plan into Core IR ------------------===//
#include "linnet/Plan/PlanReader.h"
#include "linnet/Support/Input.h"

#include <fmt/format.h>

#include <functional>
#include <map>
#include <set>

using namespace linnet;
using namespace linnet::plan;

namespace {

class Reader {
public:
  std::vector<ir::Problem> &problems;

  void fail(const std::string &path, std::string msg) { problems.push_back({path, std::move(msg)}); }

  static const char *kindName(const json &j) {
    switch (j.type()) {
    case json::value_t::object: return "an object";
    case json::value_t::array: return "an array";
    case json::value_t::string: return "a string";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::null: return "null";
    default: return "a number";
    }
  }
  /// `obj[key]` if present with the right JSON type, else reports and null.
  const json *get(const json &obj, const std::string &path, const char *key, json::value_t t,
                  bool nullable = false) {
    auto it = obj.find(key);
    std::string p = path.empty() ? key : path + "." + key;
    if (it == obj.end()) {
      fail(path.empty() ? "$" : path, fmt::format("missing '{}'", key));
      return nullptr;
    }
    bool ok = it->type() == t || (nullable && it->is_null()) ||
              (t == json::value_t::number_integer && it->is_number_unsigned());
    if (!ok) {
      fail(p, fmt::format("expected {}{}, found {}", kindName(json(t)), nullable ? " or null" : "",
                          kindName(*it)));
      return nullptr;
    }
    return &*it;
  }

  std::optional<Plan> read(const json &doc) {
    if (!doc.is_object()) {
      fail("$", "a plan is a JSON object");
      return std::nullopt;
    }
    Plan p;
    static const std::set<std::string> keys = {"version", "module", "root", "manifest",
                                               "blocks", "functions", "constants"};
    for (auto it = doc.begin(); it != doc.end(); ++it)
      if (!keys.count(it.key()))
        fail(it.key(), "unknown key (a version 1 plan has version, module, root, manifest, "
                       "blocks, functions, constants)");
    if (auto v = doc.find("version"); v != doc.end() && v->is_number_float()) {
      fail("version", fmt::format("expected an integer version 1, found {}", input::dumpJson(*v)));
    } else if (const json *v = get(doc, "", "version", json::value_t::number_integer)) {
      // Compared as JSON: a huge version must not wrap into 1 through get<int>().
      if (*v != 1)
        fail("version", fmt::format("unsupported plan version {} (this reader reads 1)", v->dump()));
      else
        p.version = 1;
    }
    if (const json *m = get(doc, "", "module", json::value_t::string))
      p.module = *m;
    if (const json *r = get(doc, "", "root", json::value_t::object, true))
      p.root = *r;
    if (const json *b = get(doc, "", "blocks", json::value_t::object))
      p.blocks = *b;
    std::map<std::string, size_t> manifestPaths;
    if (const json *man = get(doc, "", "manifest", json::value_t::array))
      for (size_t i = 0; i < man->size(); ++i) {
        std::string path = fmt::format("manifest[{}]", i);
        const json &e = (*man)[i];
        if (!e.is_object()) {
          fail(path, "expected an object");
          continue;
        }
        ManifestEntry m;
        const json *ps = get(e, path, "path", json::value_t::string);
        const json *k = get(e, path, "kind", json::value_t::string);
        const json *d = e.contains("dtype") ? &e["dtype"] : nullptr;
        const json *s = get(e, path, "shape", json::value_t::array);
        const json *r = get(e, path, "repeat", json::value_t::array);
        const json *o = get(e, path, "optional", json::value_t::boolean);
        if (!d)
          fail(path, "missing 'dtype'");
        if (!ps || !k || !d || !s || !r || !o)
          continue;
        m = {*ps, *k, *d, *s, *r, o->get<bool>()};
        if (m.kind != "param" && m.kind != "buffer" && m.kind != "state")
          fail(path + ".kind", fmt::format("expected param, buffer or state, found '{}'", m.kind));
        if (auto [at, fresh] = manifestPaths.emplace(m.path, i); !fresh)
          fail(path + ".path", fmt::format("duplicate manifest path '{}' (also manifest[{}])", m.path,
                                           at->second));
        p.manifest.push_back(std::move(m));
      }
    if (const json *fs = get(doc, "", "functions", json::value_t::array))
      for (size_t i = 0; i < fs->size(); ++i)
        if (auto f = function((*fs)[i], fmt::format("functions[{}]", i)))
          p.functions.push_back(std::move(*f));
    if (const json *cs = get(doc, "", "constants", json::value_t::array))
      for (size_t i = 0; i < cs->size(); ++i)
        if (auto c = constant((*cs)[i], fmt::format("constants[{}]", i)))
          p.constants.push_back(std::move(*c));
    // Names are how calls and backends find functions and constants: a
    // second definition would be silently ignored by Plan::function().
    std::map<std::string, size_t> seen;
    for (size_t i = 0; i < p.functions.size(); ++i)
      if (auto [at, fresh] = seen.emplace(p.functions[i].name, i); !fresh)
        fail(fmt::format("functions[{}].name", i),
             fmt::format("duplicate function '{}' (also functions[{}])", p.functions[i].name, at->second));
    seen.clear();
    for (size_t i = 0; i < p.constants.size(); ++i)
      if (auto [at, fresh] = seen.emplace(p.constants[i].name, i); !fresh)
        fail(fmt::format("constants[{}].name", i),
             fmt::format("duplicate constant '{}' (also constants[{}])", p.constants[i].name, at->second));
    if (!problems.empty())
      return std::nullopt;
    checkCallees(p);
    if (!problems.empty())
      return std::nullopt;
    return p;
  }

private:
  /// The body of a function (with its declared `results`) or of a constant
  /// (results null: only the structural checks).
  std::optional<ir::Region> body(const json &obj, const std::string &path,
                                 const json *results = nullptr) {
    const json *b = get(obj, path, "body", json::value_t::object);
    if (!b)
      return std::nullopt;
    ir::Problem err;
    std::optional<ir::Region> r = ir::fromJson(*b, path + ".body", err);
    if (!r) {
      problems.push_back(err);
      return std::nullopt;
    }
    std::vector<ir::Problem> v = results ? ir::verifyFunction(*r, *results, path + ".body")
                                         : ir::verify(*r, path + ".body");
    if (!v.empty()) {
      problems.insert(problems.end(), v.begin(), v.end());
      return std::nullopt;
    }
    return r;
  }

  std::optional<Function> function(const json &j, const std::string &path) {
    if (!j.is_object()) {
      fail(path, "expected a function object");
      return std::nullopt;
    }
    Function f;
    const json *name = get(j, path, "name", json::value_t::string);
    const json *kind = get(j, path, "kind", json::value_t::string);
    const json *block = get(j, path, "block", json::value_t::string, true);
    const json *pub = get(j, path, "pub", json::value_t::boolean);
    const json *gens = get(j, path, "generics", json::value_t::array);
    const json *cons = get(j, path, "constraints", json::value_t::array);
    const json *res = get(j, path, "results", json::value_t::array);
    const json *states = get(j, path, "states", json::value_t::array);
    std::optional<ir::Region> b = res ? body(j, path, res) : std::nullopt;
    if (!name || !kind || !block || !pub || !gens || !cons || !res || !states || !b)
      return std::nullopt;
    f.name = *name;
    f.kind = *kind;
    if (f.kind != "fn" && f.kind != "op" && f.kind != "entry")
      fail(path + ".kind", fmt::format("expected fn, op or entry, found '{}'", f.kind));
    if (!block->is_null())
      f.block = block->get<std::string>();
    f.pub = *pub;
    f.generics = *gens;
    f.constraints = *cons;
    f.results = *res;
    for (size_t i = 0; i < states->size(); ++i) {
      if (!(*states)[i].is_string()) {
        fail(fmt::format("{}.states[{}]", path, i), "expected a member path");
        return std::nullopt;
      }
      f.states.push_back((*states)[i]);
    }
    f.reducer = j.contains("reducer") ? j["reducer"] : json(nullptr);
    f.body = std::move(*b);
    return f;
  }

  std::optional<Constant> constant(const json &j, const std::string &path) {
    if (!j.is_object()) {
      fail(path, "expected a constant object");
      return std::nullopt;
    }
    const json *name = get(j, path, "name", json::value_t::string);
    const json *pub = get(j, path, "pub", json::value_t::boolean);
    const json *type = get(j, path, "type", json::value_t::object);
    const json *ctx = get(j, path, "contextual", json::value_t::boolean);
    std::optional<ir::Region> b = body(j, path);
    if (!name || !pub || !type || !ctx || !b)
      return std::nullopt;
    return Constant{*name, pub->get<bool>(), *type, ctx->get<bool>(), std::move(*b)};
  }

  /// Every call names a function of the plan, every constant a constant.
  void checkCallees(const Plan &p) {
    std::set<std::string> fns, consts;
    for (const Function &f : p.functions)
      fns.insert(f.name);
    for (const Constant &c : p.constants)
      consts.insert(c.name);
    std::function<void(const ir::Region &, const std::string &)> walk =
        [&](const ir::Region &r, const std::string &path) {
          for (size_t i = 0; i < r.ops.size(); ++i) {
            const ir::Op &op = r.ops[i];
            std::string opPath = fmt::format("{}.ops[{}]", path, i);
            if (op.kind == ir::kind::Call) {
              const json &c = op.attrs["callee"];
              if (!c.is_string() || !fns.count(c.get<std::string>()))
                fail(opPath + ".attrs.callee",
                     fmt::format("unknown function {} (not in the plan's functions)", c.dump()));
            } else if (op.kind == ir::kind::Constant) {
              const json &c = op.attrs["name"];
              if (!c.is_string() || !consts.count(c.get<std::string>()))
                fail(opPath + ".attrs.name",
                     fmt::format("unknown constant {} (not in the plan's constants)", c.dump()));
            }
            for (size_t k = 0; k < op.regions.size(); ++k)
              walk(op.regions[k], fmt::format("{}.regions[{}]", opPath, k));
          }
        };
    for (size_t i = 0; i < p.functions.size(); ++i)
      walk(p.functions[i].body, fmt::format("functions[{}].body", i));
    for (size_t i = 0; i < p.constants.size(); ++i)
      walk(p.constants[i].body, fmt::format("constants[{}].body", i));
  }
};

} // namespace

const Function *Plan::function(const std::string &name) const {
  for (const Function &f : functions)
    if (f.name == name)
      return &f;
  return nullptr;
}

std::optional<Plan> plan::readPlan(const json &doc, std::vector<ir::Problem> &problems) {
  size_t before = problems.size();
  Reader r{problems};
  std::optional<Plan> p = r.read(doc);
  // One damaged body can yield thousands of follow-on problems; the first
  // ones say what is wrong.
  if (problems.size() - before > kMaxProblems) {
    size_t n = problems.size() - before;
    problems.resize(before + kMaxProblems);
    problems.push_back({"$", fmt::format("too many errors ({} found), stopping after {}", n, kMaxProblems)});
  }
  return p;
}

std::optional<Plan> plan::readPlanText(const std::string &text, std::vector<ir::Problem> &problems) {
  std::string where, error;
  std::optional<json> doc = input::parseJson(text, where, error);
  if (!doc) {
    problems.push_back({where, error});
    return std::nullopt;
  }
  return readPlan(*doc, problems);
}

json plan::writePlan(const Plan &p) {
  json doc;
  doc["version"] = p.version;
  doc["module"] = p.module;
  doc["root"] = p.root;
  json man = json::array();
  for (const ManifestEntry &e : p.manifest)
    man.push_back({{"path", e.path}, {"kind", e.kind}, {"dtype", e.dtype}, {"shape", e.shape},
                   {"repeat", e.repeat}, {"optional", e.optional}});
  doc["manifest"] = man;
  doc["blocks"] = p.blocks;
  json fns = json::array();
  for (const Function &f : p.functions) {
    json j = {{"name", f.name},
              {"kind", f.kind},
              {"block", f.block ? json(*f.block) : json(nullptr)},
              {"pub", f.pub},
              {"generics", f.generics},
              {"constraints", f.constraints},
              {"results", f.results},
              {"states", f.states},
              {"body", ir::toJson(f.body)}};
    if (!f.reducer.is_null())
      j["reducer"] = f.reducer;
    fns.push_back(std::move(j));
  }
  doc["functions"] = fns;
  json cs = json::array();
  for (const Constant &c : p.constants)
    cs.push_back({{"name", c.name}, {"pub", c.pub}, {"type", c.type}, {"contextual", c.contextual},
                  {"body", ir::toJson(c.body)}});
  doc["constants"] = cs;
  return doc;
}
