//===- Types.cpp - Printing and comparing semantic types ------------------===//
#include "linnet/Sema/Program.h"

#include <fmt/format.h>

using namespace linnet;
using namespace linnet::sema;

std::string linnet::sema::shapeStr(const Shape &s) {
  std::string r;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i)
      r += ", ";
    r += s[i].isPack() ? s[i].packName + "..." : s[i].dim.str();
  }
  return r;
}

std::string GenericValue::str() const {
  switch (kind) {
  case ast::GenericKind::Dim: return dim.str();
  case ast::GenericKind::Shape: return fmt::format("[{}]", shapeStr(shape));
  case ast::GenericKind::Dtype: return dtype.str();
  }
  return "?";
}

TypeRef Type::unknown() {
  static TypeRef u = std::make_shared<Type>();
  return u;
}
TypeRef Type::scalar(Dtype d) {
  auto t = std::make_shared<Type>();
  t->kind = Kind::Scalar;
  t->dtype = std::move(d);
  return t;
}
// A tensor of rank 0 is its dtype's scalar (§5.1: `f32` and `Tensor[; f32]`
// are one type): one representation, so every rule that takes a scalar takes
// both spellings, and the plan calls both a scalar.
TypeRef Type::tensor(Shape s, Dtype d) {
  if (s.empty())
    return scalar(std::move(d));
  auto t = std::make_shared<Type>();
  t->kind = Kind::Tensor;
  t->shape = std::move(s);
  t->dtype = std::move(d);
  return t;
}
TypeRef Type::none() {
  auto t = std::make_shared<Type>();
  t->kind = Kind::None;
  return t;
}

std::string Type::str() const {
  switch (kind) {
  case Kind::Unknown: return "<unknown>";
  case Kind::Scalar: return dtype.str();
  case Kind::Tensor: return fmt::format("Tensor[{}; {}]", shapeStr(shape), dtype.str());
  case Kind::Tuple: {
    std::string r = "(";
    for (size_t i = 0; i < elems.size(); ++i)
      r += (i ? ", " : "") + elems[i]->str();
    return r + (elems.size() == 1 ? ",)" : ")");
  }
  case Kind::Optional: return elems[0]->str() + "?";
  case Kind::Array: return fmt::format("[{}; {}]", elems[0]->str(), size.str());
  case Kind::Block:
  case Kind::Struct:
  case Kind::Enum: {
    std::string r = decl->name;
    if (!args.empty()) {
      r += "<";
      for (size_t i = 0; i < args.size(); ++i)
        r += (i ? ", " : "") + args[i].str();
      r += ">";
    }
    return r;
  }
  case Kind::None: return "none";
  case Kind::String: return "string";
  case Kind::Relation: return fmt::format("{}[{}]", dtype.name, shapeStr(shape));
  }
  return "?";
}

static bool sameValue(const GenericValue &a, const GenericValue &b) {
  if (a.kind != b.kind)
    return false;
  switch (a.kind) {
  case ast::GenericKind::Dim: return a.dim == b.dim;
  case ast::GenericKind::Shape: return a.shape == b.shape;
  case ast::GenericKind::Dtype: return a.dtype == b.dtype;
  }
  return false;
}

bool linnet::sema::sameType(const Type &a, const Type &b) {
  if (a.kind == Type::Kind::Unknown || b.kind == Type::Kind::Unknown)
    return true; // already reported, or not inferable: do not cascade
  if (a.kind != b.kind)
    return false;
  switch (a.kind) {
  case Type::Kind::Relation:
    return a.dtype == b.dtype && a.shape == b.shape;
  case Type::Kind::Scalar:
  case Type::Kind::Tensor:
    if (!(a.dtype == b.dtype) && !a.dtype.name.starts_with("{") && !b.dtype.name.starts_with("{"))
      return false;
    return a.shape == b.shape;
  case Type::Kind::Tuple:
  case Type::Kind::Optional:
  case Type::Kind::Array:
    if (a.elems.size() != b.elems.size())
      return false;
    for (size_t i = 0; i < a.elems.size(); ++i)
      if (!sameType(*a.elems[i], *b.elems[i]))
        return false;
    return a.kind != Type::Kind::Array || a.size == b.size;
  case Type::Kind::Block:
  case Type::Kind::Struct:
  case Type::Kind::Enum:
    if (a.decl != b.decl || a.args.size() != b.args.size())
      return false;
    for (size_t i = 0; i < a.args.size(); ++i)
      if (!sameValue(a.args[i], b.args[i]))
        return false;
    return true;
  default:
    return true;
  }
}

std::string Constraint::str() const {
  return fmt::format("{} {} {}", lhs.str(), ast::spelling(op), rhs.str());
}

std::string NominalInfo::qualified() const { return module->name + "::" + name; }
std::string FunctionInfo::qualified() const {
  return module->name + "::" + (block ? block->name + "." : std::string()) + name;
}
