//===- Lexer.cpp ----------------------------------------------------------===//
#include "linnet/Syntax/Lexer.h"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <cstring>
#include <vector>

using namespace linnet;

namespace {
struct Keyword {
  std::string_view text;
  Tok kind;
};
constexpr Keyword kKeywords[] = {
#define X(name, text) {text, Tok::name},
    LINNET_KEYWORDS(X)
#undef X
};

// ASCII-only classification: identifiers are ASCII, and these inline checks
// are measurably faster than the locale-aware <cctype> calls.
inline bool isIdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
inline bool isIdentChar(char c) { return isIdentStart(c) || (c >= '0' && c <= '9'); }

/// Keywords bucketed by first letter, so most identifiers compare against
/// none or a handful.
struct KeywordTable {
  std::array<std::vector<Keyword>, 26> byFirst;
  KeywordTable() {
    for (const Keyword &k : kKeywords)
      byFirst[static_cast<size_t>(k.text[0] - 'a')].push_back(k);
  }
  Tok lookup(std::string_view text) const {
    if (text.size() < 2 || text[0] < 'a' || text[0] > 'z')
      return Tok::ident;
    for (const Keyword &k : byFirst[static_cast<size_t>(text[0] - 'a')])
      if (k.text == text)
        return k.kind;
    return Tok::ident;
  }
};
const KeywordTable kKeywordTable;

constexpr std::string_view kIntSuffixes[] = {"i8", "i16", "i32", "i64", "u8"};
constexpr std::string_view kFloatSuffixes[] = {"f16", "bf16", "f32", "f64"};

bool isOneOf(std::string_view s, const std::string_view *b,
             const std::string_view *e) {
  for (; b != e; ++b)
    if (*b == s)
      return true;
  return false;
}
} // namespace

std::pair<std::string_view, std::string_view>
linnet::splitNumberSuffix(std::string_view text) {
  bool hex = text.size() > 1 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
  size_t i = hex ? 2 : 0;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '_' || c == '.')
      continue;
    if (hex && std::isxdigit(static_cast<unsigned char>(c)))
      continue;
    if (!hex && (c == 'e' || c == 'E') && i + 1 < text.size() &&
        (std::isdigit(static_cast<unsigned char>(text[i + 1])) ||
         text[i + 1] == '+' || text[i + 1] == '-')) {
      ++i;
      continue;
    }
    if (!hex && (c == '+' || c == '-'))
      continue;
    break;
  }
  return {text.substr(0, i), text.substr(i)};
}

Lexer::Lexer(const SourceManager &sm, uint32_t buffer, DiagnosticEngine &diag)
    : buffer_(buffer), diag_(diag) {
  std::string_view t = sm.text(buffer);
  begin_ = cur_ = t.data();
  end_ = t.data() + t.size();
}

SourceLoc Lexer::locOf(const char *p) const {
  return {buffer_, static_cast<uint32_t>(p - begin_)};
}

Token Lexer::make(Tok kind, const char *start, bool newline) {
  Token t;
  t.kind = kind;
  t.loc = locOf(start);
  t.text = std::string_view(start, static_cast<size_t>(cur_ - start));
  t.newlineBefore = newline;
  prev_ = kind;
  return t;
}

bool Lexer::skipTrivia() {
  bool newline = false;
  while (cur_ < end_) {
    char c = *cur_;
    if (c == '\n') {
      newline = true;
      ++cur_;
    } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      ++cur_;
    } else if (c == '/' && cur_ + 1 < end_ && cur_[1] == '/') {
      while (cur_ < end_ && *cur_ != '\n')
        ++cur_;
    } else if (c == '/' && cur_ + 1 < end_ && cur_[1] == '*') {
      // Block comments nest, so commenting out code that has one works.
      const char *start = cur_;
      cur_ += 2;
      int depth = 1;
      while (cur_ < end_ && depth > 0) {
        if (*cur_ == '/' && cur_ + 1 < end_ && cur_[1] == '*') {
          ++depth;
          cur_ += 2;
        } else if (*cur_ == '*' && cur_ + 1 < end_ && cur_[1] == '/') {
          --depth;
          cur_ += 2;
        } else {
          if (*cur_ == '\n')
            newline = true;
          ++cur_;
        }
      }
      if (depth > 0)
        diag_.error(locOf(start), "unterminated block comment: expected '*/' "
                                  "before end of file");
    } else {
      break;
    }
  }
  return newline;
}

std::vector<Token> Lexer::lexAll() {
  std::vector<Token> toks;
  toks.reserve(static_cast<size_t>(end_ - begin_) / 3 + 16);
  while (true) {
    toks.push_back(next());
    if (toks.back().kind == Tok::eof)
      break;
  }
  return toks;
}

