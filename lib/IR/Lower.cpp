//===- Lower.cpp - Typed AST to Core IR -----------------------------------===//
//
// A direct walk of a checked body. Locals map to SSA values; a `var`
// reassigned inside a `while` or an `if` becomes a loop-carried value or a
// result of the `if`. State reads and writes are ops in program order, so a
// read after a write observes it. Untyped literals and contextual constants
// take the dtype the surrounding expression expects (the `hint`), as Sema
// typed them.
//
//===----------------------------------------------------------------------===//
#include "linnet/ir/lower.hpp"
#include "linnet/ir/reducers.hpp"
#include "linnet/Sema/Subst.h"

#include <fmt/format.h>
#include <llvm/Support/Casting.h>

#include <algorithm>
#include <functional>
#include <map>

using namespace linnet;
using namespace linnet::sema;
using namespace linnet::ir;

namespace {

json scalarType(const std::string &dtype) { return {{"kind", "scalar"}, {"dtype", dtype}}; }
json indexType() { return scalarType("index"); }
json noneType() { return {{"kind", "none"}}; }
bool isLiteral(const json &t) { return t.value("kind", "") == "literal"; }
bool isUnknown(const json &t) { return t.value("kind", "") == "unknown"; }
/// The dtype a hint asks for, if it names one.
std::optional<json> hintDtype(const json &hint) {
  std::string k = hint.is_object() ? hint.value("kind", "") : "";
  if (k == "scalar" || k == "tensor")
    return hint["dtype"];
  return std::nullopt;
}

const char *binaryName(ast::BinaryOp op) {
  switch (op) {
  case ast::BinaryOp::Or: return "or";
  case ast::BinaryOp::And: return "and";
  case ast::BinaryOp::Eq: return "eq";
  case ast::BinaryOp::Ne: return "ne";
  case ast::BinaryOp::Lt: return "lt";
  case ast::BinaryOp::Le: return "le";
  case ast::BinaryOp::Gt: return "gt";
  case ast::BinaryOp::Ge: return "ge";
  case ast::BinaryOp::Add: return "add";
  case ast::BinaryOp::Sub: return "sub";
  case ast::BinaryOp::Mul: return "mul";
  case ast::BinaryOp::Div: return "div";
  case ast::BinaryOp::Mod: return "mod";
  }
  return "?";
}
bool isComparison(ast::BinaryOp op) {
  return op == ast::BinaryOp::Eq || op == ast::BinaryOp::Ne || op == ast::BinaryOp::Lt ||
         op == ast::BinaryOp::Le || op == ast::BinaryOp::Gt || op == ast::BinaryOp::Ge;
}

struct Local {
  ValueId id;
  json type;
  bool isVar = false;
};

class Lowerer {
public:
  Lowerer(const Program &p, const ModuleInfo &m, const FunctionInfo *fn,
          std::vector<const std::vector<GenericParam> *> generics)
      : p_(p), facts_(p.facts), m_(m), fn_(fn) {
    for (const auto *gs : generics)
      for (const GenericParam &g : *gs)
        generics_.emplace(g.name, &g); // the innermost (first listed) wins
  }

  Region function(const std::vector<ParamInfo> &params, const TypeRef &result,
                  const ast::Block &body) {
    AtLoc at(*this, body.loc);
    Region r;
    cur_ = &r;
    scopes_.emplace_back();
    for (const ParamInfo &pi : params) {
      ValueId id = next_++;
      json t = typeToJson(*pi.type);
      r.args.push_back({id, pi.name, t});
      scopes_.back()[pi.name] = {id, t, false};
    }
    result_ = result ? typeToJson(*result) : noneType();
    std::optional<ValueId> v = block(body, result ? &result_ : nullptr);
    if (!returned_) {
      Op ret{kind::Return, {}, {}, json::object(), {}, {}};
      if (result && v)
        ret.operands.push_back(*v);
      ret.loc = locString();
      r.ops.push_back(std::move(ret));
    }
    return r;
  }

  Region constant(const ast::Expr &init, const TypeRef &type) {
    Region r;
    cur_ = &r;
    scopes_.emplace_back();
    json hint = type ? typeToJson(*type) : json(nullptr);
    ValueId v = expr(init, hint);
    pushOp({kind::Yield, {v}, {}, json::object(), {}, {}});
    return r;
  }

private:
  //===------------------------------------------------------------------===//
  // Emission
  //===------------------------------------------------------------------===//

  ValueId emit(const char *k, std::vector<ValueId> operands, json attrs, json type,
               std::string name = "", std::vector<Region> regions = {}) {
    ValueId id = next_++;
    pushOp({k, std::move(operands), {{id, std::move(name), std::move(type)}},
                         std::move(attrs), std::move(regions), {}});
    return id;
  }
  void emitNoResult(const char *k, std::vector<ValueId> operands, json attrs = json::object()) {
    pushOp({k, std::move(operands), {}, std::move(attrs), {}, {}});
  }
  /// Appends an op to the current region, located at the construct being
  /// lowered.
  void pushOp(Op op) {
    if (op.loc.empty())
      op.loc = locString();
    cur_->ops.push_back(std::move(op));
  }
  /// `file:line:col` of the construct being lowered: the root file as it
  /// was given, other modules by their path (`std/nn.ln`), so a plan does
  /// not depend on where the standard library is installed.
  std::string locString() const {
    if (!curLoc_.isValid() || !p_.sources)
      return "";
    std::string file;
    for (const auto &mod : p_.modules)
      if (mod->buffer == curLoc_.buffer) {
        if (mod.get() == p_.root) {
          file = mod->file;
        } else {
          file = mod->name;
          std::replace(file.begin(), file.end(), '.', '/');
          file += ".ln";
        }
      }
    if (file.empty())
      return "";
    LineCol lc = p_.sources->lineCol(curLoc_);
    return fmt::format("{}:{}:{}", file, lc.line, lc.col);
  }
  /// Makes `l` the current location until the end of the scope.
  struct AtLoc {
    Lowerer &l;
    SourceLoc saved;
    AtLoc(Lowerer &l, SourceLoc loc) : l(l), saved(l.curLoc_) {
      if (loc.isValid())
        l.curLoc_ = loc;
    }
    ~AtLoc() { l.curLoc_ = saved; }
  };
  /// Gives the value just produced a source name (`let h = ...`).
  void nameLast(ValueId id, const std::string &name) {
    if (cur_->ops.empty())
      return;
    for (Value &v : cur_->ops.back().results)
      if (v.id == id && v.name.empty())
        v.name = name;
  }
  /// Runs `f` with `r` as the current region and a fresh scope.
  template <typename F> void inRegion(Region &r, F &&f) {
    Region *saved = cur_;
    cur_ = &r;
    scopes_.emplace_back();
    f();
    scopes_.pop_back();
    cur_ = saved;
  }
  ValueId arg(Region &r, const std::string &name, json type) {
    ValueId id = next_++;
    r.args.push_back({id, name, type});
    scopes_.back()[name] = {id, std::move(type), false};
    return id;
  }

