//===- PlanWriter.cpp - The JSON plan, version 1 --------------------------===//
#include "linnet/Plan/PlanWriter.h"
#include "linnet/Support/Input.h"
#include "linnet/ir/lower.hpp"

#include <fmt/format.h>

#include <llvm/Support/Casting.h>

#include <algorithm>
#include <stdexcept>

using namespace linnet;
using namespace linnet::sema;
using json = nlohmann::json;

namespace {

json dtypeToJson(const Dtype &d) { return ir::dtypeToJson(d); }
json shapeToJson(const Shape &s) { return ir::shapeToJson(s); }
json valueToJson(const GenericValue &v) { return ir::genericValueToJson(v); }

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

/// A lowered body, verified: a lowering bug must not reach a backend.
json body(ir::Region r, const std::string &what) {
  std::vector<ir::Problem> problems = ir::verify(r);
  if (!problems.empty())
    throw std::runtime_error(fmt::format("internal error: Core IR of {} does not verify: {}", what,
                                         problems[0].str()));
  return ir::toJson(r);
}

} // namespace

json plan::dimToJson(const Dim &d) { return ir::dimToJson(d); }
json plan::typeToJson(const Type &t) { return ir::typeToJson(t); }

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
                     {"body", body(ir::lowerFunction(p, *f), f->qualified())}});
    }
    // Reducers: each part is an op named Reducer.part, with the reducer's
    // generics and properties (docs/plan-format.md, "Reducers").
    for (auto &n : m->nominals) {
      if (n->kind != NominalInfo::Kind::Reducer)
        continue;
      auto parts = p.facts.reducerParts.find(n.get());
      if (parts == p.facts.reducerParts.end())
        continue;
      json props = json::array();
      for (const ast::Ident &prop : llvm::cast<ast::ReducerDecl>(*n->decl).properties)
        props.push_back(prop.name);
      for (const ReducerPart &part : parts->second) {
        json results = json::array();
        if (part.result)
          results.push_back(typeToJson(*part.result));
        std::string name = n->qualified() + "." + part.decl->name.name;
        fns.push_back({{"name", name},
                       {"kind", "op"},
                       {"block", nullptr},
                       {"pub", n->pub},
                       {"generics", genericsToJson(n->generics)},
                       {"constraints", constraintsToJson(n->constraints)},
                       {"results", results},
                       {"states", json::array()},
                       {"reducer", {{"name", n->qualified()}, {"part", part.decl->name.name},
                                    {"properties", props}}},
                       {"body", body(ir::lowerReducerPart(p, *n, part), name)}});
      }
    }
    for (auto &c : m->consts)
      consts.push_back({{"name", m->name + "::" + c->name},
                        {"pub", c->pub},
                        {"type", c->type ? typeToJson(*c->type) : json{{"kind", "unknown"}}},
                        {"contextual", c->contextual},
                        {"body", body(ir::lowerConst(p, *c), m->name + "::" + c->name)}});
  }
  doc["blocks"] = blocks;
  doc["functions"] = fns;
  doc["constants"] = consts;
  return doc;
}

// Invalid UTF-8 (a string literal of the source) is replaced, never thrown.
std::string plan::printPlan(const json &plan) { return input::dumpJson(plan, 2) + "\n"; }
