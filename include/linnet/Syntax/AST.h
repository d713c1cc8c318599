//===- AST.h - Abstract syntax tree of linnet source ------------*- C++ -*-===//
//
// The AST mirrors the source closely: it keeps every construct the user wrote
// (and where), and leaves meaning to Sema. Nodes are owned by unique_ptr; each
// family (DimExpr, TypeExpr, Expr, Pattern, Stmt, Decl) has a Kind tag and
// LLVM-style classof so isa/cast/dyn_cast work.
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_SYNTAX_AST_H
#define LINNET_SYNTAX_AST_H

#include "linnet/Syntax/SourceManager.h"

#include <memory>
#include <string>
#include <vector>

namespace linnet::ast {

struct Ident {
  std::string name;
  SourceLoc loc;
};

//===----------------------------------------------------------------------===//
// Dimension expressions (inside types, generic arguments and constraints)
//===----------------------------------------------------------------------===//

struct DimExpr {
  enum class Kind { Int, Name, PackSize, Binary, MinMax, Neg };
  Kind kind;
  SourceLoc loc;
  explicit DimExpr(Kind k, SourceLoc l) : kind(k), loc(l) {}
  virtual ~DimExpr() = default;
};
using DimExprPtr = std::unique_ptr<DimExpr>;

struct IntDim : DimExpr {
  int64_t value;
  IntDim(int64_t v, SourceLoc l) : DimExpr(Kind::Int, l), value(v) {}
  static bool classof(const DimExpr *d) { return d->kind == Kind::Int; }
};
struct NameDim : DimExpr {
  std::string name;
  NameDim(std::string n, SourceLoc l) : DimExpr(Kind::Name, l), name(std::move(n)) {}
  static bool classof(const DimExpr *d) { return d->kind == Kind::Name; }
};
/// `#S`: the number of elements of shape pack S (product of its axes).
struct PackSizeDim : DimExpr {
  std::string pack;
  PackSizeDim(std::string n, SourceLoc l) : DimExpr(Kind::PackSize, l), pack(std::move(n)) {}
  static bool classof(const DimExpr *d) { return d->kind == Kind::PackSize; }
};
/// a + b, a - b, a * b, a / b (floor division), a % b
struct BinaryDim : DimExpr {
  char op;
  DimExprPtr lhs, rhs;
  BinaryDim(char o, DimExprPtr l, DimExprPtr r, SourceLoc loc)
      : DimExpr(Kind::Binary, loc), op(o), lhs(std::move(l)), rhs(std::move(r)) {}
  static bool classof(const DimExpr *d) { return d->kind == Kind::Binary; }
};
/// min(a, b) / max(a, b)
struct MinMaxDim : DimExpr {
  bool isMax;
  DimExprPtr lhs, rhs;
  MinMaxDim(bool mx, DimExprPtr l, DimExprPtr r, SourceLoc loc)
      : DimExpr(Kind::MinMax, loc), isMax(mx), lhs(std::move(l)), rhs(std::move(r)) {}
  static bool classof(const DimExpr *d) { return d->kind == Kind::MinMax; }
};
struct NegDim : DimExpr {
  DimExprPtr operand;
  NegDim(DimExprPtr o, SourceLoc loc) : DimExpr(Kind::Neg, loc), operand(std::move(o)) {}
  static bool classof(const DimExpr *d) { return d->kind == Kind::Neg; }
};

/// One axis position in a shape: a dimension, or `S...` (every axis of pack S).
struct DimUnit {
  DimExprPtr dim;       // null for a pack
  std::string pack;     // set for `S...`
  SourceLoc loc;
  bool isPack() const { return !dim; }
};

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

struct TypeExpr;
using TypeExprPtr = std::unique_ptr<TypeExpr>;

/// A generic argument: a dimension (also spells dtype and type names, which
/// Sema tells apart by the generic's kind) or a shape `[A, B, S...]`.
struct GenericArg {
  DimExprPtr dim;
  std::vector<DimUnit> shape;
  bool isShape = false;
  SourceLoc loc;
};

struct TypeExpr {
  enum class Kind { Named, Tuple, Optional, Array };
  Kind kind;
  SourceLoc loc;
  TypeExpr(Kind k, SourceLoc l) : kind(k), loc(l) {}
  virtual ~TypeExpr() = default;
};

/// `f32`, `T`, `Linear<In, Out, T>`, `nn.Linear<...>`, `Tensor[B, In; T]`,
/// `Csr[N, M, E]`. Sema decides which built-in or user type a name denotes.
struct NamedType : TypeExpr {
  std::vector<Ident> path;
  std::vector<GenericArg> genericArgs;
  bool hasGenericArgs = false;
  std::vector<DimUnit> dims;
  bool hasDims = false;
  TypeExprPtr dtype; // after ';' inside the brackets
  explicit NamedType(SourceLoc l) : TypeExpr(Kind::Named, l) {}
  static bool classof(const TypeExpr *t) { return t->kind == Kind::Named; }
};
struct TupleType : TypeExpr {
  std::vector<TypeExprPtr> elements;
  explicit TupleType(SourceLoc l) : TypeExpr(Kind::Tuple, l) {}
  static bool classof(const TypeExpr *t) { return t->kind == Kind::Tuple; }
};
struct OptionalType : TypeExpr {
  TypeExprPtr inner;
  OptionalType(TypeExprPtr i, SourceLoc l) : TypeExpr(Kind::Optional, l), inner(std::move(i)) {}
  static bool classof(const TypeExpr *t) { return t->kind == Kind::Optional; }
};
/// `[T; N]`
struct ArrayType : TypeExpr {
  TypeExprPtr element;
  DimExprPtr size;
  explicit ArrayType(SourceLoc l) : TypeExpr(Kind::Array, l) {}
  static bool classof(const TypeExpr *t) { return t->kind == Kind::Array; }
};

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;
struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;
struct Pattern;
using PatternPtr = std::unique_ptr<Pattern>;

struct Block {
  std::vector<StmtPtr> stmts;
  SourceLoc loc;    // '{'
  SourceLoc endLoc; // '}'
};

enum class BinaryOp { Or, And, Eq, Ne, Lt, Le, Gt, Ge, Add, Sub, Mul, Div, Mod };
enum class UnaryOp { Neg, Not, PackSize };
const char *spelling(BinaryOp op);
const char *spelling(UnaryOp op);

struct Expr {
  enum class Kind {
    IntLit, FloatLit, BoolLit, StringLit, NoneLit, Name, Unary, Binary, Call,
    Index, Field, TupleIndex, Comprehension, Reduction, Cast, Tuple, ArrayLit,
    StructLit, If, Match, BlockExpr
  };
  Kind kind;
  SourceLoc loc;
  Expr(Kind k, SourceLoc l) : kind(k), loc(l) {}
  virtual ~Expr() = default;
};

struct IntLitExpr : Expr {
  std::string digits; // as written, without suffix
  std::string suffix; // dtype suffix or empty
  uint64_t value = 0; // the magnitude, checked by the parser: at most 2^63
  IntLitExpr(SourceLoc l) : Expr(Kind::IntLit, l) {}
  static bool classof(const Expr *e) { return e->kind == Kind::IntLit; }
};
struct FloatLitExpr : Expr {
  std::string digits;
  std::string suffix;
  double value = 0; // checked by the parser: finite
  FloatLitExpr(SourceLoc l) : Expr(Kind::FloatLit, l) {}
  static bool classof(const Expr *e) { return e->kind == Kind::FloatLit; }
};
struct BoolLitExpr : Expr {
  bool value;
  BoolLitExpr(bool v, SourceLoc l) : Expr(Kind::BoolLit, l), value(v) {}
  static bool classof(const Expr *e) { return e->kind == Kind::BoolLit; }
};
struct StringLitExpr : Expr {
  std::string value; // unescaped
  StringLitExpr(std::string v, SourceLoc l) : Expr(Kind::StringLit, l), value(std::move(v)) {}
  static bool classof(const Expr *e) { return e->kind == Kind::StringLit; }
};
struct NoneLitExpr : Expr {
  explicit NoneLitExpr(SourceLoc l) : Expr(Kind::NoneLit, l) {}
  static bool classof(const Expr *e) { return e->kind == Kind::NoneLit; }
};
struct NameExpr : Expr {
  std::string name;
  NameExpr(std::string n, SourceLoc l) : Expr(Kind::Name, l), name(std::move(n)) {}
  static bool classof(const Expr *e) { return e->kind == Kind::Name; }
};
struct UnaryExpr : Expr {
  UnaryOp op;
  ExprPtr operand;
  UnaryExpr(UnaryOp o, ExprPtr e, SourceLoc l) : Expr(Kind::Unary, l), op(o), operand(std::move(e)) {}
  static bool classof(const Expr *e) { return e->kind == Kind::Unary; }
};
struct BinaryExpr : Expr {
  BinaryOp op;
  ExprPtr lhs, rhs;
  BinaryExpr(BinaryOp o, ExprPtr a, ExprPtr b, SourceLoc l)
      : Expr(Kind::Binary, l), op(o), lhs(std::move(a)), rhs(std::move(b)) {}
  static bool classof(const Expr *e) { return e->kind == Kind::Binary; }
};
/// `f(a, b)`, `f<D, T>(a)`, `layers[i].forward(x)` (callee is a Field).
struct CallExpr : Expr {
  ExprPtr callee;
  std::vector<GenericArg> genericArgs;
  bool hasGenericArgs = false;
  std::vector<ExprPtr> args;
  CallExpr(ExprPtr c, SourceLoc l) : Expr(Kind::Call, l), callee(std::move(c)) {}
  static bool classof(const Expr *e) { return e->kind == Kind::Call; }
};
/// One position inside `x[...]`: an index/squeeze, a slice, or `...`.
struct IndexItem {
  enum class Kind { Index, Slice, Ellipsis };
  Kind kind = Kind::Index;
  ExprPtr index;              // Kind::Index
  ExprPtr start, stop, step;  // Kind::Slice, each optional
  bool hasStep = false;       // `a:b:` vs `a:b`
  SourceLoc loc;
};
struct IndexExpr : Expr {
  ExprPtr base;
  std::vector<IndexItem> items;
  IndexExpr(ExprPtr b, SourceLoc l) : Expr(Kind::Index, l), base(std::move(b)) {}
  static bool classof(const Expr *e) { return e->kind == Kind::Index; }
};
struct FieldExpr : Expr {
  ExprPtr base;
  Ident field;
  FieldExpr(ExprPtr b, Ident f, SourceLoc l) : Expr(Kind::Field, l), base(std::move(b)), field(std::move(f)) {}
  static bool classof(const Expr *e) { return e->kind == Kind::Field; }
};
struct TupleIndexExpr : Expr {
  ExprPtr base;
  unsigned index;
  TupleIndexExpr(ExprPtr b, unsigned i, SourceLoc l) : Expr(Kind::TupleIndex, l), base(std::move(b)), index(i) {}
  static bool classof(const Expr *e) { return e->kind == Kind::TupleIndex; }
};
/// `i: D` in a comprehension header.
struct IndexBinder {
  Ident name;
  ExprPtr domain;
};
/// `[b: B, o: Out] body`
struct ComprehensionExpr : Expr {
  std::vector<IndexBinder> indices;
  ExprPtr body;
  explicit ComprehensionExpr(SourceLoc l) : Expr(Kind::Comprehension, l) {}
  static bool classof(const Expr *e) { return e->kind == Kind::Comprehension; }
};
/// A group of names bound over one domain: `k: K`, or, over a relation,
/// `src, edge: g[dst]` (source node and edge of each edge into dst).
struct BinderGroup {
  std::vector<Ident> names;
  ExprPtr domain;
};
/// `sum(k: K) body`, `max(j: Seq where j <= i) body`, `softmax<D>(j: S) (s, v)`.
struct ReductionExpr : Expr {
  ExprPtr reducer; // a Name or a Field path naming the reducer
  std::vector<GenericArg> genericArgs;
  bool hasGenericArgs = false;
  std::vector<BinderGroup> groups;
  ExprPtr filter; // `where cond`, optional
  ExprPtr body;
  explicit ReductionExpr(SourceLoc l) : Expr(Kind::Reduction, l) {}
  static bool classof(const Expr *e) { return e->kind == Kind::Reduction; }
};
struct CastExpr : Expr {
  ExprPtr operand;
  TypeExprPtr type;
  CastExpr(ExprPtr e, TypeExprPtr t, SourceLoc l) : Expr(Kind::Cast, l), operand(std::move(e)), type(std::move(t)) {}
  static bool classof(const Expr *e) { return e->kind == Kind::Cast; }
};
struct TupleExpr : Expr {
  std::vector<ExprPtr> elements;
  explicit TupleExpr(SourceLoc l) : Expr(Kind::Tuple, l) {}
  static bool classof(const Expr *e) { return e->kind == Kind::Tuple; }
};
struct ArrayLitExpr : Expr {
  std::vector<ExprPtr> elements;
  explicit ArrayLitExpr(SourceLoc l) : Expr(Kind::ArrayLit, l) {}
  static bool classof(const Expr *e) { return e->kind == Kind::ArrayLit; }
};
struct FieldInit {
  Ident name;
  ExprPtr value;
};
/// `State { m: a, l: b }` or `State<D, T> { ... }`
struct StructLitExpr : Expr {
  std::vector<Ident> path;
  std::vector<GenericArg> genericArgs;
  bool hasGenericArgs = false;
  std::vector<FieldInit> fields;
  explicit StructLitExpr(SourceLoc l) : Expr(Kind::StructLit, l) {}
  static bool classof(const Expr *e) { return e->kind == Kind::StructLit; }
};
struct IfExpr : Expr {
  ExprPtr cond;
  Block thenBlock;
  std::unique_ptr<Block> elseBlock; // `else { }`
  ExprPtr elseIf;                   // `else if ...` (an IfExpr)
  explicit IfExpr(SourceLoc l) : Expr(Kind::If, l) {}
  static bool classof(const Expr *e) { return e->kind == Kind::If; }
};
struct MatchArm {
  PatternPtr pattern;
  ExprPtr body; // an expression, or a BlockExpr
  SourceLoc loc;
};
struct MatchExpr : Expr {
  ExprPtr scrutinee;
  std::vector<MatchArm> arms;
  explicit MatchExpr(SourceLoc l) : Expr(Kind::Match, l) {}
  static bool classof(const Expr *e) { return e->kind == Kind::Match; }
};
struct BlockExpr : Expr {
  Block block;
  explicit BlockExpr(SourceLoc l) : Expr(Kind::BlockExpr, l) {}
  static bool classof(const Expr *e) { return e->kind == Kind::BlockExpr; }
};

//===----------------------------------------------------------------------===//
// Patterns (match arms and let destructuring)
//===----------------------------------------------------------------------===//

struct Pattern {
  enum class Kind { Wildcard, Binding, Ctor, Tuple, Literal };
  Kind kind;
  SourceLoc loc;
  Pattern(Kind k, SourceLoc l) : kind(k), loc(l) {}
  virtual ~Pattern() = default;
};
struct WildcardPattern : Pattern {
  explicit WildcardPattern(SourceLoc l) : Pattern(Kind::Wildcard, l) {}
  static bool classof(const Pattern *p) { return p->kind == Kind::Wildcard; }
};
/// A bare name: binds a value (or, if Sema finds an enum variant of that
/// name in scope, matches it).
struct BindingPattern : Pattern {
  std::string name;
  BindingPattern(std::string n, SourceLoc l) : Pattern(Kind::Binding, l), name(std::move(n)) {}
  static bool classof(const Pattern *p) { return p->kind == Kind::Binding; }
};
/// `some(x)`, `none`, `Color.Red`, `Shape.Rect(w, h)`.
struct CtorPattern : Pattern {
  std::vector<Ident> path;
  std::vector<PatternPtr> args;
  bool hasArgs = false;
  explicit CtorPattern(SourceLoc l) : Pattern(Kind::Ctor, l) {}
  static bool classof(const Pattern *p) { return p->kind == Kind::Ctor; }
};
struct TuplePattern : Pattern {
  std::vector<PatternPtr> elements;
  explicit TuplePattern(SourceLoc l) : Pattern(Kind::Tuple, l) {}
  static bool classof(const Pattern *p) { return p->kind == Kind::Tuple; }
};
struct LiteralPattern : Pattern {
  ExprPtr literal; // IntLit, FloatLit, BoolLit or StringLit
  LiteralPattern(ExprPtr e, SourceLoc l) : Pattern(Kind::Literal, l), literal(std::move(e)) {}
  static bool classof(const Pattern *p) { return p->kind == Kind::Literal; }
};

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

struct Stmt {
  enum class Kind { Let, Assign, Expr, Return, While };
  Kind kind;
  SourceLoc loc;
  Stmt(Kind k, SourceLoc l) : kind(k), loc(l) {}
  virtual ~Stmt() = default;
};
/// `let x = e`, `let x: T = e`, `let (a, b) = e`, `var i = 0`.
struct LetStmt : Stmt {
  bool isVar = false;
  PatternPtr pattern;
  TypeExprPtr type;
  ExprPtr init;
  explicit LetStmt(SourceLoc l) : Stmt(Kind::Let, l) {}
  static bool classof(const Stmt *s) { return s->kind == Kind::Let; }
};
/// `cache = updated`, `i = i + 1`.
struct AssignStmt : Stmt {
  ExprPtr target;
  ExprPtr value;
  explicit AssignStmt(SourceLoc l) : Stmt(Kind::Assign, l) {}
  static bool classof(const Stmt *s) { return s->kind == Kind::Assign; }
};
struct ExprStmt : Stmt {
  ExprPtr expr;
  ExprStmt(ExprPtr e, SourceLoc l) : Stmt(Kind::Expr, l), expr(std::move(e)) {}
  static bool classof(const Stmt *s) { return s->kind == Kind::Expr; }
};
struct ReturnStmt : Stmt {
  ExprPtr value; // optional
  explicit ReturnStmt(SourceLoc l) : Stmt(Kind::Return, l) {}
  static bool classof(const Stmt *s) { return s->kind == Kind::Return; }
};
struct WhileStmt : Stmt {
  ExprPtr cond;
  Block body;
  explicit WhileStmt(SourceLoc l) : Stmt(Kind::While, l) {}
  static bool classof(const Stmt *s) { return s->kind == Kind::While; }
};

//===----------------------------------------------------------------------===//
// Declarations
//===----------------------------------------------------------------------===//

enum class GenericKind { Dim, Shape, Dtype };
const char *spelling(GenericKind k);

/// `N: dim`, `S: shape`, `T: dtype(float) = f32`.
struct GenericParam {
  Ident name;
  GenericKind kind = GenericKind::Dim;
  Ident dtypeClass; // empty name: any dtype
  std::unique_ptr<GenericArg> defaultValue;
};

/// `Hidden % Heads == 0` in a `where` clause.
struct Constraint {
  DimExprPtr lhs;
  BinaryOp op; // Eq, Ne, Lt, Le, Gt, Ge
  DimExprPtr rhs;
  SourceLoc loc;
};

struct Param {
  Ident name;
  TypeExprPtr type;
};

struct Decl {
  enum class Kind { Block, Function, Member, Struct, Enum, Const, Reducer };
  Kind kind;
  SourceLoc loc;
  bool isPub = false;
  Ident name;
  Decl(Kind k, SourceLoc l) : kind(k), loc(l) {}
  virtual ~Decl() = default;
};
using DeclPtr = std::unique_ptr<Decl>;

enum class FunctionKind { Fn, Op, Entry };
const char *spelling(FunctionKind k);

struct FunctionDecl : Decl {
  FunctionKind fnKind = FunctionKind::Fn;
  std::vector<GenericParam> generics;
  std::vector<Param> params;
  TypeExprPtr result; // optional
  std::vector<Constraint> constraints;
  Block body;
  explicit FunctionDecl(SourceLoc l) : Decl(Kind::Function, l) {}
  static bool classof(const Decl *d) { return d->kind == Kind::Function; }
};

enum class MemberKind { Param, Buffer, State, Sub };
const char *spelling(MemberKind k);

/// `param weight: Tensor[Out, In; T]`, `sub pooler: Linear<H, H, T>? = none`.
struct MemberDecl : Decl {
  MemberKind memberKind;
  TypeExprPtr type;
  ExprPtr init; // optional; Sema enforces what may appear here
  MemberDecl(MemberKind k, SourceLoc l) : Decl(Kind::Member, l), memberKind(k) {}
  static bool classof(const Decl *d) { return d->kind == Kind::Member; }
};

struct BlockDecl : Decl {
  std::vector<GenericParam> generics;
  std::vector<Constraint> constraints;
  std::vector<DeclPtr> body; // members and functions, in source order
  explicit BlockDecl(SourceLoc l) : Decl(Kind::Block, l) {}
  static bool classof(const Decl *d) { return d->kind == Kind::Block; }
};

struct StructDecl : Decl {
  std::vector<GenericParam> generics;
  std::vector<Constraint> constraints;
  std::vector<Param> fields;
  explicit StructDecl(SourceLoc l) : Decl(Kind::Struct, l) {}
  static bool classof(const Decl *d) { return d->kind == Kind::Struct; }
};

struct EnumVariant {
  Ident name;
  std::vector<TypeExprPtr> payload;
  bool hasPayload = false;
};
struct EnumDecl : Decl {
  std::vector<GenericParam> generics;
  std::vector<EnumVariant> variants;
  explicit EnumDecl(SourceLoc l) : Decl(Kind::Enum, l) {}
  static bool classof(const Decl *d) { return d->kind == Kind::Enum; }
};

/// `const EPS: f32 = 1e-5` (typed) or `const EPS = 1e-5` (contextual).
struct ConstDecl : Decl {
  TypeExprPtr type; // null: contextual
  ExprPtr init;
  explicit ConstDecl(SourceLoc l) : Decl(Kind::Const, l) {}
  static bool classof(const Decl *d) { return d->kind == Kind::Const; }
};

/// A reduction algebra: `reducer name<...>: associative, commutative { identity()
/// ... lift(...) ... combine(a, b) ... finalize(s) ... }`.
struct ReducerDecl : Decl {
  std::vector<GenericParam> generics;
  std::vector<Constraint> constraints;
  std::vector<Ident> properties;
  std::vector<std::unique_ptr<FunctionDecl>> parts; // in source order
  explicit ReducerDecl(SourceLoc l) : Decl(Kind::Reducer, l) {}
  static bool classof(const Decl *d) { return d->kind == Kind::Reducer; }
};

/// `import std.nn`, `import std.nn as layers`, `import std.nn.{Linear, RMSNorm as Norm}`.
struct ImportItem {
  Ident name;
  Ident alias; // empty: none
};
struct Import {
  std::vector<Ident> path;
  Ident alias;
  std::vector<ImportItem> items;
  bool hasItems = false;
  SourceLoc loc;
};

struct Module {
  std::vector<Ident> path; // empty if the file has no `module` line
  SourceLoc loc;
  std::vector<Import> imports;
  std::vector<DeclPtr> decls;
  uint32_t buffer = 0;
};

std::string joinPath(const std::vector<Ident> &path, const char *sep = ".");
/// A string literal as linnet source spells it: quoted, with escapes.
std::string escapeString(const std::string &value);

} // namespace linnet::ast

#endif // LINNET_SYNTAX_AST_H