  json typeOf(const ast::Expr &e) { return typeToJson(*facts_.typeOf(e)); }
  /// Like typeOf, but a local's type is the one lowering gave it.
  json exprType(const ast::Expr &e) {
    if (auto *n = llvm::dyn_cast<ast::NameExpr>(&e))
      if (const Local *l = lookup(n->name))
        return l->type;
    return typeOf(e);
  }
  static bool cmpOp(ast::BinaryOp op) { return isComparison(op); }
  /// A literal-typed value takes the hinted dtype.
  json adapt(json t, const json &hint) {
    if (isLiteral(t) || isUnknown(t)) {
      if (auto d = hintDtype(hint))
        return {{"kind", "scalar"}, {"dtype", *d}};
    } else if (t.value("kind", "") == "tensor" && t["dtype"].is_string() &&
               t["dtype"].get<std::string>().starts_with("{")) {
      if (auto d = hintDtype(hint))
        t["dtype"] = *d; // a tensor of untyped literals
    }
    return t;
  }

  const Local *lookup(const std::string &n) {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
      if (auto jt = it->find(n); jt != it->end())
        return &jt->second;
    return nullptr;
  }
  void rebind(const std::string &n, ValueId id) {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
      if (auto jt = it->find(n); jt != it->end()) {
        jt->second.id = id;
        return;
      }
  }

  json selfType() {
    Type t;
    t.kind = Type::Kind::Block;
    t.decl = fn_->block;
    for (const GenericParam &g : fn_->block->generics) {
      GenericValue v;
      v.kind = g.kind;
      if (g.kind == ast::GenericKind::Dim)
        v.dim = Dim::sym(g.id, g.name);
      else if (g.kind == ast::GenericKind::Shape)
        v.shape = {Unit{Dim(), g.id, g.name}};
      else
        v.dtype = Dtype{g.name, g.id};
      t.args.push_back(v);
    }
    return typeToJson(t);
  }

  //===------------------------------------------------------------------===//
  // Dims written as expressions (domains, slice bounds)
  //===------------------------------------------------------------------===//

  std::optional<Dim> asDim(const ast::Expr &e) {
    switch (e.kind) {
    case ast::Expr::Kind::IntLit: {
      uint64_t v = llvm::cast<ast::IntLitExpr>(e).value;
      if (v > uint64_t(INT64_MAX))
        return std::nullopt;
      return Dim(static_cast<int64_t>(v));
    }
    case ast::Expr::Kind::Name: {
      const std::string &n = llvm::cast<ast::NameExpr>(e).name;
      if (lookup(n))
        return std::nullopt;
      if (auto it = generics_.find(n); it != generics_.end() && it->second->kind == ast::GenericKind::Dim)
        return Dim::sym(it->second->id, it->second->name);
      return std::nullopt;
    }
    case ast::Expr::Kind::Unary: {
      auto &u = llvm::cast<ast::UnaryExpr>(e);
      if (u.op == ast::UnaryOp::PackSize)
        if (auto *n = llvm::dyn_cast<ast::NameExpr>(u.operand.get()))
          if (auto it = generics_.find(n->name); it != generics_.end())
            return Dim::packSize(it->second->id, it->second->name);
      return std::nullopt;
    }
    case ast::Expr::Kind::Call: {
      // min/max of dims, as Sema's asDim reads them (Check.cpp).
      auto &c = llvm::cast<ast::CallExpr>(e);
      auto *callee = llvm::dyn_cast<ast::NameExpr>(c.callee.get());
      if (!callee || (callee->name != "min" && callee->name != "max") || c.hasGenericArgs ||
          c.args.size() != 2 || lookup(callee->name))
        return std::nullopt;
      std::optional<Dim> l = asDim(*c.args[0]), r = asDim(*c.args[1]);
      if (!l || !r)
        return std::nullopt;
      return callee->name == "min" ? Dim::min(*l, *r) : Dim::max(*l, *r);
    }
    case ast::Expr::Kind::Binary: {
      auto &b = llvm::cast<ast::BinaryExpr>(e);
      std::optional<Dim> l = asDim(*b.lhs), r = asDim(*b.rhs);
      if (!l || !r)
        return std::nullopt;
      switch (b.op) {
      case ast::BinaryOp::Add: return *l + *r;
      case ast::BinaryOp::Sub: return *l - *r;
      case ast::BinaryOp::Mul: return *l * *r;
      case ast::BinaryOp::Div: if (r->constant() != 0) return Dim::floorDiv(*l, *r); break;
      case ast::BinaryOp::Mod: if (r->constant() != 0) return Dim::mod(*l, *r); break;
      default: break;
      }
      return std::nullopt;
    }
    default:
      return std::nullopt;
    }
  }

  //===------------------------------------------------------------------===//
  // Statements
  //===------------------------------------------------------------------===//

  /// Lowers a block in a new scope; its value is the last expression
  /// statement's (none if the block ends otherwise).
  std::optional<ValueId> block(const ast::Block &b, const json *hint) {
    scopes_.emplace_back();
    std::optional<ValueId> last;
    for (size_t i = 0; i < b.stmts.size() && !returned_; ++i) {
      const ast::Stmt &s = *b.stmts[i];
      bool isLast = i + 1 == b.stmts.size();
      last.reset();
      if (auto *es = llvm::dyn_cast<ast::ExprStmt>(&s))
        last = expr(*es->expr, isLast && hint ? *hint : json(nullptr));
      else
        stmt(s);
    }
    scopes_.pop_back();
    return last;
  }

