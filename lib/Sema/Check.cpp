//===- Check.cpp - Checking function bodies -------------------------------===//
//
// Names resolve to locals, block members, generics (a dim used as a value is
// an index), module items and imports. Types are inferred bottom-up; where
// a type cannot be known (an unresolved reducer, a relation domain) it is
// Unknown and never causes a second error. Shapes are compared in normal
// form after substituting the generics bound at the call.
//
//===----------------------------------------------------------------------===//
#include "SemaImpl.h"
#include "linnet/ir/reducers.hpp"

using namespace linnet;
using namespace linnet::sema;

namespace linnet::sema {

static const std::set<std::string> kScalarBuiltins = {"max", "min"};

static Dtype litInt() { return Dtype{"{integer}", ""}; }
static Dtype litFloat() { return Dtype{"{float}", ""}; }
static bool isLit(const Dtype &d) { return d.name.starts_with("{"); }

/// Reports a numeric literal `e` (possibly negated, possibly suffixed) whose
/// value does not fit `dtype`: `const S: i8 = 300`, `70000.0` as f16. An
/// untyped literal takes its dtype from the use, so this runs at each use
/// with a known dtype. Returns false after reporting.
static bool literalFits(const ast::Expr &e, const std::string &dtype, DiagnosticEngine &diag) {
  const ast::Expr *x = &e;
  bool neg = false;
  while (auto *u = llvm::dyn_cast<ast::UnaryExpr>(x)) {
    if (u->op != ast::UnaryOp::Neg)
      return true;
    neg = !neg;
    x = u->operand.get();
  }
  if (auto *i = llvm::dyn_cast<ast::IntLitExpr>(x)) {
    struct Range { const char *name; int64_t lo; uint64_t hi; };
    static constexpr Range kRanges[] = {
        {"i8", INT8_MIN, INT8_MAX},    {"i16", INT16_MIN, INT16_MAX}, {"i32", INT32_MIN, INT32_MAX},
        {"i64", INT64_MIN, INT64_MAX}, {"index", INT64_MIN, INT64_MAX}, {"u8", 0, UINT8_MAX},
        {"u16", 0, UINT16_MAX},        {"u32", 0, UINT32_MAX},        {"u64", 0, UINT64_MAX}};
    for (const Range &r : kRanges) {
      if (dtype != r.name)
        continue;
      // |lo| as uint64 (INT64_MIN has no int64 negation).
      uint64_t loMag = r.lo < 0 ? 0 - static_cast<uint64_t>(r.lo) : 0;
      bool ok = neg ? i->value <= loMag : i->value <= r.hi;
      if (!ok)
        diag.error(e.loc, fmt::format("integer literal {}{} is out of range for {} ({} to {})",
                                      neg ? "-" : "", i->digits, dtype, r.lo, r.hi));
      return ok;
    }
    return true;
  }
  if (auto *f = llvm::dyn_cast<ast::FloatLitExpr>(x)) {
    double max = dtype == "f16"    ? 65504.0
                 : dtype == "bf16" ? 3.3895313892515355e38
                 : dtype == "f32"  ? 3.4028234663852886e38
                                   : 0;
    if (max != 0 && std::fabs(f->value) > max) {
      diag.error(e.loc, fmt::format("float literal {}{} is out of range for {} (largest {:g})",
                                    neg ? "-" : "", f->digits, dtype, max));
      return false;
    }
  }
  return true;
}

class BodyChecker {
public:
  BodyChecker(Analyzer &a, FunctionInfo *fn, ModuleInfo &m, const Env &env)
      : a_(a), diag_(a.diag_), fn_(fn), m_(m), env_(env) {
    if (fn && fn->block)
      useEqualities(fn->block->constraints);
    if (fn)
      useEqualities(fn->constraints);
  }

  /// Dim equalities of a `where` clause in scope (`Grid * Patch == Image`)
  /// become rewrites of one generic (Image := Grid * Patch) that shapes are
  /// normalized with before they are compared. Each rewrite is kept fully
  /// reduced by the others, so one substitution reaches the normal form;
  /// one that would be circular is not used.
  void useEqualities(const std::vector<Constraint> &cs) {
    auto lone = [&](const Dim &d) -> const Atom * {
      const auto &ts = d.terms();
      if (ts.size() != 1 || ts[0].coeff != 1 || ts[0].atoms.size() != 1 ||
          ts[0].atoms[0]->kind != Atom::Kind::Sym)
        return nullptr;
      const Atom *x = ts[0].atoms[0].get();
      for (const Env *e = &env_; e; e = e->parent)
        for (const GenericParam *g : e->params)
          if (g->id == x->id && g->kind == ast::GenericKind::Dim)
            return x;
      return nullptr;
    };
    auto mentions = [](const Dim &d, const std::string &id) {
      std::vector<const Atom *> syms;
      d.collectSymbols(syms);
      return std::any_of(syms.begin(), syms.end(), [&](const Atom *a) { return a->id == id; });
    };
    for (const Constraint &c : cs) {
      if (c.op != ast::BinaryOp::Eq)
        continue;
      Dim l = substDim(c.lhs, rules_), r = substDim(c.rhs, rules_);
      const Atom *x = lone(r);
      Dim to = l;
      // The lone generic on the right is rewritten (`Head * Heads ==
      // Hidden`); of two lone generics, the later-named one.
      if (const Atom *y = lone(l); y && (!x || y->id > x->id)) {
        x = y;
        to = r;
      }
      if (!x || mentions(to, x->id))
        continue;
      GenericValue v;
      v.kind = ast::GenericKind::Dim;
      v.dim = to;
      Bindings one{{x->id, v}};
      for (auto &[id, old] : rules_)
        old.dim = substDim(old.dim, one);
      rules_[x->id] = v;
    }
  }

  /// literalFits() against a concrete scalar or tensor dtype (a generic
  /// dtype's range is not known here). An untyped float value never takes
  /// an integer dtype: `x[i] * 0.5` with x of i64 would compute with 0.
  void fits(const ast::Expr &value, const Type &target) {
    if (target.kind != Type::Kind::Scalar && target.kind != Type::Kind::Tensor)
      return;
    TypeRef v = a_.prog_.facts.typeOf(value);
    if ((v->kind == Type::Kind::Scalar || v->kind == Type::Kind::Tensor) &&
        v->dtype.name == "{float}") {
      const GenericParam *g = target.dtype.isVar() ? env_.find(target.dtype.name) : nullptr;
      if (g && g->id != target.dtype.var)
        g = nullptr; // a callee's generic of the same name
      std::string cls = g ? g->dtypeClass : dtypeClassOf(target.dtype.name);
      if (cls == "int" || cls == "signed" || target.dtype.name == "index") {
        diag_.error(value.loc, fmt::format("an untyped float value cannot take the integer "
                                           "dtype {} (convert the other side with 'as', or "
                                           "write an integer)",
                                           target.dtype.name));
        return;
      }
    }
    if (!target.dtype.isVar() && !isLit(target.dtype))
      literalFits(value, target.dtype.name, diag_);
  }

  void checkFunction(const ast::FunctionDecl &d, const std::vector<ParamInfo> &params,
                     TypeRef result) {
    scopes_.emplace_back();
    for (size_t i = 0; i < params.size(); ++i) {
      const ParamInfo &p = params[i];
      bool block = p.type && p.type->kind == Type::Kind::Block;
      scopes_.back().push_back({Local::Kind::Param, p.name, p.type, std::nullopt,
                                block ? fmt::format("%p{}.", i) : std::string()});
    }
    result_ = result;
    TypeRef t = checkBlock(d.body);
    if (result && t && !returned_ && !passes(*result, *t) &&
        !(d.body.stmts.empty()))
      diag_.error(d.body.endLoc, fmt::format("'{}' must return {}, but its body yields {}",
                                             d.name.name, describe(*result), describe(*t)));
    else if (result && t && !sameType(*result, *t) && !d.body.stmts.empty())
      if (auto *es = llvm::dyn_cast<ast::ExprStmt>(d.body.stmts.back().get()))
        retype(*es->expr, result);
  }

  /// A value equal to the type it must have only under the `where`
  /// equalities (`[t: Image / Patch * Image / Patch] ...` returned as a
  /// Tensor[Grid * Grid]) is recorded with that type, at the expression
  /// that makes it (through `let` names), so that lowering and the Core IR
  /// see the declared type.
  void retype(const ast::Expr &e, const TypeRef &want) {
    const ast::Expr *x = &e;
    for (auto it = letDefs_.find(x); it != letDefs_.end(); it = letDefs_.find(x))
      x = it->second;
    a_.prog_.facts.types[x] = want;
    if (x != &e)
      a_.prog_.facts.types[&e] = want;
  }

  TypeRef checkConst(const ast::Expr &e) {
    scopes_.emplace_back();
    return check(e);
  }

private:
  //===------------------------------------------------------------------===//
  // Helpers
  //===------------------------------------------------------------------===//

  /// A type with the bindings of the generics it mentions: the user's terms.
  std::string describe(const Type &t, const Bindings *b = nullptr) {
    std::string s = t.str();
    if (!b || b->empty())
      return s;
    std::string with;
    for (const auto &[id, v] : *b) {
      std::string name = id.substr(id.rfind("::") + 2);
      if (s.find(name) == std::string::npos || v.str() == name)
        continue;
      with += (with.empty() ? "" : ", ") + name + " = " + v.str();
    }
    return with.empty() ? s : s + " with " + with;
  }

  const Local *lookupLocal(const std::string &n) {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
      for (auto jt = it->rbegin(); jt != it->rend(); ++jt)
        if (jt->name == n)
          return &*jt;
    return nullptr;
  }
  void bind(Local l) { scopes_.back().push_back(std::move(l)); }

  TypeRef indexType() { return Type::scalar(Dtype{"index", ""}); }

  /// Normal forms under the `where` equalities in scope.
  Dim norm(const Dim &d) const { return rules_.empty() ? d : substDim(d, rules_); }
  TypeRef norm(const TypeRef &t) const { return rules_.empty() ? t : substType(t, rules_); }
  /// Type equality up to the `where` equalities in scope.
  bool same(const Type &a, const Type &b) const {
    if (sameType(a, b))
      return true;
    if (rules_.empty())
      return false;
    auto ca = std::make_shared<Type>(a), cb = std::make_shared<Type>(b);
    return sameType(*norm(ca), *norm(cb));
  }
  bool sameShape(const Shape &a, const Shape &b) const {
    if (a.size() != b.size())
      return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (!(a[i] == b[i]) && (a[i].isPack() || b[i].isPack() || norm(a[i].dim) != norm(b[i].dim)))
        return false;
    return true;
  }

