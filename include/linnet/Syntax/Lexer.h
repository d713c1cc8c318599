//===- Lexer.h - Tokenizer for linnet source --------------------*- C++ -*-===//
#ifndef LINNET_SYNTAX_LEXER_H
#define LINNET_SYNTAX_LEXER_H

#include "linnet/Syntax/Diagnostics.h"
#include "linnet/Syntax/Token.h"

#include <vector>

namespace linnet {

/// Splits one buffer into tokens. Lexical errors are reported through `diag`
/// and produce a Tok::error token so the parser can recover past them.
class Lexer {
public:
  Lexer(const SourceManager &sm, uint32_t buffer, DiagnosticEngine &diag);

  /// Tokenizes the whole buffer; the last token is always Tok::eof.
  std::vector<Token> lexAll();
  Token next();

private:
  Token make(Tok kind, const char *start, bool newline);
  SourceLoc locOf(const char *p) const;
  bool skipTrivia(); // returns true if a newline was crossed
  Token lexNumber(const char *start, bool newline);
  Token lexIdentifier(const char *start, bool newline);
  Token lexString(const char *start, bool newline);

  uint32_t buffer_;
  DiagnosticEngine &diag_;
  const char *begin_;
  const char *cur_;
  const char *end_;
  Tok prev_ = Tok::eof;
};

/// Splits a numeric literal's text into its digits and its dtype suffix
/// ("1.5f16" -> {"1.5", "f16"}).
std::pair<std::string_view, std::string_view> splitNumberSuffix(std::string_view text);

} // namespace linnet

#endif // LINNET_SYNTAX_LEXER_H