  void stmt(const ast::Stmt &s) {
    AtLoc at(*this, s.loc);
    switch (s.kind) {
    case ast::Stmt::Kind::Let: {
      auto &l = llvm::cast<ast::LetStmt>(s);
      // Sema recorded the type an untyped initializer takes (a declared
      // type, or a `var`'s first typed assignment).
      json hint = typeOf(*l.init);
      if (isLiteral(hint) || isUnknown(hint) ||
          (hint.contains("dtype") && hint["dtype"].is_string() &&
           hint["dtype"].get<std::string>().starts_with("{")))
        hint = nullptr;
      // An untyped integer local (`var l = 0`) is a counter: an index.
      if (!l.type && isLiteral(typeOf(*l.init)) && typeOf(*l.init).value("class", "") == "int")
        hint = indexType();
      ValueId v = expr(*l.init, hint);
      bindPattern(*l.pattern, v, valueType(v), l.isVar);
      return;
    }
    case ast::Stmt::Kind::Assign: {
      auto &a = llvm::cast<ast::AssignStmt>(s);
      auto *n = llvm::dyn_cast<ast::NameExpr>(a.target.get());
      if (!n)
        return; // Sema rejects every other target
      if (const Local *l = lookup(n->name)) {
        json hint = l->type;
        rebind(n->name, expr(*a.value, hint));
        return;
      }
      if (fn_ && fn_->block)
        if (const MemberInfo *mem = fn_->block->member(n->name)) {
          ValueId v = expr(*a.value, typeToJson(*mem->type));
          emitNoResult(kind::StateWrite, {v}, {{"member", n->name}});
        }
      return;
    }
    case ast::Stmt::Kind::Expr:
      expr(*llvm::cast<ast::ExprStmt>(s).expr, nullptr);
      return;
    case ast::Stmt::Kind::Return: {
      auto &r = llvm::cast<ast::ReturnStmt>(s);
      Op ret{kind::Return, {}, {}, json::object(), {}, {}};
      if (r.value)
        ret.operands.push_back(expr(*r.value, result_));
      pushOp(std::move(ret));
      returned_ = true;
      return;
    }
    case ast::Stmt::Kind::While:
      whileStmt(llvm::cast<ast::WhileStmt>(s));
      return;
    }
  }

  /// Names of enclosing `var`s that `b` assigns (in source order).
  void assignedVars(const ast::Block &b, std::vector<std::string> &out) {
    for (const ast::StmtPtr &s : b.stmts) {
      if (auto *a = llvm::dyn_cast<ast::AssignStmt>(s.get())) {
        if (auto *n = llvm::dyn_cast<ast::NameExpr>(a->target.get()))
          if (const Local *l = lookup(n->name); l && l->isVar &&
                                                std::find(out.begin(), out.end(), n->name) == out.end())
            out.push_back(n->name);
      } else if (auto *w = llvm::dyn_cast<ast::WhileStmt>(s.get())) {
        assignedVars(w->body, out);
      } else if (auto *e = llvm::dyn_cast<ast::ExprStmt>(s.get())) {
        if (auto *i = llvm::dyn_cast<ast::IfExpr>(e->expr.get()))
          assignedVarsIf(*i, out);
      }
    }
  }
  void assignedVarsIf(const ast::IfExpr &i, std::vector<std::string> &out) {
    assignedVars(i.thenBlock, out);
    if (i.elseBlock)
      assignedVars(*i.elseBlock, out);
    if (i.elseIf)
      if (auto *e = llvm::dyn_cast<ast::IfExpr>(i.elseIf.get()))
        assignedVarsIf(*e, out);
  }

  void whileStmt(const ast::WhileStmt &w) {
    std::vector<std::string> carried;
    assignedVars(w.body, carried);
    std::vector<ValueId> inits;
    std::vector<json> types;
    for (const std::string &n : carried) {
      inits.push_back(lookup(n)->id);
      types.push_back(lookup(n)->type);
    }
    Region cond, body;
    inRegion(cond, [&] {
      for (size_t i = 0; i < carried.size(); ++i)
        scopes_.back()[carried[i]] = {arg(cond, carried[i], types[i]), types[i], true};
      ValueId c = expr(*w.cond, scalarType("bool"));
      pushOp({kind::Yield, {c}, {}, json::object(), {}, {}});
    });
    inRegion(body, [&] {
      for (size_t i = 0; i < carried.size(); ++i)
        scopes_.back()[carried[i]] = {arg(body, carried[i], types[i]), types[i], true};
      block(w.body, nullptr);
      std::vector<ValueId> next;
      for (const std::string &n : carried)
        next.push_back(lookup(n)->id);
      pushOp({kind::Yield, next, {}, json::object(), {}, {}});
    });
    Op op{kind::While, inits, {}, json::object(), {}, {}};
    for (size_t i = 0; i < carried.size(); ++i) {
      ValueId id = next_++;
      op.results.push_back({id, carried[i], types[i]});
      rebind(carried[i], id);
    }
    op.regions.push_back(std::move(cond));
    op.regions.push_back(std::move(body));
    pushOp(std::move(op));
  }

  json valueType(ValueId id) {
    for (const Value &v : cur_->args)
      if (v.id == id)
        return v.type;
    for (auto it = cur_->ops.rbegin(); it != cur_->ops.rend(); ++it)
      for (const Value &v : it->results)
        if (v.id == id)
          return v.type;
    for (auto &scope : scopes_)
      for (auto &[n, l] : scope)
        if (l.id == id)
          return l.type;
    return {{"kind", "unknown"}};
  }

  void bindPattern(const ast::Pattern &pat, ValueId v, const json &t, bool isVar) {
    switch (pat.kind) {
    case ast::Pattern::Kind::Binding: {
      const std::string &n = llvm::cast<ast::BindingPattern>(pat).name;
      nameLast(v, n);
      scopes_.back()[n] = {v, t, isVar};
      return;
    }
    case ast::Pattern::Kind::Tuple: {
      auto &tp = llvm::cast<ast::TuplePattern>(pat);
      for (size_t i = 0; i < tp.elements.size(); ++i) {
        json et = t.value("kind", "") == "tuple" && i < t["elements"].size() ? t["elements"][i]
                                                                              : json{{"kind", "unknown"}};
        ValueId e = emit(kind::TupleGet, {v}, {{"index", i}}, et);
        bindPattern(*tp.elements[i], e, et, isVar);
      }
      return;
    }
    default:
      return;
    }
  }

  //===------------------------------------------------------------------===//
  // Expressions
  //===------------------------------------------------------------------===//

