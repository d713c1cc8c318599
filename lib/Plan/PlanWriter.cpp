//===- PlanWriter.cpp - The JSON plan, version 1 --------------------------===//
#include "linnet/Plan/PlanWriter.h"

#include <fmt/format.h>

#include <algorithm>

using namespace linnet;
using namespace linnet::sema;
using json = nlohmann::json;

namespace {

json atomToJson(const Atom &a) {
  switch (a.kind) {
  case Atom::Kind::Sym: return {{"sym", a.id}, {"name", a.name}};
  case Atom::Kind::PackSize: return {{"packsize", a.id}, {"name", a.name}};
  case Atom::Kind::FloorDiv:
  case Atom::Kind::Mod:
  case Atom::Kind::Min:
  case Atom::Kind::Max: {
    const char *op = a.kind == Atom::Kind::FloorDiv ? "floordiv"
                     : a.kind == Atom::Kind::Mod    ? "mod"
                     : a.kind == Atom::Kind::Min    ? "min"
                                                    : "max";
    return {{"op", op}, {"args", {plan::dimToJson(a.args[0]), plan::dimToJson(a.args[1])}}};
  }
  }
  return nullptr;
}

json termToJson(const Dim::Term &t) {
  if (t.atoms.empty())
    return t.coeff;
  if (t.coeff == 1 && t.atoms.size() == 1)
    return atomToJson(*t.atoms[0]);
  json args = json::array();
  if (t.coeff != 1)
    args.push_back(t.coeff);
  for (const AtomRef &a : t.atoms)
    args.push_back(atomToJson(*a));
  return {{"op", "mul"}, {"args", args}};
}

json dtypeToJson(const Dtype &d) {
  if (d.isVar())
    return {{"var", d.var}, {"name", d.name}};
  return d.name;
}

json unitToJson(const Unit &u) {
  if (u.isPack())
    return {{"pack", u.pack}, {"name", u.packName}};
  return plan::dimToJson(u.dim);
}

json shapeToJson(const Shape &s) {
  json a = json::array();
  for (const Unit &u : s)
    a.push_back(unitToJson(u));
  return a;
}

json valueToJson(const GenericValue &v) {
  switch (v.kind) {
  case ast::GenericKind::Dim: return plan::dimToJson(v.dim);
  case ast::GenericKind::Shape: return shapeToJson(v.shape);
  case ast::GenericKind::Dtype: return dtypeToJson(v.dtype);
  }
  return nullptr;
}

json genericToJson(const GenericParam &g, const GenericValue *bound = nullptr) {
  json j = {{"name", g.name}, {"kind", ast::spelling(g.kind)}};
  j[g.kind == ast::GenericKind::Dtype ? "var" : "sym"] = g.id;
  if (g.kind == ast::GenericKind::Dtype)
    j["class"] = g.dtypeClass.empty() ? "any" : g.dtypeClass;
  if (g.defaultValue)
    j["default"] = valueToJson(*g.defaultValue);
  if (bound)
    j["value"] = valueToJson(*bound);
  return j;
}

json genericsToJson(const std::vector<GenericParam> &gs) {
  json a = json::array();
  for (const GenericParam &g : gs)
    a.push_back(genericToJson(g));
  return a;
}

json constraintsToJson(const std::vector<Constraint> &cs) {
  json a = json::array();
  for (const Constraint &c : cs) {
    const char *op = "eq";
    switch (c.op) {
    case ast::BinaryOp::Eq: op = "eq"; break;
    case ast::BinaryOp::Ne: op = "ne"; break;
    case ast::BinaryOp::Lt: op = "lt"; break;
    case ast::BinaryOp::Le: op = "le"; break;
    case ast::BinaryOp::Gt: op = "gt"; break;
    case ast::BinaryOp::Ge: op = "ge"; break;
    default: break;
    }
    a.push_back({{"op", op}, {"lhs", plan::dimToJson(c.lhs)}, {"rhs", plan::dimToJson(c.rhs)}});
  }
  return a;
}

/// Block keys: the bare name, or module::Name where two modules share it.
struct BlockKeys {
  std::map<const NominalInfo *, std::string> key;
  explicit BlockKeys(const Program &p) {
    std::map<std::string, int> count;
    for (auto &m : p.modules)
      for (auto &n : m->nominals)
        if (n->kind == NominalInfo::Kind::Block)
          ++count[n->name];
    for (auto &m : p.modules)
      for (auto &n : m->nominals)
        if (n->kind == NominalInfo::Kind::Block)
          key[n.get()] = count[n->name] > 1 ? n->qualified() : n->name;
  }
};

std::vector<const ModuleInfo *> sortedModules(const Program &p) {
  std::vector<const ModuleInfo *> ms;
  for (auto &m : p.modules)
    ms.push_back(m.get());
  std::sort(ms.begin(), ms.end(),
            [](const ModuleInfo *a, const ModuleInfo *b) { return a->name < b->name; });
  return ms;
}

json region(const std::vector<ParamInfo> &params) {
  json args = json::array();
  for (size_t i = 0; i < params.size(); ++i)
    args.push_back({{"id", fmt::format("%{}", i)}, {"name", params[i].name},
                    {"type", plan::typeToJson(*params[i].type)}});
  return {{"args", args}, {"ops", json::array()}};
}

} // namespace

