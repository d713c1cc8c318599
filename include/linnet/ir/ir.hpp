//===- ir.hpp - linnet Core IR: regions, values, operations -----*- C++ -*-===//
//
// The Core IR is what a function body means after Sema: a region of
// operations over SSA values, in program order. It is the `body` of every
// function and constant in the plan (docs/plan-format.md lists each kind and
// its attributes), so it is deliberately plain data: an op is a kind string,
// operand ids, result values, JSON attributes and nested regions.
//
// Every value carries its full type in the plan's form (a tensor's shape as
// dim units and its dtype), so a consumer (the plan importer building
// gf.apply) never re-derives a shape. Nested regions see the values defined
// before their op in every enclosing region (no explicit capture lists).
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_IR_IR_HPP
#define LINNET_IR_IR_HPP

#include "linnet/Support/DimArith.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace linnet::ir {

using json = nlohmann::json;
using ValueId = int64_t;

/// An SSA value. `type` is a plan type (`{"kind": "tensor", "shape": [...],
/// "dtype": "f32"}`); `name` is the source name, or empty for temporaries.
struct Value {
  ValueId id = 0;
  std::string name;
  json type;
};

struct Region;

/// One operation. `attrs` is a JSON object; which keys a kind takes is in
/// docs/plan-format.md ("Operations") and checked by verify().
struct Op {
  std::string kind;
  std::vector<ValueId> operands;
  std::vector<Value> results;
  json attrs = json::object();
  std::vector<Region> regions;
  /// Where the op comes from, `file:line:col` (1-based; the root file as
  /// given, other modules as `a/b/c.ln`), or empty when unknown. Written in
  /// the plan as the op's optional `loc`.
  std::string loc;
};

/// A function body, a comprehension body, a branch: arguments, then ops; a
/// region that yields values ends with a `yield` (or `return`) op.
struct Region {
  std::vector<Value> args;
  std::vector<Op> ops;
};

/// The operation kinds, grouped as docs/plan-format.md lists them.
namespace kind {
// values
inline constexpr const char *Const = "const";         // attrs: value (number, bool, string, null)
inline constexpr const char *Constant = "constant";   // a module constant; attrs: name
inline constexpr const char *DimValue = "dim";        // a dim as an index; attrs: dim
inline constexpr const char *Arith = "arith";         // attrs: op (add sub mul div mod neg and or not)
inline constexpr const char *Cmp = "cmp";             // attrs: pred (eq ne lt le gt ge)
inline constexpr const char *Select = "select";       // cond, a, b
inline constexpr const char *Cast = "cast";           // attrs: to (a dtype)
inline constexpr const char *Builtin = "builtin";     // attrs: name (exp, max, inf, ...)
inline constexpr const char *Tuple = "tuple";
inline constexpr const char *TupleGet = "tuple.get";  // attrs: index
inline constexpr const char *Struct = "struct";       // fields in declaration order; attrs: fields
inline constexpr const char *Field = "field";         // attrs: name
inline constexpr const char *Some = "some";
inline constexpr const char *Array = "array";
// tensors
inline constexpr const char *Index = "index";         // base, one index per axis
inline constexpr const char *Slice = "slice";         // base, bounds; attrs: axes
inline constexpr const char *Comprehension = "comprehension"; // attrs: indices; 1 region
inline constexpr const char *Reduce = "reduce";       // attrs: reducer, indices, filter; 1-2 regions
// blocks, calls, effects
inline constexpr const char *Self = "self";           // the block instance a method runs on
inline constexpr const char *Sub = "sub";             // [parent block]; attrs: member
inline constexpr const char *Member = "member";       // [block]; attrs: member (param/buffer)
inline constexpr const char *StateRead = "state.read";   // [block]; attrs: member, path
inline constexpr const char *StateWrite = "state.write"; // value; attrs: member
inline constexpr const char *Call = "call";           // [receiver,] args; attrs: callee, method, generics, substitution
// control
inline constexpr const char *If = "if";               // cond; then, else regions
inline constexpr const char *Match = "match";         // scrutinee; attrs: arms; a region per arm
inline constexpr const char *While = "while";         // carried inits; cond, body regions
inline constexpr const char *Yield = "yield";
inline constexpr const char *Return = "return";
} // namespace kind