  ValueId expr(const ast::Expr &e, const json &hint) {
    AtLoc at(*this, e.loc);
    switch (e.kind) {
    case ast::Expr::Kind::IntLit: {
      auto &i = llvm::cast<ast::IntLitExpr>(e);
      // The parser checked the magnitude (at most 2^63, for -2^63).
      json v = i.value <= uint64_t(INT64_MAX) ? json(static_cast<int64_t>(i.value)) : json(i.value);
      return emit(kind::Const, {}, {{"value", v}}, adapt(typeOf(e), hint));
    }
    case ast::Expr::Kind::FloatLit: {
      auto &f = llvm::cast<ast::FloatLitExpr>(e);
      return emit(kind::Const, {}, {{"value", f.value}}, adapt(typeOf(e), hint));
    }
    case ast::Expr::Kind::BoolLit:
      return emit(kind::Const, {}, {{"value", llvm::cast<ast::BoolLitExpr>(e).value}}, scalarType("bool"));
    case ast::Expr::Kind::StringLit:
      return emit(kind::Const, {}, {{"value", llvm::cast<ast::StringLitExpr>(e).value}},
                  {{"kind", "string"}});
    case ast::Expr::Kind::NoneLit:
      return emit(kind::Const, {}, {{"value", nullptr}}, hint.is_object() ? hint : noneType());
    case ast::Expr::Kind::Name:
      return name(llvm::cast<ast::NameExpr>(e), hint);
    case ast::Expr::Kind::Unary: {
      auto &u = llvm::cast<ast::UnaryExpr>(e);
      if (u.op == ast::UnaryOp::PackSize) {
        std::optional<Dim> d = asDim(e);
        return emit(kind::DimValue, {}, {{"dim", d ? dimToJson(*d) : json(nullptr)}}, indexType());
      }
      json t = adapt(typeOf(e), hint);
      ValueId x = expr(*u.operand, t);
      return emit(kind::Arith, {x}, {{"op", u.op == ast::UnaryOp::Neg ? "neg" : "not"}}, t);
    }
    case ast::Expr::Kind::Binary:
      return binary(llvm::cast<ast::BinaryExpr>(e), hint);
    case ast::Expr::Kind::Call:
      return call(llvm::cast<ast::CallExpr>(e), hint);
    case ast::Expr::Kind::Index:
      return index(llvm::cast<ast::IndexExpr>(e));
    case ast::Expr::Kind::Field:
      return field(llvm::cast<ast::FieldExpr>(e), hint);
    case ast::Expr::Kind::TupleIndex: {
      auto &t = llvm::cast<ast::TupleIndexExpr>(e);
      ValueId b = expr(*t.base, nullptr);
      return emit(kind::TupleGet, {b}, {{"index", t.index}}, typeOf(e));
    }
    case ast::Expr::Kind::Comprehension:
      return comprehension(llvm::cast<ast::ComprehensionExpr>(e), hint);
    case ast::Expr::Kind::Reduction:
      return reduction(llvm::cast<ast::ReductionExpr>(e), hint);
    case ast::Expr::Kind::Cast: {
      auto &c = llvm::cast<ast::CastExpr>(e);
      json t = typeOf(e);
      // A cast does not type its operand: Sema recorded the type its
      // untyped literals take (`(7 / 2) as f32` divides i64s), which the
      // operand's literals and contextual constants adopt.
      json operandT = typeOf(*c.operand);
      ValueId x = expr(*c.operand, isLiteral(operandT) ? t : operandT);
      json to = t.contains("dtype") ? t["dtype"] : json(nullptr);
      return emit(kind::Cast, {x}, {{"to", to}}, t);
    }
    case ast::Expr::Kind::Tuple: {
      auto &t = llvm::cast<ast::TupleExpr>(e);
      json tt = typeOf(e);
      std::vector<ValueId> xs;
      for (size_t i = 0; i < t.elements.size(); ++i) {
        json h = hint.is_object() && hint.value("kind", "") == "tuple" && i < hint["elements"].size()
                     ? hint["elements"][i]
                     : json(nullptr);
        xs.push_back(expr(*t.elements[i], h));
        // An element of untyped literals takes its dtype from the context,
        // as the element itself was lowered.
        if (tt.value("kind", "") == "tuple" && i < tt["elements"].size())
          tt["elements"][i] = adapt(tt["elements"][i], h);
      }
      return emit(kind::Tuple, xs, json::object(), tt);
    }
    case ast::Expr::Kind::ArrayLit: {
      std::vector<ValueId> xs;
      for (const ast::ExprPtr &x : llvm::cast<ast::ArrayLitExpr>(e).elements)
        xs.push_back(expr(*x, nullptr));
      return emit(kind::Array, xs, json::object(), typeOf(e));
    }
    case ast::Expr::Kind::StructLit:
      return structLit(llvm::cast<ast::StructLitExpr>(e), hint);
    case ast::Expr::Kind::If:
      return ifExpr(llvm::cast<ast::IfExpr>(e), hint);
    case ast::Expr::Kind::Match:
      return match(llvm::cast<ast::MatchExpr>(e), hint);
    case ast::Expr::Kind::BlockExpr: {
      std::optional<ValueId> v = block(llvm::cast<ast::BlockExpr>(e).block, &hint);
      return v ? *v : emit(kind::Const, {}, {{"value", nullptr}}, noneType());
    }
    }
    return emit(kind::Const, {}, {{"value", nullptr}}, {{"kind", "unknown"}});
  }

  ValueId name(const ast::NameExpr &n, const json &hint) {
    if (const Local *l = lookup(n.name))
      return l->id;
    if (fn_ && fn_->block)
      if (const MemberInfo *mem = fn_->block->member(n.name)) {
        json t = typeToJson(*mem->type);
        switch (mem->kind) {
        case ast::MemberKind::State:
          return emit(kind::StateRead, {}, {{"member", n.name}, {"path", n.name}}, t, n.name);
        case ast::MemberKind::Sub:
          return emit(kind::Sub, {}, {{"member", n.name}}, t, n.name);
        default:
          return emit(kind::Member, {}, {{"member", n.name}}, t, n.name);
        }
      }
    if (auto it = generics_.find(n.name); it != generics_.end() && it->second->kind == ast::GenericKind::Dim)
      return emit(kind::DimValue, {}, {{"dim", dimToJson(Dim::sym(it->second->id, it->second->name))}},
                  indexType(), n.name);
    if (auto it = m_.scope.find(n.name); it != m_.scope.end() && it->second.kind == Symbol::Kind::Const)
      return constRef(*static_cast<const ConstInfo *>(it->second.ptr), hint);
    return emit(kind::Const, {}, {{"value", nullptr}}, {{"kind", "unknown"}}, n.name);
  }

  ValueId constRef(const ConstInfo &c, const json &hint) {
    json t = c.type ? typeToJson(*c.type) : json{{"kind", "unknown"}};
    if (c.contextual)
      t = adapt(t, hint);
    return emit(kind::Constant, {}, {{"name", c.module->name + "::" + c.name}}, t, c.name);
  }