json plan::dimToJson(const Dim &d) {
  const auto &ts = d.terms();
  if (ts.empty())
    return 0;
  if (ts.size() == 1)
    return termToJson(ts[0]);
  // Symbolic terms first, the constant last, as the source would write it.
  json args = json::array();
  for (const Dim::Term &t : ts)
    if (!t.atoms.empty())
      args.push_back(termToJson(t));
  for (const Dim::Term &t : ts)
    if (t.atoms.empty())
      args.push_back(termToJson(t));
  return {{"op", "add"}, {"args", args}};
}

json plan::typeToJson(const Type &t) {
  switch (t.kind) {
  case Type::Kind::Unknown: return {{"kind", "unknown"}};
  case Type::Kind::Scalar:
    if (t.dtype.name.starts_with("{"))
      return {{"kind", "literal"}, {"class", t.dtype.name == "{float}" ? "float" : "int"}};
    return {{"kind", "scalar"}, {"dtype", dtypeToJson(t.dtype)}};
  case Type::Kind::Tensor:
    return {{"kind", "tensor"}, {"shape", shapeToJson(t.shape)}, {"dtype", dtypeToJson(t.dtype)}};
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
      args.push_back(valueToJson(v));
    const char *k = t.kind == Type::Kind::Block ? "block" : t.kind == Type::Kind::Struct ? "struct" : "enum";
    return {{"kind", k}, {"name", t.decl->name}, {"module", t.decl->module->name}, {"args", args}};
  }
  case Type::Kind::None: return {{"kind", "none"}};
  case Type::Kind::String: return {{"kind", "string"}};
  case Type::Kind::Relation:
    return {{"kind", "relation"}, {"relation", t.dtype.name}, {"dims", shapeToJson(t.shape)}};
  }
  return nullptr;
}

json plan::buildPlan(const Program &p, const Instantiation *inst) {
  json doc;
  doc["version"] = 1;
  doc["module"] = p.root->name;
  BlockKeys keys(p);
  if (inst) {
    json gens = json::array();
    for (size_t i = 0; i < inst->root->generics.size(); ++i)
      gens.push_back(genericToJson(inst->root->generics[i], &inst->rootArgs[i]));
    doc["root"] = {{"name", keys.key[inst->root]},
                   {"generics", gens},
                   {"constraints", constraintsToJson(inst->root->constraints)}};
    json man = json::array();
    for (const ManifestEntry &e : inst->manifest) {
      json rep = json::array();
      for (const Dim &d : e.repeat)
        rep.push_back(dimToJson(d));
      man.push_back({{"path", e.path},
                     {"kind", ast::spelling(e.kind)},
                     {"dtype", dtypeToJson(e.dtype)},
                     {"shape", shapeToJson(e.shape)},
                     {"repeat", rep},
                     {"optional", e.optional}});
    }
    doc["manifest"] = man;
  } else {
    doc["root"] = nullptr;
    doc["manifest"] = json::array();
  }
  json blocks = json::object();
  json fns = json::array();
  json consts = json::array();
  for (const ModuleInfo *m : sortedModules(p)) {
    for (auto &n : m->nominals) {
      if (n->kind != NominalInfo::Kind::Block)
        continue;
      auto &b = static_cast<const BlockInfo &>(*n);
      json members = json::array();
      for (const MemberInfo &mem : b.members)
        members.push_back({{"name", mem.name}, {"kind", ast::spelling(mem.kind)},
                           {"type", typeToJson(*mem.type)}});
      blocks[keys.key[&b]] = {{"module", m->name},
                              {"pub", b.pub},
                              {"generics", genericsToJson(b.generics)},
                              {"constraints", constraintsToJson(b.constraints)},
                              {"members", members}};
    }
    for (auto &f : m->functions) {
      json results = json::array();
      if (f->result) {
        if (f->result->kind == Type::Kind::Tuple)
          for (const TypeRef &e : f->result->elems)
            results.push_back(typeToJson(*e));
        else
          results.push_back(typeToJson(*f->result));
      }
      json states = json::array();
      for (const std::string &s : f->states)
        states.push_back(s);
      fns.push_back({{"name", f->qualified()},
                     {"kind", ast::spelling(f->kind)},
                     {"block", f->block ? json(keys.key[f->block]) : json(nullptr)},
                     {"pub", f->pub},
                     {"generics", genericsToJson(f->generics)},
                     {"constraints", constraintsToJson(f->constraints)},
                     {"results", results},
                     {"states", states},
                     {"body", region(f->params)}});
    }
    for (auto &c : m->consts)
      consts.push_back({{"name", m->name + "::" + c->name},
                        {"pub", c->pub},
                        {"type", c->type ? typeToJson(*c->type) : json{{"kind", "unknown"}}},
                        {"contextual", c->contextual},
                        {"body", region({})}});
  }
  doc["blocks"] = blocks;
  doc["functions"] = fns;
  doc["constants"] = consts;
  return doc;
}

std::string plan::printPlan(const json &plan) { return plan.dump(2) + "\n"; }
