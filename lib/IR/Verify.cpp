//===- Verify.cpp - Core IR verifier --------------------------------------===//
//
// Structural checks that every producer (lowering, the plan reader) must
// pass, so consumers may index operands and regions without re-checking.
// Types are compared only where both sides are known: `unknown` and
// `literal` types (untyped constants take their dtype from the use) pass.
//
//===----------------------------------------------------------------------===//
#include "linnet/ir/ir.hpp"

#include <fmt/format.h>

#include <algorithm>

#include <map>
#include <optional>
#include <set>
#include <unordered_map>

using namespace linnet;
using namespace linnet::ir;

namespace {

/// Operand, result and region counts of a kind; -1: any.
struct Arity {
  int minOperands, maxOperands, results, regions;
  std::vector<const char *> attrs; // required attribute keys
};

const std::map<std::string, Arity> &arities() {
  static const std::map<std::string, Arity> table = {
      {kind::Const, {0, 0, 1, 0, {"value"}}},
      {kind::Constant, {0, 0, 1, 0, {"name"}}},
      {kind::DimValue, {0, 0, 1, 0, {"dim"}}},
      {kind::Arith, {1, 2, 1, 0, {"op"}}},
      {kind::Cmp, {2, 2, 1, 0, {"pred"}}},
      {kind::Select, {3, 3, 1, 0, {}}},
      {kind::Cast, {1, 1, 1, 0, {"to"}}},
      {kind::Builtin, {0, -1, 1, 0, {"name"}}},
      {kind::Tuple, {0, -1, 1, 0, {}}},
      {kind::TupleGet, {1, 1, 1, 0, {"index"}}},
      {kind::Struct, {0, -1, 1, 0, {"fields"}}},
      {kind::Field, {1, 1, 1, 0, {"name"}}},
      {kind::Some, {1, 1, 1, 0, {}}},
      {kind::Array, {0, -1, 1, 0, {}}},
      {kind::Index, {1, -1, 1, 0, {}}},
      {kind::Slice, {1, -1, 1, 0, {"axes"}}},
      {kind::Comprehension, {0, 0, 1, 1, {"indices"}}},
      {kind::Reduce, {0, -1, 1, -1, {"reducer", "indices", "filter"}}},
      {kind::Self, {0, 0, 1, 0, {}}},
      {kind::Sub, {0, 1, 1, 0, {"member"}}},
      {kind::Member, {0, 1, 1, 0, {"member"}}},
      {kind::StateRead, {0, 1, 1, 0, {"member", "path"}}},
      {kind::StateWrite, {1, 1, 0, 0, {"member"}}},
      {kind::Call, {0, -1, -1, 0, {"callee", "method", "generics", "substitution"}}},
      {kind::If, {1, 1, -1, 2, {}}},
      {kind::Match, {1, 1, -1, -1, {"arms"}}},
      {kind::While, {0, -1, -1, 2, {}}},
      {kind::Yield, {0, -1, 0, 0, {}}},
      {kind::Return, {0, -1, 0, 0, {}}},
  };
  return table;
}

/// An `arith` op's operator (by its operand count) and a `cmp` op's
/// predicate are among the names docs/plan-format.md lists: consumers
/// switch on them and must not guess at another.
std::optional<Problem> operatorProblem(const Op &o, const std::string &path) {
  static const std::vector<std::string> kBinary = {"add", "sub", "mul", "div", "mod", "and", "or"};
  static const std::vector<std::string> kUnary = {"neg", "not"};
  static const std::vector<std::string> kPreds = {"eq", "ne", "lt", "le", "gt", "ge"};
  const std::vector<std::string> *names = nullptr;
  const char *key = nullptr, *what = nullptr;
  if (o.kind == kind::Arith && o.operands.size() == 2)
    names = &kBinary, key = "op", what = "binary operator";
  else if (o.kind == kind::Arith && o.operands.size() == 1)
    names = &kUnary, key = "op", what = "unary operator";
  else if (o.kind == kind::Cmp)
    names = &kPreds, key = "pred", what = "comparison";
  if (!names || !o.attrs.is_object() || !o.attrs.contains(key))
    return std::nullopt;
  const json &v = o.attrs[key];
  if (v.is_string() && std::find(names->begin(), names->end(), v.get<std::string>()) != names->end())
    return std::nullopt;
  std::string list;
  for (const std::string &n : *names)
    list += (list.empty() ? "" : ", ") + n;
  return Problem{path + ".attrs." + key, fmt::format("unknown {} {} (expected one of {})", what, v.dump(), list)};
}

bool known(const json &t) {
  std::string k = t.is_object() ? t.value("kind", "") : "";
  return !k.empty() && k != "unknown" && k != "literal";
}
/// Equal where both are known; tensor dtypes compared, literal dtypes pass.
/// An index value (a comprehension or reduction binder) is an integer: the
/// language types it i64, and it converts to any integer dtype it meets.
bool isIndexAndInt(const json &a, const json &b) {
  auto scalar = [](const json &t, const char *d) {
    return t.is_object() && t.value("kind", "") == "scalar" && t.contains("dtype") &&
           t["dtype"].is_string() && t["dtype"].get<std::string>() == d;
  };
  auto isInt = [](const json &t) {
    if (!t.is_object() || t.value("kind", "") != "scalar" || !t.contains("dtype") ||
        !t["dtype"].is_string())
      return false;
    std::string d = t["dtype"];
    return d == "i8" || d == "i16" || d == "i32" || d == "i64" || d == "u8";
  };
  return (scalar(a, "index") && isInt(b)) || (scalar(b, "index") && isInt(a));
}
bool compatible(const json &a, const json &b) {
  return !known(a) || !known(b) || a == b || isIndexAndInt(a, b);
}

class Verifier {
public:
  std::vector<Problem> problems;
  /// A function body's declared result types: every `return` is checked
  /// against them. Null for a bare region.
  const json *results = nullptr;

