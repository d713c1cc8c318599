//===- IR.cpp - Core IR: JSON form and printer ----------------------------===//
#include "linnet/ir/ir.hpp"
#include "linnet/Support/DimArith.h"

#include <fmt/format.h>

using namespace linnet;
using namespace linnet::ir;

//===----------------------------------------------------------------------===//
// JSON
//===----------------------------------------------------------------------===//

static json valueToJson(const Value &v) {
  return {{"id", v.id}, {"name", v.name}, {"type", v.type}};
}

json ir::toJson(const Region &r) {
  json args = json::array(), ops = json::array();
  for (const Value &v : r.args)
    args.push_back(valueToJson(v));
  for (const Op &op : r.ops) {
    json results = json::array(), regions = json::array();
    for (const Value &v : op.results)
      results.push_back(valueToJson(v));
    for (const Region &sub : op.regions)
      regions.push_back(toJson(sub));
    json o = {{"kind", op.kind},
              {"operands", op.operands},
              {"results", results},
              {"attrs", op.attrs},
              {"regions", regions}};
    if (!op.loc.empty())
      o["loc"] = op.loc;
    ops.push_back(std::move(o));
  }
  return {{"args", args}, {"ops", ops}};
}

namespace {
struct Reader {
  Problem &err;
  bool fail(const std::string &path, std::string msg) {
    err = {path, std::move(msg)};
    return false;
  }
  bool expect(const json &j, json::value_t t, const char *what, const std::string &path) {
    bool ok = j.type() == t || (t == json::value_t::number_integer &&
                                j.type() == json::value_t::number_unsigned);
    return ok || fail(path, fmt::format("expected {}, found {}", what, j.dump(-1, ' ', false, json::error_handler_t::replace).substr(0, 60)));
  }
  const json *key(const json &obj, const char *k, const std::string &path) {
    auto it = obj.find(k);
    if (it == obj.end()) {
      fail(path, fmt::format("missing '{}'", k));
      return nullptr;
    }
    return &*it;
  }
  bool value(const json &j, const std::string &path, Value &out) {
    if (!expect(j, json::value_t::object, "a value {id, name, type}", path))
      return false;
    const json *id = key(j, "id", path), *name = id ? key(j, "name", path) : nullptr,
               *type = name ? key(j, "type", path) : nullptr;
    if (!type || !expect(*id, json::value_t::number_integer, "an integer id", path + ".id") ||
        !expect(*name, json::value_t::string, "a string", path + ".name") ||
        !expect(*type, json::value_t::object, "a type object", path + ".type"))
      return false;
    out = {id->get<ValueId>(), name->get<std::string>(), *type};
    return true;
  }
  bool region(const json &j, const std::string &path, Region &out) {
    if (!expect(j, json::value_t::object, "a region {args, ops}", path))
      return false;
    const json *args = key(j, "args", path), *ops = args ? key(j, "ops", path) : nullptr;
    if (!ops || !expect(*args, json::value_t::array, "an array", path + ".args") ||
        !expect(*ops, json::value_t::array, "an array", path + ".ops"))
      return false;
    for (size_t i = 0; i < args->size(); ++i) {
      Value v;
      if (!value((*args)[i], fmt::format("{}.args[{}]", path, i), v))
        return false;
      out.args.push_back(std::move(v));
    }
    for (size_t i = 0; i < ops->size(); ++i) {
      std::string p = fmt::format("{}.ops[{}]", path, i);
      const json &o = (*ops)[i];
      if (!expect(o, json::value_t::object, "an op", p))
        return false;
      Op op;
      const json *k = key(o, "kind", p), *operands = k ? key(o, "operands", p) : nullptr,
                 *results = operands ? key(o, "results", p) : nullptr,
                 *attrs = results ? key(o, "attrs", p) : nullptr,
                 *regions = attrs ? key(o, "regions", p) : nullptr;
      if (!regions || !expect(*k, json::value_t::string, "a string", p + ".kind") ||
          !expect(*operands, json::value_t::array, "an array", p + ".operands") ||
          !expect(*results, json::value_t::array, "an array", p + ".results") ||
          !expect(*attrs, json::value_t::object, "an object", p + ".attrs") ||
          !expect(*regions, json::value_t::array, "an array", p + ".regions"))
        return false;
      op.kind = k->get<std::string>();
      for (size_t n = 0; n < operands->size(); ++n) {
        if (!expect((*operands)[n], json::value_t::number_integer, "a value id",
                    fmt::format("{}.operands[{}]", p, n)))
          return false;
        op.operands.push_back((*operands)[n].get<ValueId>());
      }
      for (size_t n = 0; n < results->size(); ++n) {
        Value v;
        if (!value((*results)[n], fmt::format("{}.results[{}]", p, n), v))
          return false;
        op.results.push_back(std::move(v));
      }
      op.attrs = *attrs;
      if (auto l = o.find("loc"); l != o.end()) {
        if (!expect(*l, json::value_t::string, "a location \"file:line:col\"", p + ".loc"))
          return false;
        op.loc = l->get<std::string>();
      }
      for (size_t n = 0; n < regions->size(); ++n) {
        Region r;
        if (!region((*regions)[n], fmt::format("{}.regions[{}]", p, n), r))
          return false;
        op.regions.push_back(std::move(r));
      }
      out.ops.push_back(std::move(op));
    }
    return true;
  }
};
} // namespace

