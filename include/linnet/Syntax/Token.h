//===- Token.h - Lexical tokens of the linnet language ----------*- C++ -*-===//
#ifndef LINNET_SYNTAX_TOKEN_H
#define LINNET_SYNTAX_TOKEN_H

#include "linnet/Syntax/SourceManager.h"

#include <string_view>

namespace linnet {

#define LINNET_KEYWORDS(X)                                                     \
  X(kw_module, "module")                                                       \
  X(kw_import, "import")                                                       \
  X(kw_as, "as")                                                               \
  X(kw_pub, "pub")                                                             \
  X(kw_block, "block")                                                         \
  X(kw_fn, "fn")                                                               \
  X(kw_op, "op")                                                               \
  X(kw_entry, "entry")                                                         \
  X(kw_struct, "struct")                                                       \
  X(kw_enum, "enum")                                                           \
  X(kw_const, "const")                                                         \
  X(kw_reducer, "reducer")                                                     \
  X(kw_param, "param")                                                         \
  X(kw_buffer, "buffer")                                                       \
  X(kw_state, "state")                                                         \
  X(kw_sub, "sub")                                                             \
  X(kw_let, "let")                                                             \
  X(kw_var, "var")                                                             \
  X(kw_if, "if")                                                               \
  X(kw_else, "else")                                                           \
  X(kw_while, "while")                                                         \
  X(kw_match, "match")                                                         \
  X(kw_return, "return")                                                       \
  X(kw_where, "where")                                                         \
  X(kw_true, "true")                                                           \
  X(kw_false, "false")                                                         \
  X(kw_none, "none")

enum class Tok : uint8_t {
  eof,
  error,
  ident,
  int_lit,
  float_lit,
  string_lit,
#define X(name, text) name,
  LINNET_KEYWORDS(X)
#undef X
  // punctuation
  l_paren, r_paren, l_brack, r_brack, l_brace, r_brace,
  comma, colon, semi, dot, ellipsis, question, hash, underscore,
  arrow,     // ->
  fat_arrow, // =>
  equal,     // =
  plus, minus, star, slash, percent,
  eq_eq, bang_eq, less, less_eq, greater, greater_eq,
  amp_amp, pipe_pipe, bang,
};

/// Human-readable spelling used in diagnostics, e.g. "'->'" or "identifier".
const char *tokSpelling(Tok kind);

struct Token {
  Tok kind = Tok::eof;
  SourceLoc loc;
  std::string_view text;
  /// True when a newline separates this token from the previous one. Postfix
  /// '(' and '[' must stay on their operand's line, which is what lets
  /// statements end at a newline without semicolons.
  bool newlineBefore = false;

  bool is(Tok k) const { return kind == k; }
  bool isNot(Tok k) const { return kind != k; }
};

} // namespace linnet

#endif // LINNET_SYNTAX_TOKEN_H