  void region(const Region &r, const std::string &path) {
    scopes_.emplace_back();
    for (size_t i = 0; i < r.args.size(); ++i)
      define(r.args[i], fmt::format("{}args[{}]", path, i));
    for (size_t i = 0; i < r.ops.size(); ++i)
      op(r.ops[i], fmt::format("{}ops[{}]", path, i), i + 1 == r.ops.size());
    scopes_.pop_back();
  }

private:
  void report(std::string path, std::string msg) { problems.push_back({std::move(path), std::move(msg)}); }

  void define(const Value &v, const std::string &path) {
    if (!ids_.insert(v.id).second)
      report(path + ".id", fmt::format("value id {} is defined twice", v.id));
    if (!v.type.is_object() || !v.type.contains("kind"))
      report(path + ".type", "a value needs a type with a 'kind'");
    scopes_.back()[v.id] = &v.type;
  }
  const json *lookup(ValueId id) {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
      if (auto jt = it->find(id); jt != it->end())
        return jt->second;
    return nullptr;
  }

  static const Op *terminator(const Region &r) {
    if (r.ops.empty())
      return nullptr;
    const Op &t = r.ops.back();
    return t.kind == kind::Yield || t.kind == kind::Return ? &t : nullptr;
  }

  /// A region that yields `n` values (or returns).
  void expectYield(const Region &r, size_t n, const std::string &path,
                   const std::vector<const json *> &types = {}) {
    const Op *t = terminator(r);
    if (!t) {
      report(path, fmt::format("region must end with 'yield' of {} value{}", n, n == 1 ? "" : "s"));
      return;
    }
    if (t->kind == kind::Return)
      return;
    if (t->operands.size() != n) {
      report(path, fmt::format("region yields {} value{}, expected {}", t->operands.size(),
                               t->operands.size() == 1 ? "" : "s", n));
      return;
    }
    for (size_t i = 0; i < types.size() && i < n; ++i)
      if (const json *y = typeIn(r, t->operands[i]); y && types[i] && !compatible(*y, *types[i]))
        report(path, fmt::format("yielded value %{} has type {}, expected {}", t->operands[i],
                                 typeStr(*y), typeStr(*types[i])));
  }
  /// The type of `id` as seen from the end of region `r` (its own values, or
  /// those of enclosing scopes that are still open).
  const json *typeIn(const Region &r, ValueId id) {
    for (const Value &v : r.args)
      if (v.id == id)
        return &v.type;
    for (const Op &o : r.ops)
      for (const Value &v : o.results)
        if (v.id == id)
          return &v.type;
    return lookup(id);
  }

