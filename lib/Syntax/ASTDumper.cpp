//===- ASTDumper.cpp - S-expression dump of the AST -----------------------===//
//
// One declaration, member or statement per line; expressions, types and
// dimensions inline as S-expressions. Nested blocks open a new indented level.
//
//===----------------------------------------------------------------------===//
#include "linnet/Syntax/ASTDumper.h"

#include <llvm/Support/Casting.h>

#include <sstream>

using namespace linnet;
using namespace linnet::ast;
using llvm::cast;
using llvm::dyn_cast;

namespace {

class Dumper {
public:
  std::string run(const Module &m) {
    os_ << "(module " << (m.path.empty() ? "<anonymous>" : joinPath(m.path));
    ++indent_;
    for (const Import &imp : m.imports) {
      line();
      os_ << "(import " << joinPath(imp.path);
      if (!imp.alias.name.empty())
        os_ << " as " << imp.alias.name;
      if (imp.hasItems) {
        os_ << " {";
        for (size_t i = 0; i < imp.items.size(); ++i) {
          os_ << (i ? ", " : "") << imp.items[i].name.name;
          if (!imp.items[i].alias.name.empty())
            os_ << " as " << imp.items[i].alias.name;
        }
        os_ << "}";
      }
      os_ << ")";
    }
    for (const DeclPtr &d : m.decls)
      decl(*d);
    --indent_;
    os_ << ")\n";
    return os_.str();
  }

private:
  void line() {
    os_ << "\n";
    for (unsigned i = 0; i < indent_; ++i)
      os_ << "  ";
  }

  void dim(const DimExpr &d) {
    switch (d.kind) {
    case DimExpr::Kind::Int:
      os_ << cast<IntDim>(d).value;
      break;
    case DimExpr::Kind::Name:
      os_ << cast<NameDim>(d).name;
      break;
    case DimExpr::Kind::PackSize:
      os_ << "(# " << cast<PackSizeDim>(d).pack << ")";
      break;
    case DimExpr::Kind::Binary: {
      auto &b = cast<BinaryDim>(d);
      os_ << "(" << b.op << " ";
      dim(*b.lhs);
      os_ << " ";
      dim(*b.rhs);
      os_ << ")";
      break;
    }
    case DimExpr::Kind::MinMax: {
      auto &b = cast<MinMaxDim>(d);
      os_ << (b.isMax ? "(max " : "(min ");
      dim(*b.lhs);
      os_ << " ";
      dim(*b.rhs);
      os_ << ")";
      break;
    }
    case DimExpr::Kind::Neg:
      os_ << "(neg ";
      dim(*cast<NegDim>(d).operand);
      os_ << ")";
      break;
    }
  }

  void units(const std::vector<DimUnit> &us) {
    os_ << "[";
    for (size_t i = 0; i < us.size(); ++i) {
      if (i)
        os_ << " ";
      if (us[i].isPack())
        os_ << us[i].pack << "...";
      else
        dim(*us[i].dim);
    }
    os_ << "]";
  }

  void genericArg(const GenericArg &a) {
    if (a.isShape)
      units(a.shape);
    else
      dim(*a.dim);
  }

  void genericArgs(const std::vector<GenericArg> &args) {
    os_ << "<";
    for (size_t i = 0; i < args.size(); ++i) {
      if (i)
        os_ << " ";
      genericArg(args[i]);
    }
    os_ << ">";
  }

  void type(const TypeExpr &t) {
    switch (t.kind) {
    case TypeExpr::Kind::Named: {
      auto &n = cast<NamedType>(t);
      bool plain = !n.hasGenericArgs && !n.hasDims;
      if (!plain)
        os_ << "(";
      os_ << joinPath(n.path);
      if (n.hasGenericArgs) {
        os_ << " ";
        genericArgs(n.genericArgs);
      }
      if (n.hasDims) {
        os_ << " ";
        units(n.dims);
        if (n.dtype) {
          os_ << " ";
          type(*n.dtype);
        }
      }
      if (!plain)
        os_ << ")";
      break;
    }
    case TypeExpr::Kind::Tuple: {
      os_ << "(tuple-type";
      for (auto &e : cast<TupleType>(t).elements) {
        os_ << " ";
        type(*e);
      }
      os_ << ")";
      break;
    }
    case TypeExpr::Kind::Optional:
      os_ << "(? ";
      type(*cast<OptionalType>(t).inner);
      os_ << ")";
      break;
    case TypeExpr::Kind::Array: {
      auto &a = cast<ArrayType>(t);
      os_ << "(array-type ";
      type(*a.element);
      os_ << " ";
      dim(*a.size);
      os_ << ")";
      break;
    }
    }
  }

