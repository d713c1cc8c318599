//===- ASTPrinter.cpp - Print the AST back as linnet source ---------------===//
//
// Canonical layout: four-space indentation, one statement per line, minimal
// parentheses from the precedence table in docs/language/05-expressions.md.
// The printer's contract is that parsing its output gives the same AST.
//
//===----------------------------------------------------------------------===//
#include "linnet/Syntax/ASTDumper.h"

#include <llvm/Support/Casting.h>

#include <sstream>

using namespace linnet;
using namespace linnet::ast;
using llvm::cast;

namespace {

// Precedence levels, lowest first.
enum Prec : int {
  PLowest = 0, // comprehension, if, match: extend as far as possible
  POr = 1,
  PAnd = 2,
  PCmp = 3,
  PAdd = 4,
  PMul = 5,
  PCast = 6,
  PUnary = 7,
  PPostfix = 8,
};

int precOf(BinaryOp op) {
  switch (op) {
  case BinaryOp::Or: return POr;
  case BinaryOp::And: return PAnd;
  case BinaryOp::Eq: case BinaryOp::Ne: case BinaryOp::Lt:
  case BinaryOp::Le: case BinaryOp::Gt: case BinaryOp::Ge: return PCmp;
  case BinaryOp::Add: case BinaryOp::Sub: return PAdd;
  case BinaryOp::Mul: case BinaryOp::Div: case BinaryOp::Mod: return PMul;
  }
  return PLowest;
}

class Printer {
public:
  std::string run(const Module &m) {
    if (!m.path.empty())
      os_ << "module " << joinPath(m.path) << "\n";
    if (!m.imports.empty())
      os_ << "\n";
    for (const Import &imp : m.imports) {
      os_ << "import " << joinPath(imp.path);
      if (imp.hasItems) {
        os_ << ".{";
        for (size_t i = 0; i < imp.items.size(); ++i) {
          os_ << (i ? ", " : "") << imp.items[i].name.name;
          if (!imp.items[i].alias.name.empty())
            os_ << " as " << imp.items[i].alias.name;
        }
        os_ << "}";
      } else if (!imp.alias.name.empty()) {
        os_ << " as " << imp.alias.name;
      }
      os_ << "\n";
    }
    for (const DeclPtr &d : m.decls) {
      os_ << "\n";
      decl(*d);
    }
    return os_.str();
  }

private:
  void indent() {
    for (unsigned i = 0; i < indent_; ++i)
      os_ << "    ";
  }

  void dim(const DimExpr &d, int minPrec = PAdd) {
    switch (d.kind) {
    case DimExpr::Kind::Int:
      if (cast<IntDim>(d).value < 0)
        os_ << "(" << cast<IntDim>(d).value << ")";
      else
        os_ << cast<IntDim>(d).value;
      break;
    case DimExpr::Kind::Name:
      os_ << cast<NameDim>(d).name;
      break;
    case DimExpr::Kind::PackSize:
      os_ << "#" << cast<PackSizeDim>(d).pack;
      break;
    case DimExpr::Kind::Binary: {
      auto &b = cast<BinaryDim>(d);
      int p = (b.op == '+' || b.op == '-') ? PAdd : PMul;
      bool paren = p < minPrec;
      if (paren)
        os_ << "(";
      dim(*b.lhs, p);
      os_ << " " << b.op << " ";
      dim(*b.rhs, p + 1);
      if (paren)
        os_ << ")";
      break;
    }
    case DimExpr::Kind::MinMax: {
      auto &b = cast<MinMaxDim>(d);
      os_ << (b.isMax ? "max(" : "min(");
      dim(*b.lhs);
      os_ << ", ";
      dim(*b.rhs);
      os_ << ")";
      break;
    }
    case DimExpr::Kind::Neg:
      os_ << "-";
      dim(*cast<NegDim>(d).operand, PUnary);
      break;
    }
  }

  void units(const std::vector<DimUnit> &us) {
    for (size_t i = 0; i < us.size(); ++i) {
      if (i)
        os_ << ", ";
      if (us[i].isPack())
        os_ << us[i].pack << "...";
      else
        dim(*us[i].dim);
    }
  }

  void genericArgs(const std::vector<GenericArg> &args) {
    os_ << "<";
    for (size_t i = 0; i < args.size(); ++i) {
      if (i)
        os_ << ", ";
      if (args[i].isShape) {
        os_ << "[";
        units(args[i].shape);
        os_ << "]";
      } else {
        dim(*args[i].dim);
      }
    }
    os_ << ">";
  }