std::optional<Region> ir::fromJson(const json &j, const std::string &path, Problem &err) {
  Reader r{err};
  Region out;
  if (!r.region(j, path, out))
    return std::nullopt;
  return out;
}

//===----------------------------------------------------------------------===//
// Printer
//===----------------------------------------------------------------------===//

std::string ir::dimStr(const json &d) {
  if (d.is_number_integer())
    return std::to_string(d.get<int64_t>());
  if (!d.is_object())
    return "?";
  if (d.contains("sym"))
    return d.value("name", "?");
  if (d.contains("packsize"))
    return fmt::format("#{}", d.value("name", "?"));
  std::string op = d.value("op", "");
  std::vector<json> xs;
  if (d.contains("args") && d["args"].is_array())
    xs = d["args"].get<std::vector<json>>();
  auto opOf = [](const json &a) { return a.is_object() && a.contains("op") ? a["op"].get<std::string>() : ""; };
  if (op == "min" || op == "max") {
    std::vector<std::string> args;
    for (const json &a : xs)
      args.push_back(dimStr(a));
    return fmt::format("{}({})", op, fmt::join(args, ", "));
  }
  if (op == "add") {
    // A term with a negative constant factor prints as a subtraction:
    // the plan's N + -1 * M is N - M, K + -2 is K - 2.
    std::string out;
    for (size_t i = 0; i < xs.size(); ++i) {
      const json &a = xs[i];
      bool negConst = a.is_number_integer() && a.get<int64_t>() < 0;
      bool negTerm = opOf(a) == "mul" && a["args"].size() >= 2 && a["args"][0].is_number_integer() &&
                     a["args"][0].get<int64_t>() < 0;
      std::string s;
      if (i > 0 && negConst) {
        s = std::to_string(-a.get<int64_t>());
      } else if (i > 0 && negTerm) {
        json pos = a;
        pos["args"][0] = -a["args"][0].get<int64_t>();
        if (pos["args"][0] == 1)
          pos["args"].erase(pos["args"].begin());
        s = pos["args"].size() == 1 ? dimStr(pos["args"][0]) : dimStr(pos);
        if (opOf(pos["args"].size() == 1 ? pos["args"][0] : pos) == "add")
          s = "(" + s + ")";
      } else {
        s = dimStr(a);
      }
      out += i == 0 ? s : ((negConst || negTerm) ? " - " : " + ") + s;
    }
    return out;
  }
  // *, / and % associate to the left: the first operand needs parentheses
  // only for a sum, the others for any compound operand.
  const char *sep = op == "mul" ? " * " : op == "floordiv" ? " / " : " % ";
  std::string out;
  if (op == "mul" && xs.size() >= 2 && xs[0] == -1) {
    // -1 * N is -N.
    json rest = d;
    rest["args"].erase(rest["args"].begin());
    std::string r = rest["args"].size() == 1 ? dimStr(rest["args"][0]) : dimStr(rest);
    return opOf(rest["args"].size() == 1 ? rest["args"][0] : rest) == "add" ? "-(" + r + ")" : "-" + r;
  }
  for (size_t i = 0; i < xs.size(); ++i) {
    std::string s = dimStr(xs[i]), k = opOf(xs[i]);
    bool paren = i == 0 ? k == "add" : (k == "add" || k == "mul" || k == "floordiv" || k == "mod");
    out += (i ? sep : "") + (paren ? "(" + s + ")" : s);
  }
  return out;
}

static std::string dtypeStr(const json &d) {
  if (d.is_string())
    return d.get<std::string>();
  if (d.is_object())
    return d.value("name", "?");
  return "?";
}

