//===- Manifest.cpp - The expanded manifest and runtime.json --------------===//
//
// The plan's manifest expanded per tensor (arrays of sub blocks repeated,
// optional sub blocks present or absent with the weights, §9.4), and the
// `runtime.json` document a CPU artifact carries: tensors in ABI order,
// entries with their signatures over the root generics, run-time checks.
//
//===----------------------------------------------------------------------===//
#include "linnet/Import/PlanImporter.h"
#include "linnet/Support/DimArith.h"

#include "mlir/IR/BuiltinAttributes.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>

using namespace mlir;
using json = nlohmann::json;

namespace linnet::import {
namespace {

/// Where a manifest path (`[*]` for arrays) sits among the optional sub
/// blocks: the paths of those around it, outermost first, and whether its
/// own block requires it (a param or buffer declared without `?`).
struct Placement {
  std::vector<std::string> subs;
  bool required = false;
};

void placeMembers(const plan::Plan &p, const json &type, const std::string &prefix,
                  const std::vector<std::string> &subs, std::map<std::string, Placement> &out,
                  int depth = 0) {
  std::string name = type.value("name", ""), module = type.value("module", "");
  const json *decl = p.blocks.contains(module + "::" + name) ? &p.blocks[module + "::" + name]
                     : p.blocks.contains(name)                ? &p.blocks[name]
                                                              : nullptr;
  if (!decl || !decl->contains("members") || depth > 64)
    return;
  for (const json &m : (*decl)["members"]) {
    std::string kind = m.value("kind", ""), path = prefix + m.value("name", "");
    const json &t = m["type"];
    std::string tk = t.value("kind", "");
    if (kind == "param" || kind == "buffer" || kind == "state")
      out[path] = {subs, kind != "state" && tk != "optional"};
    else if (kind == "sub" && tk == "block")
      placeMembers(p, t, path + ".", subs, out, depth + 1);
    else if (kind == "sub" && tk == "array")
      placeMembers(p, t["element"], path + "[*].", subs, out, depth + 1);
    else if (kind == "sub" && tk == "optional") {
      std::vector<std::string> inner = subs;
      inner.push_back(path);
      placeMembers(p, t["inner"], path + ".", inner, out, depth + 1);
    }
  }
}

/// The expanded form of manifest path prefix `pattern` inside the expanded
/// path `path`: as many `.` components as the pattern has, `[*]` counting
/// one more (`layers[*].head` in `layers.0.head.w` is `layers.0.head`).
std::string expandedPrefix(const std::string &pattern, const std::string &path) {
  size_t parts = 1 + std::count(pattern.begin(), pattern.end(), '.');
  for (size_t at = pattern.find("[*]"); at != std::string::npos; at = pattern.find("[*]", at + 3))
    ++parts;
  size_t end = 0;
  for (size_t i = 0; i < parts && end != std::string::npos; ++i)
    end = path.find('.', end + (i ? 1 : 0));
  return path.substr(0, end);
}


} // namespace

std::vector<ModelTensor> expandManifest(const plan::Plan &p,
                                        const std::set<std::string> &presentOptional,
                                        std::string &error) {
  std::map<std::string, Placement> placed;
  if (p.root.is_object() && p.blocks.is_object())
    placeMembers(p, {{"name", p.root.value("name", "")}, {"module", p.module}}, "", {}, placed);
  std::vector<ModelTensor> out;
  // Per tensor, the expanded optional sub blocks around it (outermost first).
  std::vector<std::vector<std::string>> around;
  // An optional sub block lacking a tensor it requires is absent (§9.4).
  std::map<std::string, bool> complete;
  // Counted before anything is expanded: a repeat of 2^40 (a -D value)
  // would exhaust memory in the expansion itself.
  uint64_t count = 0;
  for (const plan::ManifestEntry &e : p.manifest) {
    uint64_t copies = 1;
    for (const json &r : e.repeat) {
      // As the expansion reads a repeat: a non-integer or negative one is 0.
      int64_t n0 = r.is_number_integer() ? r.get<int64_t>() : 0;
      uint64_t n = n0 > 0 ? uint64_t(n0) : 0;
      copies = n && copies > kMaxModelTensors / n ? kMaxModelTensors + 1 : copies * n;
    }
    count += copies;
    if (count > kMaxModelTensors) {
      error = fmt::format("'{}' expands the model past {} tensors (arrays of sub blocks repeat their "
                          "members)",
                          e.path, kMaxModelTensors);
      return {};
    }
  }
  for (const plan::ManifestEntry &e : p.manifest) {
    if (!e.dtype.is_string()) {
      error = fmt::format("'{}' has no concrete dtype after instantiation", e.path);
      return {};
    }
    std::vector<int64_t> shape;
    for (const json &d : e.shape) {
      if (!d.is_number_integer()) {
        error = fmt::format("'{}' has a shape that is not constant after instantiation", e.path);
        return {};
      }
      shape.push_back(d.get<int64_t>());
    }
    std::vector<int64_t> repeat;
    for (const json &r : e.repeat)
      repeat.push_back(r.is_number_integer() ? r.get<int64_t>() : 0);
    std::vector<std::string> paths{e.path};
    for (int64_t n : repeat) {
      std::vector<std::string> next;
      for (const std::string &path : paths) {
        size_t star = path.find("[*]");
        for (int64_t i = 0; i < n; ++i)
          next.push_back(path.substr(0, star) + "." + std::to_string(i) + path.substr(star + 3));
      }
      paths = std::move(next);
    }
    auto pl = placed.find(e.path);
    for (const std::string &path : paths) {
      ModelTensor t;
      t.path = path;
      t.kind = e.kind;
      t.dtype = e.dtype.get<std::string>();
      t.shape = shape;
      t.optional = e.optional;
      t.present = !e.optional || presentOptional.count(path);
      std::vector<std::string> subs;
      if (pl != placed.end()) {
        for (const std::string &s : pl->second.subs)
          subs.push_back(expandedPrefix(s, path));
        t.required = pl->second.required;
      }
      if (!subs.empty()) {
        t.block = subs.back();
        bool &c = complete.emplace(t.block, true).first->second;
        if (t.required && !presentOptional.count(path))
          c = false;
      }
      around.push_back(std::move(subs));
      out.push_back(std::move(t));
    }
  }
  // A block's tensors (its state too) are present with it: a required one
  // is then in the weights, an optional one when the weights hold it.
  for (size_t i = 0; i < out.size(); ++i) {
    if (around[i].empty())
      continue;
    bool blockPresent = true;
    for (const std::string &s : around[i])
      blockPresent &= complete.count(s) ? complete[s] : true;
    ModelTensor &t = out[i];
    t.present = blockPresent && (t.kind == "state" || t.required || presentOptional.count(t.path));
  }
  return out;
}

nlohmann::json runtimeChecks(ModuleOp module) {
  if (auto a = module->getAttrOfType<StringAttr>("linnet.checks"))
    return json::parse(a.getValue().str(), nullptr, false);
  return json::array();
}

nlohmann::json runtimeJson(const plan::Plan &p, const std::vector<ModelTensor> &tensors,
                           const nlohmann::json &checks) {
  // The ABI is the target's: the compilation adds it (`abi`).
  json doc = {{"library", "model.so"}};
  if (checks.is_array() && !checks.empty())
    doc["checks"] = checks;
  json ts = json::array();
  for (const ModelTensor &t : tensors) {
    ts.push_back({{"path", t.path}, {"kind", t.kind}, {"dtype", t.dtype}, {"shape", t.shape},
                  {"optional", t.optional}, {"present", t.present}});
    if (!t.block.empty()) {
      ts.back()["block"] = t.block;
      if (t.required)
        ts.back()["required"] = true;
    }
  }
  doc["tensors"] = ts;
  std::map<std::string, json> rootDims;
  std::map<std::string, std::string> rootTypes;
  for (const json &g : p.root["generics"]) {
    if (g.value("kind", "") == "dim")
      rootDims[g["sym"]] = g["value"];
    else if (g.value("kind", "") == "dtype")
      rootTypes[g["var"]] = g["value"];
  }
  // A signature dim with the root generics substituted and folded: an
  // integer, or text over entry generics that the runtime evaluates
  // (every compound operand parenthesized; `/` and `%` floor).
  std::function<json(const json &)> dimSig = [&](const json &u) -> json {
    if (u.is_number_integer()) {
      int64_t v = u.get<int64_t>();
      return v < 0 ? json(fmt::format("(0 - {})", -v)) : u;
    }
    if (u.is_object() && u.contains("sym")) {
      auto it = rootDims.find(u["sym"]);
      return it != rootDims.end() ? it->second : json(u["name"]);
    }
    if (!u.is_object() || !u.contains("op"))
      return json(ir::dimStr(u));
    std::string op = u["op"];
    std::vector<json> xs;
    bool folded = true;
    for (const json &a : u["args"]) {
      xs.push_back(dimSig(a));
      folded &= xs.back().is_number_integer();
    }
    if (folded && !xs.empty()) {
      int64_t acc = xs[0].get<int64_t>();
      std::optional<dimarith::Op> dop = dimarith::opNamed(op);
      for (size_t i = 1; i < xs.size() && folded; ++i) {
        // The one dim arithmetic; what it refuses (a zero divisor, an
        // overflow) stays an expression the runtime refuses when it binds.
        std::optional<int64_t> r =
            dop && *dop != dimarith::Op::Sub ? dimarith::apply(*dop, acc, xs[i].get<int64_t>()) : std::nullopt;
        if (r)
          acc = *r;
        else
          folded = false;
      }
      if (folded)
        return acc < 0 ? json(fmt::format("(0 - {})", -acc)) : json(acc);
    }
    std::vector<std::string> parts;
    for (const json &x : xs)
      parts.push_back(x.is_string() ? x.get<std::string>() : std::to_string(x.get<int64_t>()));
    if (op == "min" || op == "max")
      return fmt::format("{}({})", op, fmt::join(parts, ", "));
    const char *sep = op == "add" ? " + " : op == "mul" ? " * " : op == "floordiv" ? " / " : " % ";
    return fmt::format("({})", fmt::join(parts, sep));
  };
  auto dtypeSig = [&](const json &d) -> json {
    if (d.is_object() && d.contains("var"))
      return rootTypes.count(d["var"]) ? json(rootTypes[d["var"]]) : json(d["name"]);
    return d;
  };
  auto sig = [&](const json &t, const std::string &name) {
    json s = json::object();
    if (!name.empty())
      s["name"] = name;
    s["dtype"] = dtypeSig(t["dtype"]);
    json shape = json::array();
    if (t.value("kind", "") == "tensor")
      for (const json &u : t["shape"])
        shape.push_back(dimSig(u));
    s["shape"] = shape;
    return s;
  };
  json entries = json::array();
  for (const plan::Function &f : p.functions) {
    if (f.kind != "entry" || !f.block || *f.block != p.root.value("name", ""))
      continue;
    std::string name = f.name.substr(f.name.rfind('.') + 1);
    json e = {{"name", name}, {"symbol", "linnet_entry_" + name}};
    json gens = json::array();
    for (const json &g : f.generics)
      gens.push_back(g["name"]);
    e["generics"] = gens;
    json ins = json::array();
    for (const ir::Value &a : f.body.args) {
      if (a.type.value("kind", "") == "relation") {
        // Two index tensors in the ABI: row_ptr (num_dst + 1) and col_idx.
        const json &dims = a.type["dims"];
        // Root generics are folded to their build-time values like any
        // shape dim: runtime.json names only entry generics.
        json dst = dimSig(dims[1]), src = dimSig(dims[0]);
        json rows = dst.is_number() ? json(dst.get<int64_t>() + 1)
                                    : json(fmt::format("({} + 1)", dst.get<std::string>()));
        ins.push_back({{"name", a.name + ".row_ptr"}, {"dtype", "i64"},
                       {"shape", {rows}}, {"relation", a.name}});
        ins.push_back({{"name", a.name + ".col_idx"}, {"dtype", "i64"}, {"shape", {dimSig(dims[2])}},
                       {"relation", a.name},
                       {"num_src", src.is_number() ? std::to_string(src.get<int64_t>())
                                                   : src.get<std::string>()}});
        continue;
      }
      ins.push_back(sig(a.type, a.name));
    }
    e["inputs"] = ins;
    json res = json::array();
    for (const json &r : f.results)
      res.push_back(sig(r, ""));
    e["results"] = res;
    // The entry's `where` clause, checked by the runtime on every call: each
    // side folded like a shape dim, over entry generics and integer scalar
    // inputs; `text` is the clause as written, for the message.
    json where = json::array();
    static const std::map<std::string, std::string> cmp = {
        {"eq", "=="}, {"ne", "!="}, {"lt", "<"}, {"le", "<="}, {"gt", ">"}, {"ge", ">="}};
    for (const json &c : f.constraints) {
      auto op = cmp.find(c.value("op", ""));
      if (op == cmp.end())
        continue;
      json l = dimSig(c["lhs"]), r = dimSig(c["rhs"]);
      where.push_back({{"lhs", l}, {"op", op->second}, {"rhs", r},
                       {"text", fmt::format("{} {} {}", ir::dimStr(c["lhs"]), op->second,
                                            ir::dimStr(c["rhs"]))}});
    }
    if (!where.empty())
      e["where"] = where;
    entries.push_back(e);
  }
  doc["entries"] = entries;
  return doc;
}

} // namespace linnet::import