  void type(const TypeExpr &t) {
    switch (t.kind) {
    case TypeExpr::Kind::Named: {
      auto &n = cast<NamedType>(t);
      os_ << joinPath(n.path);
      if (n.hasGenericArgs)
        genericArgs(n.genericArgs);
      if (n.hasDims) {
        os_ << "[";
        units(n.dims);
        if (n.dtype) {
          os_ << "; ";
          type(*n.dtype);
        }
        os_ << "]";
      }
      break;
    }
    case TypeExpr::Kind::Tuple: {
      auto &tt = cast<TupleType>(t);
      os_ << "(";
      for (size_t i = 0; i < tt.elements.size(); ++i) {
        if (i)
          os_ << ", ";
        type(*tt.elements[i]);
      }
      if (tt.elements.size() == 1)
        os_ << ",";
      os_ << ")";
      break;
    }
    case TypeExpr::Kind::Optional:
      type(*cast<OptionalType>(t).inner);
      os_ << "?";
      break;
    case TypeExpr::Kind::Array: {
      auto &a = cast<ArrayType>(t);
      os_ << "[";
      type(*a.element);
      os_ << "; ";
      dim(*a.size);
      os_ << "]";
      break;
    }
    }
  }

  void generics(const std::vector<GenericParam> &gs) {
    if (gs.empty())
      return;
    os_ << "<";
    for (size_t i = 0; i < gs.size(); ++i) {
      const GenericParam &g = gs[i];
      os_ << (i ? ", " : "") << g.name.name << ": " << spelling(g.kind);
      if (!g.dtypeClass.name.empty())
        os_ << "(" << g.dtypeClass.name << ")";
      if (g.defaultValue) {
        os_ << " = ";
        genericArgs1(*g.defaultValue);
      }
    }
    os_ << ">";
  }
  void genericArgs1(const GenericArg &a) {
    if (a.isShape) {
      os_ << "[";
      units(a.shape);
      os_ << "]";
    } else {
      dim(*a.dim);
    }
  }

  void constraints(const std::vector<Constraint> &cs) {
    if (cs.empty())
      return;
    os_ << " where ";
    for (size_t i = 0; i < cs.size(); ++i) {
      if (i)
        os_ << ", ";
      dim(*cs[i].lhs);
      os_ << " " << spelling(cs[i].op) << " ";
      dim(*cs[i].rhs);
    }
  }

  void params(const std::vector<Param> &ps) {
    for (size_t i = 0; i < ps.size(); ++i) {
      os_ << (i ? ", " : "") << ps[i].name.name << ": ";
      type(*ps[i].type);
    }
  }

  void function(const FunctionDecl &f, bool isPart) {
    indent();
    if (!isPart)
      os_ << (f.isPub ? "pub " : "") << spelling(f.fnKind) << " ";
    os_ << f.name.name;
    generics(f.generics);
    os_ << "(";
    params(f.params);
    os_ << ")";
    if (f.result) {
      os_ << " -> ";
      type(*f.result);
    }
    constraints(f.constraints);
    os_ << " ";
    block(f.body);
    os_ << "\n";
  }

  void decl(const Decl &d) {
    switch (d.kind) {
    case Decl::Kind::Block: {
      auto &b = cast<BlockDecl>(d);
      indent();
      os_ << (b.isPub ? "pub " : "") << "block " << b.name.name;
      generics(b.generics);
      constraints(b.constraints);
      os_ << " {\n";
      ++indent_;
      for (const DeclPtr &m : b.body)
        decl(*m);
      --indent_;
      indent();
      os_ << "}\n";
      break;
    }
    case Decl::Kind::Function:
      function(cast<FunctionDecl>(d), false);
      break;
    case Decl::Kind::Member: {
      auto &m = cast<MemberDecl>(d);
      indent();
      os_ << spelling(m.memberKind) << " " << m.name.name << ": ";
      type(*m.type);
      if (m.init) {
        os_ << " = ";
        expr(*m.init, PLowest);
      }
      os_ << "\n";
      break;
    }
    case Decl::Kind::Struct: {
      auto &s = cast<StructDecl>(d);
      indent();
      os_ << (s.isPub ? "pub " : "") << "struct " << s.name.name;
      generics(s.generics);
      constraints(s.constraints);
      os_ << " {\n";
      ++indent_;
      for (const Param &f : s.fields) {
        indent();
        os_ << f.name.name << ": ";
        type(*f.type);
        os_ << "\n";
      }
      --indent_;
      indent();
      os_ << "}\n";
      break;
    }
    case Decl::Kind::Enum: {
      auto &e = cast<EnumDecl>(d);
      indent();
      os_ << (e.isPub ? "pub " : "") << "enum " << e.name.name;
      generics(e.generics);
      os_ << " {\n";
      ++indent_;
      for (const EnumVariant &v : e.variants) {
        indent();
        os_ << v.name.name;
        if (v.hasPayload) {
          os_ << "(";
          for (size_t i = 0; i < v.payload.size(); ++i) {
            if (i)
              os_ << ", ";
            type(*v.payload[i]);
          }
          os_ << ")";
        }
        os_ << ",\n";
      }
      --indent_;
      indent();
      os_ << "}\n";
      break;
    }
    case Decl::Kind::Const: {
      auto &c = cast<ConstDecl>(d);
      indent();
      os_ << (c.isPub ? "pub " : "") << "const " << c.name.name;
      if (c.type) {
        os_ << ": ";
        type(*c.type);
      }
      os_ << " = ";
      expr(*c.init, PLowest);
      os_ << "\n";
      break;
    }
    case Decl::Kind::Reducer: {
      auto &r = cast<ReducerDecl>(d);
      indent();
      os_ << (r.isPub ? "pub " : "") << "reducer " << r.name.name;
      generics(r.generics);
      for (size_t i = 0; i < r.properties.size(); ++i)
        os_ << (i ? ", " : ": ") << r.properties[i].name;
      constraints(r.constraints);
      os_ << " {\n";
      ++indent_;
      for (auto &p : r.parts)
        function(*p, true);
      --indent_;
      indent();
      os_ << "}\n";
      break;
    }
    }
  }

