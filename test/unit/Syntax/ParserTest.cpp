#include "linnet/Syntax/ASTDumper.h"
#include "linnet/Syntax/Parser.h"

#include <llvm/Support/Casting.h>

#include <gtest/gtest.h>

#include <sstream>

using namespace linnet;
using namespace linnet::ast;

namespace {

struct Parsed {
  SourceManager sm;
  std::ostringstream errs;
  std::unique_ptr<Module> module;
  unsigned errors = 0;
  explicit Parsed(std::string text) {
    uint32_t b = sm.addBuffer("t.ln", std::move(text));
    DiagnosticEngine diag(sm, &errs);
    module = parseModule(sm, b, diag);
    errors = diag.errorCount();
  }
  const Expr &returned(size_t decl = 0) const {
    auto &f = llvm::cast<FunctionDecl>(*module->decls[decl]);
    return *llvm::cast<ReturnStmt>(*f.body.stmts.back()).value;
  }
};

TEST(Parser, ReductionBodyStopsBeforeAddition) {
  Parsed p("fn f() { return sum(k: K) a[k] * b[k] + c }");
  ASSERT_EQ(p.errors, 0u) << p.errs.str();
  auto &add = llvm::cast<BinaryExpr>(p.returned());
  EXPECT_EQ(add.op, BinaryOp::Add);
  auto &red = llvm::cast<ReductionExpr>(*add.lhs);
  EXPECT_EQ(llvm::cast<BinaryExpr>(*red.body).op, BinaryOp::Mul);
}

TEST(Parser, ComprehensionBodyExtendsToTheEnd) {
  Parsed p("fn f() { return [i: N] a[i] + 1 }");
  ASSERT_EQ(p.errors, 0u) << p.errs.str();
  auto &c = llvm::cast<ComprehensionExpr>(p.returned());
  EXPECT_EQ(llvm::cast<BinaryExpr>(*c.body).op, BinaryOp::Add);
}

TEST(Parser, CastBindsTighterThanMultiplication) {
  Parsed p("fn f() { return -x as f32 * 2.0 }");
  ASSERT_EQ(p.errors, 0u);
  auto &mul = llvm::cast<BinaryExpr>(p.returned());
  auto &cast = llvm::cast<CastExpr>(*mul.lhs);
  EXPECT_TRUE(llvm::isa<UnaryExpr>(*cast.operand));
}

TEST(Parser, GenericCallNeedsGluedAngle) {
  Parsed glued("fn f() { return g<A, B>(x) }");
  ASSERT_EQ(glued.errors, 0u);
  EXPECT_TRUE(llvm::cast<CallExpr>(glued.returned()).hasGenericArgs);
  Parsed spaced("fn f() { return (a < b, b > (c)) }");
  ASSERT_EQ(spaced.errors, 0u);
  EXPECT_EQ(llvm::cast<TupleExpr>(spaced.returned()).elements.size(), 2u);
}

TEST(Parser, OpenParenOnNewLineStartsNewStatement) {
  Parsed p("fn f() {\n  let a = b\n  (c)\n}");
  ASSERT_EQ(p.errors, 0u);
  auto &f = llvm::cast<FunctionDecl>(*p.module->decls[0]);
  EXPECT_EQ(f.body.stmts.size(), 2u);
}

TEST(Parser, RelationBinderGroup) {
  Parsed p("fn f() { return [d: M] sum(src, edge: g[d]) x[src] * w[edge] }");
  ASSERT_EQ(p.errors, 0u);
  auto &c = llvm::cast<ComprehensionExpr>(p.returned());
  auto &r = llvm::cast<ReductionExpr>(*c.body);
  ASSERT_EQ(r.groups.size(), 1u);
  EXPECT_EQ(r.groups[0].names.size(), 2u);
  EXPECT_EQ(r.groups[0].names[1].name, "edge");
}

TEST(Parser, RecoversAndReportsSeveralErrors) {
  Parsed p("fn a( {}\nfn b() { let = 1 }\nfn c() { return 1 }\n");
  EXPECT_EQ(p.errors, 2u) << p.errs.str();
  // The well-formed function after the errors is still parsed.
  bool sawC = false;
  for (auto &d : p.module->decls)
    sawC |= d->name.name == "c";
  EXPECT_TRUE(sawC);
}

TEST(Parser, PrintedSourceReparsesToTheSameTree) {
  const char *src = "module m\nfn f<N: dim>(x: Tensor[N; f32]) -> f32 {\n"
                    "  let y = [i: N] (x[i] + 1.0) * 2.0\n"
                    "  return sum(i: N) (y[i] - x[i]) * sum(j: N) x[j]\n}\n";
  Parsed p(src);
  ASSERT_EQ(p.errors, 0u);
  Parsed q(printSource(*p.module));
  ASSERT_EQ(q.errors, 0u) << printSource(*p.module);
  EXPECT_EQ(dumpAST(*p.module), dumpAST(*q.module));
}

TEST(Parser, DeepNestingIsAnErrorNotACrash) {
  std::string deep = "const X = " + std::string(100000, '[') + "1";
  Parsed p(deep);
  EXPECT_GE(p.errors, 1u);
  EXPECT_NE(p.errs.str().find("nesting deeper than"), std::string::npos);
}

} // namespace