  /// A dim written as an expression (a domain, or a dim used as a value).
  std::optional<Dim> asDim(const ast::Expr &e, bool report) {
    switch (e.kind) {
    case ast::Expr::Kind::IntLit: {
      auto &i = llvm::cast<ast::IntLitExpr>(e);
      if (i.value > uint64_t(INT64_MAX))
        return std::nullopt;
      return Dim(static_cast<int64_t>(i.value));
    }
    case ast::Expr::Kind::Name: {
      const std::string &n = llvm::cast<ast::NameExpr>(e).name;
      if (lookupLocal(n))
        break;
      if (const GenericParam *g = env_.find(n)) {
        if (g->kind == ast::GenericKind::Dim)
          return Dim::sym(g->id, g->name);
        if (report)
          diag_.error(e.loc, fmt::format("expected a dim for the domain, found {} generic '{}'",
                                         ast::spelling(g->kind), n));
        return std::nullopt;
      }
      break;
    }
    case ast::Expr::Kind::Unary: {
      auto &u = llvm::cast<ast::UnaryExpr>(e);
      if (u.op == ast::UnaryOp::PackSize)
        if (auto *n = llvm::dyn_cast<ast::NameExpr>(u.operand.get()))
          if (const GenericParam *g = env_.find(n->name); g && g->kind == ast::GenericKind::Shape)
            return Dim::packSize(g->id, g->name);
      break;
    }
    case ast::Expr::Kind::Call: {
      // `min(N, 3)` and `max(...)` of dims are dims, as in a type.
      auto &c = llvm::cast<ast::CallExpr>(e);
      auto *callee = llvm::dyn_cast<ast::NameExpr>(c.callee.get());
      if (!callee || (callee->name != "min" && callee->name != "max") || c.hasGenericArgs ||
          c.args.size() != 2 || lookupLocal(callee->name))
        break;
      std::optional<Dim> l = asDim(*c.args[0], false), r = asDim(*c.args[1], false);
      if (l && r)
        return callee->name == "min" ? Dim::min(*l, *r) : Dim::max(*l, *r);
      break;
    }
    case ast::Expr::Kind::Binary: {
      auto &b = llvm::cast<ast::BinaryExpr>(e);
      std::optional<Dim> l = asDim(*b.lhs, false), r = asDim(*b.rhs, false);
      if (!l || !r)
        break;
      Dim::OverflowCheck check;
      std::optional<Dim> out;
      switch (b.op) {
      case ast::BinaryOp::Add: out = *l + *r; break;
      case ast::BinaryOp::Sub: out = *l - *r; break;
      case ast::BinaryOp::Mul: out = *l * *r; break;
      case ast::BinaryOp::Div: if (r->constant() != 0) out = Dim::floorDiv(*l, *r); break;
      case ast::BinaryOp::Mod: if (r->constant() != 0) out = Dim::mod(*l, *r); break;
      default: break;
      }
      if (out && check.overflowed()) {
        if (report)
          diag_.error(b.loc, fmt::format("dimension '{} {} {}' overflows 64-bit integers", l->str(),
                                         ast::spelling(b.op), r->str()));
        return std::nullopt;
      }
      if (out)
        return out;
      break;
    }
    default:
      break;
    }
    if (report)
      diag_.error(e.loc, "expected a dim as the domain of an index (a dim generic, an integer "
                         "or an expression of them)");
    return std::nullopt;
  }

  //===------------------------------------------------------------------===//
  // Statements
  //===------------------------------------------------------------------===//

  TypeRef checkBlock(const ast::Block &b) {
    scopes_.emplace_back();
    TypeRef last = Type::none();
    for (const ast::StmtPtr &s : b.stmts)
      last = checkStmt(*s);
    for (const Local &l : scopes_.back())
      if (l.init && l.type->kind == Type::Kind::Tensor && isLit(l.type->dtype))
        a_.prog_.facts.types[l.init] = defaultLiteral(l.type);
    scopes_.pop_back();
    return last;
  }

  /// The dtype an untyped float literal takes when nothing gives it one:
  /// the float dtype generic in scope when there is exactly one (`2.0` in
  /// a function generic over `T: dtype(float)` is a T), else f32.
  Dtype defaultFloat() const {
    const GenericParam *only = nullptr;
    int n = 0;
    for (const Env *e = &env_; e; e = e->parent)
      for (const GenericParam *g : e->params)
        if (g->kind == ast::GenericKind::Dtype && g->dtypeClass == "float") {
          only = g;
          ++n;
        }
    return n == 1 ? Dtype{only->name, only->id} : Dtype{"f32", ""};
  }
  Dtype defaultLit(const Dtype &lit) const {
    return lit.name == "{integer}" ? Dtype{"i64", ""} : defaultFloat();
  }

  /// The type an untyped literal tensor takes when nothing gives it one.
  TypeRef defaultLiteral(TypeRef t) const {
    if ((t->kind != Type::Kind::Tensor && t->kind != Type::Kind::Scalar) || !isLit(t->dtype))
      return t;
    Dtype d = defaultLit(t->dtype);
    return t->kind == Type::Kind::Scalar ? Type::scalar(d) : Type::tensor(t->shape, d);
  }

  TypeRef checkStmt(const ast::Stmt &s) {
    switch (s.kind) {
    case ast::Stmt::Kind::Let: {
      auto &l = llvm::cast<ast::LetStmt>(s);
      TypeRef t = check(*l.init);
      if (l.type) {
        TypeRef decl = a_.resolveType(*l.type, m_, env_);
        fits(*l.init, *decl);
        if (!same(*decl, *t) && !passes(*decl, *t))
          diag_.error(l.init->loc, fmt::format("'let' declares type {}, but the value has type {}",
                                               describe(*decl), describe(*t)));
        else if (!sameType(*decl, *t))
          retype(*l.init, decl);
        // An untyped literal value takes the declared type (`let one:
        // f32 = 1.0`): lowering types the initializer from this record.
        if (isLiteralish(*t))
          a_.prog_.facts.types[l.init.get()] = decl;
        t = decl;
      }
      // A tensor of untyped literals bound by `let` has nothing later to
      // type it: it takes the default dtype (f32, i64) here, so that check
      // and lowering agree on it. A `var` waits for its first typed
      // assignment (checkAssign), and defaults at the end of its scope.
      // So does a reduction of untyped literals (`min(k: N) 2.0`); a plain
      // literal (`let eps = 1e-5`) stays contextual.
      bool reduction = l.init->kind == ast::Expr::Kind::Reduction;
      if (!l.isVar && isLit(t->dtype) &&
          (t->kind == Type::Kind::Tensor || (reduction && t->kind == Type::Kind::Scalar))) {
        t = defaultLiteral(t);
        a_.prog_.facts.types[l.init.get()] = t;
      }
      bindPattern(*l.pattern, t, l.isVar ? Local::Kind::Var : Local::Kind::Let);
      if (!l.isVar && l.pattern->kind == ast::Pattern::Kind::Binding)
        scopes_.back().back().def = l.init.get();
      if (l.isVar && isLiteralish(*t) && l.pattern->kind == ast::Pattern::Kind::Binding)
        scopes_.back().back().init = l.init.get();
      return Type::none();
    }
    case ast::Stmt::Kind::Assign:
      checkAssign(llvm::cast<ast::AssignStmt>(s));
      return Type::none();
    case ast::Stmt::Kind::Expr:
      return check(*llvm::cast<ast::ExprStmt>(s).expr);
    case ast::Stmt::Kind::Return: {
      auto &r = llvm::cast<ast::ReturnStmt>(s);
      TypeRef t = r.value ? check(*r.value) : Type::none();
      if (result_ && r.value)
        fits(*r.value, *result_);
      if (result_ && !passes(*result_, *t))
        diag_.error(r.loc, fmt::format("return value has type {}, expected {}", describe(*t),
                                       describe(*result_)));
      else if (result_ && r.value && !sameType(*result_, *t))
        retype(*r.value, result_);
      returned_ = true;
      return Type::none();
    }
    case ast::Stmt::Kind::While: {
      auto &w = llvm::cast<ast::WhileStmt>(s);
      expectBool(*w.cond);
      checkBlock(w.body);
      return Type::none();
    }
    }
    return Type::unknown();
  }

  void expectBool(const ast::Expr &e) {
    TypeRef t = check(e);
    if (t->kind != Type::Kind::Unknown && !(t->kind == Type::Kind::Scalar && t->dtype.name == "bool"))
      diag_.error(e.loc, fmt::format("condition must be a bool, found {}", describe(*t)));
  }

  void bindPattern(const ast::Pattern &p, TypeRef t, Local::Kind k) {
    switch (p.kind) {
    case ast::Pattern::Kind::Wildcard: return;
    case ast::Pattern::Kind::Binding:
      bind({k, llvm::cast<ast::BindingPattern>(p).name, t, std::nullopt});
      return;
    case ast::Pattern::Kind::Tuple: {
      auto &tp = llvm::cast<ast::TuplePattern>(p);
      if (t->kind == Type::Kind::Tuple && t->elems.size() != tp.elements.size())
        diag_.error(p.loc, fmt::format("pattern has {} elements, but the value is {}",
                                       tp.elements.size(), describe(*t)));
      else if (t->kind != Type::Kind::Tuple && t->kind != Type::Kind::Unknown)
        diag_.error(p.loc, fmt::format("tuple pattern, but the value is {}", describe(*t)));
      for (size_t i = 0; i < tp.elements.size(); ++i)
        bindPattern(*tp.elements[i],
                    t->kind == Type::Kind::Tuple && i < t->elems.size() ? t->elems[i]
                                                                        : Type::unknown(),
                    k);
      return;
    }
    case ast::Pattern::Kind::Ctor: {
      auto &c = llvm::cast<ast::CtorPattern>(p);
      std::string head = c.path[0].name;
      if (c.path.size() == 1 && (head == "some" || head == "none")) {
        if (t->kind != Type::Kind::Optional && t->kind != Type::Kind::Unknown) {
          diag_.error(p.loc, fmt::format("'{}' matches an optional value, but the value is {}",
                                         head, describe(*t)));
          return;
        }
        if (head == "some") {
          if (c.args.size() != 1) {
            diag_.error(p.loc, "'some' takes one pattern: some(x)");
            return;
          }
          bindPattern(*c.args[0], t->kind == Type::Kind::Optional ? t->elems[0] : Type::unknown(), k);
        }
        return;
      }
      // Enum variants: Name.Variant(...)
      if (t->kind == Type::Kind::Enum) {
        auto *e = static_cast<const EnumInfo *>(t->decl);
        const std::string &vn = c.path.back().name;
        for (const auto &[name, payload] : e->variants)
          if (name == vn) {
            Bindings b = bindingsOf(e->generics, t->args);
            for (size_t i = 0; i < c.args.size(); ++i)
              bindPattern(*c.args[i], i < payload.size() ? substType(payload[i], b) : Type::unknown(), k);
            return;
          }
        diag_.error(p.loc, fmt::format("enum '{}' has no variant '{}'", e->name, vn));
        return;
      }
      for (const ast::PatternPtr &a : c.args)
        bindPattern(*a, Type::unknown(), k);
      return;
    }
    case ast::Pattern::Kind::Literal:
      return;
    }
  }

  void checkAssign(const ast::AssignStmt &s) {
    TypeRef value = check(*s.value);
    if (auto *n = llvm::dyn_cast<ast::NameExpr>(s.target.get())) {
      if (const Local *l = lookupLocal(n->name)) {
        if (l->kind != Local::Kind::Var) {
          const char *what = l->kind == Local::Kind::Let     ? "a 'let' binding"
                             : l->kind == Local::Kind::Param ? "a parameter"
                                                             : "an index";
          diag_.error(n->loc, fmt::format("cannot assign to '{}': it is {} (declare it with "
                                          "'var' to reassign it)",
                                          n->name, what));
          return;
        }
        if (!same(*l->type, *value) && !(isLiteralish(*l->type) || isNumericLit(*value)))
          diag_.error(s.value->loc, fmt::format("'{}' has type {}, but the assigned value has "
                                                "type {}",
                                                n->name, describe(*l->type), describe(*value)));
        // `var out = [i: N] 0.0` then `out = [i: N] out[i] + x[i]`: the
        // first typed value decides the var's type, initializer included.
        if (l->init && isLiteralish(*l->type) && !isLiteralish(*value)) {
          a_.prog_.facts.types[l->init] = value;
          const_cast<Local *>(l)->type = value;
        }
        return;
      }
      if (fn_ && fn_->block) {
        if (const MemberInfo *mem = fn_->block->member(n->name)) {
          if (mem->kind != ast::MemberKind::State) {
            diag_.error(n->loc, fmt::format("cannot assign to {} '{}': only state members can be "
                                            "assigned",
                                            ast::spelling(mem->kind), n->name));
            return;
          }
          if (unordered_ > 0) {
            diag_.error(n->loc, fmt::format("cannot write state '{}' inside a {} body: its "
                                           "iterations run in no defined order; compute the value "
                                           "and assign it after",
                                           n->name, unorderedWhat_));
            return;
          }
          fn_->states.insert(n->name);
          fits(*s.value, *mem->type);
          if (!same(*mem->type, *value))
            diag_.error(s.value->loc, fmt::format("state '{}' has type {}, but the assigned "
                                                  "value has type {}",
                                                  n->name, describe(*mem->type),
                                                  describe(*value)));
          return;
        }
      }
      auto it = m_.scope.find(n->name);
      if (it != m_.scope.end() && it->second.kind == Symbol::Kind::Const) {
        diag_.error(n->loc, fmt::format("cannot assign to constant '{}': module-level values are "
                                        "immutable (no hidden global mutation)",
                                        n->name));
        return;
      }
      if (const GenericParam *g = env_.find(n->name)) {
        diag_.error(n->loc, fmt::format("cannot assign to {} generic '{}'",
                                        ast::spelling(g->kind), n->name));
        return;
      }
      diag_.error(n->loc, fmt::format("cannot assign to unknown name '{}'", n->name));
      return;
    }
    // A field path: a child's state, a struct field, a module item.
    auto &f = llvm::cast<ast::FieldExpr>(*s.target);
    TypeRef base = check(*f.base);
    if (base->kind == Type::Kind::Block)
      diag_.error(f.field.loc, fmt::format("cannot assign to '{}' of a sub block: a block may "
                                           "assign only its own state members (a parent reads "
                                           "a child's state through its path)",
                                           f.field.name));
    else if (base->kind != Type::Kind::Unknown)
      diag_.error(f.field.loc, fmt::format("cannot assign to field '{}' of {}: only 'var' "
                                           "names and the block's own state can be assigned",
                                           f.field.name, describe(*base)));
  }