  void generics(const std::vector<GenericParam> &gs) {
    if (gs.empty())
      return;
    line();
    os_ << "(generics";
    for (const GenericParam &g : gs) {
      os_ << " (" << g.name.name << " " << spelling(g.kind);
      if (!g.dtypeClass.name.empty())
        os_ << " " << g.dtypeClass.name;
      if (g.defaultValue) {
        os_ << " = ";
        genericArg(*g.defaultValue);
      }
      os_ << ")";
    }
    os_ << ")";
  }

  void constraints(const std::vector<Constraint> &cs) {
    if (cs.empty())
      return;
    line();
    os_ << "(where";
    for (const Constraint &c : cs) {
      os_ << " (" << spelling(c.op) << " ";
      dim(*c.lhs);
      os_ << " ";
      dim(*c.rhs);
      os_ << ")";
    }
    os_ << ")";
  }

  void params(const char *label, const std::vector<Param> &ps) {
    line();
    os_ << "(" << label;
    for (const Param &p : ps) {
      os_ << " (" << p.name.name << " ";
      type(*p.type);
      os_ << ")";
    }
    os_ << ")";
  }

  void function(const FunctionDecl &f, const char *kind) {
    line();
    os_ << "(" << kind << (f.isPub ? " pub " : " ") << f.name.name;
    ++indent_;
    generics(f.generics);
    params("params", f.params);
    if (f.result) {
      line();
      os_ << "(result ";
      type(*f.result);
      os_ << ")";
    }
    constraints(f.constraints);
    line();
    os_ << "(body";
    block(f.body);
    os_ << ")";
    --indent_;
    os_ << ")";
  }

  void decl(const Decl &d) {
    switch (d.kind) {
    case Decl::Kind::Block: {
      auto &b = cast<BlockDecl>(d);
      line();
      os_ << "(block" << (b.isPub ? " pub " : " ") << b.name.name;
      ++indent_;
      generics(b.generics);
      constraints(b.constraints);
      for (const DeclPtr &m : b.body)
        decl(*m);
      --indent_;
      os_ << ")";
      break;
    }
    case Decl::Kind::Function: {
      auto &f = cast<FunctionDecl>(d);
      function(f, spelling(f.fnKind));
      break;
    }
    case Decl::Kind::Member: {
      auto &m = cast<MemberDecl>(d);
      line();
      os_ << "(" << spelling(m.memberKind) << " " << m.name.name << " ";
      type(*m.type);
      if (m.init) {
        os_ << " = ";
        expr(*m.init);
      }
      os_ << ")";
      break;
    }
    case Decl::Kind::Struct: {
      auto &s = cast<StructDecl>(d);
      line();
      os_ << "(struct" << (s.isPub ? " pub " : " ") << s.name.name;
      ++indent_;
      generics(s.generics);
      constraints(s.constraints);
      params("fields", s.fields);
      --indent_;
      os_ << ")";
      break;
    }
    case Decl::Kind::Enum: {
      auto &e = cast<EnumDecl>(d);
      line();
      os_ << "(enum" << (e.isPub ? " pub " : " ") << e.name.name;
      ++indent_;
      generics(e.generics);
      for (const EnumVariant &v : e.variants) {
        line();
        os_ << "(variant " << v.name.name;
        if (v.hasPayload) {
          os_ << " (";
          for (size_t i = 0; i < v.payload.size(); ++i) {
            if (i)
              os_ << " ";
            type(*v.payload[i]);
          }
          os_ << ")";
        }
        os_ << ")";
      }
      --indent_;
      os_ << ")";
      break;
    }
    case Decl::Kind::Const: {
      auto &c = cast<ConstDecl>(d);
      line();
      os_ << "(const" << (c.isPub ? " pub " : " ") << c.name.name << " ";
      if (c.type)
        type(*c.type);
      else
        os_ << "<contextual>";
      os_ << " ";
      expr(*c.init);
      os_ << ")";
      break;
    }
    case Decl::Kind::Reducer: {
      auto &r = cast<ReducerDecl>(d);
      line();
      os_ << "(reducer" << (r.isPub ? " pub " : " ") << r.name.name;
      ++indent_;
      generics(r.generics);
      if (!r.properties.empty()) {
        line();
        os_ << "(properties";
        for (const Ident &p : r.properties)
          os_ << " " << p.name;
        os_ << ")";
      }
      constraints(r.constraints);
      for (auto &part : r.parts)
        function(*part, "part");
      --indent_;
      os_ << ")";
      break;
    }
    }
  }

