//===- Derived.cpp - What the derived products share ----------------------===//
//
// The helpers every derived product's JSON form uses (DerivedImpl.h):
// keys, schemas, commands, phase timings. Each product is in a file of its
// own: DerivedCosts, DerivedProjection, DerivedTrace, DerivedObservations,
// DerivedTimeline, DerivedReport, DerivedManifest, DerivedPlanSet.
//
//===----------------------------------------------------------------------===//
#include "DerivedImpl.h"

namespace linnet::planning::detail {

Json keyJson(const DerivationKey &k) {
  Json j = Json::object();
  for (const auto &[name, v] : k) j[name] = v;
  return j;
}
DerivationKey keyFrom(ObjReader &r, const char *field) {
  DerivationKey k;
  ObjReader o = r.obj(field);
  const Json &j = r.req(field);
  for (auto it = j.begin(); it != j.end(); ++it) k[it.key()] = o.str(it.key().c_str());
  o.done();
  return k;
}
void expectSchema(ObjReader &r, const char *schema) {
  std::string s = r.str("schema");
  if (s != schema)
    throw SchemaError("/schema", "unsupported schema `" + s + "`; expected `" + schema + "`");
}
const Command *findCommand(const ConcretePlan &c, const std::string &id) {
  for (const Command &x : c.commands)
    if (x.id == id) return &x;
  return nullptr;
}

Json phasesJson(const std::vector<PhaseTiming> &phases) {
  Json a = Json::array();
  for (const PhaseTiming &p : phases)
    a.push_back({{"phase", p.phase}, {"entry", p.entry}, {"executions", p.executions},
                 {"makespan_ns", p.makespanNs}, {"serial_ns", p.serialNs}});
  return a;
}
std::vector<PhaseTiming> phasesFrom(ObjReader &r) {
  std::vector<PhaseTiming> out;
  if (r.has("phases"))
    r.each("phases", [&](const Json &e, const std::string &p) {
      ObjReader o(e, p);
      PhaseTiming t{o.str("phase"), o.str("entry"), o.i64("executions"), o.f64("makespan_ns"), o.f64("serial_ns")};
      if (t.executions < 0 || t.makespanNs < 0 || t.serialNs < 0)
        throw SchemaError(o.at("makespan_ns"), "a phase's executions and times must not be negative");
      o.done();
      out.push_back(std::move(t));
    });
  return out;
}

} // namespace linnet::planning::detail