  static inline const Dtype kI64{"i64", ""};
  /// Whether a value of type `a` may stand where type `p` is expected (an
  /// argument, a `let` with a type, a result): the same type, or an index
  /// for an i64 (indices are i64 values, §8.1), also inside a tuple.
  bool passes(const Type &p, const Type &a) const {
    if (p.kind == Type::Kind::Scalar && a.kind == Type::Kind::Scalar && a.dtype.name == "index" &&
        !a.dtype.isVar())
      return p.dtype == kI64 || p.dtype.name == "index";
    if (p.kind == Type::Kind::Tuple && a.kind == Type::Kind::Tuple && p.elems.size() == a.elems.size()) {
      for (size_t i = 0; i < p.elems.size(); ++i)
        if (!passes(*p.elems[i], *a.elems[i]))
          return false;
      return true;
    }
    return same(p, a);
  }

  static bool isNumericLit(const Type &t) { return t.kind == Type::Kind::Scalar && isLit(t.dtype); }
  /// An untyped literal, or a tensor of them (`[i: N] 0.0`).
  static bool isLiteralish(const Type &t) {
    return (t.kind == Type::Kind::Scalar || t.kind == Type::Kind::Tensor) && isLit(t.dtype);
  }

  //===------------------------------------------------------------------===//
  // Expressions
  //===------------------------------------------------------------------===//

  /// Checks `e` and records its type for lowering.
  TypeRef check(const ast::Expr &e) {
    TypeRef t = checkExpr(e);
    a_.prog_.facts.types[&e] = t;
    return t;
  }

  TypeRef checkExpr(const ast::Expr &e) {
    if (diag_.limitReached())
      return Type::unknown();
    switch (e.kind) {
    case ast::Expr::Kind::IntLit: {
      auto &i = llvm::cast<ast::IntLitExpr>(e);
      if (!i.suffix.empty()) {
        literalFits(e, i.suffix, diag_);
        return Type::scalar(Dtype{i.suffix, ""});
      }
      return Type::scalar(litInt());
    }
    case ast::Expr::Kind::FloatLit: {
      auto &f = llvm::cast<ast::FloatLitExpr>(e);
      if (!f.suffix.empty()) {
        literalFits(e, f.suffix, diag_);
        return Type::scalar(Dtype{f.suffix, ""});
      }
      return Type::scalar(litFloat());
    }
    case ast::Expr::Kind::BoolLit:
      return Type::scalar(Dtype{"bool", ""});
    case ast::Expr::Kind::StringLit:
      return std::make_shared<Type>(Type{Type::Kind::String, {}, {}, {}, {}, nullptr, {}});
    case ast::Expr::Kind::NoneLit:
      return Type::none();
    case ast::Expr::Kind::Name:
      return checkName(llvm::cast<ast::NameExpr>(e));
    case ast::Expr::Kind::Unary: {
      auto &u = llvm::cast<ast::UnaryExpr>(e);
      if (u.op == ast::UnaryOp::PackSize) {
        asDim(e, true);
        return indexType();
      }
      TypeRef t = check(*u.operand);
      if (u.op == ast::UnaryOp::Not) {
        // `!` takes a bool, or a tensor of bools element by element (as
        // comparisons of tensors give them).
        if (!logicalOperand(*u.operand, *t, "!"))
          return Type::unknown();
        return t->kind == Type::Kind::Tensor ? t : Type::scalar(Dtype{"bool", ""});
      }
      return t;
    }
    case ast::Expr::Kind::Binary:
      return checkBinary(llvm::cast<ast::BinaryExpr>(e));
    case ast::Expr::Kind::Call:
      return checkCall(llvm::cast<ast::CallExpr>(e));
    case ast::Expr::Kind::Index:
      return checkIndex(llvm::cast<ast::IndexExpr>(e));
    case ast::Expr::Kind::Field:
      return checkField(llvm::cast<ast::FieldExpr>(e));
    case ast::Expr::Kind::TupleIndex: {
      auto &t = llvm::cast<ast::TupleIndexExpr>(e);
      TypeRef b = check(*t.base);
      if (b->kind == Type::Kind::Tuple) {
        if (t.index < b->elems.size())
          return b->elems[t.index];
        diag_.error(e.loc, fmt::format("tuple index {} out of range for {}", t.index, describe(*b)));
      } else if (b->kind != Type::Kind::Unknown) {
        diag_.error(e.loc, fmt::format("'.{}' needs a tuple, found {}", t.index, describe(*b)));
      }
      return Type::unknown();
    }
    case ast::Expr::Kind::Comprehension:
      return checkComprehension(llvm::cast<ast::ComprehensionExpr>(e));
    case ast::Expr::Kind::Reduction:
      return checkReduction(llvm::cast<ast::ReductionExpr>(e));
    case ast::Expr::Kind::Cast: {
      auto &c = llvm::cast<ast::CastExpr>(e);
      TypeRef from = check(*c.operand);
      TypeRef to = a_.resolveType(*c.type, m_, env_);
      // A cast does not type its operand (§6.9): its untyped literals are
      // typed as if it stood alone, so `(7 / 2) as f32` divides integers.
      // Integer literals are i64; float literals take a float target's
      // dtype (`0.1 as f64` is the f64 nearest 0.1), else f32.
      if (isLiteralish(*from) && (to->kind == Type::Kind::Scalar || to->kind == Type::Kind::Tensor)) {
        const GenericParam *g = to->dtype.isVar() ? env_.find(to->dtype.name) : nullptr;
        bool floatTo = g ? g->dtypeClass == "float" : dtypeClassOf(to->dtype.name) == "float";
        Dtype d = from->dtype.name == "{integer}" ? Dtype{"i64", ""}
                  : floatTo                       ? to->dtype
                                                  : defaultFloat();
        fits(*c.operand, *Type::scalar(d));
        from = from->kind == Type::Kind::Scalar ? Type::scalar(d) : Type::tensor(from->shape, d);
        a_.prog_.facts.types[c.operand.get()] = from;
      }
      if (to->kind == Type::Kind::Scalar && from->kind == Type::Kind::Tensor)
        return Type::tensor(from->shape, to->dtype);
      return to;
    }
    case ast::Expr::Kind::Tuple: {
      auto t = std::make_shared<Type>();
      t->kind = Type::Kind::Tuple;
      for (const ast::ExprPtr &x : llvm::cast<ast::TupleExpr>(e).elements)
        t->elems.push_back(check(*x));
      return t;
    }
    case ast::Expr::Kind::ArrayLit: {
      auto &a = llvm::cast<ast::ArrayLitExpr>(e);
      auto t = std::make_shared<Type>();
      t->kind = Type::Kind::Array;
      TypeRef first;
      for (const ast::ExprPtr &x : a.elements) {
        TypeRef xt = check(*x);
        if (!first)
          first = xt;
        else if (!same(*first, *xt))
          diag_.error(x->loc, fmt::format("array elements must have one type: {} then {}",
                                          describe(*first), describe(*xt)));
      }
      t->elems.push_back(first ? first : Type::unknown());
      t->size = Dim((int64_t)a.elements.size());
      return t;
    }
    case ast::Expr::Kind::StructLit:
      return checkStructLit(llvm::cast<ast::StructLitExpr>(e));
    case ast::Expr::Kind::If: {
      auto &i = llvm::cast<ast::IfExpr>(e);
      expectBool(*i.cond);
      TypeRef t = checkBlock(i.thenBlock);
      TypeRef el = Type::none();
      if (i.elseBlock)
        el = checkBlock(*i.elseBlock);
      else if (i.elseIf)
        el = check(*i.elseIf);
      else
        return Type::none();
      return unify(t, el, e.loc, "the branches of 'if'");
    }
    case ast::Expr::Kind::Match:
      return checkMatch(llvm::cast<ast::MatchExpr>(e));
    case ast::Expr::Kind::BlockExpr:
      return checkBlock(llvm::cast<ast::BlockExpr>(e).block);
    }
    return Type::unknown();
  }

  /// The common type of two values (literals adopt the other side's dtype).
  TypeRef unify(TypeRef a, TypeRef b, SourceLoc loc, const char *what) {
    if (a->kind == Type::Kind::Unknown)
      return b;
    if (b->kind == Type::Kind::Unknown)
      return a;
    if (a->kind == Type::Kind::Scalar && isLit(a->dtype) &&
        (b->kind == Type::Kind::Scalar || b->kind == Type::Kind::Tensor))
      return b;
    if (b->kind == Type::Kind::Scalar && isLit(b->dtype) &&
        (a->kind == Type::Kind::Scalar || a->kind == Type::Kind::Tensor))
      return a;
    // An index meets an integer as that integer (binders are i64 values).
    if (a->kind == Type::Kind::Scalar && b->kind == Type::Kind::Scalar &&
        (a->dtype.name == "index") != (b->dtype.name == "index")) {
      const Type &other = a->dtype.name == "index" ? *b : *a;
      if (dtypeClassOf(other.dtype.name) == "int")
        return a->dtype.name == "index" ? b : a;
    }
    if (!same(*a, *b)) {
      diag_.error(loc, fmt::format("{} have different types: {} and {}", what, describe(*a),
                                   describe(*b)));
      return Type::unknown();
    }
    return a;
  }

  TypeRef checkName(const ast::NameExpr &n) {
    if (const Local *l = lookupLocal(n.name)) {
      if (l->def)
        letDefs_[&n] = l->def;
      return l->type;
    }
    if (fn_ && fn_->block)
      if (const MemberInfo *mem = fn_->block->member(n.name)) {
        if (mem->kind == ast::MemberKind::State)
          fn_->states.insert(n.name);
        return mem->type;
      }
    if (const GenericParam *g = env_.find(n.name)) {
      if (g->kind == ast::GenericKind::Dim)
        return indexType(); // a dim used as a value
      diag_.error(n.loc, fmt::format("{} generic '{}' is not a value", ast::spelling(g->kind), n.name));
      return Type::unknown();
    }
    auto it = m_.scope.find(n.name);
    if (it != m_.scope.end()) {
      if (it->second.kind == Symbol::Kind::Const) // typed constants keep their type
        return constType(*static_cast<ConstInfo *>(it->second.ptr));
      diag_.error(n.loc, fmt::format("'{}' is {}, not a value", n.name, symbolKind(it->second)));
      return Type::unknown();
    }
    diag_.error(n.loc, fmt::format("unknown name '{}'", n.name));
    return Type::unknown();
  }

  static const char *symbolKind(const Symbol &s) {
    switch (s.kind) {
    case Symbol::Kind::Module: return "a module";
    case Symbol::Kind::Block: return "a block";
    case Symbol::Kind::Struct: return "a struct";
    case Symbol::Kind::Enum: return "an enum";
    case Symbol::Kind::Reducer: return "a reducer";
    case Symbol::Kind::Function: return "a function";
    case Symbol::Kind::Const: return "a constant";
    }
    return "an item";
  }