/// A problem found by the verifier or the JSON reader: where (a JSON-like
/// path inside the region, e.g. `ops[3].regions[0].ops[1].operands[0]`)
/// and what.
struct Problem {
  std::string path;
  std::string message;
  std::string str() const { return path.empty() ? message : path + ": " + message; }
};

/// Checks ids (unique, defined before use in this or an enclosing region),
/// known kinds with their operand, result and region arity, required
/// attributes, terminators, and types where both sides are known (operands
/// of arithmetic, yields against results, comprehension shapes against
/// their domains). `path` prefixes every reported path.
std::vector<Problem> verify(const Region &body, const std::string &path = "");
/// verify() for a function body: it must end with `return`, and every
/// `return` gives as many values as `results` (a JSON array of plan types)
/// with compatible types.
std::vector<Problem> verifyFunction(const Region &body, const json &results,
                                    const std::string &path = "");

/// The textual form printed by `linnet ir`: one op a line, nested regions
/// indented, types in source spelling (`Tensor[B, Out; T]`).
std::string print(const Region &body, int indent = 0);
/// A plan type in source spelling: `Tensor[Heads * Head, 2; f32]`, `index`.
std::string typeStr(const json &type);
std::string dimStr(const json &dim);

/// The one walk over a plan dim (an integer, {"sym"}, {"packsize"}, or
/// {"op": add|mul|floordiv|mod|min|max, "args": [...]} folded left) that
/// every consumer of dims shares: `leaf` gives the value of an integer,
/// {"sym"} or {"packsize"} node; `step(op, acc, next, node)` one step of
/// the node's operator. Evaluation (evalDim) steps with dimarith::apply;
/// the importer steps by folding known operands with it and emitting
/// arith ops for the others. nullopt when `leaf` or `step` give nullopt,
/// or with `why` set when the node is not a dim.
template <class V, class Leaf, class Step>
std::optional<V> foldDim(const json &d, Leaf &&leaf, Step &&step, std::string &why) {
  if (d.is_number_integer() || (d.is_object() && (d.contains("sym") || d.contains("packsize"))))
    return leaf(d);
  if (!d.is_object() || !d.contains("op") || !d["op"].is_string() || !d.contains("args") ||
      !d["args"].is_array() || d["args"].empty()) {
    why = "'" + d.dump() + "' is not a dim";
    return std::nullopt;
  }
  std::optional<dimarith::Op> op = dimarith::opNamed(d["op"].get<std::string>());
  if (!op || *op == dimarith::Op::Sub) {
    why = "unknown dim operator '" + d["op"].get<std::string>() + "'";
    return std::nullopt;
  }
  std::optional<V> acc;
  for (const json &a : d["args"]) {
    std::optional<V> v = foldDim<V>(a, leaf, step, why);
    if (!v)
      return std::nullopt;
    acc = acc ? step(*op, *acc, *v, d) : std::move(v);
    if (!acc)
      return std::nullopt;
  }
  return acc;
}

/// Looks a generic (`sym`) or a pack (`packsize`) up; nullopt when unbound.
using DimLookup = std::function<std::optional<int64_t>(const std::string &)>;
/// The value of a plan dim (an integer, {"sym"}, {"packsize"}, or {"op":
/// add|mul|floordiv|mod|min|max, "args": [...]} folded left), one step at a
/// time by dimarith::apply: nullopt with `why` empty when a name is
/// unbound, with `why` set ("dim N / 0 divides by zero", "... overflows
/// 64-bit integers") when the arithmetic fails.
std::optional<int64_t> evalDim(const json &dim, const DimLookup &sym, const DimLookup &pack, std::string &why);

/// The plan form of a region, and back. fromJson reports the first
/// structural problem (a missing key, a wrong JSON kind) with its path.
json toJson(const Region &r);
std::optional<Region> fromJson(const json &j, const std::string &path, Problem &err);

} // namespace linnet::ir

#endif // LINNET_IR_IR_HPP
