#include "linnet/Syntax/Diagnostics.h"

#include <gtest/gtest.h>

#include <sstream>

using namespace linnet;

TEST(SourceManager, LineAndColumn) {
  SourceManager sm;
  uint32_t b = sm.addBuffer("x.ln", "ab\ncde\n\nf");
  EXPECT_EQ(sm.lineCol({b, 0}).line, 1u);
  EXPECT_EQ(sm.lineCol({b, 4}).line, 2u);
  EXPECT_EQ(sm.lineCol({b, 4}).col, 2u);
  EXPECT_EQ(sm.lineCol({b, 8}).line, 4u);
  EXPECT_EQ(sm.lineText({b, 4}), "cde");
}

TEST(SourceManager, ChunksKeepOriginalLineNumbers) {
  SourceManager sm;
  uint32_t b = sm.addBuffer("x.ln", "a\nb", /*firstLine=*/10);
  EXPECT_EQ(sm.lineCol({b, 2}).line, 11u);
}

TEST(Diagnostics, RenderHasLocationLineAndCaret) {
  SourceManager sm;
  uint32_t b = sm.addBuffer("m.ln", "let x = $\n");
  std::ostringstream out;
  DiagnosticEngine diag(sm, &out);
  diag.error({b, 8}, "unexpected character '$'");
  EXPECT_EQ(out.str(), "m.ln:1:9: error: unexpected character '$'\n  let x = $\n          ^\n");
}

TEST(Diagnostics, ErrorLimitAddsOneNote) {
  SourceManager sm;
  uint32_t b = sm.addBuffer("m.ln", "x");
  std::ostringstream out;
  DiagnosticEngine diag(sm, &out);
  diag.setErrorLimit(2);
  for (int i = 0; i < 5; ++i)
    diag.error({b, 0}, "e");
  EXPECT_EQ(diag.errorCount(), 2u);
  EXPECT_TRUE(diag.limitReached());
  EXPECT_NE(out.str().find("too many errors (2)"), std::string::npos);
}

TEST(Diagnostics, VerifyMatchesLineColumnAndText) {
  SourceManager sm;
  uint32_t b = sm.addBuffer("v.ln", "// expected-error@+1:3 {{bad}}\nxx bad\n");
  std::vector<Diagnostic> diags = {{Severity::Error, {b, 33}, "a bad thing"}};
  std::ostringstream out;
  EXPECT_TRUE(verifyDiagnostics(sm, b, diags, out)) << out.str();
  std::vector<Diagnostic> wrongCol = {{Severity::Error, {b, 31}, "a bad thing"}};
  std::ostringstream out2;
  EXPECT_FALSE(verifyDiagnostics(sm, b, wrongCol, out2));
  EXPECT_NE(out2.str().find("unexpected error"), std::string::npos);
  EXPECT_NE(out2.str().find("was not produced"), std::string::npos);
}