  TypeRef constType(ConstInfo &c) {
    if (c.type)
      return c.type;
    if (c.decl->type) {
      c.type = a_.resolveType(*c.decl->type, *c.module, Env{});
      return c.type;
    }
    // An untyped constant used before its own check: its value decides
    // whether it is an integer or a float literal (`const K = 7` is no
    // float: `(K / 2) as f32` divides integers).
    c.contextual = true;
    if (a_.constDone_.emplace(&c, true).second) {
      BodyChecker bc(a_, nullptr, *c.module, Env{});
      TypeRef t = bc.checkConst(*c.decl->init);
      if (!c.type)
        c.type = t;
      return t;
    }
    return Type::unknown(); // a constant defined through itself
  }

  TypeRef checkBinary(const ast::BinaryExpr &b) {
    TypeRef l = check(*b.lhs), r = check(*b.rhs);
    switch (b.op) {
    case ast::BinaryOp::And:
    case ast::BinaryOp::Or: {
      // bools, or tensors of bools of one shape element by element (a
      // tensor and a bool: the bool at every element).
      bool ok = logicalOperand(*b.lhs, *l, ast::spelling(b.op));
      ok = logicalOperand(*b.rhs, *r, ast::spelling(b.op)) && ok;
      if (!ok)
        return Type::unknown();
      if (l->kind == Type::Kind::Tensor || r->kind == Type::Kind::Tensor) {
        TypeRef t = arith(l, r, b);
        return t->kind == Type::Kind::Tensor ? Type::tensor(t->shape, Dtype{"bool", ""}) : Type::unknown();
      }
      return Type::scalar(Dtype{"bool", ""});
    }
    case ast::BinaryOp::Eq: case ast::BinaryOp::Ne: case ast::BinaryOp::Lt:
    case ast::BinaryOp::Le: case ast::BinaryOp::Gt: case ast::BinaryOp::Ge: {
      TypeRef t = arith(l, r, b);
      if (t->kind == Type::Kind::Tensor)
        return Type::tensor(t->shape, Dtype{"bool", ""});
      return Type::scalar(Dtype{"bool", ""});
    }
    default:
      return arith(l, r, b);
    }
  }

  /// An operand of `!`, `&&` or `||`: a bool or a tensor of bools (or
  /// not known yet); anything else is reported at the operand.
  bool logicalOperand(const ast::Expr &e, const Type &t, const std::string &op) {
    if (t.kind == Type::Kind::Unknown)
      return true;
    if ((t.kind == Type::Kind::Scalar || t.kind == Type::Kind::Tensor) && t.dtype.name == "bool")
      return true;
    diag_.error(e.loc, fmt::format("'{}' takes a bool or a tensor of bools, found {}", op, describe(t)));
    return false;
  }

  TypeRef arith(TypeRef l, TypeRef r, const ast::BinaryExpr &b) {
    if (l->kind == Type::Kind::Unknown || r->kind == Type::Kind::Unknown)
      return l->kind == Type::Kind::Unknown ? r : l;
    bool ls = l->kind == Type::Kind::Scalar, rs = r->kind == Type::Kind::Scalar;
    bool lt = l->kind == Type::Kind::Tensor, rt = r->kind == Type::Kind::Tensor;
    if (!(ls || lt) || !(rs || rt)) {
      diag_.error(b.loc, fmt::format("'{}' needs numbers or tensors, found {} and {}",
                                     ast::spelling(b.op), describe(*l), describe(*r)));
      return Type::unknown();
    }
    // Index arithmetic mixes indices and integers freely.
    auto isIntLike = [](const Type &t) {
      return t.kind == Type::Kind::Scalar && (t.dtype.name == "index" || t.dtype.name == "{integer}" ||
                                              dtypeClassOf(t.dtype.name) == "int");
    };
    if (ls && rs && isIntLike(*l) && isIntLike(*r)) {
      // A literal adopts the other side; an index meets a typed integer as
      // that integer. `i + 1` stays an index: were it typed as a literal, a
      // context (`((i + 1) / 2) as f32`, `x[i] * (i + 1)`) could turn the
      // index arithmetic into float arithmetic.
      if (isLit(l->dtype)) {
        fits(*b.lhs, *r);
        return r;
      }
      if (isLit(r->dtype)) {
        fits(*b.rhs, *l);
        return l;
      }
      return l->dtype.name == "index" ? r : l;
    }
    // Two untyped literals: a float one makes the expression a float one.
    if (ls && rs && isLit(l->dtype) && isLit(r->dtype))
      return l->dtype.name == "{float}" ? l : r;
    if (ls && isLit(l->dtype)) {
      fits(*b.lhs, *r); // `x + 300` with x: i8
      return r;
    }
    if (rs && isLit(r->dtype)) {
      fits(*b.rhs, *l);
      return l;
    }
    if (lt && rt && !sameShape(l->shape, r->shape)) {
      diag_.error(b.loc, fmt::format("shape mismatch in '{}': Tensor[{}] and Tensor[{}] (write "
                                     "the broadcast as a comprehension)",
                                     ast::spelling(b.op), shapeStr(l->shape), shapeStr(r->shape)));
      return Type::unknown();
    }
    if (!(l->dtype == r->dtype) && !l->dtype.name.empty() && !r->dtype.name.empty()) {
      diag_.error(b.loc, fmt::format("dtype mismatch in '{}': {} and {} (convert one with 'as')",
                                     ast::spelling(b.op), describe(*l), describe(*r)));
      return Type::unknown();
    }
    return lt ? l : r;
  }

  //===------------------------------------------------------------------===//
  // Calls and generic inference
  //===------------------------------------------------------------------===//

  /// Binds callee generics by matching a parameter type against an argument.
  bool match(const Type &p, const Type &a, Bindings &b, std::set<std::string> &own) {
    if (p.kind == Type::Kind::Unknown || a.kind == Type::Kind::Unknown)
      return true;
    if (p.kind == Type::Kind::Scalar && a.kind == Type::Kind::Scalar && isLit(a.dtype))
      return true;
    // A scalar is a rank-0 tensor (§5.1): `Tensor[S...; T]` takes it with S = [].
    if (p.kind == Type::Kind::Tensor && a.kind == Type::Kind::Scalar)
      return matchDtype(p.dtype, a.dtype, b, own) && matchShape(p.shape, {}, b, own);
    if (p.kind != a.kind)
      return false;
    switch (p.kind) {
    case Type::Kind::Scalar:
    case Type::Kind::Tensor:
    case Type::Kind::Relation: {
      if (!matchDtype(p.dtype, a.dtype, b, own))
        return false;
      return matchShape(p.shape, a.shape, b, own);
    }
    case Type::Kind::Tuple:
    case Type::Kind::Optional:
    case Type::Kind::Array:
      if (p.elems.size() != a.elems.size())
        return false;
      for (size_t i = 0; i < p.elems.size(); ++i)
        if (!match(*p.elems[i], *a.elems[i], b, own))
          return false;
      return p.kind != Type::Kind::Array || matchDim(p.size, a.size, b, own);
    case Type::Kind::Block:
    case Type::Kind::Struct:
    case Type::Kind::Enum:
      if (p.decl != a.decl)
        return false;
      for (size_t i = 0; i < p.args.size() && i < a.args.size(); ++i) {
        const GenericValue &pv = p.args[i], &av = a.args[i];
        if (pv.kind == ast::GenericKind::Dim && !matchDim(pv.dim, av.dim, b, own))
          return false;
        if (pv.kind == ast::GenericKind::Shape && !matchShape(pv.shape, av.shape, b, own))
          return false;
        if (pv.kind == ast::GenericKind::Dtype && !matchDtype(pv.dtype, av.dtype, b, own))
          return false;
      }
      return true;
    default:
      return true;
    }
  }
  bool matchDtype(const Dtype &p, const Dtype &arg, Bindings &b, std::set<std::string> &own) {
    if (isLit(arg))
      return true;
    // An index is an i64 value (§8.1).
    const Dtype &a = arg.name == "index" && !arg.isVar() ? kI64 : arg;
    if (p.isVar() && own.count(p.var)) {
      auto it = b.find(p.var);
      if (it == b.end()) {
        GenericValue v;
        v.kind = ast::GenericKind::Dtype;
        v.dtype = a;
        b[p.var] = v;
        return true;
      }
      return it->second.dtype == a;
    }
    return p == a;
  }
  bool matchDim(const Dim &p, const Dim &a, Bindings &b, std::set<std::string> &own) {
    const auto &ts = p.terms();
    if (ts.size() == 1 && ts[0].coeff == 1 && ts[0].atoms.size() == 1 &&
        ts[0].atoms[0]->kind == Atom::Kind::Sym && own.count(ts[0].atoms[0]->id) &&
        !b.count(ts[0].atoms[0]->id)) {
      GenericValue v;
      v.kind = ast::GenericKind::Dim;
      v.dim = a;
      b[ts[0].atoms[0]->id] = v;
      return true;
    }
    Dim s = substDim(p, b);
    std::vector<const Atom *> syms;
    s.collectSymbols(syms);
    std::set<std::string> open;
    for (const Atom *x : syms)
      if (own.count(x->id))
        open.insert(x->id);
    if (open.empty())
      return norm(s) == norm(a);
    // One generic left, as a factor of one term (`B * S` with S known):
    // s = Q * X + R solves to X = (a - R) / Q where that divides exactly.
    // Otherwise it is not yet decidable: checked after all arguments bind.
    if (open.size() == 1) {
      const std::string &id = *open.begin();
      const Dim::Term *with = nullptr;
      Dim rest;
      for (const Dim::Term &t : s.terms()) {
        size_t n = std::count_if(t.atoms.begin(), t.atoms.end(), [&](const AtomRef &x) {
          return x->kind == Atom::Kind::Sym && x->id == id;
        });
        Dim term = t.coeff;
        for (const AtomRef &x : t.atoms)
          term = term * Dim::atom(x);
        if (n == 1 && !with) {
          with = &t;
          continue;
        }
        rest = rest + term;
      }
      std::vector<const Atom *> restSyms;
      rest.collectSymbols(restSyms);
      if (with && std::none_of(restSyms.begin(), restSyms.end(),
                               [&](const Atom *x) { return x->id == id; })) {
        Dim q = with->coeff;
        const Atom *x = nullptr;
        for (const AtomRef &at : with->atoms)
          if (at->kind == Atom::Kind::Sym && at->id == id)
            x = at.get();
          else
            q = q * Dim::atom(at);
        std::vector<const Atom *> qSyms;
        q.collectSymbols(qSyms);
        bool nested = std::any_of(qSyms.begin(), qSyms.end(), [&](const Atom *y) { return y->id == id; });
        Dim want = norm(a) - norm(rest), nq = norm(q);
        if (!nested && !(nq.constant() && *nq.constant() == 0)) {
          Dim v = Dim::floorDiv(want, nq);
          if (v * nq == want) {
            GenericValue g;
            g.kind = ast::GenericKind::Dim;
            g.dim = v;
            b[x->id] = g;
            return true;
          }
        }
      }
    }
    return true;
  }
  bool matchShape(const Shape &p, const Shape &a, Bindings &b, std::set<std::string> &own) {
    size_t packs = 0;
    for (const Unit &u : p)
      packs += u.isPack();
    if (packs == 0) {
      if (p.size() != a.size())
        return false;
      for (size_t i = 0; i < p.size(); ++i) {
        if (a[i].isPack())
          return a[i] == p[i];
        if (!matchDim(p[i].dim, a[i].dim, b, own))
          return false;
      }
      return true;
    }
    if (packs > 1 || a.size() + 1 < p.size())
      return packs > 1; // several packs: not inferable here
    size_t packLen = a.size() - (p.size() - 1), ai = 0;
    for (const Unit &u : p) {
      if (u.isPack()) {
        Shape part(a.begin() + ai, a.begin() + ai + packLen);
        ai += packLen;
        if (own.count(u.pack)) {
          auto it = b.find(u.pack);
          if (it == b.end()) {
            GenericValue v;
            v.kind = ast::GenericKind::Shape;
            v.shape = part;
            b[u.pack] = v;
          } else if (!(it->second.shape == part)) {
            return false;
          }
        } else if (!(part.size() == 1 && part[0] == u)) {
          return false;
        }
        continue;
      }
      if (a[ai].isPack() || !matchDim(u.dim, a[ai].dim, b, own))
        return false;
      ++ai;
    }
    return true;
  }

