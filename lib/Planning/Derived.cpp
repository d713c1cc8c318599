//===- Derived.cpp - Costs, projection, timeline, report, manifest --------===//
#include "linnet/Planning/Derived.h"
#include "linnet/Planning/Binding.h"

#include <algorithm>
#include <cmath>

namespace linnet::planning {

CostedTaskView costTasks(const PortablePlan &p, const Target &t, const Deployment &d, const EvidencePolicy &e) {
  CostedTaskView v;
  v.key = {{"portable", digestOf(toJson(p))}, {"target", t.fingerprint()}, {"deployment", d.fingerprint()},
           {"evaluation_evidence", e.evaluation.revision}, {"evidence_policy", e.fingerprint()}};
  for (const Task &task : p.tasks) {
    TaskCost c;
    c.task = task.id;
    c.lowerSeconds = rooflineSeconds(task, t, e.evaluation, true);
    c.upperSeconds = rooflineSeconds(task, t, e.evaluation, false);
    if (task.resources.engineClass == "communication") {
      c.bound = "network";
    } else {
      double peak = 0;
      for (const std::string &dt : task.resources.dtypes)
        if (auto it = t.peakFlops.find(dt); it != t.peakFlops.end()) peak = it->second;
      double compute = peak > 0 ? double(task.facts.ops.upper) / (peak * e.evaluation.computeEfficiency) : 0;
      double memory = double(task.facts.readBytes.upper + task.facts.writeBytes.upper) /
                      (t.memoryBandwidth * e.evaluation.memoryEfficiency);
      c.bound = compute > memory ? "compute" : "memory";
    }
    v.tasks.push_back(c);
  }
  return v;
}

static Json costsJson(const CostedTaskView &v) {
  Json tasks = Json::array();
  for (const auto &c : v.tasks)
    tasks.push_back({{"task", c.task}, {"bound", c.bound}, {"lower_s", c.lowerSeconds}, {"upper_s", c.upperSeconds}});
  return {{"schema", "linnet.costed-task-view/1"}, {"key", v.key}, {"tasks", tasks}};
}

TimingProjection project(const ConcretePlan &c, const CostedTaskView &costs, const Target &t) {
  TimingProjection tp;
  tp.key = {{"concrete", digestOf(toJson(c))}, {"costs", digestOf(costsJson(costs))},
            {"simulation_policy", "in-order-queues/upper-bound/1"}};
  std::map<std::string, double> queueFree, end;
  std::map<std::string, std::string> critPred;
  for (const Command &cmd : c.commands) {
    double dur = 0;
    for (const TaskCost &tc : costs.tasks)
      if (tc.task == cmd.portableTask) dur = tc.upperSeconds * 1e9 + t.launchOverheadNs;
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

static Json projectionJson(const TimingProjection &tp) {
  Json iv = Json::array();
  for (const auto &i : tp.intervals)
    iv.push_back({{"command", i.command}, {"queue", i.queue}, {"start_ns", i.startNs}, {"end_ns", i.endNs}});
  return {{"schema", "linnet.timing-projection/1"}, {"key", tp.key}, {"intervals", iv},
          {"makespan_ns", tp.makespanNs}, {"serial_ns", tp.serialNs},
          {"overlap_ns", tp.serialNs - tp.makespanNs}, {"critical_path", tp.criticalPath}};
}

Json timelineBundle(const ConcretePlan &c, const TimingProjection &tp, const EvidencePolicy &e,
                    const Diagnostics &diags) {
  Json events = Json::array();
  std::vector<std::string> queues;
  for (const Interval &i : tp.intervals)
    if (std::find(queues.begin(), queues.end(), i.queue) == queues.end()) queues.push_back(i.queue);
  events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", 0}, {"tid", 0},
                    {"args", {{"name", "rank 0 on " + (c.rankDevices.empty() ? std::string("?") : c.rankDevices[0])}}}});
  for (size_t q = 0; q < queues.size(); ++q)
    events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 0}, {"tid", int64_t(q)}, {"args", {{"name", queues[q]}}}});
  for (const Interval &i : tp.intervals) {
    const Command *cmd = nullptr;
    for (const Command &x : c.commands) if (x.id == i.command) cmd = &x;
    int64_t tid = std::find(queues.begin(), queues.end(), i.queue) - queues.begin();
    Json args = {{"command", i.command}, {"portable_task", cmd ? cmd->portableTask : ""},
                 {"body", cmd ? bodyKind(cmd->body) : ""}};
    if (cmd)
      if (const std::string *impl = bodyImplementation(cmd->body)) args["implementation"] = *impl;
    // Trace-event times are microseconds.
    events.push_back({{"name", i.command}, {"cat", cmd ? bodyKind(cmd->body) : "command"}, {"ph", "X"},
                      {"pid", 0}, {"tid", tid}, {"ts", i.startNs / 1000.0},
                      {"dur", (i.endNs - i.startNs) / 1000.0}, {"args", args}});
  }
  Json diagRefs = Json::array();
  for (const Diagnostic &d : diags) diagRefs.push_back({{"code", d.code}, {"path", d.path}});
  Json bundle = {{"schema", "linnet.timeline-bundle/1"},
                 {"concrete", digestOf(toJson(c))},
                 {"projection", digestOf(projectionJson(tp))},
                 {"evaluation_evidence", e.evaluation.revision},
                 {"evidence_policy", e.fingerprint()},
                 {"diagnostics", diagRefs}};
  return {{"traceEvents", events}, {"displayTimeUnit", "ns"}, {"otherData", bundle}};
}

