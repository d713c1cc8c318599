//===- Interpreter.cpp - The reference interpreter of Core IR -------------===//
//
// A tree-walking evaluator over the plan's regions. Every function call gets
// a frame (one slot per value id of the function: ids are unique in a
// function and nested regions see their enclosing values) and an
// environment binding every generic in scope (dims, shape packs, dtypes).
// Types on values are resolved in that environment when an op needs them.
//
//===----------------------------------------------------------------------===//
#include "linnet/Interp/Interpreter.h"
#include "linnet/Runtime/Quantize.h"

#include "Value.h"

#include "linnet/ir/ir.hpp"
#include "linnet/ir/reducers.hpp"
#include "linnet/Runtime/Runtime.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

using namespace linnet;
using namespace linnet::interp;
using json = nlohmann::json;

namespace linnet::interp {

/// Every generic in scope: dims and packs by symbol id, dtypes by var id.
struct Env {
  std::map<std::string, int64_t> dims;
  std::map<std::string, std::vector<int64_t>> packs;
  std::map<std::string, DT> dtypes;
  /// Dtype generics bound to a block format (q8_0, q4_K, ...): their values are
  /// f32 (each element as its block dequantizes), dtypes says F32.
  std::map<std::string, std::string> blockFormats;
};

/// One instance of a block in the instantiated hierarchy.
struct Instance {
  std::string block; // key in plan.blocks
  std::string path;  // canonical prefix ("" for the root, "model.layers.0" below)
  Env env;
  std::map<std::string, Val> members; // params, buffers (optional: Optional) and subs
  std::map<std::string, Val> state;
};

/// A located error: the message already names where it happened.
struct LocatedError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// How a region ended: by its yield, or by a `return` of the function.
struct Outcome {
  bool returned = false;
  std::vector<Val> vals;
};

struct FnInfo {
  const plan::Function *f = nullptr;
  size_t slots = 0;
  std::unordered_map<ir::ValueId, std::string> names;
};

struct Frame {
  const FnInfo *fn;
  Env env;
  Instance *self;
  std::vector<Val> vals;
};

/// The run's numerics policy on this thread, restored on exit (a host may
/// run interpreters of different policies in turn).
struct NumericsScope {
  support::NumericsPolicy saved;
  explicit NumericsScope(support::NumericsPolicy p) : saved(numericsPolicy()) { setNumericsPolicy(p); }
  ~NumericsScope() { setNumericsPolicy(saved); }
};

/// Op kinds as the interpreter dispatches on them.
enum class OpK : uint8_t {
  Const, Constant, DimValue, Arith, Cmp, Select, Cast, Builtin, Tuple, TupleGet, Struct, Field, Some, Array,
  Index, Slice, Comprehension, Reduce, Self, Sub, Member, StateRead, StateWrite, Call, If, Match, While,
  Yield, Return, Unknown
};

/// What the interpreter decodes from an op once, when the plan is loaded,
/// rather than at every evaluation (an element of a comprehension runs its
/// body's ops once per element): the kind, the operator of arith, cmp and
/// builtin ops, and the element dtype of the first result where its type
/// fixes it without the environment.
struct OpInfo {
  OpK kind = OpK::Unknown;
  int8_t code = -1; // BinOp, CmpPred or UnOp; -1 where the name is none of them
  enum class Result : uint8_t { None, Fixed, Dynamic } result = Result::None;
  DT dt = DT::F32; // the result's dtype when Fixed
  std::optional<DT> castTo; // a cast's target dtype where it is a concrete name
  const std::string *var = nullptr; // a Dynamic result's dtype variable, if that is what it is
};

OpInfo decodeOp(const ir::Op &op) {
  static const std::pair<const char *, OpK> kKinds[] = {
      {ir::kind::Const, OpK::Const},         {ir::kind::Constant, OpK::Constant},
      {ir::kind::DimValue, OpK::DimValue},   {ir::kind::Arith, OpK::Arith},
      {ir::kind::Cmp, OpK::Cmp},             {ir::kind::Select, OpK::Select},
      {ir::kind::Cast, OpK::Cast},           {ir::kind::Builtin, OpK::Builtin},
      {ir::kind::Tuple, OpK::Tuple},         {ir::kind::TupleGet, OpK::TupleGet},
      {ir::kind::Struct, OpK::Struct},       {ir::kind::Field, OpK::Field},
      {ir::kind::Some, OpK::Some},           {ir::kind::Array, OpK::Array},
      {ir::kind::Index, OpK::Index},         {ir::kind::Slice, OpK::Slice},
      {ir::kind::Comprehension, OpK::Comprehension}, {ir::kind::Reduce, OpK::Reduce},
      {ir::kind::Self, OpK::Self},           {ir::kind::Sub, OpK::Sub},
      {ir::kind::Member, OpK::Member},       {ir::kind::StateRead, OpK::StateRead},
      {ir::kind::StateWrite, OpK::StateWrite}, {ir::kind::Call, OpK::Call},
      {ir::kind::If, OpK::If},               {ir::kind::Match, OpK::Match},
      {ir::kind::While, OpK::While},         {ir::kind::Yield, OpK::Yield},
      {ir::kind::Return, OpK::Return}};
  OpInfo i;
  for (const auto &[name, k] : kKinds)
    if (op.kind == name) {
      i.kind = k;
      break;
    }
  auto name = [&](const char *key) -> std::string {
    auto it = op.attrs.find(key);
    return it != op.attrs.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  auto code = [](auto c) { return c ? static_cast<int8_t>(*c) : int8_t(-1); };
  if (i.kind == OpK::Arith) {
    std::string o = name("op");
    i.code = op.operands.size() == 1 ? code(unOpFromName(o)) : code(binOpFromName(o));
  } else if (i.kind == OpK::Cmp) {
    i.code = code(cmpPredFromName(name("pred")));
  } else if (i.kind == OpK::Builtin) {
    std::string n = name("name");
    i.code = op.operands.size() == 2 ? code(binOpFromName(n)) : code(unOpFromName(n));
  }
  if (i.kind == OpK::Cast) {
    DT to;
    if (dtFromName(name("to"), to))
      i.castTo = to;
  }
  if (!op.results.empty()) {
    const json &t = op.results[0].type;
    std::string k = t.is_object() ? t.value("kind", "") : "";
    if (k == "literal") {
      i.result = OpInfo::Result::Fixed;
      i.dt = t.value("class", "") == "float" ? DT::LitFloat : DT::LitInt;
    } else if (k == "scalar" || k == "tensor") {
      // A reference into the op's type (not a copy): `var` points into it.
      auto d = t.find("dtype");
      bool named = d != t.end() && d->is_string() && dtFromName(d->get<std::string>(), i.dt);
      i.result = named ? OpInfo::Result::Fixed : OpInfo::Result::Dynamic;
      if (d != t.end() && d->is_object())
        if (auto v = d->find("var"); v != d->end() && v->is_string())
          i.var = v->get_ptr<const std::string *>();
    }
  }
  return i;
}

struct Interpreter::Impl {
  const plan::Plan plan;
  std::unique_ptr<rt::SafeTensorsFile> weights;
  std::vector<std::unique_ptr<Instance>> instances;
  Instance *root = nullptr;
  std::map<std::string, FnInfo> fns;
  std::map<std::string, const plan::Constant *> constants;
  std::map<std::string, Val> constantCache;
  std::map<std::string, std::pair<Instance *, std::string>> statePaths;
  int depth = 0;
  support::NumericsPolicy numerics = support::NumericsPolicy::AsWritten;
  /// Every op of every function and constant body, decoded once; read-only
  /// after construction.
  std::unordered_map<const ir::Op *, OpInfo> opInfos;

  void decodeOps(const ir::Region &r) {
    for (const ir::Op &op : r.ops) {
      opInfos.emplace(&op, decodeOp(op));
      for (const ir::Region &sub : op.regions)
        decodeOps(sub);
    }
  }
  /// By value (a few bytes): an op outside the plan's bodies (none today)
  /// is decoded on the spot.
  OpInfo info(const ir::Op &op) const {
    auto it = opInfos.find(&op);
    return it != opInfos.end() ? it->second : decodeOp(op);
  }
  /// The element dtype of `op`'s first result: elemDtype() of its type,
  /// without reading the type where it was decoded.
  std::optional<DT> resultDtype(const ir::Op &op, const OpInfo &i, const Env &env) const {
    switch (i.result) {
    case OpInfo::Result::Fixed: return i.dt;
    case OpInfo::Result::Dynamic:
      if (i.var)
        if (auto it = env.dtypes.find(*i.var); it != env.dtypes.end())
          return it->second;
      return elemDtype(op.results[0].type, env);
    case OpInfo::Result::None: break;
    }
    return std::nullopt;
  }

  explicit Impl(plan::Plan planIn) : plan(std::move(planIn)) {
    const plan::Plan &p = plan;
    for (const plan::Function &f : p.functions) {
      FnInfo &fi = fns[f.name];
      fi.f = &f;
      ir::ValueId maxId = -1;
      std::function<void(const ir::Region &)> walk = [&](const ir::Region &r) {
        for (const ir::Value &a : r.args) {
          maxId = std::max(maxId, a.id);
          if (!a.name.empty())
            fi.names[a.id] = a.name;
        }
        for (const ir::Op &op : r.ops) {
          for (const ir::Value &v : op.results) {
            maxId = std::max(maxId, v.id);
            if (!v.name.empty())
              fi.names[v.id] = v.name;
            else if ((op.kind == ir::kind::Member || op.kind == ir::kind::StateRead) &&
                     op.attrs.contains("member"))
              fi.names[v.id] = op.attrs["member"].get<std::string>();
          }
          for (const ir::Region &sub : op.regions)
            walk(sub);
        }
      };
      walk(f.body);
      fi.slots = static_cast<size_t>(maxId + 1);
    }
    for (const plan::Constant &c : p.constants)
      constants[c.name] = &c;
    for (const plan::Function &f : p.functions)
      decodeOps(f.body);
    for (const plan::Constant &c : p.constants)
      decodeOps(c.body);
  }

  //===--------------------------------------------------------------------===//
  // Dims, dtypes and types in an environment
  //===--------------------------------------------------------------------===//

  /// Refuses a tensor of `shape` x `dt` before it is allocated or filled
  /// if its size overflows 64 bits or is over the one limit of a call
  /// (rt::maxCallBytes, LINNET_MAX_CALL_BYTES), as the runtime refuses
  /// such a result: a huge generic must not hang or exhaust the process.
  static void checkSize(const std::string &what, const std::vector<int64_t> &shape, DT dt) {
    uint64_t total = 0;
    std::string error;
    if (!rt::checkCallBytes(what, shape, toRt(dt), total, error))
      throw EvalError(error);
  }

  /// The value of a dim; nullopt if it names an unbound generic
  /// (ir::evalDim: the one dim arithmetic).
  static std::optional<int64_t> tryDim(const json &d, const Env &env) {
    std::string why;
    std::optional<int64_t> v = ir::evalDim(
        d,
        [&](const std::string &sym) -> std::optional<int64_t> {
          auto it = env.dims.find(sym);
          return it == env.dims.end() ? std::nullopt : std::optional<int64_t>(it->second);
        },
        [&](const std::string &pack) -> std::optional<int64_t> {
          auto it = env.packs.find(pack);
          return it == env.packs.end() ? std::nullopt : std::optional<int64_t>(int64_t(it->second.size()));
        },
        why);
    if (!v && !why.empty())
      throw EvalError(why);
    return v;
  }

  static int64_t dim(const json &d, const Env &env) {
    std::optional<int64_t> v = tryDim(d, env);
    if (!v)
      throw EvalError(fmt::format("dim {} is not bound here", d.is_null() ? "(none)" : ir::dimStr(d)));
    return *v;
  }

  static std::vector<int64_t> shape(const json &units, const Env &env) {
    std::vector<int64_t> s;
    for (const json &u : units) {
      if (u.is_object() && u.contains("pack")) {
        auto it = env.packs.find(u["pack"].get<std::string>());
        if (it == env.packs.end())
          throw EvalError(fmt::format("shape pack '{}' is not bound here", u.value("name", "?")));
        s.insert(s.end(), it->second.begin(), it->second.end());
      } else {
        s.push_back(dim(u, env));
      }
    }
    return s;
  }

  /// The block format (q8_0, q4_K, ...) a dtype names or is bound to, or "".
  static std::string blockFormatOf(const json &d, const Env &env) {
    if (d.is_string())
      return rt::blockFormat(d.get<std::string>()) ? d.get<std::string>() : "";
    if (d.is_object() && d.contains("var"))
      if (auto it = env.blockFormats.find(d["var"].get<std::string>()); it != env.blockFormats.end())
        return it->second;
    return "";
  }

  static std::optional<DT> tryDtype(const json &d, const Env &env) {
    if (d.is_string()) {
      DT t;
      if (dtFromName(d.get<std::string>(), t))
        return t;
      if (!blockFormatOf(d, env).empty())
        return DT::F32; // an element read is its dequantized value
      return std::nullopt;
    }
    if (d.is_object() && d.contains("var")) {
      auto it = env.dtypes.find(d["var"].get<std::string>());
      if (it != env.dtypes.end())
        return it->second;
    }
    return std::nullopt;
  }

  static DT dtype(const json &d, const Env &env) {
    if (std::optional<DT> t = tryDtype(d, env))
      return *t;
    throw EvalError(fmt::format("dtype {} is not bound here", d.is_object() ? d.value("name", d.dump()) : d.dump()));
  }

  /// The scalar dtype of a scalar, literal or tensor type; nullopt otherwise.
  static std::optional<DT> elemDtype(const json &t, const Env &env) {
    std::string k = t.value("kind", "");
    if (k == "scalar" || k == "tensor")
      return dtype(t["dtype"], env);
    if (k == "literal")
      return t.value("class", "") == "float" ? DT::LitFloat : DT::LitInt;
    return std::nullopt;
  }

  /// Binds one generic `g` (a plan generic object) to `value`, a generic
  /// value evaluated in `from`.
  static bool bindGeneric(const json &g, const json &value, const Env &from, Env &to) {
    std::string kind = g.value("kind", "");
    if (kind == "dtype") {
      std::optional<DT> t = tryDtype(value, from);
      if (!t)
        return false;
      to.dtypes[g["var"].get<std::string>()] = *t;
      if (std::string b = blockFormatOf(value, from); !b.empty())
        to.blockFormats[g["var"].get<std::string>()] = b;
      else
        to.blockFormats.erase(g["var"].get<std::string>());
      return true;
    }
    if (kind == "shape") {
      try {
        to.packs[g["sym"].get<std::string>()] = shape(value, from);
      } catch (const EvalError &) {
        return false;
      }
      return true;
    }
    std::optional<int64_t> v = tryDim(value, from);
    if (!v)
      return false;
    to.dims[g["sym"].get<std::string>()] = *v;
    return true;
  }

  /// Binds a substitution entry (id -> generic value) whose kind follows
  /// from the value's form.
  static bool bindSubst(const std::string &id, const json &value, const Env &from, Env &to) {
    if (value.is_string() || (value.is_object() && value.contains("var"))) {
      std::optional<DT> t = tryDtype(value, from);
      if (!t)
        return false;
      to.dtypes[id] = *t;
      return true;
    }
    if (value.is_array()) {
      try {
        to.packs[id] = shape(value, from);
      } catch (const EvalError &) {
        return false;
      }
      return true;
    }
    std::optional<int64_t> v = tryDim(value, from);
    if (!v)
      return false;
    to.dims[id] = *v;
    return true;
  }

  /// Binds the generics of `type` that `v` fixes (bare dim symbols, packs,
  /// dtype vars) where not bound yet. Used where a substitution is silent.
  static void unify(const json &type, const Val &v, Env &env) {
    std::string k = type.value("kind", "");
    if ((k == "tensor" || k == "scalar") && (v.k == Val::Tensor || v.k == Val::Scalar)) {
      const json &d = type["dtype"];
      if (d.is_object() && d.contains("var") && !env.dtypes.count(d["var"].get<std::string>()) &&
          v.dt != DT::LitFloat && v.dt != DT::LitInt)
        env.dtypes[d["var"].get<std::string>()] = v.dt;
      if (k != "tensor" || v.k != Val::Tensor)
        return;
      const json &units = type["shape"];
      size_t packs = 0;
      for (const json &u : units)
        packs += u.is_object() && u.contains("pack");
      if (packs > 1)
        return;
      size_t n = units.size() - packs, rank = v.shape.size();
      if (rank < n || (packs == 0 && rank != n))
        return;
      size_t ax = 0;
      for (const json &u : units) {
        if (u.is_object() && u.contains("pack")) {
          std::string id = u["pack"];
          std::vector<int64_t> p(v.shape.begin() + ax, v.shape.begin() + ax + (rank - n));
          if (!env.packs.count(id))
            env.packs[id] = p;
          ax += rank - n;
          continue;
        }
        if (u.is_object() && u.contains("sym") && !env.dims.count(u["sym"].get<std::string>()))
          env.dims[u["sym"].get<std::string>()] = v.shape[ax];
        ++ax;
      }
    } else if (k == "tuple" && v.k == Val::Tuple) {
      for (size_t i = 0; i < type["elements"].size() && i < v.elems.size(); ++i)
        unify(type["elements"][i], v.elems[i], env);
    } else if (k == "optional" && v.k == Val::Optional && !v.elems.empty()) {
      unify(type["inner"], v.elems[0], env);
    } else if (k == "relation" && v.k == Val::Rel) {
      const json &dims = type["dims"];
      int64_t vals[3] = {v.rel->numSrc, v.rel->numDst, static_cast<int64_t>(v.rel->colIdx.size())};
      for (size_t i = 0; i < 3 && i < dims.size(); ++i)
        if (dims[i].is_object() && dims[i].contains("sym") && !env.dims.count(dims[i]["sym"].get<std::string>()))
          env.dims[dims[i]["sym"].get<std::string>()] = vals[i];
    }
  }

  //===--------------------------------------------------------------------===//
  // Helpers on values
  //===--------------------------------------------------------------------===//

  static Val unit() { return Val(); }

  static Val convertVal(const Val &v, DT to) {
    if (v.k == Val::Scalar)
      return Val::scalar(to, convert(v.s, v.dt, to));
    if (v.k == Val::Tensor) {
      if (v.dt == to)
        return v;
      std::vector<Num> d(v.data->size());
      for (size_t i = 0; i < d.size(); ++i)
        d[i] = convert((*v.data)[i], v.dt, to);
      return Val::tensor(to, v.shape, std::move(d));
    }
    return v;
  }

  /// A value converted to what `type` says, where the type is concrete
  /// (contextual literals take their context's dtype here).
  static Val conform(const Val &v, const json &type, const Env &env) {
    if (v.k != Val::Scalar && v.k != Val::Tensor)
      return v;
    std::string k = type.value("kind", "");
    if (k != "scalar" && k != "tensor")
      return v;
    std::optional<DT> t = tryDtype(type["dtype"], env);
    return t ? convertVal(v, *t) : v;
  }

  static DT common(DT a, DT b) {
    if (a == b)
      return a;
    if (a == DT::LitInt || a == DT::LitFloat) {
      if (a == DT::LitFloat && !isFloat(b))
        return DT::LitFloat;
      return b;
    }
    if (b == DT::LitInt || b == DT::LitFloat) {
      if (b == DT::LitFloat && !isFloat(a))
        return DT::LitFloat;
      return a;
    }
    if (isFloat(a))
      return a;
    if (isFloat(b))
      return b;
    if (a == DT::Index)
      return b;
    if (b == DT::Index)
      return a;
    return a;
  }

  const std::string &nameOf(const Frame &f, ir::ValueId id) const {
    static const std::string empty;
    auto it = f.fn->names.find(id);
    return it == f.fn->names.end() ? empty : it->second;
  }
  std::string label(const Frame &f, ir::ValueId id) const {
    const std::string &n = nameOf(f, id);
    return n.empty() ? fmt::format("%{}", id) : fmt::format("'{}'", n);
  }

  static int64_t indexOf(const Val &v, const char *what) {
    if (v.k != Val::Scalar)
      throw EvalError(fmt::format("{} is {}, expected an integer", what, kindName(v.k)));
    if (isFloat(v.dt))
      throw EvalError(fmt::format("{} is a {} value, expected an integer", what, dtName(v.dt)));
    return v.s.i;
  }

  //===--------------------------------------------------------------------===//
  // Regions and ops
  //===--------------------------------------------------------------------===//

  Outcome region(const ir::Region &r, Frame &f) {
    for (const ir::Op &op : r.ops) {
      OpInfo i = info(op);
      if (i.kind == OpK::Yield || i.kind == OpK::Return) {
        Outcome o;
        o.returned = i.kind == OpK::Return;
        for (ir::ValueId id : op.operands)
          o.vals.push_back(f.vals[id]);
        return o;
      }
      if (std::optional<Outcome> early = opLocated(op, i, f))
        return std::move(*early);
    }
    return {};
  }

  /// Runs a region with `args` bound; a `return` inside it is an error
  /// where the region yields an element (comprehension, reduction).
  std::vector<Val> yieldOf(const ir::Region &r, Frame &f, const char *where) {
    Outcome o = region(r, f);
    if (o.returned)
      throw EvalError(fmt::format("'return' inside {}", where));
    return std::move(o.vals);
  }

  std::optional<Outcome> opLocated(const ir::Op &op, const OpInfo &i, Frame &f) {
    try {
      return evalOp(op, i, f);
    } catch (const EvalError &e) {
      std::string at = op.loc.empty() ? fmt::format("in {}: ", f.fn->f->name) : op.loc + ": ";
      throw LocatedError(at + "error: " + e.what());
    }
  }

  std::optional<Outcome> evalOp(const ir::Op &op, const OpInfo &info, Frame &f) {
    OpK k = info.kind;
    auto set = [&](Val v) { f.vals[op.results[0].id] = std::move(v); };
    auto operand = [&](size_t i) -> const Val & { return f.vals[op.operands[i]]; };
    static const json kNone;
    const json &rt = op.results.empty() ? kNone : op.results[0].type; // no copy: both are lvalues

    if (k == OpK::Const) {
      set(constant(op.attrs["value"], rt, f.env));
    } else if (k == OpK::Constant) {
      set(moduleConstant(op.attrs["name"], rt, f.env));
    } else if (k == OpK::DimValue) {
      set(Val::scalar(DT::Index, numI(dim(op.attrs["dim"], f.env))));
    } else if (k == OpK::Arith) {
      set(arithOp(op, info, f));
    } else if (k == OpK::Cmp) {
      set(cmpOp(op, info, f));
    } else if (k == OpK::Select) {
      const Val &c = operand(0);
      if (c.k != Val::Scalar)
        throw EvalError("select: the condition is not a scalar");
      set(conform(truthy(c.dt, c.s) ? operand(1) : operand(2), rt, f.env));
    } else if (k == OpK::Cast) {
      DT to = info.castTo ? *info.castTo : dtype(op.attrs["to"], f.env);
      set(convertVal(operand(0), to));
    } else if (k == OpK::Builtin) {
      set(builtinOp(op, info, f));
    } else if (k == OpK::Tuple) {
      Val v;
      v.k = Val::Tuple;
      for (ir::ValueId id : op.operands)
        v.elems.push_back(f.vals[id]);
      set(std::move(v));
    } else if (k == OpK::TupleGet) {
      const Val &t = operand(0);
      size_t i = op.attrs["index"].get<size_t>();
      if (t.k != Val::Tuple || i >= t.elems.size())
        throw EvalError(fmt::format("element {} of {}", i, kindName(t.k)));
      set(t.elems[i]);
    } else if (k == OpK::Struct) {
      Val v;
      v.k = Val::Struct;
      auto names = std::make_shared<std::vector<std::string>>();
      for (const json &n : op.attrs["fields"])
        names->push_back(n);
      v.fields = names;
      const json &ft = rt;
      for (size_t i = 0; i < op.operands.size(); ++i)
        v.elems.push_back(f.vals[op.operands[i]]);
      (void)ft;
      set(std::move(v));
    } else if (k == OpK::Field) {
      const Val &s = operand(0);
      std::string n = op.attrs["name"];
      if (s.k != Val::Struct)
        throw EvalError(fmt::format("field '{}' of {}", n, kindName(s.k)));
      for (size_t i = 0; i < s.fields->size(); ++i)
        if ((*s.fields)[i] == n) {
          set(conform(s.elems[i], rt, f.env));
          return std::nullopt;
        }
      throw EvalError(fmt::format("the struct has no field '{}'", n));
    } else if (k == OpK::Some) {
      Val v;
      v.k = Val::Optional;
      v.elems.push_back(operand(0));
      set(std::move(v));
    } else if (k == OpK::Array) {
      set(arrayOp(op, f));
    } else if (k == OpK::Index) {
      set(indexOp(op, f));
    } else if (k == OpK::Slice) {
      set(sliceOp(op, f));
    } else if (k == OpK::Comprehension) {
      set(comprehension(op, f));
    } else if (k == OpK::Reduce) {
      set(reduce(op, f));
    } else if (k == OpK::Self) {
      if (!f.self)
        throw EvalError("'self' outside a block method");
      Val v;
      v.k = Val::Block;
      v.inst = f.self;
      set(std::move(v));
    } else if (k == OpK::Sub || k == OpK::Member || k == OpK::StateRead) {
      Instance *b = f.self;
      if (!op.operands.empty()) {
        const Val &bv = operand(0);
        if (bv.k != Val::Block)
          throw EvalError(fmt::format("member '{}' of {}", op.attrs["member"].get<std::string>(), kindName(bv.k)));
        b = bv.inst;
      }
      if (!b)
        throw EvalError("a block member outside a block method");
      std::string m = op.attrs["member"];
      const std::map<std::string, Val> &table = k == OpK::StateRead ? b->state : b->members;
      auto it = table.find(m);
      if (it == table.end())
        throw EvalError(fmt::format("block instance '{}' has no {} '{}'", b->path.empty() ? "<root>" : b->path,
                                    k == OpK::StateRead ? "state" : "member", m));
      set(it->second);
    } else if (k == OpK::StateWrite) {
      if (!f.self)
        throw EvalError("a state write outside a block method");
      std::string m = op.attrs["member"];
      auto it = f.self->state.find(m);
      if (it == f.self->state.end())
        throw EvalError(fmt::format("block instance '{}' has no state '{}'", f.self->path, m));
      Val v = convertVal(operand(0), it->second.dt);
      if (v.k != Val::Tensor || v.shape != it->second.shape)
        throw EvalError(fmt::format("state '{}' is {} {}, the value written is {} {}", m,
                                    dtName(it->second.dt), shapeStr(it->second.shape),
                                    kindName(v.k), shapeStr(v.shape)));
      it->second = std::move(v);
    } else if (k == OpK::Call) {
      Val r = callOp(op, f);
      if (!op.results.empty())
        set(std::move(r));
    } else if (k == OpK::If) {
      const Val &c = operand(0);
      if (c.k != Val::Scalar)
        throw EvalError("if: the condition is not a scalar");
      Outcome o = region(op.regions[truthy(c.dt, c.s) ? 0 : 1], f);
      if (o.returned)
        return o;
      bindResults(op, o.vals, f);
    } else if (k == OpK::Match) {
      return matchOp(op, f);
    } else if (k == OpK::While) {
      std::vector<Val> carried;
      for (ir::ValueId id : op.operands)
        carried.push_back(kept(f.vals[id]));
      const ir::Region &cond = op.regions[0], &body = op.regions[1];
      for (;;) {
        for (size_t i = 0; i < cond.args.size() && i < carried.size(); ++i)
          f.vals[cond.args[i].id] = carried[i];
        Outcome c = region(cond, f);
        if (c.returned)
          return c;
        if (c.vals.empty() || c.vals[0].k != Val::Scalar)
          throw EvalError("while: the condition is not a scalar");
        if (!truthy(c.vals[0].dt, c.vals[0].s))
          break;
        for (size_t i = 0; i < body.args.size() && i < carried.size(); ++i)
          f.vals[body.args[i].id] = carried[i];
        Outcome b = region(body, f);
        if (b.returned)
          return b;
        carried = std::move(b.vals);
        for (Val &v : carried)
          v = kept(std::move(v));
      }
      bindResults(op, carried, f);
    } else {
      throw EvalError(fmt::format("the interpreter does not know op kind '{}'", op.kind));
    }
    return std::nullopt;
  }

  void bindResults(const ir::Op &op, const std::vector<Val> &vals, Frame &f) {
    for (size_t i = 0; i < op.results.size() && i < vals.size(); ++i)
      f.vals[op.results[i].id] = kept(conform(vals[i], op.results[i].type, f.env));
  }

  /// `v` where it is kept (a branch's result, a loop's or a fold's state):
  /// half scalars rounded to their dtype, which only the f32-compute
  /// numerics policy leaves unrounded before (tensors round as they are
  /// built).
  static Val kept(Val v) {
    if (v.k == Val::Scalar && deferredRounding(v.dt))
      v.s = normalize(v.dt, v.s);
    for (Val &e : v.elems)
      e = kept(std::move(e));
    return v;
  }

  Val constant(const json &value, const json &type, const Env &env) {
    std::string k = type.value("kind", "");
    if (value.is_null()) {
      Val v;
      if (k == "optional")
        v.k = Val::Optional;
      return v;
    }
    if (value.is_string())
      return unit(); // strings have no runtime value
    DT t = DT::LitFloat;
    if (value.is_boolean())
      t = DT::Bool;
    else if (std::optional<DT> e = elemDtype(type, env))
      t = *e;
    else
      t = value.is_number_float() ? DT::LitFloat : DT::LitInt;
    Num n = value.is_boolean() ? numI(value.get<bool>())
            : value.is_number_float() ? numF(value.get<double>())
                                      : numI(value.get<int64_t>());
    DT from = value.is_boolean() ? DT::Bool : value.is_number_float() ? DT::LitFloat : DT::LitInt;
    Num x = convert(n, from, t);
    if (deferredRounding(t))
      x = normalize(t, x); // a literal is its dtype's value
    if (k == "tensor") {
      std::vector<int64_t> s = shape(type["shape"], env);
      checkSize("a constant tensor", s, t);
      Val v = Val::tensor(t, s, {});
      v.data = std::make_shared<const std::vector<Num>>(static_cast<size_t>(v.numElements()), x);
      return v;
    }
    return Val::scalar(t, x);
  }

  Val moduleConstant(const json &name, const json &type, const Env &env) {
    std::string n = name;
    auto it = constantCache.find(n);
    if (it == constantCache.end()) {
      auto c = constants.find(n);
      if (c == constants.end())
        throw EvalError(fmt::format("unknown constant '{}'", n));
      // A constant body has no function frame: give it one of its own.
      FnInfo fi;
      plan::Function dummy;
      dummy.name = n;
      fi.f = &dummy;
      ir::ValueId maxId = 0;
      std::function<void(const ir::Region &)> walk = [&](const ir::Region &r) {
        for (const ir::Op &op : r.ops) {
          for (const ir::Value &v : op.results)
            maxId = std::max(maxId, v.id);
          for (const ir::Region &s : op.regions)
            walk(s);
        }
      };
      walk(c->second->body);
      fi.slots = static_cast<size_t>(maxId + 1);
      Frame cf{&fi, Env{}, nullptr, std::vector<Val>(fi.slots)};
      Outcome o = region(c->second->body, cf);
      Val v = o.vals.empty() ? unit() : o.vals[0];
      if (!c->second->contextual)
        v = conform(v, c->second->type, Env{});
      it = constantCache.emplace(n, v).first;
    }
    return conform(it->second, type, env);
  }

  Val elementwise1(const Val &a, const std::function<Num(Num)> &fn, DT to) {
    if (a.k == Val::Scalar)
      return Val::scalar(to, fn(a.s));
    if (a.k != Val::Tensor)
      throw EvalError(fmt::format("an arithmetic operand is {}", kindName(a.k)));
    std::vector<Num> d(a.data->size());
    for (size_t i = 0; i < d.size(); ++i)
      d[i] = fn((*a.data)[i]);
    return Val::tensor(to, a.shape, std::move(d));
  }

  Val elementwise2(const Val &a, const Val &b, const std::function<Num(Num, Num)> &fn, DT to) {
    if (a.k == Val::Scalar && b.k == Val::Scalar)
      return Val::scalar(to, fn(a.s, b.s));
    for (const Val *x : {&a, &b})
      if (x->k != Val::Scalar && x->k != Val::Tensor)
        throw EvalError(fmt::format("an arithmetic operand is {}", kindName(x->k)));
    if (a.k == Val::Tensor && b.k == Val::Tensor && a.shape != b.shape)
      throw EvalError(fmt::format("elementwise operands of shapes {} and {}", shapeStr(a.shape),
                                  shapeStr(b.shape)));
    const Val &t = a.k == Val::Tensor ? a : b;
    std::vector<Num> d(t.data->size());
    for (size_t i = 0; i < d.size(); ++i)
      d[i] = fn(a.k == Val::Tensor ? (*a.data)[i] : a.s, b.k == Val::Tensor ? (*b.data)[i] : b.s);
    return Val::tensor(to, t.shape, std::move(d));
  }

  Val arithOp(const ir::Op &op, const OpInfo &info, Frame &f) {
    const Val &a = f.vals[op.operands[0]];
    std::optional<DT> rt = resultDtype(op, info, f.env);
    if (op.operands.size() == 1) {
      if (info.code < 0)
        throw EvalError(fmt::format("unknown unary operator '{}'", op.attrs.value("op", "")));
      UnOp o = static_cast<UnOp>(info.code);
      DT t = rt && *rt != DT::LitFloat && *rt != DT::LitInt ? *rt : a.dt;
      Val x = convertVal(a, t);
      return elementwise1(x, [&](Num n) { return unary(o, t, n); }, t);
    }
    if (info.code < 0)
      throw EvalError(fmt::format("unknown operator '{}'", op.attrs.value("op", "")));
    BinOp o = static_cast<BinOp>(info.code);
    const Val &b = f.vals[op.operands[1]];
    DT t = common(a.dt, b.dt);
    if (rt && *rt != DT::LitFloat && *rt != DT::LitInt)
      t = *rt;
    Val x = convertVal(a, t), y = convertVal(b, t);
    return elementwise2(x, y, [&](Num p, Num q) { return arith(o, t, p, q); }, t);
  }

  Val cmpOp(const ir::Op &op, const OpInfo &info, Frame &f) {
    if (info.code < 0)
      throw EvalError(fmt::format("unknown comparison '{}'", op.attrs.value("pred", "")));
    CmpPred p = static_cast<CmpPred>(info.code);
    const Val &a = f.vals[op.operands[0]], &b = f.vals[op.operands[1]];
    DT t = common(a.dt, b.dt);
    if (t == DT::Index && (a.dt != b.dt))
      t = DT::I64;
    Val x = convertVal(a, t), y = convertVal(b, t);
    return elementwise2(x, y, [&](Num m, Num n) { return numI(compare(p, t, m, n)); }, DT::Bool);
  }

  /// `__builtin_knn(pos_dst, pos_src, K, no_self)` and
  /// `__builtin_radius(pos_dst, pos_src, r, K, no_self)` (std.graph), by
  /// brute force: the oracle the compiled builders are held against. Each
  /// destination keeps its nearest candidates, ordered by (squared
  /// distance in f64 with NaN as +inf, source index).
  Val relationBuiltin(const ir::Op &op, Frame &f, bool radius) {
    const char *name = radius ? "__builtin_radius" : "__builtin_knn";
    if (op.operands.size() != (radius ? 5u : 4u))
      throw EvalError(fmt::format("{}: wrong number of arguments", name));
    const Val &dst = f.vals[op.operands[0]], &src = f.vals[op.operands[1]];
    for (const Val *p : {&dst, &src})
      if (p->k != Val::Tensor || p->shape.size() != 2 || !isFloat(p->dt))
        throw EvalError(fmt::format("{} takes float positions [points, axes]", name));
    if (dst.shape[1] != src.shape[1])
      throw EvalError(fmt::format("{}: {} and {} coordinates", name, dst.shape[1], src.shape[1]));
    auto scalarAt = [&](size_t i) {
      const Val &v = f.vals[op.operands[i]];
      if (v.k != Val::Scalar)
        throw EvalError(fmt::format("{}: argument {} is not a scalar", name, i));
      return v;
    };
    double r = 0;
    if (radius) {
      Val rv = scalarAt(2);
      r = asDouble(rv.dt, rv.s);
    }
    Val kv = scalarAt(radius ? 3 : 2), selfv = scalarAt(radius ? 4 : 3);
    int64_t k = kv.s.i;
    bool noSelf = truthy(selfv.dt, selfv.s);
    int64_t m = dst.shape[0], n = src.shape[0], d = dst.shape[1];
    // K is a dim (never negative); K = 0 relates nothing.
    if (k < 0)
      throw EvalError(fmt::format("{}: the neighbour bound is {}, negative", name, k));
    auto coord = [](const Val &p, int64_t i, int64_t a) {
      return asDouble(p.dt, (*p.data)[i * p.shape[1] + a]);
    };
    auto rel = std::make_shared<Relation>();
    rel->numSrc = n;
    rel->numDst = m;
    rel->rowPtr.push_back(0);
    std::vector<std::pair<double, int64_t>> cand;
    for (int64_t i = 0; i < m; ++i) {
      cand.clear();
      for (int64_t j = 0; j < n; ++j) {
        if (noSelf && i == j)
          continue;
        double s = 0.0;
        for (int64_t a = 0; a < d; ++a) {
          double t = coord(dst, i, a) - coord(src, j, a);
          t = t * t;
          s = s + t;
        }
        if (radius && !(r >= 0 && s <= r * r))
          continue;
        cand.push_back({std::isnan(s) ? std::numeric_limits<double>::infinity() : s, j});
      }
      size_t keep = std::min<size_t>(cand.size(), static_cast<size_t>(k));
      std::partial_sort(cand.begin(), cand.begin() + keep, cand.end());
      for (size_t c = 0; c < keep; ++c)
        rel->colIdx.push_back(cand[c].second);
      rel->rowPtr.push_back(static_cast<int64_t>(rel->colIdx.size()));
    }
    Val v;
    v.k = Val::Rel;
    v.rel = std::move(rel);
    return v;
  }

  /// `__builtin_paged(table, lengths, P, N)` (std.graph.paged): row d has
  /// min(max(lengths[d], 0), B * P) edges, the j-th from slot
  /// table[d, j / P] * P + j % P of a pool of N; an edge whose slot is
  /// outside [0, N) is not related (the compiled expansion skips it too).
  Val pagedBuiltin(const ir::Op &op, Frame &f) {
    if (op.operands.size() != 4)
      throw EvalError("__builtin_paged: wrong number of arguments");
    const Val &table = f.vals[op.operands[0]], &lengths = f.vals[op.operands[1]];
    if (table.k != Val::Tensor || table.shape.size() != 2 || isFloat(table.dt) ||
        lengths.k != Val::Tensor || lengths.shape.size() != 1 || isFloat(lengths.dt) ||
        lengths.shape[0] != table.shape[0])
      throw EvalError("__builtin_paged takes an integer block table [rows, blocks] and row lengths [rows]");
    auto scalarAt = [&](size_t i) {
      const Val &v = f.vals[op.operands[i]];
      if (v.k != Val::Scalar)
        throw EvalError(fmt::format("__builtin_paged: argument {} is not a scalar", i));
      return v.s.i;
    };
    int64_t page = scalarAt(2), pool = scalarAt(3);
    if (page <= 0 || pool < 0)
      throw EvalError(fmt::format("__builtin_paged: pages of {} slots in a pool of {}", page, pool));
    int64_t m = table.shape[0], blocks = table.shape[1];
    auto rel = std::make_shared<Relation>();
    rel->numSrc = pool;
    rel->numDst = m;
    rel->rowPtr.push_back(0);
    for (int64_t d = 0; d < m; ++d) {
      int64_t n = std::clamp<int64_t>((*lengths.data)[d].i, 0, blocks * page);
      for (int64_t j = 0; j < n; ++j) {
        int64_t pg = (*table.data)[d * blocks + j / page].i;
        // pg * page + j % page < pool, without overflow.
        if (pg >= 0 && pg <= (pool - 1 - j % page) / page && pool > j % page)
          rel->colIdx.push_back(pg * page + j % page);
      }
      rel->rowPtr.push_back(static_cast<int64_t>(rel->colIdx.size()));
    }
    Val v;
    v.k = Val::Rel;
    v.rel = std::move(rel);
    return v;
  }

  Val builtinOp(const ir::Op &op, const OpInfo &info, Frame &f) {
    std::string n = op.attrs["name"];
    if (n == "knn" || n == "radius")
      return relationBuiltin(op, f, n == "radius");
    if (n == "paged")
      return pagedBuiltin(op, f);
    std::optional<DT> rt = resultDtype(op, info, f.env);
    DT t = rt ? *rt : DT::LitFloat;
    if ((t == DT::LitFloat || t == DT::LitInt) && !op.operands.empty()) {
      t = f.vals[op.operands[0]].dt;
      for (size_t i = 1; i < op.operands.size(); ++i)
        t = common(t, f.vals[op.operands[i]].dt);
    }
    if (n == "inf") {
      if (!op.operands.empty())
        throw EvalError("__builtin_inf takes no arguments");
      if (!isFloat(t))
        throw EvalError(fmt::format("__builtin_inf in a {} context (infinity is a float)", dtName(t)));
      return Val::scalar(t, numF(std::numeric_limits<double>::infinity()));
    }
    std::vector<Val> xs;
    for (ir::ValueId id : op.operands)
      xs.push_back(convertVal(f.vals[id], t));
    if (n == "max" || n == "min" || n == "pow") {
      if (xs.size() != 2)
        throw EvalError(fmt::format("{} takes two arguments, found {}", n, xs.size()));
      if (n == "pow" && !isFloat(t))
        throw EvalError(fmt::format("__builtin_pow takes floats, found {}", dtName(t)));
      BinOp o = static_cast<BinOp>(info.code);
      return elementwise2(xs[0], xs[1], [&](Num a, Num b) { return arith(o, t, a, b); }, t);
    }
    if (xs.size() != 1)
      throw EvalError(fmt::format("__builtin_{} takes one argument, found {}", n, xs.size()));
    if (info.code < 0)
      throw EvalError(fmt::format("unknown builtin '__builtin_{}'", n));
    UnOp o = static_cast<UnOp>(info.code);
    return elementwise1(xs[0], [&](Num a) { return unary(o, t, a); }, t);
  }

  Val arrayOp(const ir::Op &op, Frame &f) {
    const json &rt = op.results[0].type;
    if (rt.value("kind", "") == "tensor") {
      DT t = dtype(rt["dtype"], f.env);
      std::vector<Num> d;
      std::vector<int64_t> elemShape;
      for (size_t i = 0; i < op.operands.size(); ++i) {
        Val e = convertVal(f.vals[op.operands[i]], t);
        if (e.k == Val::Scalar) {
          d.push_back(e.s);
        } else if (e.k == Val::Tensor) {
          if (i == 0)
            elemShape = e.shape;
          else if (e.shape != elemShape)
            throw EvalError(fmt::format("array literal elements of shapes {} and {}", shapeStr(elemShape),
                                        shapeStr(e.shape)));
          d.insert(d.end(), e.data->begin(), e.data->end());
        } else {
          throw EvalError(fmt::format("an array literal element is {}", kindName(e.k)));
        }
      }
      std::vector<int64_t> s{static_cast<int64_t>(op.operands.size())};
      s.insert(s.end(), elemShape.begin(), elemShape.end());
      return Val::tensor(t, s, std::move(d));
    }
    Val v;
    v.k = Val::Array;
    for (ir::ValueId id : op.operands)
      v.elems.push_back(f.vals[id]);
    return v;
  }

  Val indexOp(const ir::Op &op, Frame &f) {
    const Val &base = f.vals[op.operands[0]];
    auto what = [&] { return label(f, op.operands[0]); }; // only for messages
    if (base.k == Val::Array) {
      if (op.operands.size() != 2)
        throw EvalError(fmt::format("array {} takes one index", what()));
      int64_t i = indexOf(f.vals[op.operands[1]], "an array index");
      if (i < 0 || i >= static_cast<int64_t>(base.elems.size()))
        throw EvalError(fmt::format("index {} is out of range for array {} (length {})", i, what(),
                                    base.elems.size()));
      return base.elems[static_cast<size_t>(i)];
    }
    if (base.k != Val::Tensor)
      throw EvalError(fmt::format("{} is {}, not a tensor or an array", what(), kindName(base.k)));
    size_t n = op.operands.size() - 1;
    if (n > base.shape.size())
      throw EvalError(fmt::format("{} indices for {} of rank {}", n, what(), base.shape.size()));
    int64_t offset = 0;
    for (size_t a = 0; a < n; ++a) {
      int64_t i = indexOf(f.vals[op.operands[a + 1]], "an index");
      if (i < 0 || i >= base.shape[a])
        throw EvalError(fmt::format("index {} is out of range for axis {} of {} (size {}, shape {})", i, a,
                                    what(), base.shape[a], shapeStr(base.shape)));
      offset = offset * base.shape[a] + i;
    }
    if (n == base.shape.size())
      return Val::scalar(base.dt, (*base.data)[static_cast<size_t>(offset)]);
    std::vector<int64_t> rest(base.shape.begin() + n, base.shape.end());
    int64_t inner = 1;
    for (int64_t d : rest)
      inner *= d;
    auto b = base.data->begin() + offset * inner;
    return Val::tensor(base.dt, rest, std::vector<Num>(b, b + inner));
  }

  Val sliceOp(const ir::Op &op, Frame &f) {
    const Val &base = f.vals[op.operands[0]];
    std::string what = label(f, op.operands[0]);
    if (base.k != Val::Tensor)
      throw EvalError(fmt::format("slice of {}, which is {}", what, kindName(base.k)));
    const json &axes = op.attrs["axes"];
    size_t rank = base.shape.size(), plain = 0;
    for (const json &a : axes)
      plain += !(a.value("kind", "") == "whole" && a.value("rest", false));
    // Per source axis: the positions it keeps, and whether the axis stays.
    std::vector<std::vector<int64_t>> pick;
    std::vector<bool> keep;
    size_t ax = 0;
    auto bound = [&](const json &pos, int64_t dflt) -> int64_t {
      if (pos.is_null())
        return dflt;
      return indexOf(f.vals[op.operands[pos.get<size_t>()]], "a slice bound");
    };
    auto whole = [&] {
      std::vector<int64_t> p(static_cast<size_t>(base.shape[ax]));
      for (int64_t i = 0; i < base.shape[ax]; ++i)
        p[static_cast<size_t>(i)] = i;
      pick.push_back(std::move(p));
      keep.push_back(true);
      ++ax;
    };
    for (const json &a : axes) {
      std::string k = a.value("kind", "");
      if (k == "whole" && a.value("rest", false)) {
        if (rank < plain)
          throw EvalError(fmt::format("{} has rank {}, the slice names {} axes", what, rank, plain));
        for (size_t r = 0; r < rank - plain; ++r)
          whole();
        continue;
      }
      if (ax >= rank)
        throw EvalError(fmt::format("{} has rank {}, the slice names more axes", what, rank));
      if (k == "whole") {
        whole();
      } else if (k == "squeeze") {
        int64_t i = bound(a["index"], 0);
        if (i < 0 || i >= base.shape[ax])
          throw EvalError(fmt::format("index {} is out of range for axis {} of {} (size {}, shape {})", i, ax,
                                      what, base.shape[ax], shapeStr(base.shape)));
        pick.push_back({i});
        keep.push_back(false);
        ++ax;
      } else if (k == "range") {
        int64_t size = base.shape[ax];
        int64_t start = bound(a["start"], 0), stop = bound(a["stop"], size), step = bound(a["step"], 1);
        if (step <= 0)
          throw EvalError(fmt::format("slice step {} of {} is not positive", step, what));
        if (start < 0 || stop > size || start > stop)
          throw EvalError(fmt::format("slice {}:{} is out of range for axis {} of {} (size {})", start, stop,
                                      ax, what, size));
        std::vector<int64_t> p;
        for (int64_t i = start; i < stop; i += step)
          p.push_back(i);
        pick.push_back(std::move(p));
        keep.push_back(true);
        ++ax;
      } else {
        throw EvalError(fmt::format("unknown slice axis kind '{}'", k));
      }
    }
    while (ax < rank)
      whole();
    std::vector<int64_t> outShape;
    for (size_t i = 0; i < rank; ++i)
      if (keep[i])
        outShape.push_back(static_cast<int64_t>(pick[i].size()));
    std::vector<int64_t> strides(rank, 1);
    for (size_t i = rank; i-- > 1;)
      strides[i - 1] = strides[i] * base.shape[i];
    std::vector<Num> out;
    std::vector<size_t> ctr(rank, 0);
    bool empty = false;
    for (auto &p : pick)
      empty |= p.empty();
    if (!empty)
      for (;;) {
        int64_t off = 0;
        for (size_t i = 0; i < rank; ++i)
          off += pick[i][ctr[i]] * strides[i];
        out.push_back((*base.data)[static_cast<size_t>(off)]);
        size_t i = rank;
        while (i > 0) {
          --i;
          if (++ctr[i] < pick[i].size())
            break;
          ctr[i] = 0;
          if (i == 0) {
            i = rank + 1;
            break;
          }
        }
        if (i == rank + 1 || rank == 0)
          break;
      }
    if (outShape.empty() && out.size() == 1)
      return Val::scalar(base.dt, out[0]);
    return Val::tensor(base.dt, outShape, std::move(out));
  }

  /// Calls `fn(idx)` for every point of the product of `sizes`, in row-major order.
  template <typename F> static void forEachPoint(const std::vector<int64_t> &sizes, F fn) {
    for (int64_t s : sizes)
      if (s <= 0)
        return;
    std::vector<int64_t> idx(sizes.size(), 0);
    for (;;) {
      fn(idx);
      size_t i = sizes.size();
      for (;;) {
        if (i == 0)
          return;
        --i;
        if (++idx[i] < sizes[i])
          break;
        idx[i] = 0;
      }
    }
  }

  Val comprehension(const ir::Op &op, Frame &f) {
    const json &indices = op.attrs["indices"];
    const ir::Region &body = op.regions[0];
    std::vector<int64_t> sizes;
    for (const json &ix : indices) {
      if (ix["domain"].is_null())
        throw EvalError(fmt::format("index '{}' has no dim domain", ix.value("name", "?")));
      int64_t n = dim(ix["domain"], f.env);
      if (n < 0)
        throw EvalError(fmt::format("index '{}' has a negative domain {}", ix.value("name", "?"), n));
      sizes.push_back(n);
    }
    const json &rt = op.results[0].type;
    std::optional<DT> t = rt.value("kind", "") == "tensor" ? tryDtype(rt["dtype"], f.env) : std::nullopt;
    checkSize("a comprehension", sizes, t.value_or(DT::Bool));
    std::optional<std::vector<int64_t>> elemShape;
    std::vector<Num> data;
    DT seen = t.value_or(DT::F32);
    forEachPoint(sizes, [&](const std::vector<int64_t> &idx) {
      for (size_t i = 0; i < idx.size(); ++i)
        f.vals[body.args[i].id] = Val::scalar(DT::Index, numI(idx[i]));
      std::vector<Val> y = yieldOf(body, f, "a comprehension");
      if (y.size() != 1)
        throw EvalError("a comprehension body yields one value");
      Val e = t ? convertVal(y[0], *t) : y[0];
      if (!t && (e.k == Val::Scalar || e.k == Val::Tensor))
        seen = e.dt, t = e.dt;
      std::vector<int64_t> es;
      if (e.k == Val::Tensor)
        es = e.shape;
      else if (e.k != Val::Scalar)
        throw EvalError(fmt::format("a comprehension element is {}", kindName(e.k)));
      if (!elemShape)
        elemShape = es;
      else if (*elemShape != es)
        throw EvalError(fmt::format("comprehension elements of shapes {} and {}", shapeStr(*elemShape),
                                    shapeStr(es)));
      if (e.k == Val::Scalar)
        data.push_back(e.s);
      else
        data.insert(data.end(), e.data->begin(), e.data->end());
    });
    std::vector<int64_t> s = sizes;
    if (elemShape) {
      s.insert(s.end(), elemShape->begin(), elemShape->end());
    } else if (rt.value("kind", "") == "tensor") {
      // An empty domain: the element shape comes from the type.
      try {
        s = shape(rt["shape"], f.env);
      } catch (const EvalError &) {
      }
    }
    return Val::tensor(seen, s, std::move(data));
  }

  //===--------------------------------------------------------------------===//
  // Reductions
  //===--------------------------------------------------------------------===//

  struct Binder {
    bool relation = false;
    int64_t size = 0;           // dense
    const Relation *rel = nullptr;
    int64_t dst = 0;            // relation target
    size_t names = 1;           // region args it binds
  };

  /// Calls `fn()` for every point of the reduction's domain (with the
  /// region args of both regions bound), in index order.
  void forEachTerm(const ir::Op &op, Frame &f, const std::function<void()> &fn) {
    std::vector<Binder> bs;
    for (const json &ix : op.attrs["indices"]) {
      Binder b;
      if (ix.contains("names")) {
        b.relation = true;
        b.names = ix["names"].size();
        if (!ix.contains("relation") || !ix.contains("target"))
          throw EvalError("a relation domain without its relation operand");
        const Val &r = f.vals[op.operands[ix["relation"].get<size_t>()]];
        if (r.k != Val::Rel)
          throw EvalError(fmt::format("the domain {} is {}, not a relation",
                                      label(f, op.operands[ix["relation"].get<size_t>()]), kindName(r.k)));
        b.rel = r.rel.get();
        b.dst = indexOf(f.vals[op.operands[ix["target"].get<size_t>()]], "a relation's destination");
        if (b.dst < 0 || b.dst >= b.rel->numDst)
          throw EvalError(fmt::format("destination {} is out of range for relation {} ({} destinations)", b.dst,
                                      label(f, op.operands[ix["relation"].get<size_t>()]), b.rel->numDst));
      } else {
        if (ix["domain"].is_null())
          throw EvalError(fmt::format("index '{}' has no dim domain", ix.value("name", "?")));
        b.size = dim(ix["domain"], f.env);
      }
      bs.push_back(b);
    }
    const ir::Region &body = op.regions[0];
    const ir::Region *filter = op.regions.size() > 1 ? &op.regions[1] : nullptr;
    std::function<void(size_t, size_t)> loop = [&](size_t level, size_t arg) {
      if (level == bs.size()) {
        if (filter) {
          std::vector<Val> c = yieldOf(*filter, f, "a reduction filter");
          if (c.size() != 1 || c[0].k != Val::Scalar)
            throw EvalError("a reduction filter yields one bool");
          if (!truthy(c[0].dt, c[0].s))
            return;
        }
        fn();
        return;
      }
      const Binder &b = bs[level];
      auto bindArg = [&](size_t k, int64_t v) {
        if (arg + k < body.args.size())
          f.vals[body.args[arg + k].id] = Val::scalar(DT::Index, numI(v));
        if (filter && arg + k < filter->args.size())
          f.vals[filter->args[arg + k].id] = Val::scalar(DT::Index, numI(v));
      };
      if (!b.relation) {
        for (int64_t i = 0; i < b.size; ++i) {
          bindArg(0, i);
          loop(level + 1, arg + 1);
        }
        return;
      }
      for (int64_t e = b.rel->rowPtr[static_cast<size_t>(b.dst)]; e < b.rel->rowPtr[static_cast<size_t>(b.dst) + 1]; ++e) {
        bindArg(0, b.rel->colIdx[static_cast<size_t>(e)]);
        if (b.names > 1)
          bindArg(1, e);
        loop(level + 1, arg + b.names);
      }
    };
    loop(0, 0);
  }

  Val reduce(const ir::Op &op, Frame &f) {
    const json &reducer = op.attrs["reducer"];
    const ir::Region &body = op.regions[0];
    const json &rt = op.results[0].type;
    if (reducer.is_object())
      return userReduce(op, f, reducer);
    if (!reducer.is_string())
      throw EvalError("a reduction without a known reducer");
    std::string r = reducer;
    const ir::BuiltinReducer *br = ir::findBuiltinReducer(r);
    if (!br)
      throw EvalError(fmt::format("unknown reducer '{}'", r));
    std::optional<DT> t = elemDtype(rt, f.env);
    if (br->boolOnly())
      t = DT::Bool;
    std::optional<Val> acc;
    int64_t count = 0;
    DT dt = t.value_or(DT::LitFloat);
    std::optional<BinOp> combine = binOpFromName(ir::combineOpName(br->combine));
    if (!combine)
      throw EvalError(fmt::format("reducer '{}' combines with '{}'", r, ir::combineOpName(br->combine)));
    BinOp op2 = *combine;
    // A sum (or mean) of f16 or bf16 terms accumulates in f32 and is
    // rounded to its dtype once, at the end (as the compiled code does).
    auto accumulator = [&](DT d) {
      return br->combine == ir::ReduceCombine::Add && (d == DT::F16 || d == DT::BF16) ? DT::F32 : d;
    };
    DT at = accumulator(dt);
    forEachTerm(op, f, [&] {
      std::vector<Val> y = yieldOf(body, f, "a reduction");
      if (y.size() != 1)
        throw EvalError(fmt::format("'{}' reduces one value per term, the body gives {}", r, y.size()));
      if (!t && (y[0].k == Val::Scalar || y[0].k == Val::Tensor))
        dt = y[0].dt, t = dt, at = accumulator(dt);
      Val m = convertVal(convertVal(y[0], dt), at);
      ++count;
      if (!acc) {
        acc = kept(std::move(m));
        return;
      }
      acc = kept(elementwise2(*acc, m, [&](Num a, Num b) { return arith(op2, at, a, b); }, at));
    });
    if (!acc) {
      // The reducer's identity (an empty domain). A mean of nothing is 0
      // (its sum), as PyG's and DGL's mean aggregation of an isolated node.
      Num id = identity(br->identity, dt);
      if (rt.value("kind", "") == "tensor") {
        std::vector<int64_t> s = shape(rt["shape"], f.env);
        checkSize("a reduction's identity", s, dt);
        Val v = Val::tensor(dt, s, {});
        v.data = std::make_shared<const std::vector<Num>>(static_cast<size_t>(v.numElements()), id);
        return v;
      }
      return Val::scalar(dt, id);
    }
    if (br->dividesByCount) {
      Num c = convert(numI(count), DT::I64, at);
      acc = elementwise1(*acc, [&](Num a) { return arith(BinOp::Div, at, a, c); }, at);
    }
    return at == dt ? *acc : convertVal(*acc, dt);
  }

  /// A built-in reducer's identity in dtype `t` (an untyped literal is
  /// computed in i64 or f64): a float cell holds a double, the others
  /// (bool and the integers) an int64.
  static Num identity(ir::ReduceIdentity id, DT t) {
    DT at = t == DT::LitInt ? DT::I64 : t == DT::LitFloat ? DT::F64 : t;
    std::optional<ir::ReducerIdentityValue> v = ir::reducerIdentity(id, dtName(at));
    if (!v)
      throw EvalError(fmt::format("no reducer identity in dtype {}", dtName(t)));
    if (const double *d = std::get_if<double>(&*v))
      return numF(*d);
    if (const bool *b = std::get_if<bool>(&*v))
      return numI(*b ? 1 : 0);
    if (const uint64_t *u = std::get_if<uint64_t>(&*v))
      return numI(static_cast<int64_t>(*u));
    return numI(std::get<int64_t>(*v));
  }

  const FnInfo &function(const std::string &name) {
    auto it = fns.find(name);
    if (it == fns.end())
      throw EvalError(fmt::format("unknown function '{}'", name));
    return it->second;
  }

  Val userReduce(const ir::Op &op, Frame &f, const json &reducer) {
    std::string name = reducer["name"];
    const FnInfo &idf = function(name + ".identity"), &lift = function(name + ".lift"),
                 &comb = function(name + ".combine"), &fin = function(name + ".finalize");
    // Every part takes the reducer's generics, in declaration order.
    Env env;
    static const json kEmpty = json::array();
    const json &gens = reducer.contains("generics") ? reducer["generics"] : kEmpty;
    const json &decl = idf.f->generics;
    for (size_t i = 0; i < decl.size() && i < gens.size(); ++i)
      if (!gens[i].is_null() && !bindGeneric(decl[i], gens[i], f.env, env))
        throw EvalError(fmt::format("reducer '{}': generic '{}' is not bound here", name,
                                    decl[i].value("name", "?")));
    Val state = kept(invoke(idf, env, nullptr, {}));
    const ir::Region &body = op.regions[0];
    forEachTerm(op, f, [&] {
      std::vector<Val> y = yieldOf(body, f, "a reduction");
      size_t params = lift.f->body.args.size();
      if (y.size() == 1 && params > 1 && y[0].k == Val::Tuple)
        y = y[0].elems;
      if (y.size() != params)
        throw EvalError(fmt::format("reducer '{}': lift takes {} values, the body gives {}", name, params,
                                    y.size()));
      Val l = invoke(lift, env, nullptr, std::move(y));
      state = kept(invoke(comb, env, nullptr, {std::move(state), std::move(l)}));
    });
    return conform(invoke(fin, env, nullptr, {std::move(state)}), op.results[0].type, f.env);
  }

  //===--------------------------------------------------------------------===//
  // Calls, match
  //===--------------------------------------------------------------------===//

  /// Runs a function: binds its parameters (converted to their types),
  /// fills generics that neither the caller nor the block bound from the
  /// arguments, checks its `where` constraints, and returns its value.
  Val invoke(const FnInfo &fi, Env env, Instance *self, std::vector<Val> args) {
    const plan::Function &fn = *fi.f;
    const ir::Region &body = fn.body;
    if (args.size() != body.args.size())
      throw EvalError(fmt::format("'{}' takes {} arguments, given {}", fn.name, body.args.size(), args.size()));
    for (size_t i = 0; i < args.size(); ++i)
      unify(body.args[i].type, args[i], env);
    checkConstraints(fn, withValueParams(fn, args, env), fmt::format("'{}'", fn.name));
    if (++depth > 2000) {
      --depth;
      throw EvalError(fmt::format("call depth exceeds 2000 in '{}' (unbounded recursion?)", fn.name));
    }
    Frame nf{&fi, std::move(env), self, std::vector<Val>(fi.slots)};
    for (size_t i = 0; i < args.size(); ++i)
      nf.vals[body.args[i].id] = conform(args[i], body.args[i].type, nf.env);
    Outcome o;
    try {
      o = region(body, nf);
    } catch (...) {
      --depth;
      throw;
    }
    --depth;
    if (o.vals.empty())
      return unit();
    Val r = o.vals[0];
    if (fn.results.size() == 1)
      r = conform(r, fn.results[0], nf.env);
    return r;
  }

  /// `env` with the integer scalar parameters an entry's `where` compares
  /// bound to the arguments (they appear there as symbols named like them).
  static Env withValueParams(const plan::Function &fn, const std::vector<Val> &args, Env env) {
    std::function<void(const json &)> visit = [&](const json &d) {
      if (!d.is_object())
        return;
      if (d.contains("sym") && !env.dims.count(d["sym"].get<std::string>()))
        for (size_t i = 0; i < args.size() && i < fn.body.args.size(); ++i)
          if (fn.body.args[i].name == d.value("name", "") && args[i].k == Val::Scalar &&
              !isFloat(args[i].dt) && args[i].dt != DT::Bool)
            env.dims[d["sym"].get<std::string>()] = args[i].s.i;
      if (d.contains("args"))
        for (const json &a : d["args"])
          visit(a);
    };
    for (const json &c : fn.constraints) {
      visit(c["lhs"]);
      visit(c["rhs"]);
    }
    return env;
  }

  /// The integer tensor argument a constraint of an entry names (it holds
  /// for each element), as its symbol and value; null when none.
  static std::pair<std::string, const Val *> tensorOperand(const plan::Function &fn, const json &c,
                                                           const std::vector<Val> &args) {
    std::pair<std::string, const Val *> found{"", nullptr};
    std::function<void(const json &)> visit = [&](const json &d) {
      if (!d.is_object())
        return;
      if (d.contains("sym"))
        for (size_t i = 0; i < args.size() && i < fn.body.args.size(); ++i)
          if (fn.body.args[i].name == d.value("name", "") && args[i].k == Val::Tensor && !isFloat(args[i].dt) &&
              args[i].dt != DT::Bool)
            found = {d["sym"].get<std::string>(), &args[i]};
      if (d.contains("args"))
        for (const json &a : d["args"])
          visit(a);
    };
    visit(c["lhs"]);
    visit(c["rhs"]);
    return found;
  }

  /// An entry's constraints, one naming an integer tensor argument checked
  /// for each of its elements (the first that fails is named).
  void checkConstraints(const plan::Function &fn, const Env &env, const std::string &who,
                        const std::vector<Val> &args) {
    for (const json &c : fn.constraints) {
      auto [sym, t] = tensorOperand(fn, c, args);
      if (!t) {
        checkConstraint(c, env, who, "");
        continue;
      }
      Env each = env;
      for (size_t k = 0; k < t->data->size(); ++k) {
        each.dims[sym] = (*t->data)[k].i;
        std::string at;
        for (size_t d = t->shape.size(), rest = k; d-- > 0; rest /= size_t(t->shape[d]))
          at = fmt::format("{}{}", rest % size_t(t->shape[d]), at.empty() ? "" : ", " + at);
        checkConstraint(c, each, who, fmt::format(" for element [{}]", at));
      }
    }
  }

  void checkConstraints(const plan::Function &fn, const Env &env, const std::string &who) {
    for (const json &c : fn.constraints)
      checkConstraint(c, env, who, "");
  }

  static void checkConstraint(const json &c, const Env &env, const std::string &who, const std::string &element) {
    std::optional<int64_t> l = tryDim(c["lhs"], env), r = tryDim(c["rhs"], env);
    if (!l || !r)
      return; // a constraint over generics this call does not bind
    std::string o = c.value("op", "");
    bool ok = o == "eq" ? *l == *r : o == "ne" ? *l != *r : o == "lt" ? *l < *r
              : o == "le" ? *l <= *r : o == "gt" ? *l > *r : *l >= *r;
    if (!ok) {
      static const std::map<std::string, std::string> sym = {{"eq", "=="}, {"ne", "!="}, {"lt", "<"},
                                                             {"le", "<="}, {"gt", ">"},  {"ge", ">="}};
      std::vector<std::string> vals;
      for (auto [side, v] : {std::pair{&c["lhs"], *l}, std::pair{&c["rhs"], *r}})
        if (!side->is_number_integer())
          vals.push_back(fmt::format("{} = {}", ir::dimStr(*side), v));
      throw EvalError(fmt::format("{}: constraint {} {} {} does not hold{} ({})", who, ir::dimStr(c["lhs"]),
                                  sym.count(o) ? sym.at(o) : o, ir::dimStr(c["rhs"]), element,
                                  fmt::join(vals, ", ")));
    }
  }

  Val callOp(const ir::Op &op, Frame &f) {
    const FnInfo &fi = function(op.attrs["callee"].get<std::string>());
    bool method = op.attrs.value("method", false);
    Instance *self = nullptr;
    Env env;
    size_t first = 0;
    if (method) {
      const Val &r = f.vals[op.operands[0]];
      if (r.k != Val::Block)
        throw EvalError(fmt::format("the receiver of '{}' is {}", fi.f->name, kindName(r.k)));
      self = r.inst;
      env = self->env;
      first = 1;
    }
    // The substitution is in the caller's terms; an entry that names the
    // callee's own generics (defaults) is retried once the others are bound.
    if (op.attrs.contains("substitution")) {
      std::vector<std::pair<std::string, const json *>> pending;
      for (auto it = op.attrs["substitution"].begin(); it != op.attrs["substitution"].end(); ++it)
        if (!bindSubst(it.key(), it.value(), f.env, env))
          pending.push_back({it.key(), &it.value()});
      for (bool progress = true; progress && !pending.empty();) {
        progress = false;
        for (auto it = pending.begin(); it != pending.end();)
          if (bindSubst(it->first, *it->second, env, env)) {
            it = pending.erase(it);
            progress = true;
          } else {
            ++it;
          }
      }
    }
    std::vector<Val> args;
    for (size_t i = first; i < op.operands.size(); ++i)
      args.push_back(f.vals[op.operands[i]]);
    try {
      return invoke(fi, std::move(env), self, std::move(args));
    } catch (const LocatedError &e) {
      // The call chain, innermost first (a few levels: enough to find the caller).
      std::string msg = e.what();
      size_t notes = 0;
      for (size_t at = msg.find("note: called"); at != std::string::npos; at = msg.find("note: called", at + 1))
        ++notes;
      if (op.loc.empty() || notes >= 8)
        throw;
      throw LocatedError(fmt::format("{}\n{}: note: called from here", msg, op.loc));
    }
  }

  bool matches(const json &p, const Val &v, std::vector<Val> &binds) {
    std::string k = p.value("kind", "");
    if (k == "wildcard")
      return true;
    if (k == "bind") {
      binds.push_back(v);
      return true;
    }
    if (k == "none")
      return v.k == Val::Optional && v.elems.empty();
    if (k == "some")
      return v.k == Val::Optional && !v.elems.empty() && matches(p["arg"], v.elems[0], binds);
    if (k == "tuple") {
      if (v.k != Val::Tuple || v.elems.size() != p["elements"].size())
        return false;
      for (size_t i = 0; i < v.elems.size(); ++i)
        if (!matches(p["elements"][i], v.elems[i], binds))
          return false;
      return true;
    }
    if (k == "literal") {
      const json &lit = p["value"];
      if (v.k != Val::Scalar)
        return false;
      if (lit.is_boolean())
        return v.s.i == static_cast<int64_t>(lit.get<bool>());
      if (lit.is_number_integer())
        return isFloat(v.dt) ? v.s.f == static_cast<double>(lit.get<int64_t>()) : v.s.i == lit.get<int64_t>();
      if (lit.is_number())
        return asDouble(v.dt, v.s) == lit.get<double>();
      return false;
    }
    throw EvalError(fmt::format("match patterns of kind '{}' are not supported by the interpreter", k));
  }

  std::optional<Outcome> matchOp(const ir::Op &op, Frame &f) {
    const Val &s = f.vals[op.operands[0]];
    const json &arms = op.attrs["arms"];
    for (size_t i = 0; i < arms.size(); ++i) {
      std::vector<Val> binds;
      if (!matches(arms[i], s, binds))
        continue;
      const ir::Region &r = op.regions[i];
      for (size_t a = 0; a < r.args.size() && a < binds.size(); ++a)
        f.vals[r.args[a].id] = conform(binds[a], r.args[a].type, f.env);
      Outcome o = region(r, f);
      if (o.returned)
        return o;
      bindResults(op, o.vals, f);
      return std::nullopt;
    }
    throw EvalError(fmt::format("no arm of the match covers {}", kindName(s.k)));
  }

  //===--------------------------------------------------------------------===//
  // Instantiation and weights
  //===--------------------------------------------------------------------===//

  const json *blockDecl(const json &type) const {
    std::string name = type.value("name", ""), module = type.value("module", "");
    if (plan.blocks.contains(module + "::" + name))
      return &plan.blocks[module + "::" + name];
    if (plan.blocks.contains(name))
      return &plan.blocks[name];
    return nullptr;
  }
  std::string blockKey(const json &type) const {
    std::string name = type.value("name", ""), module = type.value("module", "");
    return plan.blocks.contains(module + "::" + name) ? module + "::" + name : name;
  }

  /// The environment of a block instance of `type` inside `parent`.
  Env childEnv(const json &type, const Env &parent) const {
    const json *decl = blockDecl(type);
    if (!decl)
      throw EvalError(fmt::format("unknown block '{}'", type.value("name", "?")));
    Env env;
    const json &gens = (*decl)["generics"];
    static const json kEmpty = json::array();
    const json &args = type.contains("args") ? type["args"] : kEmpty;
    for (size_t i = 0; i < gens.size(); ++i) {
      bool ok = i < args.size() && bindGeneric(gens[i], args[i], parent, env);
      if (!ok && gens[i].contains("default"))
        ok = bindGeneric(gens[i], gens[i]["default"], env, env);
      if (!ok)
        throw EvalError(fmt::format("block '{}': generic '{}' is not bound", type.value("name", "?"),
                                    gens[i].value("name", "?")));
    }
    return env;
  }

  std::string ext(const LoadOptions &o, const std::string &path) const {
    return o.externalName ? o.externalName(path) : path;
  }

  /// Appends the paths of the tensors a block instance requires (its
  /// non-optional params and buffers, and those of its non-optional subs).
  void required(const json &type, const Env &env, const std::string &prefix, std::vector<std::string> &out) const {
    Env e = childEnv(type, env);
    for (const json &m : (*blockDecl(type))["members"]) {
      std::string kind = m.value("kind", ""), name = m.value("name", "");
      const json &t = m["type"];
      std::string tk = t.value("kind", "");
      if ((kind == "param" || kind == "buffer") && tk != "optional")
        out.push_back(prefix + name);
      if (kind == "sub") {
        if (tk == "block")
          required(t, e, prefix + name + ".", out);
        else if (tk == "array")
          for (int64_t i = 0, n = dim(t["length"], e); i < n; ++i)
            required(t["element"], e, fmt::format("{}{}.{}.", prefix, name, i), out);
      }
    }
  }

  Instance *build(const json &type, const Env &parentEnv, const std::string &path, const LoadOptions &o,
                  std::vector<std::string> &problems) {
    auto inst = std::make_unique<Instance>();
    Instance *self = inst.get();
    instances.push_back(std::move(inst));
    self->block = blockKey(type);
    self->path = path;
    self->env = type.contains("root-env") ? parentEnv : childEnv(type, parentEnv);
    std::string prefix = path.empty() ? "" : path + ".";
    for (const json &m : (*blockDecl(type))["members"]) {
      std::string kind = m.value("kind", ""), name = m.value("name", "");
      const json &t = m["type"];
      std::string tk = t.value("kind", "");
      if (kind == "param" || kind == "buffer") {
        bool optional = tk == "optional";
        const json &tt = optional ? t["inner"] : t;
        std::optional<Val> v = loadTensor(tt, self->env, prefix + name, kind, !optional, o, problems);
        if (optional) {
          Val opt;
          opt.k = Val::Optional;
          if (v)
            opt.elems.push_back(*v);
          self->members[name] = opt;
        } else if (v) {
          self->members[name] = *v;
        }
      } else if (kind == "state") {
        DT dt = dtype(t["dtype"], self->env);
        // A scalar state (`state n: f32`) is the rank-0 tensor (§5.1).
        std::vector<int64_t> s = tk == "tensor" ? shape(t["shape"], self->env) : std::vector<int64_t>{};
        checkSize(fmt::format("state '{}{}'", prefix, name), s, dt);
        Val z = Val::tensor(dt, s, {});
        z.data = std::make_shared<const std::vector<Num>>(static_cast<size_t>(z.numElements()),
                                                          isFloat(dt) ? numF(0) : numI(0));
        self->state[name] = z;
        statePaths[prefix + name] = {self, name};
      } else if (kind == "sub") {
        auto blockVal = [](Instance *i) {
          Val v;
          v.k = Val::Block;
          v.inst = i;
          return v;
        };
        if (tk == "block") {
          self->members[name] = blockVal(build(t, self->env, prefix + name, o, problems));
        } else if (tk == "array") {
          Val arr;
          arr.k = Val::Array;
          for (int64_t i = 0, n = dim(t["length"], self->env); i < n; ++i)
            arr.elems.push_back(blockVal(build(t["element"], self->env, fmt::format("{}{}.{}", prefix, name, i), o, problems)));
          self->members[name] = arr;
        } else if (tk == "optional") {
          // §9.4: present iff the weights hold every tensor it requires.
          std::vector<std::string> req;
          required(t["inner"], self->env, prefix + name + ".", req);
          bool present = true;
          for (const std::string &p : req)
            present &= weights && weights->find(ext(o, p)) != nullptr;
          Val opt;
          opt.k = Val::Optional;
          if (present)
            opt.elems.push_back(blockVal(build(t["inner"], self->env, prefix + name, o, problems)));
          self->members[name] = opt;
        } else {
          problems.push_back(fmt::format("sub '{}{}' has type kind '{}'", prefix, name, tk));
        }
      }
    }
    return self;
  }

  std::optional<Val> loadTensor(const json &type, const Env &env, const std::string &path, const std::string &kind,
                                bool requiredTensor, const LoadOptions &o, std::vector<std::string> &problems) {
    std::string e = ext(o, path);
    std::string lbl = e == path ? fmt::format("'{}'", path) : fmt::format("'{}' (as '{}')", path, e);
    DT dt = dtype(type["dtype"], env);
    std::vector<int64_t> s = type.value("kind", "") == "tensor" ? shape(type["shape"], env) : std::vector<int64_t>{};
    const rt::TensorView *w = weights ? weights->find(e) : nullptr;
    std::string block = blockFormatOf(type["dtype"], env);
    if (!w) {
      if (requiredTensor)
        problems.push_back(fmt::format("missing {} tensor {}: expected {}{}", kind == "param" ? "parameter" : "buffer",
                                       lbl, block.empty() ? dtName(dt) : block.c_str(), shapeStr(s)));
      return std::nullopt;
    }
    if (!block.empty()) {
      // The blocks the compiled code reads (the file's, or its values
      // quantized as the runtime does), each element as it dequantizes.
      if (w->shape != s) {
        problems.push_back(fmt::format("tensor {}: wrong shape: expected {}, found {}", lbl, shapeStr(s),
                                       shapeStr(w->shape)));
        return std::nullopt;
      }
      const rt::BlockFormatInfo bf = *rt::blockFormat(block);
      std::span<const std::byte> blocks;
      std::vector<std::byte> owned;
      std::string why;
      if (!rt::blocksFor(*weights, e, *w, bf.format, blocks, owned, why)) {
        problems.push_back(fmt::format("tensor {}: {}", lbl, why));
        return std::nullopt;
      }
      std::vector<float> vals(static_cast<size_t>(w->numElements()));
      rt::dequantizeBlocks(bf, reinterpret_cast<const unsigned char *>(blocks.data()),
                           int64_t(blocks.size()) / bf.blockBytes, vals.data());
      std::vector<Num> d(vals.size());
      for (size_t i = 0; i < d.size(); ++i)
        d[i] = numF(vals[i]);
      return Val::tensor(DT::F32, s, std::move(d));
    }
    bool ok = true;
    if (fromRt(w->dtype) != dt) {
      problems.push_back(fmt::format("tensor {}: wrong dtype: expected {}, found {}", lbl, dtName(dt),
                                     rt::dtypeName(w->dtype)));
      ok = false;
    }
    if (w->shape != s) {
      problems.push_back(fmt::format("tensor {}: wrong shape: expected {}, found {}", lbl, shapeStr(s),
                                     shapeStr(w->shape)));
      ok = false;
    }
    if (!ok)
      return std::nullopt;
    std::vector<Num> d(static_cast<size_t>(w->numElements()));
    size_t es = rt::dtypeSize(w->dtype);
    for (size_t i = 0; i < d.size(); ++i)
      d[i] = loadElem(w->dtype, w->data.data() + i * es);
    if (type.value("kind", "") == "scalar")
      return Val::scalar(dt, d.empty() ? numI(0) : d[0]);
    return Val::tensor(dt, s, std::move(d));
  }

  //===--------------------------------------------------------------------===//
  // Entries
  //===--------------------------------------------------------------------===//

  const plan::Function *entry(const std::string &name) const {
    if (!plan.root.is_object())
      return nullptr;
    std::string rootName = plan.root.value("name", "");
    for (const plan::Function &f : plan.functions)
      if (f.kind == "entry" && f.block && (*f.block == rootName || f.block->ends_with("::" + rootName)) &&
          f.name.substr(f.name.rfind('.') + 1) == name)
        return &f;
    return nullptr;
  }
};

} // namespace linnet::interp

namespace {
using Impl = Interpreter::Impl;

/// Solves the unbound generic of a dim linear in one unknown (`N + 1` from
/// a row_ptr's length): probes the dim at 0 and 1. Returns false if the dim
/// does not have exactly one unknown or has no integer solution.
bool solveDim(const json &d, int64_t actual, Env &env) {
  std::set<std::string> unknown;
  std::function<void(const json &)> walk = [&](const json &x) {
    if (x.is_object() && x.contains("sym") && !env.dims.count(x["sym"].get<std::string>()))
      unknown.insert(x["sym"].get<std::string>());
    if (x.is_object() && x.contains("args"))
      for (const json &a : x["args"])
        walk(a);
  };
  walk(d);
  if (unknown.size() != 1)
    return false;
  std::string u = *unknown.begin();
  Env trial = env;
  trial.dims[u] = 0;
  std::optional<int64_t> f0 = Impl::tryDim(d, trial);
  trial.dims[u] = 1;
  std::optional<int64_t> f1 = Impl::tryDim(d, trial);
  if (!f0 || !f1 || *f1 == *f0 || (actual - *f0) % (*f1 - *f0) != 0)
    return false;
  int64_t x = (actual - *f0) / (*f1 - *f0);
  trial.dims[u] = x;
  if (x < 0 || Impl::tryDim(d, trial) != actual)
    return false;
  env.dims[u] = x;
  return true;
}

/// A dim of the entry's signature as runtime.json states it (DimExpr.h):
/// root generics folded to their values, entry generics by name, every
/// compound operand parenthesized. nullopt for what it cannot state.
std::optional<rt::SigDim> runtimeDim(const json &d, const Env &root) {
  if (std::optional<int64_t> v = Impl::tryDim(d, root))
    return *v < 0 ? rt::SigDim(fmt::format("(0 - {})", -static_cast<uint64_t>(*v))) : rt::SigDim(*v);
  if (!d.is_object())
    return std::nullopt;
  if (d.contains("sym") && d.contains("name") && d["name"].is_string())
    return rt::SigDim(d["name"].get<std::string>());
  static const std::map<std::string, std::string> ops = {
      {"add", " + "}, {"mul", " * "}, {"floordiv", " / "}, {"mod", " % "}, {"min", ", "}, {"max", ", "}};
  auto op = ops.find(d.value("op", ""));
  if (op == ops.end() || !d.contains("args") || !d["args"].is_array() || d["args"].empty())
    return std::nullopt;
  std::vector<std::string> parts;
  for (const json &a : d["args"]) {
    std::optional<rt::SigDim> x = runtimeDim(a, root);
    if (!x)
      return std::nullopt;
    parts.push_back(std::holds_alternative<int64_t>(*x) ? std::to_string(std::get<int64_t>(*x))
                                                        : std::get<std::string>(*x));
  }
  std::string joined = fmt::format("{}", fmt::join(parts, op->second));
  return rt::SigDim(op->first == "min" || op->first == "max" ? fmt::format("{}({})", op->first, joined)
                                                              : fmt::format("({})", joined));
}

/// The entry's signature in the runtime's terms, so that an interpreted
/// call goes through rt::checkEntryInputs as a compiled one does; nullopt
/// when it has what runtime.json cannot state (a shape pack, a dtype only
/// the inputs fix, a non-tensor argument or result).
std::optional<rt::EntrySig> runtimeSig(const plan::Function &f, const std::string &entry, const Env &root) {
  rt::EntrySig sig;
  sig.name = entry;
  sig.symbol = "linnet_entry_" + entry;
  auto tensorSig = [&](const json &t, const std::string &name) -> std::optional<rt::TensorSig> {
    std::string kind = t.value("kind", "");
    if (kind != "tensor" && kind != "scalar")
      return std::nullopt;
    std::optional<DT> dt = Impl::tryDtype(t.value("dtype", json()), root);
    if (!dt || *dt == DT::LitInt || *dt == DT::LitFloat)
      return std::nullopt;
    rt::TensorSig s{name, toRt(*dt), {}, "", ""};
    if (kind == "tensor")
      for (const json &u : t["shape"]) {
        std::optional<rt::SigDim> d = u.is_object() && u.contains("pack") ? std::nullopt : runtimeDim(u, root);
        if (!d)
          return std::nullopt;
        s.shape.push_back(*d);
      }
    return s;
  };
  for (const ir::Value &a : f.body.args) {
    if (a.type.value("kind", "") == "relation") {
      const json &dims = a.type["dims"];
      std::optional<rt::SigDim> src = runtimeDim(dims[0], root), dst = runtimeDim(dims[1], root),
                                edges = runtimeDim(dims[2], root);
      if (!src || !dst || !edges)
        return std::nullopt;
      rt::SigDim rows = std::holds_alternative<int64_t>(*dst)
                            ? rt::SigDim(std::get<int64_t>(*dst) + 1)
                            : rt::SigDim(fmt::format("({} + 1)", std::get<std::string>(*dst)));
      std::string numSrc = std::holds_alternative<int64_t>(*src) ? std::to_string(std::get<int64_t>(*src))
                                                                 : std::get<std::string>(*src);
      sig.inputs.push_back({a.name + ".row_ptr", rt::DType::I64, {rows}, a.name, ""});
      sig.inputs.push_back({a.name + ".col_idx", rt::DType::I64, {*edges}, a.name, numSrc});
      continue;
    }
    std::optional<rt::TensorSig> s = tensorSig(a.type, a.name);
    if (!s)
      return std::nullopt;
    sig.inputs.push_back(std::move(*s));
  }
  for (const json &r : f.results) {
    std::optional<rt::TensorSig> s = tensorSig(r, "");
    if (!s)
      return std::nullopt;
    sig.results.push_back(std::move(*s));
  }
  return sig;
}

std::string sigShape(const json &units, const Env &env) {
  std::vector<std::string> parts;
  for (const json &u : units) {
    std::optional<int64_t> v = Impl::tryDim(u, env);
    std::string s = ir::dimStr(u);
    parts.push_back(v && !u.is_number_integer() ? fmt::format("{}={}", s, *v) : s);
  }
  return fmt::format("[{}]", fmt::join(parts, ", "));
}
} // namespace

Interpreter::~Interpreter() = default;

std::unique_ptr<Interpreter> Interpreter::load(plan::Plan plan, const LoadOptions &opts, std::string &error) {
  if (!plan.root.is_object()) {
    error = "the plan has no root block (a --functions plan cannot be run)";
    return nullptr;
  }
  std::unique_ptr<Interpreter> in(new Interpreter());
  in->impl_ = std::make_unique<Impl>(std::move(plan));
  Impl &m = *in->impl_;
  m.numerics = opts.numerics;
  NumericsScope scope(m.numerics);
  const plan::Plan &p = m.plan;
  if (!opts.weightsPath.empty()) {
    m.weights = rt::SafeTensorsFile::open(opts.weightsPath, error, opts.mapWeights);
    if (!m.weights)
      return nullptr;
    if (opts.binding && !rt::applyBindingTransforms(*m.weights, *opts.binding, error))
      return nullptr;
  }
  std::vector<std::string> problems;
  try {
    Env env;
    for (const json &g : p.root.value("generics", json::array()))
      if (g.contains("value") && !Impl::bindGeneric(g, g["value"], env, env))
        problems.push_back(fmt::format("root generic '{}' has value {} that does not evaluate",
                                       g.value("name", "?"), g["value"].dump()));
    json rootType = {{"kind", "block"}, {"name", p.root.value("name", "")}, {"module", p.module}, {"root-env", true}};
    if (!m.blockDecl(rootType))
      throw EvalError(fmt::format("the root block '{}' is not among the plan's blocks", p.root.value("name", "")));
    m.root = m.build(rootType, env, "", opts, problems);
  } catch (const EvalError &e) {
    problems.push_back(e.what());
  }
  bool needsWeights = false;
  for (const plan::ManifestEntry &e : p.manifest)
    needsWeights |= e.kind != "state" && !e.optional;
  if (!m.weights && needsWeights) {
    error = "the model has parameters: give a weights file (--weights)";
    return nullptr;
  }
  if (m.weights) {
    // Every tensor of the file must be one the manifest names.
    std::set<std::string> known;
    for (const plan::ManifestEntry &e : p.manifest) {
      if (e.kind == "state")
        continue;
      std::vector<std::string> paths{e.path};
      for (const json &r : e.repeat) {
        std::vector<std::string> next;
        for (const std::string &q : paths) {
          size_t at = q.find("[*]");
          if (at == std::string::npos)
            continue;
          for (int64_t i = 0; i < r.get<int64_t>(); ++i)
            next.push_back(q.substr(0, at) + "." + std::to_string(i) + q.substr(at + 3));
        }
        paths = next;
      }
      for (const std::string &q : paths)
        known.insert(m.ext(opts, q));
    }
    for (auto &[name, t] : m.weights->tensors())
      if (!known.count(name))
        problems.push_back(fmt::format("unexpected tensor '{}' in {}: the model has no such parameter or buffer",
                                       name, opts.weightsPath));
  }
  if (!problems.empty()) {
    error = fmt::format("{} problem{} with the weights:\n  {}", problems.size(), problems.size() == 1 ? "" : "s",
                        fmt::join(problems, "\n  "));
    return nullptr;
  }
  return in;
}

std::vector<std::string> Interpreter::entries() const {
  std::vector<std::string> out;
  std::string rootName = impl_->plan.root.value("name", "");
  for (const plan::Function &f : impl_->plan.functions)
    if (f.kind == "entry" && f.block && (*f.block == rootName || f.block->ends_with("::" + rootName)))
      out.push_back(f.name.substr(f.name.rfind('.') + 1));
  return out;
}

std::optional<std::vector<InputSig>> Interpreter::inputs(const std::string &entry) const {
  const plan::Function *f = impl_->entry(entry);
  if (!f)
    return std::nullopt;
  std::vector<InputSig> out;
  for (const ir::Value &a : f->body.args) {
    if (a.type.value("kind", "") == "relation") {
      out.push_back({a.name + ".row_ptr", a.name, "Tensor[num_dst + 1; i64]"});
      out.push_back({a.name + ".col_idx", a.name, "Tensor[edges; i64]"});
    } else {
      out.push_back({a.name, "", ir::typeStr(a.type)});
    }
  }
  return out;
}

size_t Interpreter::resultCount(const std::string &entry) const {
  const plan::Function *f = impl_->entry(entry);
  return f ? f->results.size() : 0;
}

std::optional<rt::OwnedTensor> Interpreter::state(const std::string &path) const {
  auto it = impl_->statePaths.find(path);
  if (it == impl_->statePaths.end())
    return std::nullopt;
  const Val &v = it->second.first->state.at(it->second.second);
  rt::OwnedTensor t;
  t.dtype = toRt(v.dt);
  t.shape = v.shape;
  size_t es = rt::dtypeSize(t.dtype);
  t.data.resize(v.data->size() * es);
  for (size_t i = 0; i < v.data->size(); ++i)
    storeElem(t.dtype, (*v.data)[i], t.data.data() + i * es);
  return t;
}

bool Interpreter::call(const std::string &entry, const std::vector<rt::TensorView> &ins,
                       std::vector<rt::OwnedTensor> &results, std::string &error) {
  return invoke(entry, ins, &results, error);
}

bool Interpreter::check(const std::string &entry, const std::vector<rt::TensorView> &ins,
                        std::string &error) {
  return invoke(entry, ins, nullptr, error);
}

bool Interpreter::invoke(const std::string &entry, const std::vector<rt::TensorView> &ins,
                         std::vector<rt::OwnedTensor> *resultsOut, std::string &error) {
  Impl &m = *impl_;
  NumericsScope scope(m.numerics);
  const plan::Function *f = m.entry(entry);
  if (!f) {
    error = fmt::format("no entry '{}' (entries: {})", entry, fmt::join(entries(), ", "));
    return false;
  }
  std::vector<InputSig> sigs = *inputs(entry);
  if (ins.size() != sigs.size()) {
    error = fmt::format("entry '{}' takes {} input{}, given {}", entry, sigs.size(), sigs.size() == 1 ? "" : "s",
                        ins.size());
    return false;
  }
  try {
    Env env = m.root->env;
    // Inputs as values, relations paired, dtypes and ranks checked.
    std::vector<Val> args;
    std::vector<std::string> argInputs; // the input each argument came from (for messages)
    size_t k = 0;
    for (const ir::Value &a : f->body.args) {
      std::string kind = a.type.value("kind", "");
      if (kind == "relation") {
        const rt::TensorView &rp = ins[k], &ci = ins[k + 1];
        k += 2;
        auto fail = [&](const std::string &what) {
          throw EvalError(fmt::format("relation '{}': {}", a.name, what));
        };
        for (const rt::TensorView *t : {&rp, &ci})
          if (t->dtype != rt::DType::I64 || t->shape.size() != 1)
            fail(fmt::format("{} must be a 1-d i64 tensor, found {}{}", t == &rp ? "row_ptr" : "col_idx",
                             rt::dtypeName(t->dtype), shapeStr(t->shape)));
        auto rel = std::make_shared<Relation>();
        for (int64_t i = 0; i < rp.shape[0]; ++i)
          rel->rowPtr.push_back(loadElem(rp.dtype, rp.data.data() + i * 8).i);
        for (int64_t i = 0; i < ci.shape[0]; ++i)
          rel->colIdx.push_back(loadElem(ci.dtype, ci.data.data() + i * 8).i);
        if (rel->rowPtr.empty())
          fail("row_ptr is empty (it needs num_dst + 1 offsets)");
        if (rel->rowPtr[0] != 0)
          fail(fmt::format("row_ptr[0] is {}, expected 0", rel->rowPtr[0]));
        for (size_t i = 1; i < rel->rowPtr.size(); ++i)
          if (rel->rowPtr[i] < rel->rowPtr[i - 1])
            fail(fmt::format("row_ptr decreases at {} ({} after {})", i, rel->rowPtr[i], rel->rowPtr[i - 1]));
        if (rel->rowPtr.back() != static_cast<int64_t>(rel->colIdx.size()))
          fail(fmt::format("row_ptr ends at {}, but col_idx has {} edges", rel->rowPtr.back(), rel->colIdx.size()));
        rel->numDst = static_cast<int64_t>(rel->rowPtr.size()) - 1;
        rel->numSrc = -1; // bound below, once every input has been seen
        Val v;
        v.k = Val::Rel;
        v.rel = rel;
        args.push_back(v);
        argInputs.push_back(a.name);
        continue;
      }
      const rt::TensorView &t = ins[k++];
      DT want;
      bool generic = false;
      if (std::optional<DT> d = Impl::tryDtype(a.type.value("dtype", json()), env))
        want = *d;
      else
        generic = true, want = fromRt(t.dtype);
      if (kind != "tensor" && kind != "scalar")
        throw EvalError(fmt::format("input '{}' has type {}, which an entry cannot take from a file", a.name,
                                    ir::typeStr(a.type)));
      if (!generic && fromRt(t.dtype) != want && !(want == DT::Index && t.dtype == rt::DType::I64))
        throw EvalError(fmt::format("input '{}': expected dtype {}, found {}", a.name, dtName(want),
                                    rt::dtypeName(t.dtype)));
      size_t rank = kind == "tensor" ? a.type["shape"].size() : 0;
      bool packs = false;
      if (kind == "tensor")
        for (const json &u : a.type["shape"])
          packs |= u.is_object() && u.contains("pack");
      if (!packs && t.shape.size() != rank)
        throw EvalError(fmt::format("input '{}': expected shape {} (rank {}), found {} (rank {})", a.name,
                                    sigShape(kind == "tensor" ? a.type["shape"] : json::array(), env), rank,
                                    shapeStr(t.shape), t.shape.size()));
      std::vector<Num> d(static_cast<size_t>(t.numElements()));
      size_t es = rt::dtypeSize(t.dtype);
      for (size_t i = 0; i < d.size(); ++i)
        d[i] = loadElem(t.dtype, t.data.data() + i * es);
      DT have = want == DT::Index ? DT::Index : fromRt(t.dtype);
      args.push_back(kind == "scalar" ? Val::scalar(have, d[0]) : Val::tensor(have, t.shape, std::move(d)));
      argInputs.push_back(a.name);
    }
    // Bind the entry's generics: bare names first, then dims linear in one
    // unknown, until nothing changes; then every dim must agree.
    std::map<std::string, std::string> boundBy;
    auto axes = [&](size_t i, std::vector<std::pair<json, int64_t>> &out) {
      const json &t = f->body.args[i].type;
      const Val &v = args[i];
      if (v.k == Val::Rel) {
        const json &dims = t["dims"];
        out.push_back({dims[1], v.rel->numDst});
        out.push_back({dims[2], static_cast<int64_t>(v.rel->colIdx.size())});
      } else if (v.k == Val::Tensor && t.value("kind", "") == "tensor") {
        for (size_t a = 0; a < t["shape"].size() && a < v.shape.size(); ++a)
          out.push_back({t["shape"][a], v.shape[a]});
      }
    };
    for (bool progress = true; progress;) {
      progress = false;
      for (size_t i = 0; i < args.size(); ++i) {
        std::vector<std::pair<json, int64_t>> ax;
        axes(i, ax);
        for (auto &[d, actual] : ax) {
          if (Impl::tryDim(d, env))
            continue;
          if (d.is_object() && d.contains("sym")) {
            env.dims[d["sym"].get<std::string>()] = actual;
            boundBy[d["sym"].get<std::string>()] = argInputs[i];
            progress = true;
          } else if (solveDim(d, actual, env)) {
            progress = true;
          }
        }
        if (args[i].k != Val::Rel)
          Impl::unify(f->body.args[i].type, args[i], env); // dtype vars, packs
      }
    }
    for (size_t i = 0; i < args.size(); ++i) {
      std::vector<std::pair<json, int64_t>> ax;
      axes(i, ax);
      const json &t = f->body.args[i].type;
      for (auto &[d, actual] : ax) {
        std::optional<int64_t> v = Impl::tryDim(d, env);
        if (!v)
          throw EvalError(fmt::format("input '{}': cannot bind the generics of its shape {} from its "
                                      "shape {}",
                                      argInputs[i], ir::typeStr(t), shapeStr(args[i].shape)));
        if (*v == actual)
          continue;
        if (d.is_object() && d.contains("sym") && boundBy.count(d["sym"].get<std::string>()))
          throw EvalError(fmt::format("inputs disagree on generic '{}': {} from '{}', but '{}' has an axis {} "
                                      "where {} = {} is expected",
                                      d.value("name", "?"), *v, boundBy[d["sym"].get<std::string>()],
                                      argInputs[i], actual, d.value("name", "?"), *v));
        if (args[i].k == Val::Rel)
          throw EvalError(fmt::format("relation '{}': expected {} = {}, found {}", argInputs[i], ir::dimStr(d), *v,
                                      actual));
        throw EvalError(fmt::format("input '{}': expected shape {}, found {}", argInputs[i],
                                    sigShape(t["shape"], env), shapeStr(args[i].shape)));
      }
    }
    // Relation sources: in range of num_src.
    for (size_t i = 0; i < args.size(); ++i) {
      if (args[i].k != Val::Rel)
        continue;
      std::optional<int64_t> n = Impl::tryDim(f->body.args[i].type["dims"][0], env);
      if (!n)
        throw EvalError(fmt::format("relation '{}': its source count {} is not fixed by the inputs", argInputs[i],
                                    ir::dimStr(f->body.args[i].type["dims"][0])));
      auto rel = std::const_pointer_cast<Relation>(args[i].rel);
      rel->numSrc = *n;
      for (size_t e = 0; e < rel->colIdx.size(); ++e)
        if (rel->colIdx[e] < 0 || rel->colIdx[e] >= *n)
          throw EvalError(fmt::format("relation '{}': col_idx[{}] = {} is not a source node (0 <= src < {})",
                                      argInputs[i], e, rel->colIdx[e], *n));
    }
    // With the integer scalar inputs bound (`where pos < MaxSeq`), before
    // anything runs.
    m.checkConstraints(*f, m.withValueParams(*f, args, env), fmt::format("entry '{}'", entry), args);
    // The runtime's own input check, as a compiled call of this entry goes
    // through it (after the checks above, whose messages name the
    // interpreter's bindings): per-edge inputs against the relation's
    // edges, the results' sizes against the call's limit, before anything
    // runs. An entry runtime.json cannot state has its results' sizes
    // checked alone.
    std::optional<rt::EntrySig> sig = runtimeSig(*f, entry, m.root->env);
    rt::EntryCall call;
    if (sig && !rt::checkEntryInputs(*sig, ins, call, error))
      return false;
    uint64_t resultBytes = 0;
    for (size_t i = 0; !sig && i < f->results.size(); ++i) {
      const json &t = f->results[i];
      if (t.value("kind", "") != "tensor")
        continue;
      std::optional<DT> dt = Impl::tryDtype(t["dtype"], env);
      std::vector<int64_t> shape;
      bool known = dt.has_value();
      for (const json &u : t["shape"]) {
        std::optional<int64_t> v = u.is_object() && u.contains("pack") ? std::nullopt : Impl::tryDim(u, env);
        known = known && v && *v >= 0;
        if (v)
          shape.push_back(*v);
      }
      if (!known)
        continue; // fixed as it runs; each allocation is checked then
      if (!rt::checkCallBytes(fmt::format("result {} of '{}'", i, entry), shape, toRt(*dt), resultBytes, error))
        return false;
    }
    if (!resultsOut)
      return true;
    std::vector<rt::OwnedTensor> &results = *resultsOut;
    const FnInfo &fi = m.function(f->name);
    Val r = m.invoke(fi, env, m.root, std::move(args));
    std::vector<Val> outs;
    if (f->results.size() == 1)
      outs.push_back(r);
    else if (f->results.size() > 1) {
      if (r.k != Val::Tuple || r.elems.size() != f->results.size())
        throw EvalError(fmt::format("entry '{}' returned {}, expected a tuple of {}", entry, kindName(r.k),
                                    f->results.size()));
      outs = r.elems;
    }
    results.clear();
    for (size_t i = 0; i < outs.size(); ++i) {
      Val v = Impl::conform(outs[i], f->results[i], env);
      if (v.k != Val::Scalar && v.k != Val::Tensor)
        throw EvalError(fmt::format("result {} of '{}' is {}, which has no tensor form", i, entry, kindName(v.k)));
      rt::OwnedTensor o;
      DT dt = v.dt == DT::LitFloat ? DT::F64 : v.dt == DT::LitInt ? DT::I64 : v.dt;
      o.dtype = toRt(dt);
      std::vector<Num> one;
      const std::vector<Num> *d = &one;
      if (v.k == Val::Scalar)
        one.push_back(convert(v.s, v.dt, dt));
      else {
        o.shape = v.shape;
        d = v.data.get();
      }
      size_t es = rt::dtypeSize(o.dtype);
      o.data.resize(d->size() * es);
      for (size_t j = 0; j < d->size(); ++j)
        storeElem(o.dtype, (*d)[j], o.data.data() + j * es);
      results.push_back(std::move(o));
    }
  } catch (const LocatedError &e) {
    error = e.what();
    return false;
  } catch (const EvalError &e) {
    error = e.what();
    return false;
  }
  return true;
}
