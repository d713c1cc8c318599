//===- AST.cpp ------------------------------------------------------------===//
#include "linnet/Syntax/AST.h"

using namespace linnet::ast;

const char *linnet::ast::spelling(BinaryOp op) {
  switch (op) {
  case BinaryOp::Or: return "||";
  case BinaryOp::And: return "&&";
  case BinaryOp::Eq: return "==";
  case BinaryOp::Ne: return "!=";
  case BinaryOp::Lt: return "<";
  case BinaryOp::Le: return "<=";
  case BinaryOp::Gt: return ">";
  case BinaryOp::Ge: return ">=";
  case BinaryOp::Add: return "+";
  case BinaryOp::Sub: return "-";
  case BinaryOp::Mul: return "*";
  case BinaryOp::Div: return "/";
  case BinaryOp::Mod: return "%";
  }
  return "?";
}

const char *linnet::ast::spelling(UnaryOp op) {
  switch (op) {
  case UnaryOp::Neg: return "-";
  case UnaryOp::Not: return "!";
  case UnaryOp::PackSize: return "#";
  }
  return "?";
}

const char *linnet::ast::spelling(GenericKind k) {
  switch (k) {
  case GenericKind::Dim: return "dim";
  case GenericKind::Shape: return "shape";
  case GenericKind::Dtype: return "dtype";
  }
  return "?";
}

const char *linnet::ast::spelling(FunctionKind k) {
  switch (k) {
  case FunctionKind::Fn: return "fn";
  case FunctionKind::Op: return "op";
  case FunctionKind::Entry: return "entry";
  }
  return "?";
}

const char *linnet::ast::spelling(MemberKind k) {
  switch (k) {
  case MemberKind::Param: return "param";
  case MemberKind::Buffer: return "buffer";
  case MemberKind::State: return "state";
  case MemberKind::Sub: return "sub";
  }
  return "?";
}

std::string linnet::ast::joinPath(const std::vector<Ident> &path, const char *sep) {
  std::string s;
  for (size_t i = 0; i < path.size(); ++i) {
    if (i)
      s += sep;
    s += path[i].name;
  }
  return s;
}

std::string linnet::ast::escapeString(const std::string &value) {
  std::string out = "\"";
  for (char c : value) {
    switch (c) {
    case '\n': out += "\\n"; break;
    case '\t': out += "\\t"; break;
    case '\r': out += "\\r"; break;
    case '\0': out += "\\0"; break;
    case '"': out += "\\\""; break;
    case '\\': out += "\\\\"; break;
    default: out += c;
    }
  }
  return out + "\"";
}