  void op(const Op &o, const std::string &path, bool last) {
    auto it = arities().find(o.kind);
    std::vector<const json *> in;
    for (size_t i = 0; i < o.operands.size(); ++i) {
      const json *t = lookup(o.operands[i]);
      if (!t)
        report(fmt::format("{}.operands[{}]", path, i),
               fmt::format("unknown value id {} (not defined before this use)", o.operands[i]));
      in.push_back(t);
    }
    if (it == arities().end()) {
      report(path + ".kind", fmt::format("unknown op kind '{}'", o.kind));
    } else {
      const Arity &a = it->second;
      int n = (int)o.operands.size();
      if (n < a.minOperands || (a.maxOperands >= 0 && n > a.maxOperands))
        report(path + ".operands", fmt::format("'{}' takes {} operand{}, found {}", o.kind,
                                               a.maxOperands == a.minOperands
                                                   ? std::to_string(a.minOperands)
                                               : a.maxOperands < 0
                                                   ? fmt::format("at least {}", a.minOperands)
                                                   : fmt::format("{} to {}", a.minOperands, a.maxOperands),
                                               a.minOperands == 1 && a.maxOperands == 1 ? "" : "s", n));
      if (a.results >= 0 && (int)o.results.size() != a.results)
        report(path + ".results", fmt::format("'{}' has {} result{}, found {}", o.kind, a.results,
                                              a.results == 1 ? "" : "s", o.results.size()));
      if (a.regions >= 0 && (int)o.regions.size() != a.regions)
        report(path + ".regions", fmt::format("'{}' has {} region{}, found {}", o.kind, a.regions,
                                              a.regions == 1 ? "" : "s", o.regions.size()));
      if (!o.attrs.is_object())
        report(path + ".attrs", "attrs must be an object");
      else
        for (const char *k : a.attrs)
          if (!o.attrs.contains(k))
            report(path + ".attrs", fmt::format("'{}' needs the attribute '{}'", o.kind, k));
      if (std::optional<Problem> p = operatorProblem(o, path))
        report(p->path, p->message);
    }
    if ((o.kind == kind::Yield || o.kind == kind::Return) && !last)
      report(path, fmt::format("'{}' must be the last op of its region", o.kind));
    // A function with a tuple result lists its elements as its results and
    // may return them as one tuple value.
    const json *tuple = o.kind == kind::Return && results && results->is_array() && results->size() != 1 &&
                                in.size() == 1 && in[0] && in[0]->is_object() &&
                                in[0]->value("kind", "") == "tuple" && (*in[0])["elements"].is_array()
                            ? &(*in[0])["elements"]
                            : nullptr;
    if (tuple) {
      if (tuple->size() != results->size())
        report(path + ".operands", fmt::format("'return' of a tuple of {} values, but the function "
                                               "declares {} results",
                                               tuple->size(), results->size()));
      else
        for (size_t i = 0; i < tuple->size(); ++i)
          if (!compatible((*tuple)[i], (*results)[i]))
            report(path + ".operands[0]",
                   fmt::format("returns a tuple whose element {} is {}, but the function's result {} is {}",
                               i, typeStr((*tuple)[i]), i, typeStr((*results)[i])));
    } else if (o.kind == kind::Return && results && results->is_array()) {
      if (o.operands.size() != results->size())
        report(path + ".operands", fmt::format("'return' of {} value{}, but the function declares {} "
                                               "result{}",
                                               o.operands.size(), o.operands.size() == 1 ? "" : "s",
                                               results->size(), results->size() == 1 ? "" : "s"));
      else
        for (size_t i = 0; i < in.size(); ++i)
          if (in[i] && !compatible(*in[i], (*results)[i]))
            report(fmt::format("{}.operands[{}]", path, i),
                   fmt::format("returns %{} of type {}, but the function's result {} is {}",
                               o.operands[i], typeStr(*in[i]), i, typeStr((*results)[i])));
    }
    if (problems.empty())
      checkKind(o, path, in);
    for (size_t i = 0; i < o.regions.size(); ++i)
      region(o.regions[i], fmt::format("{}.regions[{}].", path, i));
    for (size_t i = 0; i < o.results.size(); ++i)
      define(o.results[i], fmt::format("{}.results[{}]", path, i));
  }