  void block(const Block &b) {
    ++indent_;
    for (const StmtPtr &s : b.stmts)
      stmt(*s);
    --indent_;
  }

  void stmt(const Stmt &s) {
    line();
    switch (s.kind) {
    case Stmt::Kind::Let: {
      auto &l = cast<LetStmt>(s);
      os_ << (l.isVar ? "(var " : "(let ");
      pattern(*l.pattern);
      if (l.type) {
        os_ << " : ";
        type(*l.type);
      }
      os_ << " ";
      expr(*l.init);
      os_ << ")";
      break;
    }
    case Stmt::Kind::Assign: {
      auto &a = cast<AssignStmt>(s);
      os_ << "(assign ";
      expr(*a.target);
      os_ << " ";
      expr(*a.value);
      os_ << ")";
      break;
    }
    case Stmt::Kind::Expr:
      os_ << "(expr ";
      expr(*cast<ExprStmt>(s).expr);
      os_ << ")";
      break;
    case Stmt::Kind::Return: {
      auto &r = cast<ReturnStmt>(s);
      os_ << "(return";
      if (r.value) {
        os_ << " ";
        expr(*r.value);
      }
      os_ << ")";
      break;
    }
    case Stmt::Kind::While: {
      auto &w = cast<WhileStmt>(s);
      os_ << "(while ";
      expr(*w.cond);
      block(w.body);
      os_ << ")";
      break;
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
      if (!c.hasArgs) {
        os_ << "(ctor " << joinPath(c.path) << ")";
        break;
      }
      os_ << "(ctor " << joinPath(c.path);
      for (auto &a : c.args) {
        os_ << " ";
        pattern(*a);
      }
      os_ << ")";
      break;
    }
    case Pattern::Kind::Tuple:
      os_ << "(tuple";
      for (auto &e : cast<TuplePattern>(p).elements) {
        os_ << " ";
        pattern(*e);
      }
      os_ << ")";
      break;
    case Pattern::Kind::Literal:
      expr(*cast<LiteralPattern>(p).literal);
      break;
    }
  }

  void optExpr(const ExprPtr &e) {
    if (e)
      expr(*e);
    else
      os_ << "_";
  }

  void exprs(const std::vector<ExprPtr> &es) {
    for (auto &e : es) {
      os_ << " ";
      expr(*e);
    }
  }

