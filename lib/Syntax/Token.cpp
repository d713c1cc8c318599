//===- Token.cpp ----------------------------------------------------------===//
#include "linnet/Syntax/Token.h"

using namespace linnet;

const char *linnet::tokSpelling(Tok kind) {
  switch (kind) {
  case Tok::eof: return "end of file";
  case Tok::error: return "invalid token";
  case Tok::ident: return "identifier";
  case Tok::int_lit: return "integer literal";
  case Tok::float_lit: return "float literal";
  case Tok::string_lit: return "string literal";
#define X(name, text) case Tok::name: return "'" text "'";
  LINNET_KEYWORDS(X)
#undef X
  case Tok::l_paren: return "'('";
  case Tok::r_paren: return "')'";
  case Tok::l_brack: return "'['";
  case Tok::r_brack: return "']'";
  case Tok::l_brace: return "'{'";
  case Tok::r_brace: return "'}'";
  case Tok::comma: return "','";
  case Tok::colon: return "':'";
  case Tok::semi: return "';'";
  case Tok::dot: return "'.'";
  case Tok::ellipsis: return "'...'";
  case Tok::question: return "'?'";
  case Tok::hash: return "'#'";
  case Tok::underscore: return "'_'";
  case Tok::arrow: return "'->'";
  case Tok::fat_arrow: return "'=>'";
  case Tok::equal: return "'='";
  case Tok::plus: return "'+'";
  case Tok::minus: return "'-'";
  case Tok::star: return "'*'";
  case Tok::slash: return "'/'";
  case Tok::percent: return "'%'";
  case Tok::eq_eq: return "'=='";
  case Tok::bang_eq: return "'!='";
  case Tok::less: return "'<'";
  case Tok::less_eq: return "'<='";
  case Tok::greater: return "'>'";
  case Tok::greater_eq: return "'>='";
  case Tok::amp_amp: return "'&&'";
  case Tok::pipe_pipe: return "'||'";
  case Tok::bang: return "'!'";
  }
  return "token";
}