Json evaluationReport(const PortablePlan &p, const ConcretePlan &c, const CostedTaskView &costs,
                      const TimingProjection &tp, const EvidencePolicy &e) {
  int64_t peak = 0;
  for (const ArenaReport &a : c.arenas) peak += a.arenaBytes + a.externalBytes;
  std::map<std::string, double> values = {{"latency", tp.makespanNs * 1e-9},
                                          {"peak_memory_bytes", double(peak)},
                                          {"devices", double(c.devices.size())}};
  Json objectives = Json::array();
  for (const Objective &o : p.objectives)
    objectives.push_back({{"id", o.id}, {"metric", o.metric}, {"value", values.count(o.metric) ? values[o.metric] : 0.0}});
  Json constraints = Json::array();
  for (const Constraint &k : p.constraints) {
    double v = k.metric.empty() ? 1 : values[k.metric];
    bool ok = k.kind == "memory-capacity" ? std::all_of(c.devices.begin(), c.devices.end(), [&](const Device &d) {
      return int64_t(std::count(c.rankDevices.begin(), c.rankDevices.end(), d.id)) * peak <= d.memoryFreeBytes;
    })
              : k.kind == "max-ranks" ? c.ranks <= k.bound
                                      : true;
    constraints.push_back({{"id", k.id}, {"kind", k.kind}, {"value", v}, {"bound", k.bound}, {"satisfied", ok}});
  }
  // Bottlenecks: the critical path's commands, longest first.
  std::vector<std::pair<double, Json>> b;
  for (const std::string &cmd : tp.criticalPath)
    for (const Interval &i : tp.intervals)
      if (i.command == cmd) {
        std::string task, bound;
        for (const Command &x : c.commands) if (x.id == cmd) task = x.portableTask;
        for (const TaskCost &tc : costs.tasks) if (tc.task == task) bound = tc.bound;
        b.push_back({i.endNs - i.startNs, {{"command", cmd}, {"portable_task", task}, {"bound", bound},
                                           {"duration_ns", i.endNs - i.startNs}}});
      }
  std::stable_sort(b.begin(), b.end(), [](const auto &x, const auto &y) { return x.first > y.first; });
  Json bottlenecks = Json::array();
  for (auto &x : b) bottlenecks.push_back(x.second);
  return {{"schema", "linnet.evaluation-report/1"},
          {"key", {{"portable", digestOf(toJson(p))}, {"concrete", digestOf(toJson(c))},
                   {"evaluation_evidence", e.evaluation.revision}, {"evidence_policy", e.fingerprint()}}},
          {"objectives", objectives},
          {"constraints", constraints},
          {"bottlenecks", bottlenecks},
          {"costs", costsJson(costs)},
          {"projection", projectionJson(tp)},
          {"memory", [&] {
             Json a = Json::array();
             for (const ArenaReport &r : c.arenas)
               a.push_back({{"memory_space", r.memorySpace}, {"arena_bytes", r.arenaBytes},
                            {"lower_bound_bytes", r.lowerBoundBytes}, {"external_bytes", r.externalBytes}});
             return a;
           }()}};
}