  /// `a && b`, `a || b` short-circuit (§6.1): a right side that reads a
  /// tensor, calls, divides or reduces (whose reads and run-time checks
  /// must not run where the left side decides: `i >= 1 && x[i - 1] > 0.0`)
  /// is the branch of an `if`; a plain one is combined with `and`/`or`.
  ValueId logical(const ast::BinaryExpr &b) {
    bool isAnd = b.op == ast::BinaryOp::And;
    // Tensors of bools combine element by element: both sides evaluated.
    if (json t = typeOf(b); t.value("kind", "") == "tensor") {
      ValueId l = expr(*b.lhs, t), r = expr(*b.rhs, t);
      return emit(kind::Arith, {l, r}, {{"op", isAnd ? "and" : "or"}}, t);
    }
    json bt = scalarType("bool");
    ValueId l = expr(*b.lhs, bt);
    Region rhs;
    inRegion(rhs, [&] {
      ValueId r = expr(*b.rhs, bt);
      pushOp({kind::Yield, {r}, {}, json::object(), {}, {}});
    });
    bool guarded = std::any_of(rhs.ops.begin(), rhs.ops.end(), [](const Op &o) {
      return !o.regions.empty() || o.kind == kind::Index || o.kind == kind::Call ||
             o.kind == kind::Slice ||
             (o.kind == kind::Arith && (o.attrs.value("op", "") == "div" || o.attrs.value("op", "") == "mod"));
    });
    if (!guarded) {
      ValueId r = rhs.ops.back().operands[0];
      rhs.ops.pop_back();
      for (Op &o : rhs.ops)
        cur_->ops.push_back(std::move(o));
      return emit(kind::Arith, {l, r}, {{"op", isAnd ? "and" : "or"}}, bt);
    }
    Region decided;
    inRegion(decided, [&] {
      ValueId c = emit(kind::Const, {}, {{"value", !isAnd}}, bt);
      pushOp({kind::Yield, {c}, {}, json::object(), {}, {}});
    });
    Op op{kind::If, {l}, {}, json::object(), {}, {}};
    ValueId result = next_++;
    op.results.push_back({result, "", bt});
    op.regions.push_back(std::move(isAnd ? rhs : decided));
    op.regions.push_back(std::move(isAnd ? decided : rhs));
    pushOp(std::move(op));
    return result;
  }

  ValueId binary(const ast::BinaryExpr &b, const json &hint) {
    if (b.op == ast::BinaryOp::And || b.op == ast::BinaryOp::Or)
      return logical(b);
    json tl = exprType(*b.lhs), tr = exprType(*b.rhs), t = typeOf(b);
    if (isLiteral(t) && !isLiteral(tl) && !isUnknown(tl) && !cmpOp(b.op))
      t = tl;
    else if (isLiteral(t) && !isLiteral(tr) && !isUnknown(tr) && !cmpOp(b.op))
      t = tr;
    // A literal side takes the other side's dtype (or the context's; a
    // comparison's context is the bool it yields, never its operands' type:
    // `n + 1 == -2` typed the -2 bool).
    bool cmp = isComparison(b.op);
    json opHint = hint;
    if (cmp) {
      // Two literals compare at the default dtypes (f32 if either is a
      // float literal, else i64).
      bool flt = (isLiteral(tl) && tl.value("class", "") == "float") ||
                 (isLiteral(tr) && tr.value("class", "") == "float");
      opHint = json{{"kind", "scalar"}, {"dtype", flt ? "f32" : "i64"}};
    }
    json hl = tl, hr = tr;
    if (isLiteral(tl) || isUnknown(tl))
      hl = isLiteral(tr) || isUnknown(tr) ? opHint : tr;
    if (isLiteral(tr) || isUnknown(tr))
      hr = isLiteral(tl) || isUnknown(tl) ? opHint : tl;
    // A comparison of a literal with a side whose type Sema left open
    // (index arithmetic): the literal takes the type that side lowers to.
    ValueId l, r;
    auto typed = [&](const json &t) { return !t.is_null() && !isLiteral(t) && !isUnknown(t); };
    if (cmp && isLiteral(tr) && !typed(hr) && !isLiteral(tl)) {
      l = expr(*b.lhs, hl);
      json lt = valueType(l);
      r = expr(*b.rhs, typed(lt) ? lt : hr);
    } else if (cmp && isLiteral(tl) && !typed(hl) && !isLiteral(tr)) {
      r = expr(*b.rhs, hr);
      json rt = valueType(r);
      l = expr(*b.lhs, typed(rt) ? rt : hl);
    } else {
      l = expr(*b.lhs, hl);
      r = expr(*b.rhs, hr);
    }
    if (cmp)
      return emit(kind::Cmp, {l, r}, {{"pred", binaryName(b.op)}}, t);
    // Index arithmetic: a dim generic on either side stays an index.
    return emit(kind::Arith, {l, r}, {{"op", binaryName(b.op)}}, adapt(t, hint));
  }

  /// A generic as a value referring to itself (`In` bound to `In`).
  static GenericValue selfGeneric(const GenericParam &g) {
    GenericValue v;
    v.kind = g.kind;
    if (g.kind == ast::GenericKind::Dim)
      v.dim = Dim::sym(g.id, g.name);
    else if (g.kind == ast::GenericKind::Dtype)
      v.dtype = Dtype{g.name, g.id};
    else
      v.shape = {Unit{Dim(), g.id, g.name}};
    return v;
  }