Token Lexer::lexNumber(const char *start, bool newline) {
  bool afterDot = prev_ == Tok::dot; // `t.0.1` is two tuple indices
  bool isFloat = false;
  bool bad = false;
  if (*cur_ == '0' && cur_ + 1 < end_ && (cur_[1] == 'x' || cur_[1] == 'X')) {
    cur_ += 2;
    const char *digits = cur_;
    while (cur_ < end_ && (std::isxdigit(static_cast<unsigned char>(*cur_)) || *cur_ == '_'))
      ++cur_;
    if (cur_ == digits)
      bad = true;
  } else {
    while (cur_ < end_ && (std::isdigit(static_cast<unsigned char>(*cur_)) || *cur_ == '_'))
      ++cur_;
    if (!afterDot && cur_ + 1 < end_ && *cur_ == '.' &&
        std::isdigit(static_cast<unsigned char>(cur_[1]))) {
      isFloat = true;
      ++cur_;
      while (cur_ < end_ && (std::isdigit(static_cast<unsigned char>(*cur_)) || *cur_ == '_'))
        ++cur_;
    }
    if (!afterDot && cur_ < end_ && (*cur_ == 'e' || *cur_ == 'E')) {
      const char *p = cur_ + 1;
      if (p < end_ && (*p == '+' || *p == '-'))
        ++p;
      if (p < end_ && std::isdigit(static_cast<unsigned char>(*p))) {
        isFloat = true;
        cur_ = p;
        while (cur_ < end_ && std::isdigit(static_cast<unsigned char>(*cur_)))
          ++cur_;
      } else {
        cur_ = p;
        Token t = make(Tok::error, start, newline);
        diag_.error(t.loc, fmt::format("malformed number '{}': expected digits "
                                       "after the exponent",
                                       t.text));
        return t;
      }
    }
  }
  if (bad) {
    Token t = make(Tok::error, start, newline);
    diag_.error(t.loc, fmt::format("malformed number '{}': expected hex digits "
                                   "after '0x'",
                                   t.text));
    return t;
  }
  // A dtype suffix is glued to the digits: 1i64, 0.5bf16, 2f32.
  const char *suffix = cur_;
  while (cur_ < end_ && isIdentChar(*cur_))
    ++cur_;
  std::string_view sfx(suffix, static_cast<size_t>(cur_ - suffix));
  if (!sfx.empty() && !afterDot) {
    bool intSfx = isOneOf(sfx, std::begin(kIntSuffixes), std::end(kIntSuffixes));
    bool floatSfx = isOneOf(sfx, std::begin(kFloatSuffixes), std::end(kFloatSuffixes));
    if (floatSfx)
      isFloat = true;
    else if (!intSfx || isFloat) {
      Token t = make(Tok::error, start, newline);
      diag_.error(locOf(suffix),
                  isFloat && intSfx
                      ? fmt::format("float literal '{}' cannot have the integer "
                                    "suffix '{}'",
                                    t.text, sfx)
                      : fmt::format("invalid suffix '{}' on numeric literal: "
                                    "expected one of i8, i16, i32, i64, u8, "
                                    "f16, bf16, f32, f64",
                                    sfx));
      return t;
    }
  } else if (!sfx.empty()) {
    cur_ = suffix; // `t.0name` – leave the rest to the next token
  }
  return make(isFloat ? Tok::float_lit : Tok::int_lit, start, newline);
}

Token Lexer::lexIdentifier(const char *start, bool newline) {
  while (cur_ < end_ && isIdentChar(*cur_))
    ++cur_;
  std::string_view text(start, static_cast<size_t>(cur_ - start));
  if (text == "_")
    return make(Tok::underscore, start, newline);
  return make(kKeywordTable.lookup(text), start, newline);
}

/// Length of the well-formed UTF-8 sequence at `p` (RFC 3629: no overlong
/// forms, no surrogates, at most U+10FFFF), or 0.
static size_t utf8Length(const unsigned char *p, const unsigned char *end) {
  unsigned char c = p[0];
  size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
  if (n == 0 || static_cast<size_t>(end - p) < n)
    return 0;
  uint32_t cp = n == 1 ? c : c & (0x7f >> n);
  for (size_t i = 1; i < n; ++i) {
    if ((p[i] & 0xc0) != 0x80)
      return 0;
    cp = (cp << 6) | (p[i] & 0x3f);
  }
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
    return 0;
  return n;
}