Json artifactManifest(const ArtifactInputs &in) {
  Json lineage = Json::array();
  for (const EntryPoint &e : in.machine.entryPoints)
    for (const std::string &id : e.commands) {
      const Command *cmd = nullptr;
      for (const Command &c : in.concrete.commands) if (c.id == id) cmd = &c;
      const Task *task = cmd ? in.portable.task(cmd->portableTask) : nullptr;
      Json entry = {{"entry_point", e.name}, {"command", id}, {"portable_task", cmd ? cmd->portableTask : ""}};
      if (cmd)
        if (const std::string *impl = bodyImplementation(cmd->body)) {
          entry["implementation"] = *impl;
          for (const ExecutableRef &x : in.machine.executables)
            if (x.implementation == *impl) entry["machine_symbol"] = x.kind == "symbol" ? x.symbol : x.routine;
        }
      if (task) {
        entry["ops"] = task->provenance.lineage;
        entry["source_location"] = task->provenance.location;
      }
      lineage.push_back(entry);
    }
  std::vector<std::string> libs;
  for (const ExecutableRef &x : in.machine.executables)
    if (!x.soname.empty() && std::find(libs.begin(), libs.end(), x.soname) == libs.end()) libs.push_back(x.soname);
  std::sort(libs.begin(), libs.end());
  auto sha = [](const Json &j) { return "sha256:" + sha256Hex(canonicalDump(j)); };
  return {{"schema", "linnet.program-artifact/1"},
          {"target", {{"id", in.target.id}, {"kind", in.target.kind}, {"fingerprint", in.target.fingerprint()}}},
          {"deployment_requirements",
           {{"ranks", in.portable.requirements.ranks}, {"dtypes", in.portable.requirements.dtypes},
            {"collectives", in.portable.requirements.collectives},
            {"memory_bytes_per_rank", toJson(in.portable.requirements.memoryBytesPerRank)},
            {"deployment", in.deployment.id}, {"deployment_fingerprint", in.deployment.fingerprint()}}},
          {"abi", {{"triple", in.target.abi.triple}, {"runtime_abi", in.target.abi.runtimeAbi},
                   {"fingerprint", in.concrete.abiFingerprint}}},
          {"digests", {{"portable", sha(toJson(in.portable))}, {"concrete", sha(toJson(in.concrete))},
                       {"machine", sha(toJson(in.machine))}}},
          {"compiler", {{"name", "linnet"}, {"version", in.compilerVersion}, {"commit", in.compilerCommit},
                        {"flags", in.flags}, {"planner_revision", in.concrete.plannerRevision}}},
          {"runtime_libraries", libs},
          {"lineage", lineage}};
}

Json planSet(const std::vector<Candidate> &cands, std::string &selected, const std::vector<Objective> &objectives) {
  Json list = Json::array(), dominance = Json::array();
  std::vector<bool> dominated(cands.size(), false);
  for (size_t a = 0; a < cands.size(); ++a)
    for (size_t b = 0; b < cands.size(); ++b) {
      if (a == b) continue;
      bool noWorse = true, better = false;
      std::vector<std::string> on;
      for (const Objective &o : objectives) {
        double x = cands[a].objectives.at(o.metric), y = cands[b].objectives.at(o.metric);
        if (o.direction == "maximize") std::swap(x, y);
        if (x > y) noWorse = false;
        if (x < y) {
          better = true;
          on.push_back(o.metric);
        }
      }
      if (noWorse && better) {
        dominated[b] = true;
        dominance.push_back({{"dominant", cands[a].id}, {"dominated", cands[b].id}, {"on", on}});
      }
    }
  // Among the non-dominated, the objectives in priority order decide.
  std::vector<Objective> byPriority = objectives;
  std::stable_sort(byPriority.begin(), byPriority.end(), [](auto &x, auto &y) { return x.priority < y.priority; });
  int best = -1;
  for (size_t i = 0; i < cands.size(); ++i) {
    if (dominated[i]) continue;
    if (best < 0) { best = i; continue; }
    for (const Objective &o : byPriority) {
      double x = cands[i].objectives.at(o.metric), y = cands[best].objectives.at(o.metric);
      if (o.direction == "maximize") std::swap(x, y);
      if (x < y) { best = i; break; }
      if (x > y) break;
    }
  }
  selected = best >= 0 ? cands[best].id : "";
  for (size_t i = 0; i < cands.size(); ++i)
    list.push_back({{"id", cands[i].id}, {"digest", cands[i].digest}, {"objectives", cands[i].objectives},
                    {"dominated", bool(dominated[i])}});
  return {{"schema", "linnet.plan-set/1"}, {"candidates", list}, {"dominance", dominance}, {"selected", selected}};
}

} // namespace linnet::planning
