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

std::map<std::string, std::string> taskImplementationKeys(const ConcretePlan &c) {
  std::map<std::string, std::string> keys;
  for (const Command &cmd : c.commands)
    if (const std::string *id = bodyImplementation(cmd.body))
      if (const ImplementationRef *r = c.implementation(*id))
        keys[cmd.portableTask] = implementationKey(*r);
  return keys;
}

CostedTaskView costTasks(const PortablePlan &p, const Target &t, const Deployment &d, const EvidencePolicy &e,
                         const ConcretePlan *concrete) {
  CostedTaskView v;
  v.key = {{"portable", digestOf(toJson(p))}, {"target", t.fingerprint()}, {"deployment", d.fingerprint()},
           {"evaluation_evidence", e.evaluation.revision}, {"evidence_policy", e.fingerprint()}};
  std::map<std::string, std::string> impl;
  if (concrete && !e.evaluation.byImplementation.empty())
    impl = taskImplementationKeys(*concrete);
  for (const Task &task : p.tasks) {
    TaskCost c;
    c.task = task.id;
    auto k = impl.find(task.id);
    Evidence ev = k == impl.end() ? e.evaluation : e.evaluation.forImplementation(k->second);
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