  ValueId call(const ast::CallExpr &c, const json &hint) {
    json t = typeOf(c);
    auto facts = facts_.calls.find(&c);
    if (facts == facts_.calls.end()) {
      // Intrinsics, some(x), and the scalar max/min.
      std::string callee;
      if (auto *n = llvm::dyn_cast<ast::NameExpr>(c.callee.get()))
        callee = n->name;
      if (callee == "some") {
        ValueId x = expr(*c.args[0], hint.is_object() && hint.value("kind", "") == "optional"
                                         ? hint["inner"]
                                         : json(nullptr));
        return emit(kind::Some, {x}, json::object(), t);
      }
      t = adapt(t, hint);
      std::vector<ValueId> xs;
      for (const ast::ExprPtr &x : c.args)
        xs.push_back(expr(*x, t));
      std::string bname = callee.starts_with("__builtin_") ? callee.substr(10) : callee;
      return emit(kind::Builtin, xs, {{"name", bname}}, t);
    }
    const FunctionInfo &f = *facts->second.fn;
    const Bindings &b = facts->second.bindings;
    std::vector<ValueId> xs;
    bool method = f.block != nullptr;
    if (method) {
      if (auto *fe = llvm::dyn_cast<ast::FieldExpr>(c.callee.get()))
        xs.push_back(expr(*fe->base, nullptr));
      else
        xs.push_back(emit(kind::Self, {}, json::object(), selfType(), "self"));
    }
    for (size_t i = 0; i < c.args.size() && i < f.params.size(); ++i)
      xs.push_back(expr(*c.args[i], typeToJson(*substType(f.params[i].type, b))));
    json generics = json::array();
    for (const GenericParam &g : f.generics) {
      auto it = b.find(g.id);
      generics.push_back(it == b.end() ? json(nullptr) : genericValueToJson(it->second));
    }
    json subst = json::object();
    for (const auto &[id, v] : b)
      subst[id] = genericValueToJson(v);
    // A method called on `self` runs on the same instance: the block's
    // generics are bound to themselves (the plan's substitution lists
    // every bound generic, the block's included).
    if (method && !llvm::isa<ast::FieldExpr>(c.callee.get()))
      for (const GenericParam &g : f.block->generics)
        if (!subst.contains(g.id))
          subst[g.id] = genericValueToJson(selfGeneric(g));
    json attrs = {{"callee", f.qualified()}, {"method", method}, {"generics", generics},
                  {"substitution", subst}};
    if (!f.result) {
      emitNoResult(kind::Call, xs, attrs);
      return emit(kind::Const, {}, {{"value", nullptr}}, noneType());
    }
    if (isUnknown(t))
      t = typeToJson(*substType(f.result, b));
    return emit(kind::Call, xs, attrs, t);
  }

  ValueId index(const ast::IndexExpr &ix) {
    json bt = typeOf(*ix.base);
    ValueId base = expr(*ix.base, nullptr);
    json t = typeOf(ix);
    bool simple = std::all_of(ix.items.begin(), ix.items.end(), [](const ast::IndexItem &it) {
      return it.kind == ast::IndexItem::Kind::Index;
    });
    std::vector<ValueId> xs{base};
    if (simple) {
      for (const ast::IndexItem &it : ix.items)
        xs.push_back(expr(*it.index, indexType()));
      return emit(kind::Index, xs, json::object(), t);
    }
    size_t used = 0;
    for (const ast::IndexItem &it : ix.items)
      used += it.kind != ast::IndexItem::Kind::Ellipsis;
    bool packs = false;
    size_t rank = 0;
    if (bt.value("kind", "") == "tensor")
      for (const json &u : bt["shape"]) {
        packs |= u.is_object() && u.contains("pack");
        ++rank;
      }
    json axes = json::array();
    auto bound = [&](const ast::ExprPtr &e) -> json {
      if (!e)
        return nullptr;
      xs.push_back(expr(*e, indexType()));
      return xs.size() - 1;
    };
    for (const ast::IndexItem &it : ix.items) {
      switch (it.kind) {
      case ast::IndexItem::Kind::Index:
        axes.push_back({{"kind", "squeeze"}, {"index", bound(it.index)}});
        break;
      case ast::IndexItem::Kind::Slice: {
        json start = bound(it.start), stop = bound(it.stop), step = bound(it.step);
        axes.push_back({{"kind", "range"}, {"start", start}, {"stop", stop}, {"step", step}});
        break;
      }
      case ast::IndexItem::Kind::Ellipsis:
        if (packs || rank < used)
          axes.push_back({{"kind", "whole"}, {"rest", true}});
        else
          for (size_t k = 0; k < rank - used; ++k)
            axes.push_back({{"kind", "whole"}});
        break;
      }
    }
    return emit(kind::Slice, xs, {{"axes", axes}}, t);
  }

  ValueId field(const ast::FieldExpr &f, const json &hint) {
    json t = typeOf(f);
    // module.CONST
    if (auto *bn = llvm::dyn_cast<ast::NameExpr>(f.base.get()); bn && !lookup(bn->name) &&
                                                                !(fn_ && fn_->block && fn_->block->member(bn->name))) {
      auto it = m_.scope.find(bn->name);
      if (it != m_.scope.end() && it->second.kind == Symbol::Kind::Module) {
        auto *mod = static_cast<const ModuleInfo *>(it->second.ptr);
        if (auto jt = mod->items.find(f.field.name); jt != mod->items.end() && jt->second.kind == Symbol::Kind::Const)
          return constRef(*static_cast<const ConstInfo *>(jt->second.ptr), hint);
      }
    }
    TypeRef bt = facts_.typeOf(*f.base);
    ValueId base = expr(*f.base, nullptr);
    if (bt->kind == Type::Kind::Block) {
      auto *blk = static_cast<const BlockInfo *>(bt->decl);
      if (const MemberInfo *mem = blk->member(f.field.name)) {
        if (mem->kind == ast::MemberKind::State)
          return emit(kind::StateRead, {base}, {{"member", f.field.name}, {"path", subPath(f)}}, t);
        if (mem->kind == ast::MemberKind::Sub)
          return emit(kind::Sub, {base}, {{"member", f.field.name}}, t);
        return emit(kind::Member, {base}, {{"member", f.field.name}}, t);
      }
    }
    return emit(kind::Field, {base}, {{"name", f.field.name}}, t);
  }

  /// `layers[i].attention.cache` -> "layers[*].attention.cache".
  static std::string subPath(const ast::Expr &e) {
    if (auto *n = llvm::dyn_cast<ast::NameExpr>(&e))
      return n->name;
    if (auto *i = llvm::dyn_cast<ast::IndexExpr>(&e))
      return subPath(*i->base) + "[*]";
    if (auto *f = llvm::dyn_cast<ast::FieldExpr>(&e))
      return subPath(*f->base) + "." + f->field.name;
    return "?";
  }

  ValueId comprehension(const ast::ComprehensionExpr &c, const json &hint) {
    json t = adapt(typeOf(c), hint);
    if (isUnknown(t) && hint.is_object())
      t = hint;
    json indices = json::array();
    Region body;
    json elem = nullptr;
    if (t.value("kind", "") == "tensor") {
      json rest = json::array();
      for (size_t i = c.indices.size(); i < t["shape"].size(); ++i)
        rest.push_back(t["shape"][i]);
      elem = rest.empty() ? json{{"kind", "scalar"}, {"dtype", t["dtype"]}}
                          : json{{"kind", "tensor"}, {"shape", rest}, {"dtype", t["dtype"]}};
    }
    inRegion(body, [&] {
      for (size_t k = 0; k < c.indices.size(); ++k) {
        const ast::IndexBinder &b = c.indices[k];
        // The domain as the checked type spells it: Sema may have recorded
        // the declared form of an axis equal to it under a `where`
        // equality (Grid * Grid for Image / Patch * Image / Patch).
        std::optional<Dim> d = asDim(*b.domain);
        json dj = d ? dimToJson(*d) : json(nullptr);
        if (t.value("kind", "") == "tensor" && k < t["shape"].size() && t["shape"][k].is_object() &&
            !t["shape"][k].contains("pack"))
          dj = t["shape"][k];
        indices.push_back({{"name", b.name.name}, {"domain", dj}});
        arg(body, b.name.name, indexType());
      }
      ValueId v = expr(*c.body, elem);
      pushOp({kind::Yield, {v}, {}, json::object(), {}, {}});
    });
    std::vector<Region> regions;
    regions.push_back(std::move(body));
    return emit(kind::Comprehension, {}, {{"indices", indices}}, t, "", std::move(regions));
  }