  /// Checks a call of `f` (generics of its block already bound in `outer`).
  TypeRef checkCallTo(const FunctionInfo &f, const Bindings &outer, const ast::CallExpr &c,
                      const std::string &statePrefix) {
    if (fn_) {
      std::vector<std::string> argPaths;
      for (const ast::ExprPtr &x : c.args)
        argPaths.push_back(subPath(*x));
      a_.calls_[fn_].push_back({statePrefix, &f, std::move(argPaths)});
      fn_->callees.push_back(&f);
      fn_->calleeLocs.push_back(c.loc);
    }
    std::string callee = f.block ? f.block->name + "." + f.name : f.name;
    if (c.args.size() != f.params.size()) {
      diag_.error(c.loc, fmt::format("'{}' takes {} argument{}, found {}", callee, f.params.size(),
                                     f.params.size() == 1 ? "" : "s", c.args.size()));
      for (const ast::ExprPtr &x : c.args)
        check(*x);
      return Type::unknown();
    }
    Bindings b = outer;
    std::set<std::string> own;
    for (const GenericParam &g : f.generics)
      own.insert(g.id);
    if (c.hasGenericArgs) {
      if (c.genericArgs.size() > f.generics.size()) {
        diag_.error(c.loc, fmt::format("'{}' takes {} generic argument{}, found {}", callee,
                                       f.generics.size(), f.generics.size() == 1 ? "" : "s",
                                       c.genericArgs.size()));
      } else {
        for (size_t i = 0; i < c.genericArgs.size(); ++i)
          if (auto v = a_.resolveGenericArg(c.genericArgs[i], f.generics[i], callee, env_))
            b[f.generics[i].id] = *v;
      }
    }
    std::vector<TypeRef> args;
    for (const ast::ExprPtr &x : c.args)
      args.push_back(check(*x));
    bool ok = true;
    // Two rounds: a parameter's complex dims may need generics bound later.
    for (int round = 0; round < 2 && ok; ++round)
      for (size_t i = 0; i < args.size(); ++i) {
        TypeRef p = substType(f.params[i].type, outer);
        if (!match(*p, *args[i], b, own) || (round == 1 && !passes(*substType(p, b), *args[i]) &&
                                              !(args[i]->kind == Type::Kind::Scalar && isLit(args[i]->dtype)))) {
          TypeRef want = substType(p, b);
          // Generics the arguments did not bind (`B` and `S` of a parameter
          // `Tensor[B * S, F]` given a Tensor[12, F]): say which, and how to
          // give them, rather than compare a type still open.
          std::vector<std::string> unbound;
          std::function<void(const Type &)> collect = [&](const Type &t) {
            std::vector<const Atom *> syms;
            for (const Unit &u : t.shape)
              u.dim.collectSymbols(syms);
            t.size.collectSymbols(syms);
            for (const Atom *x : syms)
              if (own.count(x->id) && !b.count(x->id) &&
                  std::find(unbound.begin(), unbound.end(), x->name) == unbound.end())
                unbound.push_back(x->name);
            for (const TypeRef &e : t.elems)
              collect(*e);
          };
          collect(*want);
          if (round == 1 && !unbound.empty()) {
            std::string names, all;
            for (const std::string &n : unbound)
              names += (names.empty() ? "'" : ", '") + n + "'";
            for (const GenericParam &g : f.generics)
              all += (all.empty() ? "" : ", ") + g.name;
            diag_.error(c.args[i]->loc,
                        fmt::format("cannot infer generic{} {} of '{}' from argument {} ('{}' "
                                    "of type {}{}): {} there only in a product whose other "
                                    "factors are unknown or do not divide the axis; give the "
                                    "generic arguments explicitly, {}<{}>(...)",
                                    unbound.size() == 1 ? "" : "s", names, callee, i + 1,
                                    f.params[i].name, describe(*f.params[i].type),
                                    describe(*f.params[i].type) == describe(*args[i])
                                        ? ""
                                        : ", given " + describe(*args[i]),
                                    unbound.size() == 1 ? "it appears" : "they appear", callee, all));
            ok = false;
            break;
          }
          std::string wantStr = describe(*f.params[i].type, &b), foundStr = describe(*args[i]);
          // Never two identical spellings as a mismatch: name the owners of
          // the generics that differ.
          if (wantStr == foundStr)
            wantStr += fmt::format(" (its generics those of '{}')", callee);
          std::string msg = fmt::format("argument {} of '{}' ('{}') expects {}, found {}", i + 1,
                                        callee, f.params[i].name, wantStr, foundStr);
          // Typed constants are not contextual (§5): only an untyped one adapts.
          if (want->kind == Type::Kind::Scalar && args[i]->kind == Type::Kind::Scalar &&
              want->dtype.isVar() != args[i]->dtype.isVar())
            msg += " (a typed constant keeps its dtype: declare it without a type to make it "
                   "contextual, or convert it with 'as')";
          diag_.error(c.args[i]->loc, msg);
          ok = false;
          break;
        }
      }
    if (!ok)
      return Type::unknown();
    for (size_t i = 0; i < args.size(); ++i)
      if (isLiteralish(*args[i]))
        fits(*c.args[i], *substType(substType(f.params[i].type, outer), b));
    // A dtype generic that only untyped literals reach (`cos(0.75)`) takes
    // the generic's default, else f32 for a float literal or a float class
    // and i64 for an integer one: a call is compiled with concrete dtypes.
    for (size_t i = 0; i < args.size(); ++i) {
      const Type &p = *f.params[i].type;
      if (p.kind != Type::Kind::Scalar || !p.dtype.isVar() || !own.count(p.dtype.var) ||
          b.count(p.dtype.var) || args[i]->kind != Type::Kind::Scalar || !isLit(args[i]->dtype))
        continue;
      auto g = std::find_if(f.generics.begin(), f.generics.end(),
                            [&](const GenericParam &x) { return x.id == p.dtype.var; });
      GenericValue v;
      v.kind = ast::GenericKind::Dtype;
      if (g != f.generics.end() && g->defaultValue && g->defaultValue->kind == ast::GenericKind::Dtype)
        v.dtype = g->defaultValue->dtype;
      else if (args[i]->dtype.name == "{integer}" &&
               (g == f.generics.end() || g->dtypeClass != "float"))
        v.dtype = Dtype{"i64", ""};
      else
        v.dtype = defaultFloat();
      b[p.dtype.var] = v;
    }
    for (const GenericParam &g : f.generics) {
      auto it = b.find(g.id);
      if (it == b.end())
        continue;
      if (g.kind == ast::GenericKind::Dtype && !g.dtypeClass.empty() && g.dtypeClass != "any" &&
          !it->second.dtype.isVar() && !dtypeInClass(it->second.dtype.name, g.dtypeClass))
        diag_.error(c.loc, fmt::format("'{}' needs {} to be {} {} dtype, found {}", callee, g.name,
                                       g.dtypeClass == "int" ? "an" : "a", g.dtypeClass, it->second.dtype.name));
    }
    for (const Constraint &k : f.constraints) {
      Constraint s{substDim(k.lhs, b), substDim(k.rhs, b), k.op, k.loc};
      if (std::optional<bool> v = evalConstraint(s); v && !*v)
        diag_.error(c.loc, fmt::format("call of '{}' violates its constraint '{}' with {}",
                                       callee, k.str(), bindingList(k, b)));
    }
    a_.prog_.facts.calls[&c] = CallFact{&f, b};
    if (!f.result)
      return Type::none();
    TypeRef r = substType(f.result, b);
    // A result that still mentions the callee's unbound generics is unknown here.
    std::vector<const Atom *> syms;
    std::function<bool(const Type &)> open = [&](const Type &t) {
      if (t.dtype.isVar() && own.count(t.dtype.var))
        return true;
      for (const Unit &u : t.shape)
        if (u.isPack() ? own.count(u.pack) > 0 : [&] {
              syms.clear();
              u.dim.collectSymbols(syms);
              return std::any_of(syms.begin(), syms.end(), [&](const Atom *x) { return own.count(x->id) > 0; });
            }())
          return true;
      for (const TypeRef &e : t.elems)
        if (open(*e))
          return true;
      return false;
    };
    return open(*r) ? Type::unknown() : r;
  }

  static std::string bindingList(const Constraint &k, const Bindings &b) {
    std::vector<const Atom *> syms;
    k.lhs.collectSymbols(syms);
    k.rhs.collectSymbols(syms);
    std::string s;
    for (const Atom *a : syms) {
      auto it = b.find(a->id);
      if (it != b.end())
        s += (s.empty() ? "" : ", ") + a->name + " = " + it->second.str();
    }
    return s;
  }

  const FunctionInfo *method(const BlockInfo &blk, const std::string &name, SourceLoc loc) {
    for (const FunctionInfo *f : blk.methods)
      if (f->name == name) {
        if (!f->pub && blk.module != &m_)
          diag_.error(loc, fmt::format("function '{}' of block '{}' is private to module '{}'",
                                       name, blk.name, blk.module->name));
        return f;
      }
    diag_.error(loc, fmt::format("block '{}' has no function '{}'", blk.name, name));
    return nullptr;
  }

  /// The member path of a sub-block expression, for state effects:
  /// `attn` -> "attn.", `layers[i]` -> "layers[*].".
  /// The member path (with a trailing '.') of a sub-block expression:
  /// `layers[*].attn.`; a local that stands for a sub gives the path it
  /// stands for; empty when `e` is no sub of this block.
  std::string subPath(const ast::Expr &e) {
    if (auto *n = llvm::dyn_cast<ast::NameExpr>(&e)) {
      if (const Local *l = lookupLocal(n->name))
        return l->memberPath;
      return n->name + ".";
    }
    if (auto *i = llvm::dyn_cast<ast::IndexExpr>(&e)) {
      std::string b = subPath(*i->base);
      return b.empty() ? b : b.substr(0, b.size() - 1) + "[*].";
    }
    if (auto *f = llvm::dyn_cast<ast::FieldExpr>(&e)) {
      std::string b = subPath(*f->base);
      return b.empty() ? b : b + f->field.name + ".";
    }
    return "";
  }

  /// `__builtin_knn(pos_dst, pos_src, K, no_self)` and
  /// `__builtin_radius(pos_dst, pos_src, r, K, no_self)` (std.graph): a
  /// `Csr[N, M, M * K]` built from `[M, D]` and `[N, D]` float positions.
  TypeRef checkRelationBuiltin(const ast::CallExpr &c, bool radius) {
    const char *name = radius ? "__builtin_radius" : "__builtin_knn";
    size_t want = radius ? 5 : 4;
    std::vector<TypeRef> args;
    for (const ast::ExprPtr &x : c.args)
      args.push_back(check(*x));
    if (args.size() != want) {
      diag_.error(c.loc, fmt::format("'{}' takes {} arguments, found {}", name, want, args.size()));
      return Type::unknown();
    }
    auto isFloatClass = [&](const Dtype &d) {
      if (const GenericParam *g = d.isVar() ? env_.find(d.name) : nullptr)
        return g->dtypeClass == "float";
      return dtypeClassOf(d.name) == "float";
    };
    for (size_t i = 0; i < 2; ++i) {
      const Type &t = *args[i];
      if (t.kind == Type::Kind::Unknown)
        return Type::unknown();
      if (t.kind != Type::Kind::Tensor || t.shape.size() != 2 || t.shape[0].isPack() ||
          t.shape[1].isPack() || !isFloatClass(t.dtype)) {
        diag_.error(c.args[i]->loc,
                    fmt::format("'{}' takes positions as a float Tensor[Points, Axes], found {}", name,
                                t.str()));
        return Type::unknown();
      }
    }
    if (!(norm(args[0]->shape[1].dim) == norm(args[1]->shape[1].dim))) {
      diag_.error(c.args[1]->loc,
                  fmt::format("'{}': the destinations have {} coordinates and the sources {}", name,
                              args[0]->shape[1].dim.str(), args[1]->shape[1].dim.str()));
      return Type::unknown();
    }
    if (radius && args[2]->kind != Type::Kind::Scalar && args[2]->kind != Type::Kind::Unknown) {
      diag_.error(c.args[2]->loc, fmt::format("'{}' takes the radius as a scalar, found {}", name,
                                              args[2]->str()));
      return Type::unknown();
    }
    std::optional<Dim> k = asDim(*c.args[radius ? 3 : 2], false);
    if (!k) {
      diag_.error(c.args[radius ? 3 : 2]->loc,
                  fmt::format("'{}' takes its neighbour bound as a dim", name));
      return Type::unknown();
    }
    auto r = std::make_shared<Type>();
    r->kind = Type::Kind::Relation;
    r->dtype = Dtype{"Csr", ""};
    r->shape = {args[1]->shape[0], args[0]->shape[0], Unit{args[0]->shape[0].dim * *k, "", ""}};
    return r;
  }

