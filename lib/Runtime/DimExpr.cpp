//===- DimExpr.cpp - Signature dims of runtime.json -----------------------===//
#include "DimExpr.h"

#include "linnet/Support/DimArith.h"

#include <cctype>
#include <charconv>

namespace linnet::rt::dimexpr {
namespace {

bool isIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool isIdent(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

/// Recursive descent over at most kMaxDimText characters and kMaxDimDepth
/// levels. With `lookup` unset it only checks the syntax (names are 1).
class Parser {
public:
  Parser(std::string_view text, const Lookup *lookup) : t_(text), lookup_(lookup) {}

  std::optional<int64_t> run() {
    if (t_.size() > kMaxDimText)
      return fail("longer than 4096 characters");
    auto v = sum(0);
    skip();
    if (v && pos_ != t_.size())
      return fail("unexpected text after the expression");
    return v;
  }
  std::string why;

private:
  std::string_view t_;
  const Lookup *lookup_;
  size_t pos_ = 0;

  std::nullopt_t fail(const char *w) {
    if (why.empty())
      why = w;
    return std::nullopt;
  }
  void skip() {
    while (pos_ < t_.size() && t_[pos_] == ' ')
      ++pos_;
  }
  bool eat(char c) {
    skip();
    if (pos_ < t_.size() && t_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  std::optional<int64_t> atom(unsigned depth) {
    if (depth > kMaxDimDepth)
      return fail("nested too deeply");
    skip();
    if (eat('(')) {
      auto v = sum(depth + 1);
      if (!v)
        return v;
      if (!eat(')'))
        return fail("expected ')'");
      return v;
    }
    size_t start = pos_;
    if (pos_ < t_.size() && std::isdigit(static_cast<unsigned char>(t_[pos_]))) {
      while (pos_ < t_.size() && std::isdigit(static_cast<unsigned char>(t_[pos_])))
        ++pos_;
      int64_t v = 0;
      auto [p, ec] = std::from_chars(t_.data() + start, t_.data() + pos_, v);
      if (ec != std::errc() || p != t_.data() + pos_)
        return fail("an integer out of the 64-bit range");
      return v;
    }
    if (pos_ >= t_.size() || !isIdentStart(t_[pos_]))
      return fail("expected an integer, a name or '('");
    while (pos_ < t_.size() && isIdent(t_[pos_]))
      ++pos_;
    std::string_view word = t_.substr(start, pos_ - start);
    if ((word == "min" || word == "max") && pos_ < t_.size() && t_[pos_] == '(') {
      ++pos_;
      auto x = sum(depth + 1);
      if (!x)
        return x;
      if (!eat(','))
        return fail("expected ','");
      auto y = sum(depth + 1);
      if (!y)
        return y;
      if (!eat(')'))
        return fail("expected ')'");
      return word == "min" ? std::min(*x, *y) : std::max(*x, *y);
    }
    if (!lookup_)
      return int64_t(1);
    auto v = (*lookup_)(word);
    if (!v)
      return fail("an unbound name");
    return v;
  }
  std::optional<int64_t> product(unsigned depth) {
    auto v = atom(depth);
    while (v) {
      skip();
      if (pos_ >= t_.size() || (t_[pos_] != '*' && t_[pos_] != '/' && t_[pos_] != '%'))
        break;
      char op = t_[pos_++];
      auto r = atom(depth);
      if (!r)
        return r;
      if (op != '*' && *r == 0 && !lookup_)
        continue; // syntax only: values are placeholders
      dimarith::Error e;
      v = dimarith::apply(op == '*' ? dimarith::Op::Mul : op == '/' ? dimarith::Op::FloorDiv : dimarith::Op::Mod, *v,
                          *r, &e);
      if (!v)
        return fail(e == dimarith::Error::DivideByZero ? "division by zero" : "overflow");
    }
    return v;
  }
  std::optional<int64_t> sum(unsigned depth) {
    auto v = product(depth);
    while (v) {
      skip();
      if (pos_ >= t_.size() || (t_[pos_] != '+' && t_[pos_] != '-'))
        break;
      char op = t_[pos_++];
      auto r = product(depth);
      if (!r)
        return r;
      std::optional<int64_t> x = dimarith::apply(op == '+' ? dimarith::Op::Add : dimarith::Op::Sub, *v, *r);
      if (!x) {
        if (!lookup_) {
          *v = 1;
          continue;
        }
        return fail("overflow");
      }
      *v = *x;
    }
    return v;
  }
};
} // namespace

std::optional<int64_t> eval(std::string_view text, const Lookup &lookup) {
  Parser p(text, &lookup);
  return p.run();
}

std::string checkSyntax(std::string_view text) {
  Parser p(text, nullptr);
  if (p.run())
    return "";
  // Placeholder values can overflow where real ones would not: that is no
  // syntax error.
  return p.why == "overflow" ? "" : p.why;
}

std::vector<std::string> names(std::string_view text) {
  std::vector<std::string> out;
  for (size_t i = 0; i < text.size();) {
    if (isIdentStart(text[i])) {
      size_t j = i;
      while (j < text.size() && isIdent(text[j]))
        ++j;
      std::string word(text.substr(i, j - i));
      if (!((word == "min" || word == "max") && j < text.size() && text[j] == '('))
        out.push_back(word);
      i = j;
    } else if (std::isdigit(static_cast<unsigned char>(text[i]))) {
      while (i < text.size() && isIdent(text[i]))
        ++i;
    } else {
      ++i;
    }
  }
  return out;
}

} // namespace linnet::rt::dimexpr