  ValueId reduction(const ast::ReductionExpr &r, const json &hint) {
    json t = adapt(typeOf(r), hint);
    std::vector<ValueId> operands;
    json indices = json::array();
    // Relation domains (`src, edge: g[dst]`) are operands: the relation and
    // the node whose neighbours are visited.
    std::vector<std::string> names;
    for (const ast::BinderGroup &g : r.groups) {
      auto *ix = llvm::dyn_cast<ast::IndexExpr>(g.domain.get());
      if (g.names.size() > 1 || ix) {
        json entry = {{"names", json::array()}};
        if (ix && ix->items.size() == 1 && ix->items[0].index) {
          operands.push_back(expr(*ix->base, nullptr));
          entry["relation"] = operands.size() - 1;
          operands.push_back(expr(*ix->items[0].index, indexType()));
          entry["target"] = operands.size() - 1;
        }
        for (const ast::Ident &n : g.names) {
          entry["names"].push_back(n.name);
          names.push_back(n.name);
        }
        indices.push_back(entry);
      } else {
        std::optional<Dim> d = asDim(*g.domain);
        indices.push_back({{"name", g.names[0].name}, {"domain", d ? dimToJson(*d) : json(nullptr)}});
        names.push_back(g.names[0].name);
      }
    }
    json reducer;
    json bodyHint = nullptr;
    if (auto it = facts_.reductions.find(&r); it != facts_.reductions.end()) {
      json gens = json::array();
      for (const GenericValue &v : it->second.args)
        gens.push_back(genericValueToJson(v));
      reducer = {{"name", it->second.reducer->qualified()}, {"generics", gens}};
      // The message is the lift's parameters.
      auto parts = facts_.reducerParts.find(it->second.reducer);
      if (parts != facts_.reducerParts.end()) {
        Bindings b = bindingsOf(it->second.reducer->generics, it->second.args);
        for (const ReducerPart &part : parts->second)
          if (part.decl->name.name == "lift") {
            json elems = json::array();
            for (const ParamInfo &pi : part.params)
              elems.push_back(typeToJson(*substType(pi.type, b)));
            bodyHint = elems.size() == 1 ? elems[0] : json{{"kind", "tuple"}, {"elements", elems}};
          }
      }
    } else {
      std::string n;
      if (auto *ne = llvm::dyn_cast<ast::NameExpr>(r.reducer.get()))
        n = ne->name;
      reducer = findBuiltinReducer(n) ? json(n) : json(nullptr);
      bodyHint = t;
    }
    std::vector<Region> regions(r.filter ? 2 : 1);
    inRegion(regions[0], [&] {
      for (const std::string &n : names)
        arg(regions[0], n, indexType());
      std::vector<ValueId> msg;
      if (auto *tup = llvm::dyn_cast<ast::TupleExpr>(r.body.get())) {
        for (size_t i = 0; i < tup->elements.size(); ++i) {
          json h = bodyHint.is_object() && bodyHint.value("kind", "") == "tuple" &&
                           i < bodyHint["elements"].size()
                       ? bodyHint["elements"][i]
                       : json(nullptr);
          msg.push_back(expr(*tup->elements[i], h));
        }
      } else {
        ValueId v = expr(*r.body, bodyHint);
        json vt = valueType(v);
        // A lift of several parameters takes the body's tuple element by
        // element, however the tuple was written (a block ending in one, a
        // `let`, a call): the region yields one value per parameter.
        if (bodyHint.is_object() && bodyHint.value("kind", "") == "tuple" &&
            vt.value("kind", "") == "tuple" && vt["elements"].size() == bodyHint["elements"].size()) {
          for (size_t i = 0; i < vt["elements"].size(); ++i)
            msg.push_back(emit(kind::TupleGet, {v}, {{"index", i}}, vt["elements"][i]));
        } else {
          msg.push_back(v);
        }
      }
      pushOp({kind::Yield, msg, {}, json::object(), {}, {}});
    });
    if (r.filter)
      inRegion(regions[1], [&] {
        for (const std::string &n : names)
          arg(regions[1], n, indexType());
        ValueId c = expr(*r.filter, scalarType("bool"));
        pushOp({kind::Yield, {c}, {}, json::object(), {}, {}});
      });
    return emit(kind::Reduce, operands,
                {{"reducer", reducer}, {"indices", indices}, {"filter", r.filter != nullptr}}, t, "",
                std::move(regions));
  }

  ValueId structLit(const ast::StructLitExpr &s, const json &hint) {
    TypeRef st = facts_.typeOf(s);
    json t = typeToJson(*st);
    if (isUnknown(t) && hint.is_object())
      t = hint;
    std::vector<ValueId> xs;
    json fields = json::array();
    if (st->kind == Type::Kind::Struct) {
      auto *info = static_cast<const StructInfo *>(st->decl);
      Bindings b = bindingsOf(info->generics, st->args);
      for (const FieldInfo &fi : info->fields)
        for (const ast::FieldInit &init : s.fields)
          if (init.name.name == fi.name) {
            xs.push_back(expr(*init.value, typeToJson(*substType(fi.type, b))));
            fields.push_back(fi.name);
          }
    } else {
      for (const ast::FieldInit &init : s.fields) {
        xs.push_back(expr(*init.value, nullptr));
        fields.push_back(init.name.name);
      }
    }
    return emit(kind::Struct, xs, {{"fields", fields}}, t);
  }