  /// `__builtin_paged(table, lengths, P, N)` (std.graph.paged): the
  /// relation of a paged KV cache, `Csr[N, M, M * B * P]` from an integer
  /// block table `[M, B]` and row lengths `[M]`, pages of `P` slots in a
  /// pool of `N`.
  TypeRef checkPagedBuiltin(const ast::CallExpr &c) {
    std::vector<TypeRef> args;
    for (const ast::ExprPtr &x : c.args)
      args.push_back(check(*x));
    if (args.size() != 4) {
      diag_.error(c.loc, fmt::format("'__builtin_paged' takes 4 arguments, found {}", args.size()));
      return Type::unknown();
    }
    auto isIntClass = [&](const Dtype &d) {
      if (const GenericParam *g = d.isVar() ? env_.find(d.name) : nullptr)
        return g->dtypeClass == "int";
      return dtypeClassOf(d.name) == "int";
    };
    const char *what[2] = {"a block table as an integer Tensor[Rows, Blocks]",
                           "row lengths as an integer Tensor[Rows]"};
    for (size_t i = 0; i < 2; ++i) {
      const Type &t = *args[i];
      if (t.kind == Type::Kind::Unknown)
        return Type::unknown();
      bool packed = false;
      for (const Unit &u : t.shape)
        packed = packed || u.isPack();
      if (t.kind != Type::Kind::Tensor || t.shape.size() != 2 - i || packed || !isIntClass(t.dtype)) {
        diag_.error(c.args[i]->loc,
                    fmt::format("'__builtin_paged' takes {}, found {}", what[i], t.str()));
        return Type::unknown();
      }
    }
    if (!(norm(args[0]->shape[0].dim) == norm(args[1]->shape[0].dim))) {
      diag_.error(c.args[1]->loc,
                  fmt::format("'__builtin_paged': the block table has {} rows and the lengths {}",
                              args[0]->shape[0].dim.str(), args[1]->shape[0].dim.str()));
      return Type::unknown();
    }
    std::optional<Dim> page = asDim(*c.args[2], false), pool = asDim(*c.args[3], false);
    if (!page || !pool) {
      diag_.error(c.args[page ? 3 : 2]->loc,
                  fmt::format("'__builtin_paged' takes its {} as a dim", page ? "pool's slots" : "page size"));
      return Type::unknown();
    }
    auto r = std::make_shared<Type>();
    r->kind = Type::Kind::Relation;
    r->dtype = Dtype{"Csr", ""};
    r->shape = {Unit{*pool, "", ""}, args[0]->shape[0],
                Unit{args[0]->shape[0].dim * args[0]->shape[1].dim * *page, "", ""}};
    return r;
  }

  TypeRef checkCall(const ast::CallExpr &c) {
    if (auto *n = llvm::dyn_cast<ast::NameExpr>(c.callee.get())) {
      if (n->name == "__builtin_knn" || n->name == "__builtin_radius")
        return checkRelationBuiltin(c, n->name == "__builtin_radius");
      if (n->name == "__builtin_paged")
        return checkPagedBuiltin(c);
      if (n->name.starts_with("__builtin_")) {
        TypeRef first = Type::unknown();
        for (const ast::ExprPtr &x : c.args) {
          TypeRef t = check(*x);
          if (first->kind == Type::Kind::Unknown)
            first = t;
        }
        return n->name == "__builtin_inf" ? Type::scalar(litFloat()) : first;
      }
      if (n->name == "some") {
        if (c.args.size() != 1) {
          diag_.error(c.loc, "'some' takes one value");
          return Type::unknown();
        }
        auto t = std::make_shared<Type>();
        t->kind = Type::Kind::Optional;
        t->elems.push_back(check(*c.args[0]));
        return t;
      }
      if (!lookupLocal(n->name)) {
        if (fn_ && fn_->block)
          for (const FunctionInfo *f : fn_->block->methods)
            if (f->name == n->name)
              return checkCallTo(*f, {}, c, "");
        auto it = m_.scope.find(n->name);
        if (it != m_.scope.end() && it->second.kind == Symbol::Kind::Function)
          return checkCallTo(*static_cast<FunctionInfo *>(it->second.ptr), {}, c, "");
        if (kScalarBuiltins.count(n->name) && c.args.size() == 2) {
          TypeRef l = check(*c.args[0]), r = check(*c.args[1]);
          return unify(l, r, c.loc, fmt::format("the arguments of '{}'", n->name).c_str());
        }
        if (it != m_.scope.end()) {
          diag_.error(n->loc, fmt::format("'{}' is {}, not a function", n->name,
                                          symbolKind(it->second)));
          return Type::unknown();
        }
        diag_.error(n->loc, fmt::format("unknown function '{}'", n->name));
        for (const ast::ExprPtr &x : c.args)
          check(*x);
        return Type::unknown();
      }
    }
    if (auto *f = llvm::dyn_cast<ast::FieldExpr>(c.callee.get())) {
      // module.function(...)
      if (auto *bn = llvm::dyn_cast<ast::NameExpr>(f->base.get()); bn && !lookupLocal(bn->name)) {
        auto it = m_.scope.find(bn->name);
        if (it != m_.scope.end() && it->second.kind == Symbol::Kind::Module &&
            !(fn_ && fn_->block && fn_->block->member(bn->name))) {
          auto *mod = static_cast<ModuleInfo *>(it->second.ptr);
          auto jt = mod->items.find(f->field.name);
          if (jt == mod->items.end() || jt->second.kind != Symbol::Kind::Function) {
            diag_.error(f->field.loc, fmt::format("module '{}' has no function '{}'", mod->name,
                                                  f->field.name));
            return Type::unknown();
          }
          if (!jt->second.pub)
            diag_.error(f->field.loc, fmt::format("'{}' is private to module '{}'", f->field.name,
                                                  mod->name));
          return checkCallTo(*static_cast<FunctionInfo *>(jt->second.ptr), {}, c, "");
        }
      }
      if (enumVariantValue(*f)) {
        for (const ast::ExprPtr &x : c.args)
          check(*x);
        return Type::unknown();
      }
      TypeRef base = check(*f->base);
      if (base->kind == Type::Kind::Optional && base->elems[0]->kind == Type::Kind::Block) {
        diag_.error(f->base->loc, fmt::format("'{}' is an optional sub block ({}): read it with "
                                              "'match' (some(b) => b.{}(...), none => ...)",
                                              subPath(*f->base).empty() ? "value" : subPath(*f->base).substr(0, subPath(*f->base).size() - 1),
                                              describe(*base), f->field.name));
        return Type::unknown();
      }
      if (base->kind == Type::Kind::Block) {
        auto *blk = static_cast<const BlockInfo *>(base->decl);
        const FunctionInfo *fn = method(*blk, f->field.name, f->field.loc);
        if (!fn)
          return Type::unknown();
        return checkCallTo(*fn, bindingsOf(blk->generics, base->args), c, subPath(*f->base));
      }
      if (base->kind != Type::Kind::Unknown)
        diag_.error(f->field.loc, fmt::format("cannot call '{}' on {}", f->field.name, describe(*base)));
      return Type::unknown();
    }
    TypeRef t = check(*c.callee);
    if (t->kind != Type::Kind::Unknown)
      diag_.error(c.loc, fmt::format("{} is not callable", describe(*t)));
    return Type::unknown();
  }

  TypeRef checkIndex(const ast::IndexExpr &ix) {
    TypeRef base = check(*ix.base);
    std::vector<TypeRef> idx;
    for (const ast::IndexItem &it : ix.items) {
      if (it.index)
        idx.push_back(check(*it.index));
      for (const ast::ExprPtr *p : {&it.start, &it.stop, &it.step})
        if (*p)
          check(**p);
    }
    if (base->kind == Type::Kind::Array) {
      if (ix.items.size() != 1 || ix.items[0].kind != ast::IndexItem::Kind::Index) {
        diag_.error(ix.loc, fmt::format("an array ({}) takes one index", describe(*base)));
        return Type::unknown();
      }
      return base->elems[0];
    }
    if (base->kind == Type::Kind::Relation) {
      // Neighbours of a node: a reduction domain. The node is a destination:
      // an index over another axis than the relation's destinations reads
      // rows that do not exist (or misses some).
      if (ix.items.size() == 1 && ix.items[0].index && base->shape.size() == 3 &&
          !base->shape[1].isPack())
        if (auto *n = llvm::dyn_cast<ast::NameExpr>(ix.items[0].index.get()))
          if (const Local *l = lookupLocal(n->name); l && l->kind == Local::Kind::Index && l->dim &&
                                                     norm(*l->dim) != norm(base->shape[1].dim))
            diag_.error(ix.items[0].index->loc,
                        fmt::format("'{}' ranges over {}, but {} has {} destinations", n->name,
                                    l->dim->str(), describe(*base), base->shape[1].dim.str()));
      return Type::unknown();
    }
    if (base->kind == Type::Kind::Unknown)
      return base;
    if (base->kind != Type::Kind::Tensor) {
      diag_.error(ix.loc, fmt::format("cannot index {}: only tensors, arrays and relations take "
                                      "'[...]'",
                                      describe(*base)));
      return Type::unknown();
    }
    // Each index or slice consumes one axis; '...' takes the rest.
    const Shape &s = base->shape;
    bool hasPack = std::any_of(s.begin(), s.end(), [](const Unit &u) { return u.isPack(); });
    bool ellipsis = false;
    size_t used = 0;
    for (const ast::IndexItem &it : ix.items) {
      if (it.kind == ast::IndexItem::Kind::Ellipsis)
        ellipsis = true;
      else
        ++used;
    }
    // A shape pack has a rank known only at instantiation: the items must
    // leave it to '...' (`x[..., n]` of a Tensor[S..., N]); then the
    // positions before and after the '...' are whole axes.
    if (hasPack) {
      size_t before = 0;
      for (const ast::IndexItem &it : ix.items) {
        if (it.kind == ast::IndexItem::Kind::Ellipsis)
          break;
        ++before;
      }
      size_t after = used - (ellipsis ? before : used);
      bool covered = ellipsis && used <= s.size();
      for (size_t k = 0; covered && k < s.size(); ++k)
        if (s[k].isPack() && (k < before || k >= s.size() - after))
          covered = false;
      if (!covered)
        return Type::unknown();
    }
    if ((!ellipsis && used != s.size()) || used > s.size()) {
      diag_.error(ix.loc, fmt::format("{} has {} ax{}, but {} index{} given", describe(*base),
                                      s.size(), s.size() == 1 ? "is" : "es", used,
                                      used == 1 ? " is" : "es are"));
      return Type::unknown();
    }
    Shape out;
    size_t axis = 0;
    for (const ast::IndexItem &it : ix.items) {
      if (it.kind == ast::IndexItem::Kind::Ellipsis) {
        size_t n = s.size() - used;
        for (size_t k = 0; k < n; ++k)
          out.push_back(s[axis++]);
        continue;
      }
      if (it.kind == ast::IndexItem::Kind::Slice) {
        std::optional<Dim> start = it.start ? asDim(*it.start, false) : std::optional<Dim>(0);
        std::optional<Dim> stop = it.stop ? asDim(*it.stop, false) : std::optional<Dim>(s[axis].dim);
        std::optional<Dim> step = it.step ? asDim(*it.step, false) : std::optional<Dim>(1);
        if (start && stop && step && step->constant() && *step->constant() > 0)
          out.push_back(Unit{Dim::floorDiv(*stop - *start + *step - 1, *step), "", ""});
        else
          return Type::unknown();
        ++axis;
        continue;
      }
      ++axis;
    }
    if (out.empty())
      return Type::scalar(base->dtype);
    return Type::tensor(out, base->dtype);
  }

