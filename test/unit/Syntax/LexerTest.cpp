#include "linnet/Syntax/Lexer.h"

#include <gtest/gtest.h>

#include <sstream>

using namespace linnet;

namespace {

struct Lexed {
  SourceManager sm;
  std::ostringstream errs;
  std::vector<Token> toks;
  unsigned errors = 0;
  explicit Lexed(std::string text) {
    uint32_t b = sm.addBuffer("t.ln", std::move(text));
    DiagnosticEngine diag(sm, &errs);
    toks = Lexer(sm, b, diag).lexAll();
    errors = diag.errorCount();
  }
  std::vector<Tok> kinds() const {
    std::vector<Tok> k;
    for (const Token &t : toks)
      k.push_back(t.kind);
    return k;
  }
};

TEST(Lexer, KeywordsIdentifiersAndPunctuation) {
  Lexed l("pub block B<N: dim> { param w: Tensor[N; f32]? = none }");
  std::vector<Tok> expected = {
      Tok::kw_pub, Tok::kw_block, Tok::ident, Tok::less, Tok::ident, Tok::colon,
      Tok::ident, Tok::greater, Tok::l_brace, Tok::kw_param, Tok::ident, Tok::colon,
      Tok::ident, Tok::l_brack, Tok::ident, Tok::semi, Tok::ident, Tok::r_brack,
      Tok::question, Tok::equal, Tok::kw_none, Tok::r_brace, Tok::eof};
  EXPECT_EQ(l.kinds(), expected);
  EXPECT_EQ(l.errors, 0u);
}

TEST(Lexer, MultiCharOperators) {
  Lexed l("-> => == != <= >= && || ... . _");
  std::vector<Tok> expected = {Tok::arrow, Tok::fat_arrow, Tok::eq_eq, Tok::bang_eq,
                               Tok::less_eq, Tok::greater_eq, Tok::amp_amp,
                               Tok::pipe_pipe, Tok::ellipsis, Tok::dot,
                               Tok::underscore, Tok::eof};
  EXPECT_EQ(l.kinds(), expected);
}

TEST(Lexer, NumbersWithSuffixes) {
  Lexed l("1 1_000 0xFF 2i64 7u8 1.5 2.5e-3 1e5f16 0.5bf16 3f32");
  std::vector<Tok> expected = {Tok::int_lit, Tok::int_lit, Tok::int_lit, Tok::int_lit,
                               Tok::int_lit, Tok::float_lit, Tok::float_lit,
                               Tok::float_lit, Tok::float_lit, Tok::float_lit, Tok::eof};
  EXPECT_EQ(l.kinds(), expected);
  EXPECT_EQ(splitNumberSuffix("0.5bf16"), std::make_pair(std::string_view("0.5"), std::string_view("bf16")));
  EXPECT_EQ(splitNumberSuffix("2.5e-3"), std::make_pair(std::string_view("2.5e-3"), std::string_view("")));
  EXPECT_EQ(splitNumberSuffix("0xFFi64"), std::make_pair(std::string_view("0xFF"), std::string_view("i64")));
}

TEST(Lexer, TupleIndexAfterDotIsNotAFloat) {
  Lexed l("t.0.1");
  std::vector<Tok> expected = {Tok::ident, Tok::dot, Tok::int_lit, Tok::dot, Tok::int_lit, Tok::eof};
  EXPECT_EQ(l.kinds(), expected);
}

TEST(Lexer, NewlineFlagAndComments) {
  Lexed l("a // comment\n/* block\n */ b c");
  ASSERT_EQ(l.toks.size(), 4u);
  EXPECT_FALSE(l.toks[0].newlineBefore);
  EXPECT_TRUE(l.toks[1].newlineBefore);  // the line comment's newline counts
  EXPECT_FALSE(l.toks[2].newlineBefore);
}

TEST(Lexer, ErrorsProduceErrorTokensAndContinue) {
  Lexed l("a $ b 1q8 \"open");
  EXPECT_EQ(l.errors, 3u);
  std::vector<Tok> expected = {Tok::ident, Tok::error, Tok::ident, Tok::error, Tok::error, Tok::eof};
  EXPECT_EQ(l.kinds(), expected);
}

TEST(Lexer, KeywordPrefixesAreIdentifiers) {
  Lexed l("blocks fnx returned lets");
  for (size_t i = 0; i < 4; ++i)
    EXPECT_EQ(l.toks[i].kind, Tok::ident) << l.toks[i].text;
}

} // namespace
