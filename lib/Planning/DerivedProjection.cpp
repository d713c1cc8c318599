//===- DerivedProjection.cpp - TimingProjection ---------------------------===//
//
// The timing projection: the concrete plan's commands placed on their
// queues in time, and the time of each phase.
//
//===----------------------------------------------------------------------===//
#include "DerivedImpl.h"

#include <algorithm>
#include <set>

namespace linnet::planning {

using namespace detail;

double launchOverheadNs(const CostedTaskView &costs, const Target &t, const SimulationPolicy &sim) {
  return sim.launchOverhead ? costs.launchOverheadNs.value_or(t.launchOverheadNs) : 0;
}

TimingProjection project(const ConcretePlan &c, const CostedTaskView &costs, const Target &t,
                         const SimulationPolicy &sim) {
  TimingProjection tp;
  tp.key = {{"concrete", digestOf(toJson(c))}, {"costs", digestOf(toJson(costs))},
            {"simulation_policy", sim.fingerprint()}};
  std::map<std::string, double> queueFree, end;
  std::map<std::string, std::string> critPred;
  for (const Command &cmd : c.commands) {
    double dur = 0;
    for (const TaskCost &tc : costs.tasks)
      if (tc.task == cmd.portableTask)
        dur = (sim.durations == "lower" ? tc.lowerSeconds : tc.upperSeconds) * 1e9 +
              launchOverheadNs(costs, t, sim);
    const std::string *q = bodyQueue(cmd.body);
    std::string queue = q ? *q : "host";
    double start = queueFree[queue];
    std::string pred = start > 0 ? "queue" : "";
    for (const std::string &d : cmd.dependsOn)
      if (end[d] > start) {
        start = end[d];
        pred = d;
      }
    // The critical predecessor is the dependency or the queue's last command.
    if (pred == "queue")
      for (auto it = tp.intervals.rbegin(); it != tp.intervals.rend(); ++it)
        if (it->queue == queue) {
          pred = it->command;
          break;
        }
    critPred[cmd.id] = pred;
    end[cmd.id] = start + dur;
    queueFree[queue] = start + dur;
    tp.intervals.push_back({cmd.id, queue, start, start + dur});
    tp.serialNs += dur;
    tp.makespanNs = std::max(tp.makespanNs, start + dur);
  }
  std::string last;
  for (const Interval &i : tp.intervals)
    if (i.endNs == tp.makespanNs) last = i.command;
  for (std::string cur = last; !cur.empty(); cur = critPred[cur]) tp.criticalPath.insert(tp.criticalPath.begin(), cur);
  return tp;
}

std::vector<PhaseTiming> projectPhases(const PortablePlan &p, const ConcretePlan &c, const TimingProjection &tp,
                                       double launchNs) {
  std::map<std::string, const Interval *> interval;
  for (const Interval &i : tp.intervals)
    interval[i.command] = &i;
  std::vector<PhaseTiming> out;
  for (const Phase &ph : p.phases) {
    std::map<std::string, const PhaseTask *> executions;
    for (const PhaseTask &t : ph.tasks)
      executions[t.task] = &t;
    PhaseTiming pt{ph.id, ph.entry, 0, 0, 0};
    std::map<std::string, double> queueFree, end;
    for (const Command &cmd : c.commands) {
      auto n = executions.find(cmd.portableTask);
      auto iv = interval.find(cmd.id);
      if (n == executions.end() || iv == interval.end())
        continue;
      // The work once an execution, the launch once a launch.
      double one = iv->second->endNs - iv->second->startNs, launch = std::min(launchNs, one);
      double dur = (one - launch) * double(n->second->executions) + launch * double(n->second->launches);
      double start = queueFree[iv->second->queue];
      for (const std::string &d : cmd.dependsOn)
        if (auto e = end.find(d); e != end.end())
          start = std::max(start, e->second);
      end[cmd.id] = queueFree[iv->second->queue] = start + dur;
      pt.executions += n->second->executions;
      pt.serialNs += dur;
      pt.makespanNs = std::max(pt.makespanNs, start + dur);
    }
    out.push_back(std::move(pt));
  }
  return out;
}


Json toJson(const TimingProjection &tp) {
  Json iv = Json::array();
  for (const auto &i : tp.intervals)
    iv.push_back({{"command", i.command}, {"queue", i.queue}, {"start_ns", i.startNs}, {"end_ns", i.endNs}});
  Json doc = {{"schema", kProjectionSchema}, {"key", keyJson(tp.key)}, {"intervals", iv},
              {"makespan_ns", tp.makespanNs}, {"serial_ns", tp.serialNs},
              {"overlap_ns", tp.serialNs - tp.makespanNs}, {"critical_path", tp.criticalPath}};
  if (!tp.phases.empty())
    doc["phases"] = phasesJson(tp.phases);
  return doc;
}

TimingProjection projectionFromJson(const Json &j) {
  ObjReader r(j, "");
  expectSchema(r, kProjectionSchema);
  TimingProjection tp;
  tp.key = keyFrom(r, "key");
  std::set<std::string> commands;
  r.each("intervals", [&](const Json &e, const std::string &p) {
    ObjReader o(e, p);
    Interval i{o.str("command"), o.str("queue"), o.f64("start_ns"), o.f64("end_ns")};
    if (i.startNs < 0 || i.endNs < i.startNs)
      throw SchemaError(o.at("end_ns"), "an interval must satisfy 0 <= start_ns <= end_ns");
    if (!commands.insert(i.command).second)
      throw SchemaError(o.at("command"), "command `" + i.command + "` has two intervals");
    o.done();
    tp.intervals.push_back(i);
  });
  tp.makespanNs = r.f64("makespan_ns");
  tp.serialNs = r.f64("serial_ns");
  if (r.f64("overlap_ns") != tp.serialNs - tp.makespanNs)
    throw SchemaError("/overlap_ns", "overlap_ns must equal serial_ns - makespan_ns");
  tp.criticalPath = r.strs("critical_path");
  for (size_t i = 0; i < tp.criticalPath.size(); ++i)
    if (!commands.count(tp.criticalPath[i]))
      throw SchemaError("/critical_path/" + std::to_string(i),
                        "critical-path command `" + tp.criticalPath[i] + "` has no interval");
  tp.phases = phasesFrom(r);
  r.done();
  return tp;
}

} // namespace linnet::planning