  /// `Enum.Variant` (or `Enum.Variant(...)`) written as a value: reported,
  /// since the language has no enum values in expressions (§3.4): a variant
  /// is written only as a `match` pattern. True when `f` is one.
  bool enumVariantValue(const ast::FieldExpr &f) {
    auto *bn = llvm::dyn_cast<ast::NameExpr>(f.base.get());
    if (!bn || lookupLocal(bn->name) || (fn_ && fn_->block && fn_->block->member(bn->name)) ||
        env_.find(bn->name))
      return false;
    auto it = m_.scope.find(bn->name);
    if (it == m_.scope.end() || it->second.kind != Symbol::Kind::Enum)
      return false;
    auto *e = static_cast<const EnumInfo *>(it->second.ptr);
    bool known = false;
    for (const auto &[name, payload] : e->variants)
      known |= name == f.field.name;
    if (!known)
      diag_.error(f.field.loc, fmt::format("enum '{}' has no variant '{}'", e->name, f.field.name));
    else
      diag_.error(bn->loc, fmt::format("'{}.{}' is an enum variant, which cannot be written as a value: "
                                     "enum variants appear only as 'match' patterns (§3.4); pass "
                                     "what the variant selects (a number, a bool) instead",
                                     e->name, f.field.name));
    return true;
  }

  TypeRef checkField(const ast::FieldExpr &f) {
    if (enumVariantValue(f))
      return Type::unknown();
    if (auto *bn = llvm::dyn_cast<ast::NameExpr>(f.base.get()); bn && !lookupLocal(bn->name) &&
                                                                !(fn_ && fn_->block && fn_->block->member(bn->name))) {
      auto it = m_.scope.find(bn->name);
      if (it != m_.scope.end() && it->second.kind == Symbol::Kind::Module) {
        auto *mod = static_cast<ModuleInfo *>(it->second.ptr);
        auto jt = mod->items.find(f.field.name);
        if (jt == mod->items.end() || jt->second.kind != Symbol::Kind::Const) {
          diag_.error(f.field.loc, fmt::format("module '{}' has no constant '{}'", mod->name,
                                               f.field.name));
          return Type::unknown();
        }
        if (!jt->second.pub)
          diag_.error(f.field.loc, fmt::format("'{}' is private to module '{}'", f.field.name, mod->name));
        return constType(*static_cast<ConstInfo *>(jt->second.ptr));
      }
    }
    TypeRef base = check(*f.base);
    if (base->kind == Type::Kind::Block) {
      auto *blk = static_cast<const BlockInfo *>(base->decl);
      const MemberInfo *mem = blk->member(f.field.name);
      if (!mem) {
        diag_.error(f.field.loc, fmt::format("block '{}' has no member '{}'", blk->name, f.field.name));
        return Type::unknown();
      }
      if (mem->kind == ast::MemberKind::State && fn_)
        if (std::string sp = subPath(*f.base); !sp.empty())
          fn_->states.insert(sp + f.field.name);
      return substType(mem->type, bindingsOf(blk->generics, base->args));
    }
    if (base->kind == Type::Kind::Struct) {
      auto *s = static_cast<const StructInfo *>(base->decl);
      for (const FieldInfo &fi : s->fields)
        if (fi.name == f.field.name)
          return substType(fi.type, bindingsOf(s->generics, base->args));
      diag_.error(f.field.loc, fmt::format("struct '{}' has no field '{}'", s->name, f.field.name));
      return Type::unknown();
    }
    if (base->kind == Type::Kind::Optional && base->elems[0]->kind == Type::Kind::Block) {
      diag_.error(f.base->loc, fmt::format("an optional sub block ({}) is read with 'match'",
                                           describe(*base)));
      return Type::unknown();
    }
    if (base->kind != Type::Kind::Unknown)
      diag_.error(f.field.loc, fmt::format("{} has no field '{}'", describe(*base), f.field.name));
    return Type::unknown();
  }

  TypeRef checkComprehension(const ast::ComprehensionExpr &c) {
    scopes_.emplace_back();
    Shape shape;
    bool ok = true;
    for (const ast::IndexBinder &b : c.indices) {
      std::optional<Dim> d = asDim(*b.domain, true);
      if (d && d->constant() && *d->constant() < 0) {
        diag_.error(b.domain->loc, fmt::format("domain of '{}' is negative ({})", b.name.name, d->str()));
        d.reset();
      }
      ok &= d.has_value();
      if (d)
        shape.push_back(Unit{*d, "", ""});
      bind({Local::Kind::Index, b.name.name, indexType(), d});
    }
    TypeRef body;
    {
      Unordered in(*this, "comprehension");
      body = check(*c.body);
    }
    scopes_.pop_back();
    if (!ok || body->kind == Type::Kind::Unknown)
      return Type::unknown();
    if (body->kind == Type::Kind::Scalar) {
      Dtype d = body->dtype;
      // An index used as a value is an i64 (reference §8.1): `[i: N] i`
      // is a Tensor[N; i64].
      if (d.name == "index")
        d = Dtype{"i64", ""};
      return Type::tensor(shape, d);
    }
    if (body->kind == Type::Kind::Tensor) {
      shape.insert(shape.end(), body->shape.begin(), body->shape.end());
      return Type::tensor(shape, body->dtype);
    }
    diag_.error(c.body->loc, fmt::format("a comprehension's body must be a number or a tensor, "
                                         "found {}",
                                         describe(*body)));
    return Type::unknown();
  }

  TypeRef checkReduction(const ast::ReductionExpr &r) {
    scopes_.emplace_back();
    for (const ast::BinderGroup &g : r.groups) {
      bool relation = false;
      std::optional<Dim> d;
      if (g.names.size() > 1 || llvm::isa<ast::IndexExpr>(g.domain.get())) {
        TypeRef t = check(*g.domain); // neighbours in a relation
        relation = true;
        (void)t;
      } else {
        d = asDim(*g.domain, true);
      }
      for (const ast::Ident &n : g.names)
        bind({relation ? Local::Kind::Binder : Local::Kind::Index, n.name, indexType(), d});
    }
    TypeRef body;
    {
      Unordered in(*this, "reduction");
      if (r.filter)
        expectBool(*r.filter);
      body = check(*r.body);
    }
    scopes_.pop_back();
    std::vector<ast::Ident> path;
    if (auto *n = llvm::dyn_cast<ast::NameExpr>(r.reducer.get()))
      path.push_back({n->name, n->loc});
    else if (auto *f = llvm::dyn_cast<ast::FieldExpr>(r.reducer.get()))
      if (auto *bn = llvm::dyn_cast<ast::NameExpr>(f->base.get())) {
        path.push_back({bn->name, bn->loc});
        path.push_back(f->field);
      }
    if (path.empty()) {
      diag_.error(r.loc, "expected a reducer name before the reduction's indices");
      return Type::unknown();
    }
    size_t used = 0;
    const Symbol *s = a_.lookupPath(m_, path, used, false);
    if (!s || used != path.size()) {
      const ir::BuiltinReducer *builtin =
          path.size() == 1 ? ir::findBuiltinReducer(path[0].name) : nullptr;
      if (builtin) {
        // any/all combine with || and &&: the message is a bool. A
        // comparison ends the body (`any(i: N) x[i] > 0.0` is
        // `(any(i: N) x[i]) > 0.0`), so say how to write it.
        if (builtin->boolOnly() && body->kind != Type::Kind::Unknown &&
            !(body->kind == Type::Kind::Scalar && body->dtype.name == "bool")) {
          diag_.error(r.body->loc, fmt::format("'{}' reduces bool values, found {} (parenthesize a "
                                               "comparison: {}(...) (a > b))",
                                               path[0].name, describe(*body), path[0].name));
          return Type::scalar(Dtype{"bool", ""});
        }
        return body;
      }
      diag_.error(path[0].loc, fmt::format("unknown reducer '{}' (built in: {}; or declare a "
                                           "'reducer')",
                                           ast::joinPath(path), ir::builtinReducerNames()));
      return Type::unknown();
    }
    if (s->kind != Symbol::Kind::Reducer) {
      diag_.error(path[0].loc, fmt::format("'{}' is {}, not a reducer", ast::joinPath(path),
                                           symbolKind(*s)));
      return Type::unknown();
    }
    auto *red = static_cast<NominalInfo *>(s->ptr);
    std::vector<GenericValue> args;
    if (!r.hasGenericArgs) {
      // Infer the reducer's generics from the message: the lift's parameters
      // against the body (a tuple body is one message of several values).
      Bindings b;
      std::set<std::string> own;
      for (const GenericParam &g : red->generics)
        own.insert(g.id);
      std::vector<TypeRef> msg;
      if (body->kind == Type::Kind::Tuple && llvm::isa<ast::TupleExpr>(r.body.get()))
        msg = body->elems;
      else
        msg.push_back(body);
      for (const auto &part : llvm::cast<ast::ReducerDecl>(*red->decl).parts)
        if (part->name.name == "lift" && part->params.size() == msg.size())
          for (size_t i = 0; i < msg.size(); ++i)
            match(*a_.resolveType(*part->params[i].type, *red->module, a_.envs_[red]), *msg[i], b, own);
      for (const GenericParam &g : red->generics) {
        auto it = b.find(g.id);
        // A dtype generic that only an untyped literal reaches
        // (`logsumexp(k: S) 1.0`) takes its default, else f32 for a float
        // literal and i64 for an integer one, as in a call.
        if (it != b.end() && g.kind == ast::GenericKind::Dtype && it->second.kind == ast::GenericKind::Dtype &&
            isLit(it->second.dtype)) {
          if (g.defaultValue && g.defaultValue->kind == ast::GenericKind::Dtype)
            it->second.dtype = g.defaultValue->dtype;
          else if (it->second.dtype.name == "{integer}" && g.dtypeClass != "float")
            it->second.dtype = Dtype{"i64", ""};
          else
            it->second.dtype = defaultFloat();
        }
        if (it == b.end() && g.kind == ast::GenericKind::Dtype) {
          std::string lit;
          for (const TypeRef &m : msg)
            if (m && m->kind == Type::Kind::Scalar && isLit(m->dtype) && lit.empty())
              lit = m->dtype.name;
          if (!lit.empty()) {
            GenericValue v;
            v.kind = ast::GenericKind::Dtype;
            if (g.defaultValue && g.defaultValue->kind == ast::GenericKind::Dtype)
              v.dtype = g.defaultValue->dtype;
            else if (lit == "{integer}" && g.dtypeClass != "float")
              v.dtype = Dtype{"i64", ""};
            else
              v.dtype = defaultFloat();
            it = b.emplace(g.id, v).first;
          }
        }
        if (it == b.end()) {
          diag_.error(r.loc, fmt::format("cannot infer generic '{}' of reducer '{}' from the "
                                         "reduction's body: write it ({}<...>)",
                                         g.name, ast::joinPath(path), ast::joinPath(path)));
          return Type::unknown();
        }
        args.push_back(it->second);
      }
    } else if (!a_.bindGenericArgs(*red, r.genericArgs, r.loc, env_, args)) {
      return Type::unknown();
    }
    a_.prog_.facts.reductions[&r] = ReduceFact{red, args};
    for (const auto &part : llvm::cast<ast::ReducerDecl>(*red->decl).parts)
      if (part->name.name == "finalize") {
        TypeRef t = a_.resolveType(*part->result, *red->module, a_.envs_[red]);
        return substType(t, bindingsOf(red->generics, args));
      }
    return Type::unknown();
  }