  void checkKind(const Op &o, const std::string &path, const std::vector<const json *> &in) {
    auto res = [&](size_t i) -> const json * { return i < o.results.size() ? &o.results[i].type : nullptr; };
    if (o.kind == kind::Struct) {
      // One field name per operand: a reader indexes one by the other.
      const json &fields = o.attrs["fields"];
      if (!fields.is_array() || fields.size() != o.operands.size() ||
          !std::all_of(fields.begin(), fields.end(), [](const json &f) { return f.is_string(); }))
        report(path + ".attrs.fields",
               fmt::format("'struct' of {} operand{} needs one field name each, found {}", o.operands.size(),
                           o.operands.size() == 1 ? "" : "s", fields.dump()));
    } else if (o.kind == kind::Arith && o.operands.size() == 2 && in[0] && in[1]) {
      const json &a = *in[0], &b = *in[1];
      if (known(a) && known(b) && a.value("kind", "") == "tensor" && b.value("kind", "") == "tensor" &&
          a["shape"] != b["shape"])
        report(path, fmt::format("'{}' of {} and {}: shapes differ", o.attrs.value("op", "?"),
                                 typeStr(a), typeStr(b)));
    } else if (o.kind == kind::Comprehension) {
      const json &idx = o.attrs["indices"];
      const Region &body = o.regions[0];
      if (!idx.is_array() || idx.size() != body.args.size()) {
        report(path + ".attrs.indices", "one index per body argument");
        return;
      }
      expectYield(body, 1, fmt::format("{}.regions[0]", path));
      const json *r = res(0);
      if (r && known(*r)) {
        if (r->value("kind", "") != "tensor" || !(*r)["shape"].is_array() || (*r)["shape"].size() < idx.size()) {
          report(path + ".results[0]", fmt::format("a comprehension over {} indices yields a tensor "
                                                   "of at least that rank, found {}",
                                                   idx.size(), typeStr(*r)));
          return;
        }
        for (size_t i = 0; i < idx.size(); ++i)
          if (idx[i].contains("domain") && (*r)["shape"][i] != idx[i]["domain"])
            report(path + ".results[0]", fmt::format("axis {} is {}, but index '{}' ranges over {}",
                                                     i, dimStr((*r)["shape"][i]),
                                                     idx[i].value("name", "?"), dimStr(idx[i]["domain"])));
      }
    } else if (o.kind == kind::Reduce) {
      if (o.regions.empty() || o.regions.size() > 2) {
        report(path + ".regions", "'reduce' has a body region and, with a filter, a filter region");
        return;
      }
      bool filter = o.attrs["filter"] == true;
      if (filter != (o.regions.size() == 2))
        report(path + ".regions", "'reduce' with filter true has exactly two regions (body, filter)");
      size_t names = 0;
      if (o.attrs["indices"].is_array())
        for (const json &g : o.attrs["indices"])
          names += g.contains("names") ? g["names"].size() : 1;
      for (size_t i = 0; i < o.regions.size(); ++i)
        if (o.regions[i].args.size() != names)
          report(fmt::format("{}.regions[{}].args", path, i),
                 fmt::format("{} arguments, but the indices bind {} names", o.regions[i].args.size(), names));
      if (!o.regions.empty() && !terminator(o.regions[0]))
        report(path + ".regions[0]", "the body must end with 'yield' of the message");
      if (o.regions.size() == 2)
        expectYield(o.regions[1], 1, path + ".regions[1]");
    } else if (o.kind == kind::If || o.kind == kind::Match) {
      std::vector<const json *> types;
      for (size_t i = 0; i < o.results.size(); ++i)
        types.push_back(res(i));
      for (size_t i = 0; i < o.regions.size(); ++i)
        expectYield(o.regions[i], o.results.size(), fmt::format("{}.regions[{}]", path, i), types);
      if (o.kind == kind::Match && (!o.attrs["arms"].is_array() || o.attrs["arms"].size() != o.regions.size()))
        report(path + ".attrs.arms", "one arm per region");
    } else if (o.kind == kind::While) {
      size_t n = o.operands.size();
      if (o.results.size() != n) {
        report(path + ".results", fmt::format("'while' has one result per carried value ({}), found {}",
                                              n, o.results.size()));
        return;
      }
      for (size_t i = 0; i < 2; ++i)
        if (o.regions[i].args.size() != n)
          report(fmt::format("{}.regions[{}].args", path, i),
                 fmt::format("{} arguments, expected one per carried value ({})", o.regions[i].args.size(), n));
      expectYield(o.regions[0], 1, path + ".regions[0]");
      std::vector<const json *> types;
      for (size_t i = 0; i < n; ++i)
        types.push_back(res(i));
      expectYield(o.regions[1], n, path + ".regions[1]", types);
    } else if (o.kind == kind::Index && in[0] && known(*in[0]) && in[0]->value("kind", "") == "tensor") {
      const json &shape = (*in[0])["shape"];
      bool pack = false;
      for (const json &u : shape)
        pack |= u.is_object() && u.contains("pack");
      if (!pack && shape.size() + 1 != o.operands.size())
        report(path + ".operands", fmt::format("{} takes {} indices, found {}", typeStr(*in[0]),
                                               shape.size(), o.operands.size() - 1));
    } else if (o.kind == kind::StateWrite && !o.attrs["member"].is_string()) {
      report(path + ".attrs.member", "the member written must be a name");
    }
  }

  std::vector<std::unordered_map<ValueId, const json *>> scopes_;
  std::set<ValueId> ids_;
};

} // namespace

std::vector<Problem> ir::verify(const Region &body, const std::string &path) {
  Verifier v;
  v.region(body, path.empty() ? "" : path + ".");
  return v.problems;
}

std::vector<Problem> ir::verifyFunction(const Region &body, const json &results,
                                        const std::string &path) {
  Verifier v;
  v.results = &results;
  std::string prefix = path.empty() ? "" : path + ".";
  v.region(body, prefix);
  // Falling off the end of a body leaves its results undefined.
  if (body.ops.empty() || body.ops.back().kind != kind::Return)
    v.problems.push_back({path.empty() ? "ops" : path + ".ops",
                          fmt::format("a function body must end with 'return'{}",
                                      body.ops.empty() ? " (the body is empty)"
                                                       : fmt::format(", found '{}'", body.ops.back().kind))});
  return v.problems;
}