Token Lexer::lexString(const char *start, bool newline) {
  ++cur_; // opening quote
  bool badUtf8 = false;
  while (cur_ < end_ && *cur_ != '"' && *cur_ != '\n') {
    if (static_cast<unsigned char>(*cur_) >= 0x80) {
      // Strings reach the JSON plan, which must be valid UTF-8.
      size_t n = utf8Length(reinterpret_cast<const unsigned char *>(cur_),
                            reinterpret_cast<const unsigned char *>(end_));
      if (n == 0) {
        if (!badUtf8)
          diag_.error(locOf(cur_), fmt::format("invalid UTF-8 in string literal (byte 0x{:02x})",
                                               static_cast<unsigned char>(*cur_)));
        badUtf8 = true;
        ++cur_;
      } else {
        cur_ += n;
      }
      continue;
    }
    if (*cur_ == '\\') {
      const char *esc = cur_;
      ++cur_;
      if (cur_ >= end_)
        break;
      if (!std::strchr("ntr0\\\"", *cur_)) {
        diag_.error(locOf(esc), fmt::format("invalid escape sequence '\\{}' in "
                                            "string: expected one of \\n \\t "
                                            "\\r \\0 \\\\ \\\"",
                                            *cur_));
      }
    }
    ++cur_;
  }
  if (cur_ >= end_ || *cur_ != '"') {
    Token t = make(Tok::error, start, newline);
    diag_.error(t.loc, "unterminated string literal: expected '\"' before end "
                       "of line");
    return t;
  }
  ++cur_;
  return make(Tok::string_lit, start, newline);
}

Token Lexer::next() {
  bool newline = skipTrivia();
  const char *start = cur_;
  if (cur_ >= end_)
    return make(Tok::eof, start, newline);
  char c = *cur_;
  if (isIdentStart(c))
    return lexIdentifier(start, newline);
  if (std::isdigit(static_cast<unsigned char>(c)))
    return lexNumber(start, newline);
  if (c == '"')
    return lexString(start, newline);

  auto two = [&](char second) { return cur_ + 1 < end_ && cur_[1] == second; };
  Tok kind;
  size_t len = 1;
  switch (c) {
  case '(': kind = Tok::l_paren; break;
  case ')': kind = Tok::r_paren; break;
  case '[': kind = Tok::l_brack; break;
  case ']': kind = Tok::r_brack; break;
  case '{': kind = Tok::l_brace; break;
  case '}': kind = Tok::r_brace; break;
  case ',': kind = Tok::comma; break;
  case ':': kind = Tok::colon; break;
  case ';': kind = Tok::semi; break;
  case '?': kind = Tok::question; break;
  case '#': kind = Tok::hash; break;
  case '+': kind = Tok::plus; break;
  case '*': kind = Tok::star; break;
  case '/': kind = Tok::slash; break;
  case '%': kind = Tok::percent; break;
  case '.':
    if (two('.') && cur_ + 2 < end_ && cur_[2] == '.') {
      kind = Tok::ellipsis;
      len = 3;
    } else {
      kind = Tok::dot;
    }
    break;
  case '-':
    if (two('>')) { kind = Tok::arrow; len = 2; } else kind = Tok::minus;
    break;
  case '=':
    if (two('=')) { kind = Tok::eq_eq; len = 2; }
    else if (two('>')) { kind = Tok::fat_arrow; len = 2; }
    else kind = Tok::equal;
    break;
  case '!':
    if (two('=')) { kind = Tok::bang_eq; len = 2; } else kind = Tok::bang;
    break;
  case '<':
    if (two('=')) { kind = Tok::less_eq; len = 2; } else kind = Tok::less;
    break;
  case '>':
    if (two('=')) { kind = Tok::greater_eq; len = 2; } else kind = Tok::greater;
    break;
  case '&':
    if (two('&')) { kind = Tok::amp_amp; len = 2; break; }
    [[fallthrough]];
  case '|':
    if (c == '|' && two('|')) { kind = Tok::pipe_pipe; len = 2; break; }
    [[fallthrough]];
  default: {
    // One error per run of bad bytes keeps binary garbage from flooding.
    unsigned char uc = static_cast<unsigned char>(c);
    ++cur_;
    while (cur_ < end_ && !std::isspace(static_cast<unsigned char>(*cur_)) &&
           !std::isalnum(static_cast<unsigned char>(*cur_)) &&
           !std::strchr("()[]{},;:", *cur_) && (static_cast<unsigned char>(*cur_) >= 0x80 || !std::isprint(static_cast<unsigned char>(*cur_))))
      ++cur_;
    Token t = make(Tok::error, start, newline);
    if (std::isprint(uc))
      diag_.error(t.loc, fmt::format("unexpected character '{}'", c));
    else
      diag_.error(t.loc, fmt::format("unexpected byte 0x{:02x} (not valid in "
                                     "linnet source outside strings and comments)",
                                     uc));
    return t;
  }
  }
  cur_ += len;
  return make(kind, start, newline);
}