  TypeRef checkStructLit(const ast::StructLitExpr &s) {
    size_t used = 0;
    const Symbol *sym = a_.lookupPath(m_, s.path, used, true);
    if (!sym)
      return Type::unknown();
    if (used != s.path.size() || sym->kind != Symbol::Kind::Struct) {
      diag_.error(s.loc, fmt::format("'{}' is not a struct", ast::joinPath(s.path)));
      return Type::unknown();
    }
    auto *st = static_cast<StructInfo *>(sym->ptr);
    auto t = std::make_shared<Type>();
    t->kind = Type::Kind::Struct;
    t->decl = st;
    if (s.hasGenericArgs && !a_.bindGenericArgs(*st, s.genericArgs, s.loc, env_, t->args))
      return Type::unknown();
    // A struct without generics (`ArgMax { ... }`) is as concrete as one
    // with its arguments given: its fields are checked and typed.
    bool concrete = s.hasGenericArgs || st->generics.empty();
    Bindings b = bindingsOf(st->generics, t->args);
    std::set<std::string> seen;
    for (const ast::FieldInit &fi : s.fields) {
      TypeRef v = check(*fi.value);
      const FieldInfo *decl = nullptr;
      for (const FieldInfo &f : st->fields)
        if (f.name == fi.name.name)
          decl = &f;
      if (!decl) {
        diag_.error(fi.name.loc, fmt::format("struct '{}' has no field '{}'", st->name, fi.name.name));
        continue;
      }
      if (!seen.insert(fi.name.name).second)
        diag_.error(fi.name.loc, fmt::format("field '{}' is given twice", fi.name.name));
      if (concrete) {
        TypeRef want = substType(decl->type, b);
        if (!same(*want, *v) && !isNumericLit(*v))
          diag_.error(fi.value->loc, fmt::format("field '{}' of '{}' has type {}, found {}",
                                                 fi.name.name, st->name, describe(*want),
                                                 describe(*v)));
      }
    }
    for (const FieldInfo &f : st->fields)
      if (!seen.count(f.name)) {
        diag_.error(s.loc, fmt::format("struct literal of '{}' is missing field '{}'", st->name, f.name));
        break;
      }
    return concrete ? TypeRef(t) : Type::unknown();
  }

  TypeRef checkMatch(const ast::MatchExpr &m) {
    TypeRef s = check(*m.scrutinee);
    TypeRef result;
    bool some = false, none = false, wild = false;
    for (const ast::MatchArm &arm : m.arms) {
      scopes_.emplace_back();
      bindPattern(*arm.pattern, s, Local::Kind::Let);
      // `some(h)` of an optional sub: `h` is that sub, for state paths.
      if (auto *c = llvm::dyn_cast<ast::CtorPattern>(arm.pattern.get());
          c && c->path.size() == 1 && c->path[0].name == "some" && c->args.size() == 1)
        if (auto *b = llvm::dyn_cast<ast::BindingPattern>(c->args[0].get()))
          if (std::string path = subPath(*m.scrutinee); !path.empty())
            for (Local &l : scopes_.back())
              if (l.name == b->name)
                l.memberPath = path;
      if (auto *c = llvm::dyn_cast<ast::CtorPattern>(arm.pattern.get())) {
        some |= c->path[0].name == "some";
        none |= c->path[0].name == "none";
      } else if (arm.pattern->kind == ast::Pattern::Kind::Wildcard ||
                 arm.pattern->kind == ast::Pattern::Kind::Binding) {
        wild = true;
      }
      TypeRef t = check(*arm.body);
      scopes_.pop_back();
      result = result ? unify(result, t, arm.body->loc, "the arms of 'match'") : t;
    }
    if (s->kind == Type::Kind::Optional && !wild && !(some && none))
      diag_.error(m.loc, fmt::format("'match' on {} must handle both 'some(...)' and 'none'",
                                     describe(*s)));
    return result ? result : Type::unknown();
  }

  Analyzer &a_;
  DiagnosticEngine &diag_;
  FunctionInfo *fn_;
  ModuleInfo &m_;
  const Env &env_;
  Bindings rules_; // the `where` equalities in scope, as rewrites
  std::map<const ast::Expr *, const ast::Expr *> letDefs_; // a `let` name's use -> its value
  std::vector<std::vector<Local>> scopes_;
  /// Inside a comprehension or reduction body (nesting count, innermost
  /// kind): its iterations have no order, so state writes are refused.
  unsigned unordered_ = 0;
  const char *unorderedWhat_ = "";
  struct Unordered {
    BodyChecker &c;
    const char *saved;
    Unordered(BodyChecker &checker, const char *what) : c(checker), saved(checker.unorderedWhat_) {
      ++c.unordered_;
      c.unorderedWhat_ = what;
    }
    ~Unordered() {
      --c.unordered_;
      c.unorderedWhat_ = saved;
    }
  };
  TypeRef result_;
  bool returned_ = false;
};

} // namespace linnet::sema

void Analyzer::checkBodies() {
  for (auto &m : prog_.modules) {
    for (auto &f : m->functions) {
      BodyChecker bc(*this, f.get(), *m, fnEnvs_[f.get()]);
      bc.checkFunction(*f->decl, f->params, f->result);
    }
    for (auto &n : m->nominals) {
      if (n->kind != NominalInfo::Kind::Reducer)
        continue;
      for (const auto &part : llvm::cast<ast::ReducerDecl>(*n->decl).parts) {
        std::vector<ParamInfo> params;
        for (const ast::Param &p : part->params)
          params.push_back({p.name.name, resolveType(*p.type, *m, envs_[n.get()]), p.name.loc});
        TypeRef result = resolveType(*part->result, *m, envs_[n.get()]);
        prog_.facts.reducerParts[n.get()].push_back({part.get(), params, result});
        BodyChecker bc(*this, nullptr, *m, envs_[n.get()]);
        bc.useEqualities(n->constraints);
        bc.checkFunction(*part, params, result);
      }
    }
    for (auto &c : m->consts) {
      if (!c->decl->type && c->type && constDone_.count(c.get()))
        continue; // checked where a body first used it
      constDone_[c.get()] = true;
      BodyChecker bc(*this, nullptr, *m, Env{});
      TypeRef t = bc.checkConst(*c->decl->init);
      if (c->decl->type) {
        TypeRef d = resolveType(*c->decl->type, *m, Env{});
        if ((d->kind == Type::Kind::Scalar || d->kind == Type::Kind::Tensor) && !d->dtype.isVar())
          literalFits(*c->decl->init, d->dtype.name, diag_);
        if (!sameType(*d, *t))
          diag_.error(c->decl->init->loc, fmt::format("constant '{}' is declared {}, but its value "
                                                      "has type {}",
                                                      c->name, d->str(), t->str()));
        c->type = d;
      } else {
        c->contextual = true;
        c->type = t;
      }
    }
  }
  checkRecursion();
  // States reached through calls: close over the call graph.
  std::map<const FunctionInfo *, int> visiting;
  std::function<void(FunctionInfo *)> close = [&](FunctionInfo *f) {
    if (visiting[f])
      return;
    visiting[f] = 1;
    for (const CallEdge &e : calls_[f]) {
      auto *c = const_cast<FunctionInfo *>(e.callee);
      close(c);
      for (const std::string &s : c->states) {
        if (!s.starts_with("%p")) {
          f->states.insert(e.prefix + s);
          continue;
        }
        // A state of the callee's block-typed parameter N: the argument's.
        size_t dot = s.find('.');
        size_t n = std::strtoul(s.c_str() + 2, nullptr, 10);
        if (dot != std::string::npos && n < e.argPaths.size() && !e.argPaths[n].empty())
          f->states.insert(e.argPaths[n] + s.substr(dot + 1));
      }
    }
  };
  for (auto &m : prog_.modules)
    for (auto &f : m->functions)
      close(f.get());
  // Parameter-relative states were resolved at each call; they are no
  // member paths of the function's own block.
  for (auto &m : prog_.modules)
    for (auto &f : m->functions)
      std::erase_if(f->states, [](const std::string &s) { return s.starts_with("%p"); });
}

namespace {
/// Finds the cycles of a directed graph without recursion (the graph comes
/// from the input), and reports each back edge once with the path that
/// closes it. `edges(n)` lists (successor, where the edge is written).
template <typename Node, typename Edges, typename Report>
void findCycles(const std::vector<Node *> &nodes, Edges edges, Report report) {
  enum Color { White, Grey, Black };
  std::map<Node *, Color> color;
  struct Frame {
    Node *node;
    std::vector<std::pair<Node *, SourceLoc>> out;
    size_t next = 0;
  };
  for (Node *root : nodes) {
    if (color[root] != White)
      continue;
    std::vector<Frame> stack;
    stack.push_back({root, edges(root)});
    color[root] = Grey;
    while (!stack.empty()) {
      Frame &f = stack.back();
      if (f.next == f.out.size()) {
        color[f.node] = Black;
        stack.pop_back();
        continue;
      }
      auto [succ, loc] = f.out[f.next++];
      Color c = color[succ];
      if (c == Grey) {
        std::vector<Node *> chain;
        size_t k = stack.size();
        while (k > 0 && stack[k - 1].node != succ)
          --k;
        for (size_t i = k - 1; i < stack.size(); ++i)
          chain.push_back(stack[i].node);
        chain.push_back(succ);
        report(chain, loc);
      } else if (c == White) {
        color[succ] = Grey;
        std::vector<std::pair<Node *, SourceLoc>> out = edges(succ);
        stack.push_back({succ, std::move(out)});
      }
    }
  }
}
} // namespace

/// Recursion is refused (§7): `build` inlines every call and instantiates
/// every sub, so a cycle of calls or of blocks would never end. Reported
/// here, by `check`, with the chain that closes the cycle.
void Analyzer::checkRecursion() {
  std::vector<FunctionInfo *> fns;
  for (auto &m : prog_.modules)
    for (auto &f : m->functions)
      fns.push_back(f.get());
  auto fnName = [](const FunctionInfo *f) { return f->block ? f->block->name + "." + f->name : f->name; };
  findCycles<FunctionInfo>(
      fns,
      [](FunctionInfo *f) {
        std::vector<std::pair<FunctionInfo *, SourceLoc>> out;
        for (size_t i = 0; i < f->callees.size(); ++i)
          out.push_back({const_cast<FunctionInfo *>(f->callees[i]),
                         i < f->calleeLocs.size() ? f->calleeLocs[i] : f->decl->loc});
        return out;
      },
      [&](const std::vector<FunctionInfo *> &chain, SourceLoc loc) {
        std::string s;
        for (const FunctionInfo *f : chain)
          s += (s.empty() ? "" : " -> ") + fnName(f);
        diag_.error(loc, fmt::format("recursive call: {} (functions may not call themselves, "
                                     "directly or through others)",
                                     s));
      });

  std::vector<BlockInfo *> blocks;
  for (auto &m : prog_.modules)
    for (auto &n : m->nominals)
      if (n->kind == NominalInfo::Kind::Block)
        blocks.push_back(static_cast<BlockInfo *>(n.get()));
  findCycles<BlockInfo>(
      blocks,
      [](BlockInfo *b) {
        std::vector<std::pair<BlockInfo *, SourceLoc>> out;
        for (const MemberInfo &m : b->members) {
          if (m.kind != ast::MemberKind::Sub || !m.type)
            continue;
          const Type *t = m.type.get();
          // `sub x: B?`, `sub xs: [B; N]` and their combinations.
          while ((t->kind == Type::Kind::Optional || t->kind == Type::Kind::Array) && !t->elems.empty())
            t = t->elems[0].get();
          // A block that names itself directly is reported where its members
          // are resolved ("contains itself through sub").
          if (t->kind == Type::Kind::Block && t->decl && t->decl != b)
            out.push_back({const_cast<BlockInfo *>(static_cast<const BlockInfo *>(t->decl)), m.loc});
        }
        return out;
      },
      [&](const std::vector<BlockInfo *> &chain, SourceLoc loc) {
        std::string s;
        for (const BlockInfo *b : chain)
          s += (s.empty() ? "" : " -> ") + b->name;
        diag_.error(loc, fmt::format("recursive block: {} (a block may not contain itself, "
                                     "directly or through its subs)",
                                     s));
      });
}
