//===- DerivedCosts.cpp - CostedTaskView ----------------------------------===//
//
// The costed task view: each task of the portable plan with its roofline
// time on the target (lower and upper work bounds) at evaluation evidence.
//
//===----------------------------------------------------------------------===//
#include "DerivedImpl.h"
#include "linnet/Planning/Binding.h"

namespace linnet::planning {

using namespace detail;

std::string implementationKey(const ImplementationRef &r) { return r.routine.empty() ? r.capability : r.routine; }

std::map<std::string, const ImplementationRef *> taskImplementations(const ConcretePlan &c) {
  std::map<std::string, const ImplementationRef *> refs;
  for (const Command &cmd : c.commands)
    if (const std::string *id = bodyImplementation(cmd.body))
      if (const ImplementationRef *r = c.implementation(*id))
        refs[cmd.portableTask] = r;
  return refs;
}

EffectiveTask effectiveTask(const Task &task, const ImplementationRef *r) {
  EffectiveTask e{r ? implementationKey(*r) : "", task};
  const std::optional<WorkloadFacts::Contraction> &c = task.facts.contraction;
  if (!r || r->fewRowsAtMost <= 0 || !c || c->rows < 1 || c->rows > r->fewRowsAtMost)
    return e;
  e.key = r->fewRowsRoutine;
  // Each pass over W takes up to fewRowsPerPass rows: the first pass is
  // the facts' one read, the others read W again.
  int64_t passes = (c->rows + r->fewRowsPerPass - 1) / r->fewRowsPerPass;
  int64_t again = c->weightBytes * (passes - 1);
  e.task.facts.readBytes.lower += again;
  e.task.facts.readBytes.upper += again;
  return e;
}

CostedTaskView costTasks(const PortablePlan &p, const Target &t, const Deployment &d, const EvidencePolicy &e,
                         const ConcretePlan *concrete) {
  CostedTaskView v;
  v.key = {{"portable", digestOf(toJson(p))}, {"target", t.fingerprint()}, {"deployment", d.fingerprint()},
           {"evaluation_evidence", e.evaluation.revision}, {"evidence_policy", e.fingerprint()}};
  std::map<std::string, const ImplementationRef *> impl;
  if (concrete)
    impl = taskImplementations(*concrete);
  for (const Task &plain : p.tasks) {
    TaskCost c;
    c.task = plain.id;
    auto k = impl.find(plain.id);
    EffectiveTask et = effectiveTask(plain, k == impl.end() ? nullptr : k->second);
    const Task &task = et.task;
    Evidence ev = k == impl.end() || e.evaluation.byImplementation.empty() ? e.evaluation
                                                                           : e.evaluation.forImplementation(et.key);
    c.lowerSeconds = rooflineSeconds(task, t, ev, true);
    c.upperSeconds = rooflineSeconds(task, t, ev, false);
    if (task.resources.engineClass == "communication") {
      c.bound = "network";
    } else {
      double peak = 0;
      for (const std::string &dt : task.resources.dtypes)
        if (auto it = t.peakFlops.find(dt); it != t.peakFlops.end()) peak = it->second;
      double compute = peak > 0 ? double(task.facts.ops.upper) / (peak * ev.computeEfficiency) : 0;
      double memory = double(task.facts.readBytes.upper + task.facts.writeBytes.upper) /
                      (t.memoryBandwidth * ev.memoryEfficiency);
      c.bound = compute > memory ? "compute" : "memory";
    }
    v.tasks.push_back(c);
  }
  v.launchOverheadNs = e.evaluation.launchOverheadNs;
  return v;
}

Json toJson(const CostedTaskView &v) {
  Json tasks = Json::array();
  for (const auto &c : v.tasks)
    tasks.push_back({{"task", c.task}, {"bound", c.bound}, {"lower_s", c.lowerSeconds}, {"upper_s", c.upperSeconds}});
  Json doc = {{"schema", kCostsSchema}, {"key", keyJson(v.key)}, {"tasks", tasks}};
  if (v.launchOverheadNs)
    doc["launch_overhead_ns"] = *v.launchOverheadNs;
  return doc;
}

CostedTaskView costsFromJson(const Json &j) {
  ObjReader r(j, "");
  expectSchema(r, kCostsSchema);
  CostedTaskView v;
  v.key = keyFrom(r, "key");
  r.each("tasks", [&](const Json &e, const std::string &p) {
    ObjReader o(e, p);
    TaskCost c{o.str("task"), o.str("bound"), o.f64("lower_s"), o.f64("upper_s")};
    if (c.bound != "compute" && c.bound != "memory" && c.bound != "network")
      throw SchemaError(o.at("bound"), "bound must be compute, memory or network");
    if (c.lowerSeconds < 0 || c.upperSeconds < c.lowerSeconds)
      throw SchemaError(o.at("upper_s"), "costs must satisfy 0 <= lower_s <= upper_s");
    o.done();
    v.tasks.push_back(c);
  });
  if (r.has("launch_overhead_ns"))
    v.launchOverheadNs = r.f64("launch_overhead_ns");
  r.done();
  return v;
}

} // namespace linnet::planning