  void block(const Block &b) {
    os_ << "{\n";
    ++indent_;
    for (const StmtPtr &s : b.stmts)
      stmt(*s);
    --indent_;
    indent();
    os_ << "}";
  }

  void stmt(const Stmt &s) {
    indent();
    switch (s.kind) {
    case Stmt::Kind::Let: {
      auto &l = cast<LetStmt>(s);
      os_ << (l.isVar ? "var " : "let ");
      pattern(*l.pattern);
      if (l.type) {
        os_ << ": ";
        type(*l.type);
      }
      os_ << " = ";
      expr(*l.init, PLowest);
      break;
    }
    case Stmt::Kind::Assign: {
      auto &a = cast<AssignStmt>(s);
      expr(*a.target, PLowest);
      os_ << " = ";
      expr(*a.value, PLowest);
      break;
    }
    case Stmt::Kind::Expr: {
      const Expr &e = *cast<ExprStmt>(s).expr;
      // Only if/match may start a statement unparenthesized and stay whole.
      bool stmtForm = e.kind == Expr::Kind::If || e.kind == Expr::Kind::Match;
      if (!stmtForm && startsLikeStatementKeyword(e))
        os_ << "(", expr(e, PLowest), os_ << ")";
      else
        expr(e, PLowest);
      break;
    }
    case Stmt::Kind::Return: {
      auto &r = cast<ReturnStmt>(s);
      os_ << "return";
      if (r.value) {
        os_ << " ";
        expr(*r.value, PLowest);
      }
      break;
    }
    case Stmt::Kind::While: {
      auto &w = cast<WhileStmt>(s);
      os_ << "while ";
      bool saved = noStruct_;
      noStruct_ = true;
      expr(*w.cond, PLowest);
      noStruct_ = saved;
      os_ << " ";
      block(w.body);
      break;
    }
    }
    os_ << "\n";
  }

  /// An expression statement whose leftmost token is `if`/`match` but which is
  /// not itself an if/match (e.g. `if ... else ... + 1`) needs parentheses.
  static bool startsLikeStatementKeyword(const Expr &e) {
    const Expr *cur = &e;
    while (true) {
      switch (cur->kind) {
      case Expr::Kind::If:
      case Expr::Kind::Match:
        return true;
      case Expr::Kind::Binary:
        cur = cast<BinaryExpr>(cur)->lhs.get();
        break;
      case Expr::Kind::Cast:
        cur = cast<CastExpr>(cur)->operand.get();
        break;
      default:
        return false;
      }
    }
  }

