//===- MlirDiagnosticsTest.cpp - MLIR diagnostics as users read them -------===//
//
// support::DiagnosticCollector is how every MLIR stage reports to a user:
// `file:line:col: error: ...`, never `loc(...)` or the IR of the op. (In
// this test binary because it links MLIR already.)
//
//===----------------------------------------------------------------------===//

#include "linnet/Support/MlirDiagnostics.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;

TEST(MlirDiagnostics, FirstErrorIsLocatedWithoutIR) {
  MLIRContext ctx;
  ctx.loadDialect<func::FuncDialect>();
  ctx.allowUnregisteredDialects();
  // Parsed without verifying, so the verifier below finds the bad return.
  ParserConfig config(&ctx, /*verifyAfterParse=*/false);
  OwningOpRef<ModuleOp> m = parseSourceString<ModuleOp>(
      "func.func @f() -> i32 {\n  func.return\n}\n", config, "model.ln");
  ASSERT_TRUE(m);
  linnet::support::DiagnosticCollector diags(&ctx);
  EXPECT_TRUE(failed(verify(*m)));
  EXPECT_EQ(diags.first().rfind("model.ln:2:3: error: ", 0), 0u) << diags.first();
  EXPECT_EQ(diags.first().find("loc("), std::string::npos) << diags.first();
  EXPECT_EQ(diags.text().find("see current operation"), std::string::npos) << diags.text();
  EXPECT_EQ(diags.suffix(), ": " + diags.first());
}

TEST(MlirDiagnostics, PositionFoundInsideFusedLocations) {
  MLIRContext ctx;
  Location at = FusedLoc::get(&ctx, {NameLoc::get(StringAttr::get(&ctx, "x")),
                                     FileLineColLoc::get(&ctx, "m.ln", 7, 9)});
  EXPECT_EQ(linnet::support::sourcePrefix(at), "m.ln:7:9: ");
  EXPECT_EQ(linnet::support::sourcePrefix(UnknownLoc::get(&ctx)), "");
  linnet::support::DiagnosticCollector diags(&ctx);
  emitError(UnknownLoc::get(&ctx)) << "no position";
  EXPECT_EQ(diags.first(), "error: no position");
}