static std::string unitsStr(const json &units) {
  std::vector<std::string> parts;
  if (units.is_array())
    for (const json &u : units)
      parts.push_back(u.is_object() && u.contains("pack") ? fmt::format("{}...", u.value("name", "?")) : dimStr(u));
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string ir::typeStr(const json &t) {
  std::string k = t.is_object() ? t.value("kind", "") : "";
  if (k == "scalar")
    return dtypeStr(t["dtype"]);
  if (k == "literal")
    return fmt::format("{{{}}}", t.value("class", "?"));
  if (k == "tensor") {
    std::string s = unitsStr(t["shape"]);
    return fmt::format("Tensor[{}{}{}]", s, s.empty() ? "" : "; ", dtypeStr(t["dtype"]));
  }
  if (k == "tuple") {
    std::vector<std::string> parts;
    for (const json &e : t["elements"])
      parts.push_back(typeStr(e));
    return fmt::format("({})", fmt::join(parts, ", "));
  }
  if (k == "optional")
    return fmt::format("{}?", typeStr(t["inner"]));
  if (k == "array")
    return fmt::format("[{}; {}]", typeStr(t["element"]), dimStr(t["length"]));
  if (k == "block" || k == "struct" || k == "enum") {
    std::vector<std::string> args;
    for (const json &a : t["args"])
      args.push_back(a.is_array() ? fmt::format("[{}]", unitsStr(a)) : a.is_string() ? a.get<std::string>()
                                  : a.is_object() && a.contains("var") ? dtypeStr(a)
                                                                       : dimStr(a));
    return fmt::format("{}<{}>", t.value("name", "?"), fmt::join(args, ", "));
  }
  if (k == "relation")
    return fmt::format("{}[{}]", t.value("relation", "?"), unitsStr(t["dims"]));
  return k.empty() ? "?" : k;
}

static void printRegion(const Region &r, int indent, std::string &out);

static void printOp(const Op &op, int indent, std::string &out) {
  std::string pad(indent, ' ');
  out += pad;
  if (!op.results.empty()) {
    std::vector<std::string> ids;
    for (const Value &v : op.results)
      ids.push_back(fmt::format("%{}", v.id));
    out += fmt::format("{} = ", fmt::join(ids, ", "));
  }
  std::vector<std::string> operands;
  for (ValueId id : op.operands)
    operands.push_back(fmt::format("%{}", id));
  out += fmt::format("{}({})", op.kind, fmt::join(operands, ", "));
  if (!op.attrs.empty())
    out.append(" ").append(op.attrs.dump(-1, ' ', false, json::error_handler_t::replace)); // (GCC 12 -Wrestrict misfires on " " + s)
  std::string comment;
  if (!op.results.empty()) {
    std::vector<std::string> types, names;
    for (const Value &v : op.results) {
      types.push_back(typeStr(v.type));
      if (!v.name.empty())
        names.push_back(v.name);
    }
    out += fmt::format(" : {}", fmt::join(types, ", "));
    if (!names.empty())
      comment = fmt::format("  // {}", fmt::join(names, ", "));
  }
  if (op.regions.empty()) {
    out += comment + "\n";
    return;
  }
  out += " {" + comment + "\n";
  for (size_t i = 0; i < op.regions.size(); ++i) {
    if (i)
      out += pad + "} {\n";
    printRegion(op.regions[i], indent + 2, out);
  }
  out += pad + "}\n";
}

static void printRegion(const Region &r, int indent, std::string &out) {
  if (!r.args.empty()) {
    std::vector<std::string> args;
    for (const Value &v : r.args)
      args.push_back(fmt::format("%{}: {}{}", v.id, v.name.empty() ? "" : v.name + ": ",
                                 typeStr(v.type)));
    out += fmt::format("{}^({}):\n", std::string(indent, ' '), fmt::join(args, ", "));
  }
  for (const Op &op : r.ops)
    printOp(op, indent, out);
}

std::string ir::print(const Region &body, int indent) {
  std::string out;
  printRegion(body, indent, out);
  return out;

}

std::optional<int64_t> ir::evalDim(const json &d, const DimLookup &sym, const DimLookup &pack, std::string &why) {
  std::string malformed;
  auto leaf = [&](const json &n) -> std::optional<int64_t> {
    if (n.is_number_integer())
      return n.get<int64_t>();
    if (n.contains("sym") && n["sym"].is_string())
      return sym ? sym(n["sym"].get<std::string>()) : std::nullopt;
    if (n.contains("packsize") && n["packsize"].is_string())
      return pack ? pack(n["packsize"].get<std::string>()) : std::nullopt;
    return std::nullopt;
  };
  auto step = [&](dimarith::Op op, int64_t a, int64_t b, const json &node) -> std::optional<int64_t> {
    dimarith::Error e;
    std::optional<int64_t> r = dimarith::apply(op, a, b, &e);
    if (!r)
      why = fmt::format("dim {} {}", dimStr(node),
                        e == dimarith::Error::DivideByZero ? "divides by zero" : "overflows 64-bit integers");
    return r;
  };
  // A node that is not a dim is unbound, as before: `why` says only what
  // the arithmetic refused.
  return foldDim<int64_t>(d, leaf, step, malformed);
}