  void pattern(const Pattern &p) {
    switch (p.kind) {
    case Pattern::Kind::Wildcard:
      os_ << "_";
      break;
    case Pattern::Kind::Binding:
      os_ << cast<BindingPattern>(p).name;
      break;
    case Pattern::Kind::Ctor: {
      auto &c = cast<CtorPattern>(p);
      os_ << joinPath(c.path);
      if (c.hasArgs) {
        os_ << "(";
        for (size_t i = 0; i < c.args.size(); ++i) {
          if (i)
            os_ << ", ";
          pattern(*c.args[i]);
        }
        os_ << ")";
      }
      break;
    }
    case Pattern::Kind::Tuple: {
      auto &t = cast<TuplePattern>(p);
      os_ << "(";
      for (size_t i = 0; i < t.elements.size(); ++i) {
        if (i)
          os_ << ", ";
        pattern(*t.elements[i]);
      }
      if (t.elements.size() == 1)
        os_ << ",";
      os_ << ")";
      break;
    }
    case Pattern::Kind::Literal:
      expr(*cast<LiteralPattern>(p).literal, PUnary);
      break;
    }
  }

  void args(const std::vector<ExprPtr> &as) {
    bool saved = noStruct_;
    noStruct_ = false;
    for (size_t i = 0; i < as.size(); ++i) {
      if (i)
        os_ << ", ";
      expr(*as[i], PLowest);
    }
    noStruct_ = saved;
  }

  static int precOf(const Expr &e) {
    switch (e.kind) {
    case Expr::Kind::Binary:
      return ::precOf(cast<BinaryExpr>(e).op);
    case Expr::Kind::Unary:
      return PUnary;
    case Expr::Kind::Cast:
      return PCast;
    case Expr::Kind::Reduction:
      return PAdd; // its body stops before '+'
    case Expr::Kind::Comprehension:
    case Expr::Kind::If:
    case Expr::Kind::Match:
      return PLowest;
    default:
      return PPostfix;
    }
  }

  void expr(const Expr &e, int minPrec) {
    int p = precOf(e);
    bool paren = p < minPrec || (p == PLowest && minPrec > PLowest) ||
                 (noStruct_ && e.kind == Expr::Kind::StructLit);
    if (paren) {
      os_ << "(";
      bool saved = noStruct_;
      noStruct_ = false;
      exprInner(e);
      noStruct_ = saved;
      os_ << ")";
    } else {
      exprInner(e);
    }
  }