  /// `if` as an op with two regions; enclosing `var`s assigned in a branch
  /// become extra results after the value.
  ValueId ifExpr(const ast::IfExpr &i, const json &hint) {
    json t = adapt(typeOf(i), hint);
    bool hasValue = t.value("kind", "") != "none" && (i.elseBlock || i.elseIf);
    std::vector<std::string> vars;
    assignedVarsIf(i, vars);
    ValueId c = expr(*i.cond, scalarType("bool"));
    Region thenR, elseR;
    auto finish = [&](std::optional<ValueId> v) {
      std::vector<ValueId> ys;
      if (hasValue)
        ys.push_back(v ? *v : emit(kind::Const, {}, {{"value", nullptr}}, noneType()));
      for (const std::string &n : vars)
        ys.push_back(lookup(n)->id);
      pushOp({kind::Yield, ys, {}, json::object(), {}, {}});
    };
    bool savedReturned = returned_;
    inRegion(thenR, [&] { finish(block(i.thenBlock, &t)); });
    inRegion(elseR, [&] {
      if (i.elseBlock)
        finish(block(*i.elseBlock, &t));
      else if (i.elseIf)
        finish(expr(*i.elseIf, t));
      else
        finish(std::nullopt);
    });
    returned_ = savedReturned;
    Op op{kind::If, {c}, {}, json::object(), {}, {}};
    ValueId result = -1;
    if (hasValue) {
      result = next_++;
      op.results.push_back({result, "", t});
    }
    for (const std::string &n : vars) {
      ValueId id = next_++;
      op.results.push_back({id, n, lookup(n)->type});
      rebind(n, id);
    }
    op.regions.push_back(std::move(thenR));
    op.regions.push_back(std::move(elseR));
    pushOp(std::move(op));
    return hasValue ? result : emit(kind::Const, {}, {{"value", nullptr}}, noneType());
  }

  /// A pattern as data; the names it binds are appended to `binds` with
  /// their types, in order (they are the arm region's arguments).
  json pattern(const ast::Pattern &p, const TypeRef &t, std::vector<std::pair<std::string, json>> &binds) {
    switch (p.kind) {
    case ast::Pattern::Kind::Wildcard: return {{"kind", "wildcard"}};
    case ast::Pattern::Kind::Binding: {
      const std::string &n = llvm::cast<ast::BindingPattern>(p).name;
      binds.push_back({n, typeToJson(*t)});
      return {{"kind", "bind"}, {"name", n}};
    }
    case ast::Pattern::Kind::Literal: {
      auto *lit = llvm::cast<ast::LiteralPattern>(p).literal.get();
      json v = nullptr;
      if (auto *i = llvm::dyn_cast<ast::IntLitExpr>(lit))
        v = i->value <= uint64_t(INT64_MAX) ? json(static_cast<int64_t>(i->value)) : json(i->value);
      else if (auto *f = llvm::dyn_cast<ast::FloatLitExpr>(lit))
        v = f->value;
      else if (auto *b = llvm::dyn_cast<ast::BoolLitExpr>(lit))
        v = b->value;
      else if (auto *s = llvm::dyn_cast<ast::StringLitExpr>(lit))
        v = s->value;
      return {{"kind", "literal"}, {"value", v}};
    }
    case ast::Pattern::Kind::Tuple: {
      auto &tp = llvm::cast<ast::TuplePattern>(p);
      json elems = json::array();
      for (size_t i = 0; i < tp.elements.size(); ++i)
        elems.push_back(pattern(*tp.elements[i],
                                t->kind == Type::Kind::Tuple && i < t->elems.size() ? t->elems[i] : Type::unknown(),
                                binds));
      return {{"kind", "tuple"}, {"elements", elems}};
    }
    case ast::Pattern::Kind::Ctor: {
      auto &c = llvm::cast<ast::CtorPattern>(p);
      std::string head = c.path[0].name;
      if (c.path.size() == 1 && head == "none")
        return {{"kind", "none"}};
      if (c.path.size() == 1 && head == "some" && c.args.size() == 1)
        return {{"kind", "some"},
                {"arg", pattern(*c.args[0], t->kind == Type::Kind::Optional ? t->elems[0] : Type::unknown(), binds)}};
      json args = json::array();
      std::vector<TypeRef> payload;
      if (t->kind == Type::Kind::Enum) {
        auto *e = static_cast<const EnumInfo *>(t->decl);
        Bindings b = bindingsOf(e->generics, t->args);
        for (const auto &[vn, ts] : e->variants)
          if (vn == c.path.back().name)
            for (const TypeRef &x : ts)
              payload.push_back(substType(x, b));
      }
      for (size_t i = 0; i < c.args.size(); ++i)
        args.push_back(pattern(*c.args[i], i < payload.size() ? payload[i] : Type::unknown(), binds));
      return {{"kind", "variant"}, {"name", c.path.back().name}, {"args", args}};
    }
    }
    return nullptr;
  }

  ValueId match(const ast::MatchExpr &m, const json &hint) {
    json t = adapt(typeOf(m), hint);
    TypeRef st = facts_.typeOf(*m.scrutinee);
    ValueId s = expr(*m.scrutinee, nullptr);
    json arms = json::array();
    std::vector<Region> regions(m.arms.size());
    bool savedReturned = returned_;
    for (size_t i = 0; i < m.arms.size(); ++i) {
      std::vector<std::pair<std::string, json>> binds;
      arms.push_back(pattern(*m.arms[i].pattern, st, binds));
      inRegion(regions[i], [&] {
        for (auto &[n, bt] : binds)
          arg(regions[i], n, bt);
        ValueId v = expr(*m.arms[i].body, t);
        pushOp({kind::Yield, {v}, {}, json::object(), {}, {}});
      });
    }
    returned_ = savedReturned;
    return emit(kind::Match, {s}, {{"arms", arms}}, t, "", std::move(regions));
  }

  const Program &p_;
  const Facts &facts_;
  const ModuleInfo &m_;
  const FunctionInfo *fn_;
  std::map<std::string, const GenericParam *> generics_;
  std::vector<std::map<std::string, Local>> scopes_;
  Region *cur_ = nullptr;
  SourceLoc curLoc_;
  ValueId next_ = 0;
  json result_;
  bool returned_ = false;
};

} // namespace

Region ir::lowerFunction(const Program &p, const FunctionInfo &f) {
  std::vector<const std::vector<GenericParam> *> gs{&f.generics};
  if (f.block)
    gs.push_back(&f.block->generics);
  Lowerer l(p, *f.module, &f, gs);
  return l.function(f.params, f.result, f.decl->body);
}

Region ir::lowerReducerPart(const Program &p, const NominalInfo &reducer, const ReducerPart &part) {
  Lowerer l(p, *reducer.module, nullptr, {&reducer.generics});
  return l.function(part.params, part.result, part.decl->body);
}

Region ir::lowerConst(const Program &p, const ConstInfo &c) {
  Lowerer l(p, *c.module, nullptr, {});
  return l.constant(*c.decl->init, c.decl->type ? c.type : nullptr);
}
