//===- SemaJson.cpp - Plan forms of Sema's dims and types -----------------===//
#include "linnet/ir/lower.hpp"

using namespace linnet;
using namespace linnet::sema;
using json = nlohmann::json;

namespace {
json dtypeJson(const Dtype &d) {
  if (d.isVar())
    return {{"var", d.var}, {"name", d.name}};
  return d.name;
}

json unitToJson(const Unit &u) {
  if (u.isPack())
    return {{"pack", u.pack}, {"name", u.packName}};
  return ir::dimToJson(u.dim);
}

json shapeJson(const Shape &s) {
  json a = json::array();
  for (const Unit &u : s)
    a.push_back(unitToJson(u));
  return a;
}

json valueJson(const GenericValue &v) {
  switch (v.kind) {
  case ast::GenericKind::Dim: return ir::dimToJson(v.dim);
  case ast::GenericKind::Shape: return shapeJson(v.shape);
  case ast::GenericKind::Dtype: return dtypeJson(v.dtype);
  }
  return nullptr;
}

} // namespace
json ir::dtypeToJson(const Dtype &d) { return dtypeJson(d); }
json ir::shapeToJson(const Shape &s) { return shapeJson(s); }
json ir::genericValueToJson(const GenericValue &v) { return valueJson(v); }

json ir::dimToJson(const Dim &d) { return d.toJson(); }

json ir::typeToJson(const Type &t) {
  switch (t.kind) {
  case Type::Kind::Unknown: return {{"kind", "unknown"}};
  case Type::Kind::Scalar:
    if (t.dtype.name.starts_with("{"))
      return {{"kind", "literal"}, {"class", t.dtype.name == "{float}" ? "float" : "int"}};
    return {{"kind", "scalar"}, {"dtype", dtypeJson(t.dtype)}};
  case Type::Kind::Tensor:
    return {{"kind", "tensor"}, {"shape", shapeJson(t.shape)}, {"dtype", dtypeJson(t.dtype)}};
  case Type::Kind::Tuple: {
    json e = json::array();
    for (const TypeRef &x : t.elems)
      e.push_back(typeToJson(*x));
    return {{"kind", "tuple"}, {"elements", e}};
  }
  case Type::Kind::Optional: return {{"kind", "optional"}, {"inner", typeToJson(*t.elems[0])}};
  case Type::Kind::Array:
    return {{"kind", "array"}, {"element", typeToJson(*t.elems[0])}, {"length", dimToJson(t.size)}};
  case Type::Kind::Block:
  case Type::Kind::Struct:
  case Type::Kind::Enum: {
    json args = json::array();
    for (const GenericValue &v : t.args)
      args.push_back(valueJson(v));
    const char *k = t.kind == Type::Kind::Block ? "block" : t.kind == Type::Kind::Struct ? "struct" : "enum";
    return {{"kind", k}, {"name", t.decl->name}, {"module", t.decl->module->name}, {"args", args}};
  }
  case Type::Kind::None: return {{"kind", "none"}};
  case Type::Kind::String: return {{"kind", "string"}};
  case Type::Kind::Relation:
    return {{"kind", "relation"}, {"relation", t.dtype.name}, {"dims", shapeJson(t.shape)}};
  }
  return nullptr;
}