  void exprInner(const Expr &e) {
    switch (e.kind) {
    case Expr::Kind::IntLit: {
      auto &i = cast<IntLitExpr>(e);
      os_ << i.digits << i.suffix;
      break;
    }
    case Expr::Kind::FloatLit: {
      auto &f = cast<FloatLitExpr>(e);
      os_ << f.digits << f.suffix;
      break;
    }
    case Expr::Kind::BoolLit:
      os_ << (cast<BoolLitExpr>(e).value ? "true" : "false");
      break;
    case Expr::Kind::StringLit:
      os_ << escapeString(cast<StringLitExpr>(e).value);
      break;
    case Expr::Kind::NoneLit:
      os_ << "none";
      break;
    case Expr::Kind::Name:
      os_ << cast<NameExpr>(e).name;
      break;
    case Expr::Kind::Unary: {
      auto &u = cast<UnaryExpr>(e);
      os_ << spelling(u.op);
      expr(*u.operand, PUnary);
      break;
    }
    case Expr::Kind::Binary: {
      auto &b = cast<BinaryExpr>(e);
      int p = ::precOf(b.op);
      // Comparisons do not associate: both sides bind tighter.
      expr(*b.lhs, p == PCmp ? p + 1 : p);
      os_ << " " << spelling(b.op) << " ";
      expr(*b.rhs, p + 1);
      break;
    }
    case Expr::Kind::Call: {
      auto &c = cast<CallExpr>(e);
      expr(*c.callee, PPostfix);
      if (c.hasGenericArgs)
        genericArgs(c.genericArgs);
      os_ << "(";
      args(c.args);
      os_ << ")";
      break;
    }
    case Expr::Kind::Index: {
      auto &x = cast<IndexExpr>(e);
      expr(*x.base, PPostfix);
      os_ << "[";
      bool saved = noStruct_;
      noStruct_ = false;
      for (size_t i = 0; i < x.items.size(); ++i) {
        const IndexItem &it = x.items[i];
        if (i)
          os_ << ", ";
        switch (it.kind) {
        case IndexItem::Kind::Index:
          expr(*it.index, PLowest);
          break;
        case IndexItem::Kind::Ellipsis:
          os_ << "...";
          break;
        case IndexItem::Kind::Slice:
          if (it.start)
            expr(*it.start, PLowest);
          os_ << ":";
          if (it.stop)
            expr(*it.stop, PLowest);
          if (it.hasStep) {
            os_ << ":";
            if (it.step)
              expr(*it.step, PLowest);
          }
          break;
        }
      }
      noStruct_ = saved;
      os_ << "]";
      break;
    }
    case Expr::Kind::Field: {
      auto &f = cast<FieldExpr>(e);
      expr(*f.base, PPostfix);
      os_ << "." << f.field.name;
      break;
    }
    case Expr::Kind::TupleIndex: {
      auto &t = cast<TupleIndexExpr>(e);
      // `1 .0` must not print as the float `1.0`.
      bool number = t.base->kind == Expr::Kind::IntLit || t.base->kind == Expr::Kind::FloatLit;
      if (number)
        os_ << "(";
      expr(*t.base, PPostfix);
      if (number)
        os_ << ")";
      os_ << "." << t.index;
      break;
    }
    case Expr::Kind::Comprehension: {
      auto &c = cast<ComprehensionExpr>(e);
      os_ << "[";
      bool saved = noStruct_;
      noStruct_ = false;
      for (size_t i = 0; i < c.indices.size(); ++i) {
        os_ << (i ? ", " : "") << c.indices[i].name.name << ": ";
        expr(*c.indices[i].domain, PLowest);
      }
      noStruct_ = saved;
      os_ << "] ";
      expr(*c.body, PLowest);
      break;
    }
    case Expr::Kind::Reduction: {
      auto &r = cast<ReductionExpr>(e);
      expr(*r.reducer, PPostfix);
      if (r.hasGenericArgs)
        genericArgs(r.genericArgs);
      os_ << "(";
      bool saved = noStruct_;
      noStruct_ = false;
      for (size_t i = 0; i < r.groups.size(); ++i) {
        if (i)
          os_ << ", ";
        for (size_t j = 0; j < r.groups[i].names.size(); ++j)
          os_ << (j ? ", " : "") << r.groups[i].names[j].name;
        os_ << ": ";
        expr(*r.groups[i].domain, PLowest);
      }
      if (r.filter) {
        os_ << " where ";
        expr(*r.filter, PLowest);
      }
      noStruct_ = saved;
      os_ << ") ";
      expr(*r.body, PMul);
      break;
    }
    case Expr::Kind::Cast: {
      auto &c = cast<CastExpr>(e);
      expr(*c.operand, PCast);
      os_ << " as ";
      type(*c.type);
      break;
    }
    case Expr::Kind::Tuple: {
      auto &t = cast<TupleExpr>(e);
      os_ << "(";
      args(t.elements);
      if (t.elements.size() == 1)
        os_ << ",";
      os_ << ")";
      break;
    }
    case Expr::Kind::ArrayLit:
      os_ << "[";
      args(cast<ArrayLitExpr>(e).elements);
      os_ << "]";
      break;
    case Expr::Kind::StructLit: {
      auto &s = cast<StructLitExpr>(e);
      os_ << joinPath(s.path);
      if (s.hasGenericArgs)
        genericArgs(s.genericArgs);
      os_ << " {";
      bool saved = noStruct_;
      noStruct_ = false;
      for (size_t i = 0; i < s.fields.size(); ++i) {
        os_ << (i ? ", " : " ") << s.fields[i].name.name << ": ";
        expr(*s.fields[i].value, PLowest);
      }
      noStruct_ = saved;
      os_ << " }";
      break;
    }
    case Expr::Kind::If: {
      auto &i = cast<IfExpr>(e);
      os_ << "if ";
      bool saved = noStruct_;
      noStruct_ = true;
      expr(*i.cond, PLowest);
      noStruct_ = saved;
      os_ << " ";
      block(i.thenBlock);
      if (i.elseIf) {
        os_ << " else ";
        exprInner(*i.elseIf);
      } else if (i.elseBlock) {
        os_ << " else ";
        block(*i.elseBlock);
      }
      break;
    }
    case Expr::Kind::Match: {
      auto &m = cast<MatchExpr>(e);
      os_ << "match ";
      bool saved = noStruct_;
      noStruct_ = true;
      expr(*m.scrutinee, PLowest);
      noStruct_ = false;
      os_ << " {\n";
      ++indent_;
      for (const MatchArm &a : m.arms) {
        indent();
        pattern(*a.pattern);
        os_ << " => ";
        expr(*a.body, PLowest);
        os_ << ",\n";
      }
      --indent_;
      noStruct_ = saved;
      indent();
      os_ << "}";
      break;
    }
    case Expr::Kind::BlockExpr: {
      bool saved = noStruct_;
      noStruct_ = false;
      block(cast<BlockExpr>(e).block);
      noStruct_ = saved;
      break;
    }
    }
  }

  std::ostringstream os_;
  unsigned indent_ = 0;
  bool noStruct_ = false;
};

} // namespace

std::string linnet::printSource(const Module &module) { return Printer().run(module); }
