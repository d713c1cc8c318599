//===- Operations.cpp - Core IR operations --------------------------------===//
//
// The import of one Core IR op: constants, arithmetic and comparisons,
// aggregates and optionals, members and state reads and writes, calls, and
// control flow (`if`, `match`, `while` unrolled at build time or an scf.while
// at run time). Tensors, reductions and relations dispatch to their files.
//
//===----------------------------------------------------------------------===//
#include "ImporterImpl.h"

#include "linnet/Support/BlockFormat.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <algorithm>

using namespace mlir;

namespace linnet::import::detail {

std::vector<V> Importer::operation(const ir::Op &op, Frame &f) {
  const std::string &k = op.kind;
  const json &rt = op.results.empty() ? json() : op.results[0].type;
  auto operand = [&](size_t i) { return get(f, op.operands.at(i)); };

  if (k == ir::kind::Const) {
    const json &v = op.attrs["value"];
    if (v.is_null()) return {V()};
    if (rt.value("kind", "") == "literal")
      fail(fmt::format("{}: a literal whose type depends on its use", where_));
    Type t = type(rt, f);
    if (v.is_boolean())
      return {V::scalar(constant(t, v.get<bool>() ? 1 : 0), v.get<bool>() ? 1 : 0)};
    if (v.is_number_integer() && !isFloat(t))
      return {V::scalar(constant(t, (double)v.get<int64_t>()), v.get<int64_t>())};
    if (v.is_number())
      return {V::scalar(constant(t, v.get<double>()))};
    fail(fmt::format("{}: constant {} is not supported", where_, v.dump()));
  }
  if (k == ir::kind::Constant) {
    auto it = consts_.find(op.attrs["name"].get<std::string>());
    if (it == consts_.end())
      fail(fmt::format("{}: unknown constant", where_));
    return {constantValue(*it->second, type(rt, f))};
  }
  if (k == ir::kind::DimValue) {
    DimV d = dim(op.attrs["dim"], f);
    return {V::scalar(dimValue(d), d.c)};
  }
  if (k == ir::kind::Arith) {
    std::string o = op.attrs["op"];
    Type t = type(rt, f);
    // Arithmetic on whole tensors (same shape, or a tensor and a scalar,
    // which check accepts): the scalar operation at every element.
    if (auto tt = dyn_cast<RankedTensorType>(t); tt && tt.getRank() > 0) {
      std::vector<V> xs;
      for (size_t i = 0; i < op.operands.size(); ++i)
        xs.push_back(operand(i));
      bool uns = isUnsigned(rt, f);
      return {elementwise(tt, xs, [&](ArrayRef<Value> e) -> Value {
        Type et = tt.getElementType();
        if (o == "neg")
          return isFloat(et) ? Value(b_.create<arith::NegFOp>(loc_, convert(e[0], et)))
                             : Value(b_.create<arith::SubIOp>(loc_, constant(et, 0), convert(e[0], et)));
        if (o == "not")
          return b_.create<arith::XOrIOp>(loc_, convert(e[0], et), constant(et, 1));
        return binary(o, e[0], e[1], et, false, uns);
      })};
    }
    if (o == "neg" || o == "not") {
      V x = scalarOf(operand(0));
      if (o == "not")
        return {V::scalar(b_.create<arith::XOrIOp>(loc_, convert(x.v, t), constant(t, 1)),
                          x.c ? std::optional<int64_t>(!*x.c) : std::nullopt)};
      if (isFloat(t))
        return {V::scalar(b_.create<arith::NegFOp>(loc_, convert(x.v, t)))};
      return {V::scalar(b_.create<arith::SubIOp>(loc_, constant(t, 0), convert(x.v, t)),
                        x.c ? std::optional<int64_t>(-*x.c) : std::nullopt)};
    }
    V x = scalarOf(operand(0)), y = scalarOf(operand(1));
    std::optional<int64_t> c;
    if (x.c && y.c && !isFloat(t))
      c = fold(o, *x.c, *y.c);
    if (c && !isUnsigned(rt, f))
      return {V::scalar(constant(t, (double)*c), c)};
    return {V::scalar(binary(o, x.v, y.v, t, false, isUnsigned(rt, f)))};
  }
  if (k == ir::kind::Cmp) {
    if (auto tt = dyn_cast<RankedTensorType>(type(rt, f)); tt && tt.getRank() > 0) {
      std::string p = op.attrs["pred"];
      V a = operand(0), c = operand(1);
      bool uns = a.uns || c.uns;
      // Both sides are compared in the tensor operand's dtype (a scalar
      // literal adopts it, as in scalar code).
      Type et = cast<RankedTensorType>((a.k == V::Tensor ? a : c).v.getType()).getElementType();
      return {elementwise(tt, {a, c}, [&](ArrayRef<Value> e) -> Value {
        return compare(p, convert(e[0], et), convert(e[1], et), uns);
      })};
    }
    V x = scalarOf(operand(0)), y = scalarOf(operand(1));
    std::string p = op.attrs["pred"];
    if (x.c && y.c && !x.uns && !y.uns && isIntLike(x.v.getType()) && isIntLike(y.v.getType())) {
      int64_t a = *x.c, c = *y.c;
      bool r = p == "eq" ? a == c : p == "ne" ? a != c : p == "lt" ? a < c
             : p == "le" ? a <= c : p == "gt" ? a > c : a >= c;
      return {V::scalar(constant(b_.getI1Type(), r), r)};
    }
    return {V::scalar(compare(p, x.v, y.v, x.uns || y.uns))};
  }
  if (k == ir::kind::Select) {
    V c = scalarOf(operand(0));
    V x = operand(1), y = operand(2);
    if (c.c)
      return {*c.c ? x : y};
    Type t = type(rt, f);
    return {V::scalar(b_.create<arith::SelectOp>(loc_, c.v, convert(x.v, t), convert(y.v, t)))};
  }
  if (k == ir::kind::Cast) {
    Type t = type(rt, f);
    bool toUns = isUnsigned(rt, f);
    // One element's conversion (unsigned sources widen and convert by
    // value, not by sign bit).
    auto castOne = [&](Value x, bool fromUns, Type to) -> Value {
      Type from = x.getType();
      if (fromUns && isa<IntegerType>(from) && !from.isInteger(1)) {
        if (isFloat(to))
          return b_.create<arith::UIToFPOp>(loc_, to, x);
        if (isa<IntegerType>(to) && from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth())
          return b_.create<arith::ExtUIOp>(loc_, to, x);
      }
      if (toUns && isFloat(from) && isa<IntegerType>(to))
        return floatToUnsigned(x, cast<IntegerType>(to));
      return convert(x, to);
    };
    // A whole tensor (`v_cache[c, g, j, ...] as T`, which check types as a
    // tensor of the new dtype): the conversion at every element.
    if (auto tt = dyn_cast<RankedTensorType>(t); tt && tt.getRank() > 0) {
      V x = operand(0);
      // To its own dtype (`v[j, ...] as T` with a cache of dtype T): the
      // tensor itself, no copy.
      if (auto xt = dyn_cast<RankedTensorType>(x.v.getType());
          xt && xt.getElementType() == tt.getElementType() && x.uns == toUns)
        return {x};
      return {elementwise(tt, {x}, [&](ArrayRef<Value> e) { return castOne(e[0], x.uns, tt.getElementType()); })};
    }
    V x = scalarOf(operand(0));
    return {V::scalar(castOne(x.v, x.uns, t), isFloat(t) || x.uns || toUns ? std::nullopt : x.c)};
  }
  if (k == ir::kind::Builtin && (op.attrs["name"] == "knn" || op.attrs["name"] == "radius"))
    return {builtRelation(op, f, op.attrs["name"] == "radius")};
  if (k == ir::kind::Builtin && op.attrs["name"] == "paged")
    return {pagedRelation(op, f)};
  if (k == ir::kind::Builtin)
    return {builtin(op.attrs["name"], op, f)};
  if (k == ir::kind::Tuple || k == ir::kind::Struct) {
    V a;
    a.k = V::Agg;
    for (ir::ValueId id : op.operands)
      a.elems.push_back(get(f, id));
    if (op.attrs.contains("fields"))
      for (const json &n : op.attrs["fields"])
        a.names.push_back(n);
    return {a};
  }
  if (k == ir::kind::TupleGet) {
    V a = operand(0);
    return {a.elems.at(op.attrs["index"].get<size_t>())};
  }
  if (k == ir::kind::Field) {
    V a = operand(0);
    std::string n = op.attrs["name"];
    for (size_t i = 0; i < a.names.size(); ++i)
      if (a.names[i] == n)
        return {a.elems[i]};
    fail(fmt::format("{}: no field '{}'", where_, n));
  }
  if (k == ir::kind::Some) {
    V o;
    o.k = V::Opt;
    o.present = true;
    o.elems.push_back(operand(0));
    return {o};
  }
  if (k == ir::kind::Index)
    return {index(op, f)};
  if (k == ir::kind::Slice)
    return {slice(op, f)};
  if (k == ir::kind::Comprehension) {
    auto hoisted = hoistInvariantWork(op, f);
    return {comprehension(op, f)};
  }
  if (k == ir::kind::Reduce) {
    auto hoisted = hoistInvariantWork(op, f);
    return reduce(op, f);
  }
  if (k == ir::kind::Self) {
    V s;
    s.k = V::Block;
    s.path = f.self.value_or("");
    return {s};
  }
  if (k == ir::kind::Sub) {
    std::string base = op.operands.empty() ? f.self.value_or("") : operand(0).path;
    V s;
    s.path = joinPath(base, op.attrs["member"]);
    s.k = rt.value("kind", "") == "array" ? V::Blocks : V::Block;
    if (rt.value("kind", "") == "optional") {
      // An optional sub block is present unless a tensor it requires is
      // absent (§9.4; expandManifest decided it from the weights).
      V o;
      o.k = V::Opt;
      s.k = V::Block;
      o.present = true;
      for (const ModelTensor &t : tensors_)
        if (t.block == s.path && t.required && !t.present)
          o.present = false;
      o.elems.push_back(s);
      return {o};
    }
    return {s};
  }
  if (k == ir::kind::Member) {
    std::string base = op.operands.empty() ? f.self.value_or("") : operand(0).path;
    std::string path = joinPath(base, op.attrs["member"]);
    auto it = tensorVal_.find(path);
    if (stateVal_.count(path))
      observed_.insert(path);
    bool optional = rt.value("kind", "") == "optional";
    // A param stored in a block format is its blocks (tensorMemref).
    auto tensorAt = [&](Value v) {
      V r = valueOf(v);
      if (auto t = byPath_.find(path); t != byPath_.end() && support::blockFormat(t->second->dtype))
        r.fmt = t->second->dtype;
      return r;
    };
    if (optional) {
      V o;
      o.k = V::Opt;
      o.present = it != tensorVal_.end();
      if (o.present)
        o.elems.push_back(tensorAt(it->second));
      return {o};
    }
    if (it == tensorVal_.end())
      fail(fmt::format("{}: tensor '{}' is not in the build", where_, path));
    return {tensorAt(it->second)};
  }
  if (k == ir::kind::StateRead) {
    std::string base = op.operands.empty() ? f.self.value_or("") : operand(0).path;
    std::string path = joinPath(base, op.attrs["member"]);
    auto it = stateVal_.find(path);
    if (it == stateVal_.end())
      fail(fmt::format("{}: state '{}' is not in the build", where_, path));
    observed_.insert(path);
    return {valueOf(it->second)};
  }
  if (k == ir::kind::StateWrite) {
    std::string path = joinPath(f.self.value_or(""), op.attrs["member"]);
    if (!stateVal_.count(path))
      fail(fmt::format("{}: state '{}' is not in the build", where_, path));
    V v = operand(0);
    if (v.k != V::Tensor && v.k != V::Scalar)
      fail(fmt::format("{}: only tensor state is supported", where_));
    Type st = stateVal_[path].getType();
    if (v.k == V::Scalar)
      v = V::scalar(convert(v.v, cast<RankedTensorType>(st).getElementType()));
    stateVal_[path] = convert(tensorOf(v), st);
    return {};
  }
  if (k == ir::kind::Call) {
    auto it = fns_.find(op.attrs["callee"].get<std::string>());
    if (it == fns_.end())
      fail(fmt::format("{}: unknown callee '{}'", where_, op.attrs["callee"].get<std::string>()));
    Frame callee;
    bindSubstitution(op.attrs["substitution"], f, callee);
    std::vector<V> args;
    size_t first = 0;
    if (op.attrs.value("method", false)) {
      V recv = operand(0);
      if (recv.k != V::Block)
        fail(fmt::format("{}: the receiver of '{}' is not a block instance", where_,
                         op.attrs["callee"].get<std::string>()));
      callee.self = recv.path;
      first = 1;
    }
    for (size_t i = first; i < op.operands.size(); ++i) {
      args.push_back(operand(i));
      if (!args.back().fmt.empty())
        fail(fmt::format("{}: a {} tensor is passed to '{}': a param stored in a block format is read where it "
                         "is a member, each element converted with `as`",
                         where_, args.back().fmt, op.attrs["callee"].get<std::string>()));
    }
    // A method of an element of an array of sub blocks is one function
    // per specialization, called once per element.
    if (first == 1 && nest_ == 0 && elementPaths_.count(*callee.self))
      if (std::optional<std::vector<V>> rs = callOutlined(*it->second, callee, args)) {
        if (op.results.size() == 1 && rs->size() > 1) { // a tuple, one buffer per element
          V t;
          t.k = V::Agg;
          t.elems = std::move(*rs);
          return {t};
        }
        return *rs;
      }
    std::vector<V> rs = call(*it->second, std::move(callee), args);
    if (op.results.size() > 1 && rs.size() == 1 && rs[0].k == V::Agg)
      return rs[0].elems;
    return rs;
  }
  if (k == ir::kind::If)
    return ifOp(op, f);
  if (k == ir::kind::Match) {
    V s = operand(0);
    if (s.k != V::Opt)
      fail(fmt::format("{}: match on enums is not supported by the CPU backend yet", where_));
    const json &arms = op.attrs["arms"];
    for (size_t i = 0; i < arms.size(); ++i) {
      std::string ak = arms[i].value("kind", "");
      if ((ak == "some" && s.present) || (ak == "none" && !s.present) || ak == "wildcard" ||
          ak == "bind") {
        std::vector<V> args;
        if (op.regions[i].args.size() == 1)
          args.push_back(ak == "some" ? s.elems[0] : s);
        return region(op.regions[i], f, args);
      }
    }
    fail(fmt::format("{}: no arm of the match applies", where_));
  }
  if (k == ir::kind::While)
    return whileOp(op, f);
  fail(fmt::format("{}: the construct '{}' cannot be compiled by the CPU backend yet", where_, k));
}

V Importer::constantValue(const plan::Constant &c, Type t) {
  // Module constants are small expressions; literals take the use's type.
  V r;
  for (const ir::Op &op : c.body.ops) {
    if (op.kind == ir::kind::Yield)
      return r;
    if (op.kind == ir::kind::Const && op.attrs["value"].is_number()) {
      r = V::scalar(constant(t, op.attrs["value"].get<double>()));
      continue;
    }
    if (op.kind == ir::kind::Builtin && op.attrs["name"] == "inf") {
      r = V::scalar(infinity(t, false));
      continue;
    }
    if (op.kind == ir::kind::Arith && op.attrs["op"] == "neg" && r.k == V::Scalar) {
      r = V::scalar(isFloat(t) ? b_.create<arith::NegFOp>(loc_, r.v).getResult()
                               : b_.create<arith::SubIOp>(loc_, constant(t, 0), r.v).getResult());
      continue;
    }
    fail(fmt::format("{}: constant '{}' uses '{}', which the CPU backend does not evaluate yet",
                     where_, c.name, op.kind));
  }
  return r;
}

Value Importer::compare(const std::string &p, Value a, Value c, bool uns) {
  Type t = common(a.getType(), c.getType());
  if (isa<IndexType>(a.getType()) != isa<IndexType>(c.getType()) && !isFloat(t))
    t = b_.getI64Type();
  a = convert(a, t);
  c = convert(c, t);
  if (isFloat(t)) {
    arith::CmpFPredicate pr = p == "eq" ? arith::CmpFPredicate::OEQ
                            : p == "ne" ? arith::CmpFPredicate::UNE
                            : p == "lt" ? arith::CmpFPredicate::OLT
                            : p == "le" ? arith::CmpFPredicate::OLE
                            : p == "gt" ? arith::CmpFPredicate::OGT
                                        : arith::CmpFPredicate::OGE;
    return b_.create<arith::CmpFOp>(loc_, pr, a, c);
  }
  if (uns) {
    // Unsigned operands (u8 against u8, or a non-negative literal).
    arith::CmpIPredicate pr = p == "eq" ? arith::CmpIPredicate::eq
                            : p == "ne" ? arith::CmpIPredicate::ne
                            : p == "lt" ? arith::CmpIPredicate::ult
                            : p == "le" ? arith::CmpIPredicate::ule
                            : p == "gt" ? arith::CmpIPredicate::ugt
                                        : arith::CmpIPredicate::uge;
    return b_.create<arith::CmpIOp>(loc_, pr, a, c);
  }
  arith::CmpIPredicate pr = p == "eq" ? arith::CmpIPredicate::eq
                          : p == "ne" ? arith::CmpIPredicate::ne
                          : p == "lt" ? arith::CmpIPredicate::slt
                          : p == "le" ? arith::CmpIPredicate::sle
                          : p == "gt" ? arith::CmpIPredicate::sgt
                                      : arith::CmpIPredicate::sge;
  return b_.create<arith::CmpIOp>(loc_, pr, a, c);
}

V Importer::builtin(const std::string &name, const ir::Op &op, Frame &f) {
  Type rt = type(op.results[0].type, f);
  bool uns = isUnsigned(op.results[0].type, f);
  // The builtin at one element (scalars of the result's element type).
  auto at = [&](ArrayRef<Value> xs, Type t) -> Value {
    auto unary = [&](auto tag) -> Value {
      using OpT = decltype(tag);
      if (xs.size() != 1 || !isFloat(t))
        fail(fmt::format("{}: __builtin_{} takes one float", where_, name));
      return b_.create<OpT>(loc_, xs[0]);
    };
    if (name == "exp") return unary(math::ExpOp());
    if (name == "log") return unary(math::LogOp());
    if (name == "sqrt") return unary(math::SqrtOp());
    if (name == "rsqrt") return unary(math::RsqrtOp());
    if (name == "tanh") return unary(math::TanhOp());
    if (name == "erf") return unary(math::ErfOp());
    if (name == "sin") return unary(math::SinOp());
    if (name == "cos") return unary(math::CosOp());
    if (name == "abs" && xs.size() == 1)
      return isFloat(t) ? Value(b_.create<math::AbsFOp>(loc_, xs[0])) : Value(b_.create<math::AbsIOp>(loc_, xs[0]));
    if (name == "pow" && xs.size() == 2)
      return b_.create<math::PowFOp>(loc_, xs[0], xs[1]);
    if ((name == "max" || name == "min") && xs.size() == 2)
      return binary(name, xs[0], xs[1], t, false, uns);
    if (name == "inf" && xs.empty() && isFloat(t))
      return infinity(t, false);
    fail(fmt::format("{}: builtin '{}' is not supported by the CPU backend yet", where_, name));
  };
  // On whole tensors (`max(x, y)`, which check types elementwise): the
  // builtin at every element, a scalar operand broadcast.
  if (auto tt = dyn_cast<RankedTensorType>(rt); tt && tt.getRank() > 0) {
    std::vector<V> xs;
    for (ir::ValueId id : op.operands)
      xs.push_back(get(f, id));
    Type et = tt.getElementType();
    return elementwise(tt, xs, [&](ArrayRef<Value> e) {
      SmallVector<Value> cs;
      for (Value v : e)
        cs.push_back(convert(v, et));
      return at(cs, et);
    });
  }
  std::vector<Value> xs;
  for (ir::ValueId id : op.operands)
    xs.push_back(convert(scalarOf(get(f, id)).v, rt));
  return V::scalar(at(xs, rt));
}

std::vector<V> Importer::ifOp(const ir::Op &op, Frame &f) {
  V c = scalarOf(get(f, op.operands[0]));
  if (c.c)
    return region(op.regions[*c.c ? 0 : 1], f, {});
  // Both branches are built first in an scf.if without results: the
  // then branch's values decide the result types. Struct and tuple
  // values (a reducer's state) travel as their leaves and are rebuilt
  // after the if.
  auto shell = b_.create<scf::IfOp>(loc_, TypeRange{}, c.v, /*withElseRegion=*/true);
  std::vector<V> templ;
  SmallVector<Type> types;
  SmallVector<SmallVector<Value>> leafVals(2);
  for (int side = 0; side < 2; ++side) {
    OpBuilder::InsertionGuard g(b_);
    Block *blk = side == 0 ? shell.thenBlock() : shell.elseBlock();
    b_.setInsertionPoint(blk->getTerminator());
    // A branch of host control flow builds its work as the function body
    // does (structured ops, in-place updates); inside an element's body
    // it stays element code.
    const bool inElements = nest_ > 0;
    nest_ += inElements;
    std::vector<V> ys = region(op.regions[side], f, {});
    nest_ -= inElements;
    if (ys.size() != op.results.size())
      fail(fmt::format("{}: a branch yields {} values, the `if` has {}", where_, ys.size(),
                       op.results.size()));
    std::vector<Value> leafs;
    for (const V &y : ys) {
      if (y.k != V::Scalar && y.k != V::Tensor && y.k != V::Agg)
        fail(fmt::format("{}: an `if` whose condition is known only at run time must yield "
                         "numbers, tensors, structs or tuples",
                         where_));
      leaves(y, leafs);
    }
    if (side == 0) {
      templ = ys;
      for (Value v : leafs)
        types.push_back(v.getType());
      // Results typed in the plan keep the plan's type (a literal branch
      // value converts to it).
      size_t pos = 0;
      for (size_t i = 0; i < ys.size(); ++i) {
        const std::string kind = op.results[i].type.value("kind", "");
        if (ys[i].k != V::Agg && (kind == "scalar" || kind == "tensor"))
          types[pos] = type(op.results[i].type, f);
        std::vector<Value> one;
        leaves(ys[i], one);
        pos += one.size();
      }
    } else if (leafs.size() != types.size()) {
      fail(fmt::format("{}: the branches of an `if` yield values of different shapes", where_));
    }
    for (size_t i = 0; i < leafs.size(); ++i)
      leafVals[side].push_back(convert(leafs[i], types[i]));
  }
  auto ifo = b_.create<scf::IfOp>(loc_, types, c.v, /*withElseRegion=*/true);
  for (int side = 0; side < 2; ++side) {
    Region &from = side == 0 ? shell.getThenRegion() : shell.getElseRegion();
    Region &to = side == 0 ? ifo.getThenRegion() : ifo.getElseRegion();
    to.getBlocks().clear();
    to.takeBody(from);
    Block &blk = to.front();
    blk.getTerminator()->erase();
    OpBuilder::InsertionGuard g(b_);
    b_.setInsertionPointToEnd(&blk);
    b_.create<scf::YieldOp>(loc_, leafVals[side]);
  }
  shell.erase();
  std::vector<V> out;
  size_t pos = 0;
  for (const V &t : templ)
    out.push_back(rebuild(t, ifo.getResults(), pos));
  return out;
}

std::vector<V> Importer::runtimeWhile(const ir::Op &op, Frame &f, std::vector<V> carried) {
  for (const V &v : carried)
    if (v.k != V::Scalar && v.k != V::Tensor && v.k != V::Agg)
      fail(fmt::format("{}: a `while` whose condition is known only at run time may carry "
                       "numbers, tensors, structs and tuples; this one carries {}",
                       where_, v.k == V::Opt ? "an optional" : "a block or relation"));
  // The carried values as they enter: the plan's type for numbers and
  // tensors (a static initial value may become dynamic in the body).
  std::vector<Type> planTypes(carried.size());
  for (size_t i = 0; i < carried.size() && i < op.results.size(); ++i) {
    std::string kind = op.results[i].type.value("kind", "");
    if (carried[i].k != V::Agg && (kind == "scalar" || kind == "tensor"))
      planTypes[i] = type(op.results[i].type, f);
  }
  auto flatten = [&](const std::vector<V> &vs, const SmallVector<Type> *types) {
    SmallVector<Value> out;
    for (size_t i = 0; i < vs.size(); ++i) {
      std::vector<Value> ls;
      leaves(vs[i], ls);
      for (Value l : ls) {
        Type t = types ? (*types)[out.size()] : planTypes[i] ? planTypes[i] : l.getType();
        out.push_back(convert(l, t));
      }
    }
    return out;
  };
  auto unflatten = [&](ValueRange vals) {
    std::vector<V> out;
    size_t pos = 0;
    for (const V &t : carried) {
      V v = rebuild(t, vals, pos);
      if (v.k == V::Scalar || v.k == V::Tensor)
        v.uns = t.uns;
      out.push_back(v);
    }
    return out;
  };

  // State the body writes is carried too. Which states those are is
  // known once the body is built: a body that writes more than was
  // carried is built again, carrying them.
  std::vector<std::string> states;
  for (;;) {
    std::map<std::string, Value> stateBefore = stateVal_;
    SmallVector<Value> init = flatten(carried, nullptr);
    size_t nvals = init.size();
    for (const std::string &p : states)
      init.push_back(stateVal_.at(p));
    SmallVector<Type> types;
    for (Value v : init)
      types.push_back(v.getType());
    SmallVector<Location> locs(types.size(), loc_);
    auto loop = b_.create<scf::WhileOp>(loc_, types, init);
    auto bind = [&](Block *blk) {
      for (size_t k = 0; k < states.size(); ++k)
        stateVal_[states[k]] = blk->getArgument(nvals + k);
      return unflatten(blk->getArguments().take_front(nvals));
    };
    std::vector<std::string> written;
    {
      OpBuilder::InsertionGuard g(b_);
      // As a branch: a loop of host control flow builds its body as the
      // function body does; inside an element's body it stays element code.
      const bool inElements = nest_ > 0;
      nest_ += inElements;
      Block *before = b_.createBlock(&loop.getBefore(), {}, types, locs);
      std::vector<V> c = region(op.regions[0], f, bind(before));
      if (c.size() != 1 || c[0].k != V::Scalar)
        fail(fmt::format("{}: the condition of a `while` must be a bool", where_));
      b_.create<scf::ConditionOp>(loc_, convert(c[0].v, b_.getI1Type()),
                                  before->getArguments());
      Block *after = b_.createBlock(&loop.getAfter(), {}, types, locs);
      std::vector<V> atStart = bind(after);
      std::map<std::string, Value> stateAtStart = stateVal_;
      std::vector<V> next = region(op.regions[1], f, atStart);
      if (next.size() != carried.size())
        fail(fmt::format("{}: the body of a `while` yields {} values, it carries {}", where_,
                         next.size(), carried.size()));
      SmallVector<Value> yielded = flatten(next, &types);
      if (yielded.size() != nvals)
        fail(fmt::format("{}: a value carried by a `while` changes its structure in the body",
                         where_));
      for (const auto &[p, v] : stateVal_)
        if (stateAtStart.count(p) && stateAtStart[p] != v)
          written.push_back(p);
      for (const std::string &p : states)
        yielded.push_back(convert(stateVal_[p], types[yielded.size()]));
      b_.create<scf::YieldOp>(loc_, yielded);
      nest_ -= inElements;
    }
    stateVal_ = stateBefore;
    std::vector<std::string> all = states;
    for (const std::string &p : written)
      if (std::find(all.begin(), all.end(), p) == all.end())
        all.push_back(p);
    if (all.size() != states.size()) {
      loop.erase();
      states = std::move(all);
      continue;
    }
    for (size_t k = 0; k < states.size(); ++k)
      stateVal_[states[k]] = loop.getResult(nvals + k);
    return unflatten(loop.getResults().take_front(nvals));
  }
}

std::vector<V> Importer::whileOp(const ir::Op &op, Frame &f) {
  std::vector<V> carried;
  for (ir::ValueId id : op.operands)
    carried.push_back(get(f, id));
  // Loops whose condition is known at build time (the counter over an
  // array of sub blocks) are unrolled; from the first condition known
  // only at run time on, the loop is an scf.while.
  for (int iter = 0;; ++iter) {
    std::vector<V> c = region(op.regions[0], f, carried);
    if (c.size() != 1 || c[0].k != V::Scalar)
      fail(fmt::format("{}: the condition of a `while` must be a bool", where_));
    if (!c[0].c)
      return runtimeWhile(op, f, std::move(carried));
    if (!*c[0].c)
      return carried;
    if (iter > 100000)
      fail(fmt::format("{}: a `while` unrolled more than 100000 times", where_));
    carried = region(op.regions[1], f, carried);
  }
}

} // namespace linnet::import::detail