  void expr(const Expr &e) {
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
      const char *name = u.op == UnaryOp::Neg ? "neg" : u.op == UnaryOp::Not ? "not" : "#";
      os_ << "(" << name << " ";
      expr(*u.operand);
      os_ << ")";
      break;
    }
    case Expr::Kind::Binary: {
      auto &b = cast<BinaryExpr>(e);
      os_ << "(" << spelling(b.op) << " ";
      expr(*b.lhs);
      os_ << " ";
      expr(*b.rhs);
      os_ << ")";
      break;
    }
    case Expr::Kind::Call: {
      auto &c = cast<CallExpr>(e);
      os_ << "(call ";
      expr(*c.callee);
      if (c.hasGenericArgs) {
        os_ << " ";
        genericArgs(c.genericArgs);
      }
      exprs(c.args);
      os_ << ")";
      break;
    }
    case Expr::Kind::Index: {
      auto &x = cast<IndexExpr>(e);
      os_ << "(index ";
      expr(*x.base);
      for (const IndexItem &it : x.items) {
        os_ << " ";
        switch (it.kind) {
        case IndexItem::Kind::Index:
          expr(*it.index);
          break;
        case IndexItem::Kind::Ellipsis:
          os_ << "...";
          break;
        case IndexItem::Kind::Slice:
          os_ << "(slice ";
          optExpr(it.start);
          os_ << " ";
          optExpr(it.stop);
          if (it.hasStep) {
            os_ << " ";
            optExpr(it.step);
          }
          os_ << ")";
          break;
        }
      }
      os_ << ")";
      break;
    }
    case Expr::Kind::Field: {
      auto &f = cast<FieldExpr>(e);
      os_ << "(. ";
      expr(*f.base);
      os_ << " " << f.field.name << ")";
      break;
    }
    case Expr::Kind::TupleIndex: {
      auto &t = cast<TupleIndexExpr>(e);
      os_ << "(." << t.index << " ";
      expr(*t.base);
      os_ << ")";
      break;
    }
    case Expr::Kind::Comprehension: {
      auto &c = cast<ComprehensionExpr>(e);
      os_ << "(for [";
      for (size_t i = 0; i < c.indices.size(); ++i) {
        os_ << (i ? " (" : "(") << c.indices[i].name.name << " ";
        expr(*c.indices[i].domain);
        os_ << ")";
      }
      os_ << "] ";
      expr(*c.body);
      os_ << ")";
      break;
    }
    case Expr::Kind::Reduction: {
      auto &r = cast<ReductionExpr>(e);
      os_ << "(reduce ";
      expr(*r.reducer);
      if (r.hasGenericArgs) {
        os_ << " ";
        genericArgs(r.genericArgs);
      }
      os_ << " [";
      for (size_t i = 0; i < r.groups.size(); ++i) {
        os_ << (i ? " (" : "(");
        for (size_t j = 0; j < r.groups[i].names.size(); ++j)
          os_ << (j ? " " : "") << r.groups[i].names[j].name;
        os_ << " : ";
        expr(*r.groups[i].domain);
        os_ << ")";
      }
      os_ << "]";
      if (r.filter) {
        os_ << " (where ";
        expr(*r.filter);
        os_ << ")";
      }
      os_ << " ";
      expr(*r.body);
      os_ << ")";
      break;
    }
    case Expr::Kind::Cast: {
      auto &c = cast<CastExpr>(e);
      os_ << "(as ";
      expr(*c.operand);
      os_ << " ";
      type(*c.type);
      os_ << ")";
      break;
    }
    case Expr::Kind::Tuple:
      os_ << "(tuple";
      exprs(cast<TupleExpr>(e).elements);
      os_ << ")";
      break;
    case Expr::Kind::ArrayLit:
      os_ << "(array";
      exprs(cast<ArrayLitExpr>(e).elements);
      os_ << ")";
      break;
    case Expr::Kind::StructLit: {
      auto &s = cast<StructLitExpr>(e);
      os_ << "(struct " << joinPath(s.path);
      if (s.hasGenericArgs) {
        os_ << " ";
        genericArgs(s.genericArgs);
      }
      for (const FieldInit &f : s.fields) {
        os_ << " (" << f.name.name << " ";
        expr(*f.value);
        os_ << ")";
      }
      os_ << ")";
      break;
    }
    case Expr::Kind::If: {
      auto &i = cast<IfExpr>(e);
      os_ << "(if ";
      expr(*i.cond);
      ++indent_;
      line();
      os_ << "(then";
      block(i.thenBlock);
      os_ << ")";
      if (i.elseIf) {
        line();
        os_ << "(else ";
        expr(*i.elseIf);
        os_ << ")";
      } else if (i.elseBlock) {
        line();
        os_ << "(else";
        block(*i.elseBlock);
        os_ << ")";
      }
      --indent_;
      os_ << ")";
      break;
    }
    case Expr::Kind::Match: {
      auto &m = cast<MatchExpr>(e);
      os_ << "(match ";
      expr(*m.scrutinee);
      ++indent_;
      for (const MatchArm &a : m.arms) {
        line();
        os_ << "(arm ";
        pattern(*a.pattern);
        os_ << " ";
        expr(*a.body);
        os_ << ")";
      }
      --indent_;
      os_ << ")";
      break;
    }
    case Expr::Kind::BlockExpr:
      os_ << "(do";
      block(cast<BlockExpr>(e).block);
      os_ << ")";
      break;
    }
  }

  std::ostringstream os_;
  unsigned indent_ = 0;
};

} // namespace

std::string linnet::dumpAST(const Module &module) { return Dumper().run(module); }
