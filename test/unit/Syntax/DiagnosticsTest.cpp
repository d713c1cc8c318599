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

TEST(Diagnostics, ASinkGetsValuesThatRenderAsTheStreamDoes) {
  SourceManager sm;
  uint32_t b = sm.addBuffer("m.ln", "let x = $\n");
  support::CollectingDiagSink sink;
  std::ostringstream out;
  {
    DiagnosticEngine toSink(sm, sink), toStream(sm, &out);
    for (DiagnosticEngine *d : {&toSink, &toStream}) {
      d->error({b, 8}, "unexpected character '$'", "syntax");
      d->note({b, 4}, "in this let");
    }
  }
  ASSERT_EQ(sink.diags.size(), 1u);
  const support::Diag &d = sink.diags[0];
  EXPECT_EQ(d.file, "m.ln");
  EXPECT_EQ(d.line, 1u);
  EXPECT_EQ(d.column, 9u);
  EXPECT_EQ(d.code, "syntax");
  EXPECT_EQ(d.message, "unexpected character '$'");
  ASSERT_EQ(d.notes.size(), 1u);
  EXPECT_EQ(d.notes[0].column, 5u);
  // The value's text form is the engine's own rendering, notes included.
  EXPECT_EQ(support::renderText(d, ""), out.str());
  EXPECT_EQ(sink.errorCount(), 1u);
}

TEST(Diagnostics, TextFormsOfValues) {
  using support::Diag;
  EXPECT_EQ(support::renderText(Diag::error("io", "cannot read 'x'"), "build"),
            "linnet build: error: cannot read 'x'\n");
  EXPECT_EQ(support::renderText(Diag::atPointer("portable.dag", "p.json", "", "a cycle"), ""),
            "p.json: error: [portable.dag] /: a cycle\n");
  EXPECT_EQ(support::renderText(Diag::inFile("binding", "b.json", "bad").withNote("version: expected 1"), "build"),
            "b.json: error: bad\n  version: expected 1\n");
  Diag at = Diag::atLocation("target", "dir:x/m.ln:3:7", "f16");
  EXPECT_EQ(at.file, "dir:x/m.ln");
  EXPECT_EQ(at.line, 3u);
  EXPECT_EQ(at.column, 7u);
  EXPECT_EQ(Diag::atLocation("target", "m.ln", "x").file, "m.ln");
  EXPECT_FALSE(Diag::atLocation("target", "m.ln", "x").located());
}
