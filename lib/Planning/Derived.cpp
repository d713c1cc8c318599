//===- Derived.cpp - Costs, projection, trace, timeline, report, manifest -===//
#include "linnet/Planning/Derived.h"
#include "linnet/Planning/Binding.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace linnet::planning {

namespace {

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
} // namespace

// --- CostedTaskView ---------------------------------------------------------

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

// --- TimingProjection -------------------------------------------------------

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
              (sim.launchOverhead ? costs.launchOverheadNs.value_or(t.launchOverheadNs) : 0);
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

std::vector<PhaseTiming> projectPhases(const PortablePlan &p, const ConcretePlan &c, const TimingProjection &tp) {
  std::map<std::string, const Interval *> interval;
  for (const Interval &i : tp.intervals)
    interval[i.command] = &i;
  std::vector<PhaseTiming> out;
  for (const Phase &ph : p.phases) {
    std::map<std::string, int64_t> executions;
    for (const PhaseTask &t : ph.tasks)
      executions[t.task] = t.executions;
    PhaseTiming pt{ph.id, ph.entry, 0, 0, 0};
    std::map<std::string, double> queueFree, end;
    for (const Command &cmd : c.commands) {
      auto n = executions.find(cmd.portableTask);
      auto iv = interval.find(cmd.id);
      if (n == executions.end() || iv == interval.end())
        continue;
      double dur = (iv->second->endNs - iv->second->startNs) * double(n->second);
      double start = queueFree[iv->second->queue];
      for (const std::string &d : cmd.dependsOn)
        if (auto e = end.find(d); e != end.end())
          start = std::max(start, e->second);
      end[cmd.id] = queueFree[iv->second->queue] = start + dur;
      pt.executions += n->second;
      pt.serialNs += dur;
      pt.makespanNs = std::max(pt.makespanNs, start + dur);
    }
    out.push_back(std::move(pt));
  }
  return out;
}

namespace {
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
} // namespace

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

// --- SimulationTraceIR ------------------------------------------------------

SimulationTrace simulate(const PortablePlan &p, const ConcretePlan &c, const TimingProjection &tp) {
  SimulationTrace st;
  st.key = {{"projection", digestOf(toJson(tp))}, {"concrete", digestOf(toJson(c))},
            {"portable", digestOf(toJson(p))}, {"adapter", kSimulationAdapter}};
  std::map<std::string, double> duration;
  for (const Interval &i : tp.intervals) duration[i.command] = i.endNs - i.startNs;
  // Event-driven: the next command of each queue waits for its queue and
  // its dependencies; the simulation advances to the earliest ready one.
  std::map<std::string, std::vector<size_t>> queueCmds;
  std::vector<std::string> queueOrder;
  for (size_t i = 0; i < c.commands.size(); ++i) {
    const std::string *q = bodyQueue(c.commands[i].body);
    std::string queue = q ? *q : "host";
    if (!queueCmds.count(queue)) queueOrder.push_back(queue);
    queueCmds[queue].push_back(i);
  }
  std::map<std::string, size_t> next;
  std::map<std::string, double> queueFree, end;
  struct Run { double start, end; size_t index; std::string queue; };
  std::vector<Run> runs;
  for (size_t done = 0; done < c.commands.size();) {
    double bestStart = 0;
    int best = -1;
    std::string bestQueue;
    for (const std::string &q : queueOrder) {
      if (next[q] >= queueCmds[q].size()) continue;
      const Command &cmd = c.commands[queueCmds[q][next[q]]];
      double start = queueFree[q];
      bool ready = true;
      for (const std::string &d : cmd.dependsOn) {
        if (!end.count(d)) { ready = false; break; }
        start = std::max(start, end[d]);
      }
      if (!ready) continue;
      size_t idx = queueCmds[q][next[q]];
      if (best < 0 || start < bestStart || (start == bestStart && idx < size_t(best))) {
        best = int(idx);
        bestStart = start;
        bestQueue = q;
      }
    }
    if (best < 0) break; // a cycle: the concrete verifier reports it
    const Command &cmd = c.commands[best];
    double e = bestStart + duration[cmd.id];
    end[cmd.id] = e;
    queueFree[bestQueue] = e;
    ++next[bestQueue];
    runs.push_back({bestStart, e, size_t(best), bestQueue});
    ++done;
  }
  for (const Run &run : runs) {
    const Command &cmd = c.commands[run.index];
    const Task *task = p.task(cmd.portableTask);
    const std::string *impl = bodyImplementation(cmd.body);
    SimEvent base{0, "", cmd.id, run.queue, cmd.portableTask, impl ? *impl : "", "",
                  task ? task->provenance.lineage : std::vector<std::string>{}};
    SimEvent b = base, en = base;
    b.timeNs = run.start;
    b.kind = "begin";
    en.timeNs = run.end;
    en.kind = "end";
    st.events.push_back(b);
    st.events.push_back(en);
    for (const std::string &tok : signalsOf(cmd.sync)) {
      SimEvent s = base;
      s.timeNs = run.end;
      s.kind = "signal";
      s.token = tok;
      st.events.push_back(s);
    }
    st.endNs = std::max(st.endNs, run.end);
  }
  std::stable_sort(st.events.begin(), st.events.end(),
                   [](const SimEvent &a, const SimEvent &b) { return a.timeNs < b.timeNs; });
  // Counters: queues busy, and arena bytes live (regions live from their
  // first to their last command's run).
  std::set<double> times;
  for (const Run &r : runs) { times.insert(r.start); times.insert(r.end); }
  std::map<size_t, const Run *> runOf;
  for (const Run &r : runs) runOf[r.index] = &r;
  std::vector<std::string> spaces;
  for (const BufferRegion &b : c.buffers)
    if (!b.external && !b.persistent && std::find(spaces.begin(), spaces.end(), b.memorySpace) == spaces.end())
      spaces.push_back(b.memorySpace);
  for (double t : times) {
    double busy = 0;
    for (const Run &r : runs)
      if (r.start <= t && t < r.end && r.end > r.start) ++busy;
    st.counters.push_back({"busy_queues", t, busy});
  }
  for (const std::string &space : spaces)
    for (double t : times) {
      double live = 0;
      for (const BufferRegion &b : c.buffers) {
        if (b.external || b.persistent || b.memorySpace != space) continue;
        auto f = runOf.find(size_t(b.firstCommand)), l = runOf.find(size_t(b.lastCommand));
        if (f == runOf.end() || l == runOf.end()) continue;
        if (f->second->start <= t && t < std::max(l->second->end, f->second->start + 1e-9)) live += double(b.bytes);
      }
      st.counters.push_back({"live_bytes:" + space, t, live});
    }
  return st;
}

Json toJson(const SimulationTrace &t) {
  Json events = Json::array(), counters = Json::array();
  for (const SimEvent &e : t.events) {
    Json j = {{"time_ns", e.timeNs}, {"kind", e.kind}, {"command", e.command}, {"queue", e.queue},
              {"portable_task", e.portableTask}, {"implementation", e.implementation},
              {"lineage", e.lineage}};
    if (e.kind == "signal") j["token"] = e.token;
    events.push_back(j);
  }
  for (const CounterSample &s : t.counters)
    counters.push_back({{"counter", s.counter}, {"time_ns", s.timeNs}, {"value", s.value}});
  return {{"schema", kTraceSchema}, {"key", keyJson(t.key)}, {"events", events}, {"counters", counters},
          {"end_ns", t.endNs}};
}

SimulationTrace traceFromJson(const Json &j) {
  ObjReader r(j, "");
  expectSchema(r, kTraceSchema);
  SimulationTrace t;
  t.key = keyFrom(r, "key");
  double last = 0;
  r.each("events", [&](const Json &e, const std::string &p) {
    ObjReader o(e, p);
    SimEvent ev;
    ev.timeNs = o.f64("time_ns");
    ev.kind = o.str("kind");
    if (ev.kind != "begin" && ev.kind != "end" && ev.kind != "signal")
      throw SchemaError(o.at("kind"), "event kind must be begin, end or signal");
    if (ev.timeNs < last)
      throw SchemaError(o.at("time_ns"), "events must be in time order");
    last = ev.timeNs;
    ev.command = o.str("command");
    ev.queue = o.str("queue");
    ev.portableTask = o.str("portable_task");
    ev.implementation = o.str("implementation");
    ev.lineage = o.strs("lineage");
    if (ev.kind == "signal") ev.token = o.str("token");
    o.done();
    t.events.push_back(ev);
  });
  r.each("counters", [&](const Json &e, const std::string &p) {
    ObjReader o(e, p);
    t.counters.push_back({o.str("counter"), o.f64("time_ns"), o.f64("value")});
    o.done();
  });
  t.endNs = r.f64("end_ns");
  r.done();
  return t;
}

// --- ObservationSet ---------------------------------------------------------

ObservationSet observeSimulation(const ConcretePlan &c, const SimulationTrace &t) {
  ObservationSet o;
  o.id = "observations." + c.id;
  o.revision = 1;
  o.source = "simulated";
  o.subject = {{"concrete", digestOf(toJson(c))}, {"trace", digestOf(toJson(t))}};
  std::map<std::string, double> begin;
  for (const SimEvent &e : t.events) {
    if (e.kind == "begin") begin[e.command] = e.timeNs;
    if (e.kind == "end") {
      o.records.push_back({e.command, e.portableTask, "start_ns", begin[e.command]});
      o.records.push_back({e.command, e.portableTask, "duration_ns", e.timeNs - begin[e.command]});
    }
  }
  return o;
}

ObservationSet supersede(const ObservationSet &previous, DerivationKey subject, std::string source,
                         std::vector<ObservationRecord> records) {
  ObservationSet o;
  o.id = previous.id;
  o.revision = previous.revision + 1;
  o.supersedes = digestOf(toJson(previous));
  o.source = std::move(source);
  o.subject = std::move(subject);
  o.records = std::move(records);
  return o;
}

Json toJson(const ObservationSet &o) {
  Json records = Json::array();
  for (const ObservationRecord &r : o.records)
    records.push_back({{"command", r.command}, {"portable_task", r.portableTask}, {"metric", r.metric},
                       {"value", r.value}});
  return {{"schema", kObservationSchema}, {"id", o.id}, {"revision", o.revision},
          {"supersedes", o.supersedes}, {"source", o.source}, {"subject", keyJson(o.subject)},
          {"records", records}};
}

ObservationSet observationsFromJson(const Json &j) {
  ObjReader r(j, "");
  expectSchema(r, kObservationSchema);
  ObservationSet o;
  o.id = r.str("id");
  o.revision = r.i64("revision");
  o.supersedes = r.str("supersedes");
  o.source = r.str("source");
  if (o.source != "simulated" && o.source != "measured")
    throw SchemaError("/source", "source must be simulated or measured");
  o.subject = keyFrom(r, "subject");
  r.each("records", [&](const Json &e, const std::string &p) {
    ObjReader x(e, p);
    o.records.push_back({x.str("command"), x.str("portable_task"), x.str("metric"), x.f64("value")});
    x.done();
  });
  r.done();
  return o;
}

Diagnostics verifyObservations(const ObservationSet &o, const ObservationSet *previous) {
  Diagnostics d;
  if (o.revision < 1)
    d.push_back({"observations.revision", "/revision", "revision must be at least 1"});
  if (o.revision == 1 && !o.supersedes.empty())
    d.push_back({"observations.revision", "/supersedes", "revision 1 supersedes nothing"});
  if (o.revision > 1 && o.supersedes.rfind("sha256:", 0) != 0)
    d.push_back({"observations.revision", "/supersedes",
                 "revision " + std::to_string(o.revision) + " must name the digest of the revision it supersedes"});
  if (previous) {
    if (previous->id != o.id)
      d.push_back({"observations.supersedes", "/id", "supersedes a set with another id `" + previous->id + "`"});
    if (o.revision != previous->revision + 1)
      d.push_back({"observations.supersedes", "/revision",
                   "revision " + std::to_string(o.revision) + " does not follow revision " +
                       std::to_string(previous->revision)});
    if (o.supersedes != digestOf(toJson(*previous)))
      d.push_back({"observations.supersedes", "/supersedes",
                   "`supersedes` is not the digest of the previous revision (was it mutated in place?)"});
  }
  std::set<std::pair<std::string, std::string>> seen;
  for (size_t i = 0; i < o.records.size(); ++i) {
    const ObservationRecord &r = o.records[i];
    std::string path = "/records/" + std::to_string(i);
    if (r.command.empty())
      d.push_back({"observations.record", path + "/command", "a record needs a command id"});
    if (!seen.insert({r.command, r.metric}).second)
      d.push_back({"observations.record", path, "two records of `" + r.metric + "` for `" + r.command + "`"});
  }
  return d;
}

// --- TimelineBundle ---------------------------------------------------------

Timeline timeline(const ConcretePlan &c, const TimingProjection &tp, const SimulationTrace &trace,
                  const EvidencePolicy &e, const SimulationPolicy &sim, const Diagnostics &diags) {
  Timeline tl;
  std::vector<std::string> queues;
  for (const Interval &i : tp.intervals)
    if (std::find(queues.begin(), queues.end(), i.queue) == queues.end()) queues.push_back(i.queue);
  auto meta = [](std::string name, int64_t tid, std::string value) {
    ChromeEvent ev;
    ev.name = std::move(name);
    ev.ph = "M";
    ev.tid = tid;
    ev.args = {{"name", std::move(value)}};
    return ev;
  };
  tl.events.push_back(meta("process_name", 0, "rank 0 on " + (c.rankDevices.empty() ? std::string("?") : c.rankDevices[0])));
  for (size_t q = 0; q < queues.size(); ++q) tl.events.push_back(meta("thread_name", int64_t(q), queues[q]));
  auto tidOf = [&](const std::string &q) {
    return int64_t(std::find(queues.begin(), queues.end(), q) - queues.begin());
  };
  for (const Interval &i : tp.intervals) {
    const Command *cmd = findCommand(c, i.command);
    ChromeEvent ev;
    ev.name = i.command;
    ev.cat = cmd ? bodyKind(cmd->body) : "command";
    ev.ph = "X";
    ev.tid = tidOf(i.queue);
    // Trace-event times are microseconds.
    ev.ts = i.startNs / 1000.0;
    ev.dur = (i.endNs - i.startNs) / 1000.0;
    ev.args = {{"command", i.command}, {"portable_task", cmd ? cmd->portableTask : ""},
               {"body", cmd ? bodyKind(cmd->body) : ""}};
    if (cmd)
      if (const std::string *impl = bodyImplementation(cmd->body)) ev.args["implementation"] = *impl;
    tl.events.push_back(ev);
  }
  // The simulation trace: token signals as instant events, counters as
  // counter tracks.
  for (const SimEvent &s : trace.events) {
    if (s.kind != "signal") continue;
    ChromeEvent ev;
    ev.name = "signal " + s.token;
    ev.cat = "sync";
    ev.ph = "i";
    ev.tid = tidOf(s.queue);
    ev.ts = s.timeNs / 1000.0;
    ev.scope = "t";
    ev.args = {{"command", s.command}, {"token", s.token}};
    tl.events.push_back(ev);
  }
  for (const CounterSample &s : trace.counters) {
    ChromeEvent ev;
    ev.name = s.counter;
    ev.ph = "C";
    ev.ts = s.timeNs / 1000.0;
    ev.args = {{"value", s.value}};
    tl.events.push_back(ev);
  }
  tl.bundle.concrete = digestOf(toJson(c));
  tl.bundle.projection = digestOf(toJson(tp));
  tl.bundle.trace = digestOf(toJson(trace));
  tl.bundle.evaluationEvidence = e.evaluation.revision;
  tl.bundle.evidencePolicy = e.fingerprint();
  tl.bundle.simulationPolicy = sim.fingerprint();
  for (const Diagnostic &d : diags) tl.bundle.diagnostics.push_back({d.code, d.path});
  return tl;
}

Json toJson(const Timeline &t) {
  Json events = Json::array();
  for (const ChromeEvent &e : t.events) {
    Json j = {{"name", e.name}, {"ph", e.ph}, {"pid", e.pid}, {"tid", e.tid}, {"args", e.args}};
    if (e.cat) j["cat"] = *e.cat;
    if (e.ts) j["ts"] = *e.ts;
    if (e.dur) j["dur"] = *e.dur;
    if (e.scope) j["s"] = *e.scope;
    events.push_back(j);
  }
  Json diags = Json::array();
  for (const auto &[code, path] : t.bundle.diagnostics) diags.push_back({{"code", code}, {"path", path}});
  Json bundle = {{"schema", kTimelineSchema},
                 {"concrete", t.bundle.concrete},
                 {"projection", t.bundle.projection},
                 {"trace", t.bundle.trace},
                 {"evaluation_evidence", t.bundle.evaluationEvidence},
                 {"evidence_policy", t.bundle.evidencePolicy},
                 {"simulation_policy", t.bundle.simulationPolicy},
                 {"diagnostics", diags}};
  return {{"traceEvents", events}, {"displayTimeUnit", "ns"}, {"otherData", bundle}};
}

Timeline timelineFromJson(const Json &j) {
  ObjReader r(j, "");
  Timeline t;
  {
    ObjReader b = r.obj("otherData");
    expectSchema(b, kTimelineSchema);
    t.bundle.concrete = b.str("concrete");
    t.bundle.projection = b.str("projection");
    t.bundle.trace = b.str("trace");
    t.bundle.evaluationEvidence = b.str("evaluation_evidence");
    t.bundle.evidencePolicy = b.str("evidence_policy");
    t.bundle.simulationPolicy = b.str("simulation_policy");
    b.each("diagnostics", [&](const Json &e, const std::string &p) {
      ObjReader o(e, p);
      t.bundle.diagnostics.push_back({o.str("code"), o.str("path")});
      o.done();
    });
    b.done();
    for (const std::string *ref : {&t.bundle.concrete, &t.bundle.projection, &t.bundle.trace})
      if (ref->rfind("sha256:", 0) != 0)
        throw SchemaError("/otherData", "a TimelineBundle references artifacts by sha256 digest");
  }
  if (r.str("displayTimeUnit") != "ns")
    throw SchemaError("/displayTimeUnit", "displayTimeUnit must be `ns`");
  r.each("traceEvents", [&](const Json &e, const std::string &p) {
    ObjReader o(e, p);
    ChromeEvent ev;
    ev.name = o.str("name");
    ev.ph = o.str("ph");
    if (ev.ph != "M" && ev.ph != "X" && ev.ph != "i" && ev.ph != "C")
      throw SchemaError(o.at("ph"), "event phase `" + ev.ph + "` is not M, X, i or C");
    ev.pid = o.i64("pid");
    ev.tid = o.i64("tid");
    if (o.has("cat")) ev.cat = o.str("cat");
    if (o.has("ts")) ev.ts = o.f64("ts");
    if (o.has("dur")) ev.dur = o.f64("dur");
    if (o.has("s")) ev.scope = o.str("s");
    if (ev.ph != "M" && !ev.ts) throw SchemaError(p, "a timed event needs `ts`");
    if (ev.ph == "X" && !ev.dur) throw SchemaError(p, "a complete event needs `dur`");
    const Json &args = o.req("args");
    if (!args.is_object()) throw SchemaError(o.at("args"), "expected an object");
    ev.args = args;
    o.done();
    t.events.push_back(std::move(ev));
  });
  r.done();
  return t;
}

// --- EvaluationReport -------------------------------------------------------

std::map<std::string, double> objectiveValues(const ConcretePlan &c, const TimingProjection &tp) {
  int64_t peak = 0;
  for (const ArenaReport &a : c.arenas) peak += a.arenaBytes + a.externalBytes + a.persistentBytes;
  return {{"latency", tp.makespanNs * 1e-9}, {"peak_memory_bytes", double(peak)},
          {"devices", double(c.devices.size())}};
}

EvaluationReport evaluate(const PortablePlan &p, const ConcretePlan &c, const CostedTaskView &costs,
                          const TimingProjection &tp, const EvidencePolicy &e) {
  EvaluationReport rep;
  rep.key = {{"portable", digestOf(toJson(p))}, {"concrete", digestOf(toJson(c))},
             {"costs", digestOf(toJson(costs))}, {"projection", digestOf(toJson(tp))},
             {"evaluation_evidence", e.evaluation.revision}, {"evidence_policy", e.fingerprint()}};
  std::map<std::string, double> values = objectiveValues(c, tp);
  int64_t peak = int64_t(values["peak_memory_bytes"]);
  for (const Objective &o : p.objectives)
    rep.objectives.push_back({o.id, o.metric, values.count(o.metric) ? values[o.metric] : 0.0});
  for (const Constraint &k : p.constraints) {
    double v = k.metric.empty() ? 1 : values[k.metric];
    bool ok = k.kind == "memory-capacity" ? std::all_of(c.devices.begin(), c.devices.end(), [&](const Device &d) {
      return int64_t(std::count(c.rankDevices.begin(), c.rankDevices.end(), d.id)) * peak <= d.memoryFreeBytes;
    })
              : k.kind == "max-ranks" ? c.ranks <= k.bound
                                      : true;
    rep.constraints.push_back({k.id, k.kind, v, k.bound, ok});
  }
  // Bottlenecks: the critical path's commands, longest first.
  for (const std::string &cmd : tp.criticalPath)
    for (const Interval &i : tp.intervals)
      if (i.command == cmd) {
        std::string task, bound;
        if (const Command *x = findCommand(c, cmd)) task = x->portableTask;
        for (const TaskCost &tc : costs.tasks) if (tc.task == task) bound = tc.bound;
        rep.bottlenecks.push_back({cmd, task, bound, i.endNs - i.startNs});
      }
  std::stable_sort(rep.bottlenecks.begin(), rep.bottlenecks.end(),
                   [](const Bottleneck &x, const Bottleneck &y) { return x.durationNs > y.durationNs; });
  rep.criticalPath = tp.criticalPath;
  rep.makespanNs = tp.makespanNs;
  rep.overlapNs = tp.serialNs - tp.makespanNs;
  rep.memory = c.arenas;
  rep.phases = tp.phases;
  return rep;
}

Json toJson(const EvaluationReport &r) {
  Json objectives = Json::array(), constraints = Json::array(), bottlenecks = Json::array(), memory = Json::array();
  for (const auto &o : r.objectives) objectives.push_back({{"id", o.id}, {"metric", o.metric}, {"value", o.value}});
  for (const auto &k : r.constraints)
    constraints.push_back({{"id", k.id}, {"kind", k.kind}, {"value", k.value}, {"bound", k.bound},
                           {"satisfied", k.satisfied}});
  for (const auto &b : r.bottlenecks)
    bottlenecks.push_back({{"command", b.command}, {"portable_task", b.portableTask}, {"bound", b.bound},
                           {"duration_ns", b.durationNs}});
  for (const auto &a : r.memory)
    memory.push_back({{"memory_space", a.memorySpace}, {"arena_bytes", a.arenaBytes},
                      {"lower_bound_bytes", a.lowerBoundBytes}, {"external_bytes", a.externalBytes},
                      {"persistent_bytes", a.persistentBytes}});
  Json doc = {{"schema", kReportSchema}, {"key", keyJson(r.key)}, {"objectives", objectives},
          {"constraints", constraints}, {"bottlenecks", bottlenecks}, {"critical_path", r.criticalPath},
          {"makespan_ns", r.makespanNs}, {"overlap_ns", r.overlapNs}, {"memory", memory}};
  if (!r.phases.empty())
    doc["phases"] = phasesJson(r.phases);
  if (r.validation) {
    Json cmds = Json::array(), phases = Json::array();
    for (const CommandValidation &c : r.validation->commands)
      cmds.push_back({{"command", c.command}, {"portable_task", c.portableTask}, {"executions", c.executions},
                      {"predicted_ns", c.predictedNs}, {"measured_ns", c.measuredNs}});
    for (const PhaseValidation &p : r.validation->phases)
      phases.push_back({{"phase", p.phase}, {"entry", p.entry}, {"predicted_ns", p.predictedNs},
                        {"measured_ns", p.measuredNs}, {"attributed_ns", p.attributedNs}});
    doc["validation"] = {{"observations", r.validation->observations}, {"commands", cmds}, {"phases", phases}};
  }
  return doc;
}

EvaluationReport reportFromJson(const Json &j) {
  ObjReader r(j, "");
  expectSchema(r, kReportSchema);
  EvaluationReport rep;
  rep.key = keyFrom(r, "key");
  r.each("objectives", [&](const Json &e, const std::string &p) {
    ObjReader o(e, p);
    rep.objectives.push_back({o.str("id"), o.str("metric"), o.f64("value")});
    o.done();
  });
  r.each("constraints", [&](const Json &e, const std::string &p) {
    ObjReader o(e, p);
    rep.constraints.push_back({o.str("id"), o.str("kind"), o.f64("value"), o.i64("bound"), o.boolean("satisfied")});
    o.done();
  });
  r.each("bottlenecks", [&](const Json &e, const std::string &p) {
    ObjReader o(e, p);
    rep.bottlenecks.push_back({o.str("command"), o.str("portable_task"), o.str("bound"), o.f64("duration_ns")});
    o.done();
  });
  rep.criticalPath = r.strs("critical_path");
  rep.makespanNs = r.f64("makespan_ns");
  rep.overlapNs = r.f64("overlap_ns");
  r.each("memory", [&](const Json &e, const std::string &p) {
    ObjReader o(e, p);
    rep.memory.push_back({o.str("memory_space"), o.i64("arena_bytes"), o.i64("lower_bound_bytes"),
                          o.i64("external_bytes"), o.has("persistent_bytes") ? o.i64("persistent_bytes") : 0});
    o.done();
  });
  rep.phases = phasesFrom(r);
  if (r.has("validation")) {
    ObjReader v = r.obj("validation");
    Validation val;
    val.observations = v.str("observations");
    v.each("commands", [&](const Json &e, const std::string &p) {
      ObjReader o(e, p);
      val.commands.push_back({o.str("command"), o.str("portable_task"), o.i64("executions"), o.f64("predicted_ns"),
                              o.f64("measured_ns")});
      o.done();
    });
    v.each("phases", [&](const Json &e, const std::string &p) {
      ObjReader o(e, p);
      val.phases.push_back({o.str("phase"), o.str("entry"), o.f64("predicted_ns"), o.f64("measured_ns"),
                            o.f64("attributed_ns")});
      o.done();
    });
    v.done();
    rep.validation = std::move(val);
  }
  r.done();
  return rep;
}

// --- Validation and calibration ---------------------------------------------

namespace {
/// The measured records by (command, metric).
std::map<std::pair<std::string, std::string>, double> recordsOf(const ObservationSet &o) {
  std::map<std::pair<std::string, std::string>, double> m;
  for (const ObservationRecord &r : o.records)
    m[{r.command, r.metric}] = r.value;
  return m;
}
} // namespace

Validation validate(const ConcretePlan &c, const TimingProjection &tp, const ObservationSet &measured) {
  Validation v;
  v.observations = digestOf(toJson(measured));
  auto rec = recordsOf(measured);
  std::map<std::string, const Interval *> interval;
  for (const Interval &i : tp.intervals)
    interval[i.command] = &i;
  for (const Command &cmd : c.commands) {
    auto d = rec.find({cmd.id, "duration_ns"});
    auto n = rec.find({cmd.id, "executions"});
    auto iv = interval.find(cmd.id);
    if (d == rec.end() || n == rec.end() || iv == interval.end())
      continue;
    v.commands.push_back({cmd.id, cmd.portableTask, int64_t(n->second),
                          iv->second->endNs - iv->second->startNs, d->second});
  }
  for (const PhaseTiming &ph : tp.phases) {
    std::string ep = "linnet_entry_" + ph.entry;
    auto call = rec.find({ep, "call_ns"});
    if (call == rec.end())
      continue;
    auto attributed = rec.find({ep, "attributed_ns"});
    v.phases.push_back({ph.phase, ph.entry, ph.makespanNs, call->second,
                        attributed == rec.end() ? 0 : attributed->second});
  }
  return v;
}

std::optional<Json> calibrateEvidence(const EvidencePolicy &e, const PortablePlan &p, const ConcretePlan &c,
                                      const Target &t, const ObservationSet &measured, std::string &why) {
  if (measured.source != "measured") {
    why = "calibration needs measured observations (source `measured`), not `" + measured.source + "`";
    return std::nullopt;
  }
  auto rec = recordsOf(measured);
  // One row per measured command: [1, compute, memory] seconds at full
  // efficiency (only the side the current evidence bounds it by), weight
  // = executions per call, target = measured seconds per execution.
  struct Row {
    double x[3], y, w;
  };
  std::vector<Row> rows;
  for (const Command &cmd : c.commands) {
    auto d = rec.find({cmd.id, "duration_ns"});
    auto n = rec.find({cmd.id, "executions"});
    const Task *task = p.task(cmd.portableTask);
    if (d == rec.end() || n == rec.end() || !task || task->resources.engineClass == "communication")
      continue;
    auto [compute, memory] = rooflineSides(*task, t);
    bool computeBound = compute / e.evaluation.computeEfficiency > memory / e.evaluation.memoryEfficiency;
    rows.push_back({{1, computeBound ? compute : 0, computeBound ? 0 : memory}, d->second * 1e-9,
                    std::max(1.0, n->second)});
  }
  if (rows.size() < 3) {
    why = "calibration needs at least 3 measured commands, found " + std::to_string(rows.size());
    return std::nullopt;
  }
  // Weighted least squares over the terms in `use`; the subset with the
  // least residual among those whose coefficients are all non-negative wins.
  auto solve = [&](const std::vector<int> &use, std::vector<double> &coef) {
    size_t k = use.size();
    std::vector<std::vector<double>> a(k, std::vector<double>(k + 1, 0));
    for (const Row &r : rows)
      for (size_t i = 0; i < k; ++i) {
        for (size_t j = 0; j < k; ++j)
          a[i][j] += r.w * r.x[use[i]] * r.x[use[j]];
        a[i][k] += r.w * r.x[use[i]] * r.y;
      }
    for (size_t col = 0; col < k; ++col) {
      size_t piv = col;
      for (size_t i = col + 1; i < k; ++i)
        if (std::abs(a[i][col]) > std::abs(a[piv][col]))
          piv = i;
      if (std::abs(a[piv][col]) < 1e-30)
        return false;
      std::swap(a[col], a[piv]);
      for (size_t i = 0; i < k; ++i)
        if (i != col) {
          double f = a[i][col] / a[col][col];
          for (size_t j = col; j <= k; ++j)
            a[i][j] -= f * a[col][j];
        }
    }
    coef.assign(3, 0);
    for (size_t i = 0; i < k; ++i)
      coef[use[i]] = a[i][k] / a[i][i];
    return true;
  };
  std::vector<double> best;
  double bestResidual = -1;
  for (std::vector<int> use : {std::vector<int>{0, 1, 2}, {0, 2}, {0, 1}, {1, 2}, {2}, {1}}) {
    std::vector<double> coef;
    if (!solve(use, coef) || coef[0] < 0 || coef[1] < 0 || coef[2] < 0)
      continue;
    double res = 0;
    for (const Row &r : rows) {
      double pred = coef[0] + coef[1] * r.x[1] + coef[2] * r.x[2];
      res += r.w * (pred - r.y) * (pred - r.y);
    }
    if (bestResidual < 0 || res < bestResidual) {
      bestResidual = res;
      best = coef;
    }
  }
  if (best.empty()) {
    why = "the measurements do not fit overhead + compute + memory with non-negative coefficients";
    return std::nullopt;
  }
  // Seconds at full efficiency times `coef`: efficiency 1 / coef, at most 1;
  // a dropped term keeps the current one.
  auto efficiency = [](double coef, double current) { return coef > 1 ? 1 / coef : coef > 0 ? 1.0 : current; };
  Json doc = e.raw;
  Json &ev = doc["evaluation"];
  ev["compute_efficiency"] = efficiency(best[1], e.evaluation.computeEfficiency);
  ev["memory_efficiency"] = efficiency(best[2], e.evaluation.memoryEfficiency);
  ev["launch_overhead_ns"] = best[0] * 1e9;
  std::string digest = digestOf(toJson(measured));
  ev["revision"] = "evaluation-evidence/calibrated-" + digest.substr(7, 12);
  ev["source"] = "fitted by linnet profile from measured observations " + digest + " of `" + c.id + "` on target `" +
                 t.id + "`: per command, overhead + compute/efficiency + memory/efficiency, least squares weighted "
                 "by executions over " + std::to_string(rows.size()) + " commands";
  doc["id"] = e.id + "+calibrated";
  return doc;
}

// --- ProgramArtifact manifest ----------------------------------------------

ProgramManifest artifactManifest(const ArtifactInputs &in) {
  ProgramManifest m;
  for (const EntryPoint &e : in.machine.entryPoints)
    for (const std::string &id : e.commands) {
      const Command *cmd = findCommand(in.concrete, id);
      const Task *task = cmd ? in.portable.task(cmd->portableTask) : nullptr;
      LineageEntry entry{e.name, id, cmd ? cmd->portableTask : "", {}, {}, {}, {}};
      if (cmd)
        if (const std::string *impl = bodyImplementation(cmd->body)) {
          entry.implementation = *impl;
          for (const ExecutableRef &x : in.machine.executables)
            if (x.implementation == *impl) entry.machineSymbol = x.kind == "symbol" ? x.symbol : x.routine;
        }
      if (task) {
        entry.ops = task->provenance.lineage;
        entry.sourceLocation = task->provenance.location;
      }
      m.lineage.push_back(entry);
    }
  for (const ExecutableRef &x : in.machine.executables)
    if (!x.soname.empty() && std::find(m.runtimeLibraries.begin(), m.runtimeLibraries.end(), x.soname) ==
                                 m.runtimeLibraries.end())
      m.runtimeLibraries.push_back(x.soname);
  std::sort(m.runtimeLibraries.begin(), m.runtimeLibraries.end());
  m.targetId = in.target.id;
  m.targetKind = in.target.kind;
  m.targetFingerprint = in.target.fingerprint();
  m.ranks = in.portable.requirements.ranks;
  m.dtypes = in.portable.requirements.dtypes;
  m.numerics = in.portable.numerics;
  m.matmulPrecision = in.portable.matmulPrecision;
  m.collectives = in.portable.requirements.collectives;
  m.memoryBytesPerRank = in.portable.requirements.memoryBytesPerRank;
  m.deploymentId = in.deployment.id;
  m.deploymentFingerprint = in.deployment.fingerprint();
  m.abiTriple = in.target.abi.triple;
  m.runtimeAbi = in.target.abi.runtimeAbi;
  m.abiFingerprint = in.concrete.abiFingerprint;
  m.portableDigest = digestOf(toJson(in.portable));
  m.concreteDigest = digestOf(toJson(in.concrete));
  m.machineDigest = digestOf(toJson(in.machine));
  m.compilerVersion = in.compilerVersion;
  m.compilerCommit = in.compilerCommit;
  m.plannerRevision = in.concrete.plannerRevision;
  m.flags = in.flags;
  return m;
}

Json toJson(const ProgramManifest &m) {
  Json lineage = Json::array();
  for (const LineageEntry &e : m.lineage) {
    Json j = {{"entry_point", e.entryPoint}, {"command", e.command}, {"portable_task", e.portableTask}};
    if (e.implementation) j["implementation"] = *e.implementation;
    if (e.machineSymbol) j["machine_symbol"] = *e.machineSymbol;
    if (e.ops) j["ops"] = *e.ops;
    if (e.sourceLocation) j["source_location"] = *e.sourceLocation;
    lineage.push_back(j);
  }
  Json digests = {{"portable", m.portableDigest}, {"concrete", m.concreteDigest}, {"machine", m.machineDigest}};
  if (m.libraryDigest) digests["library"] = *m.libraryDigest;
  Json doc = {{"schema", kManifestSchema},
          {"target", {{"id", m.targetId}, {"kind", m.targetKind}, {"fingerprint", m.targetFingerprint}}},
          {"deployment_requirements",
           {{"ranks", m.ranks}, {"dtypes", m.dtypes}, {"collectives", m.collectives},
            {"memory_bytes_per_rank", toJson(m.memoryBytesPerRank)}, {"deployment", m.deploymentId},
            {"deployment_fingerprint", m.deploymentFingerprint}}},
          {"abi", {{"triple", m.abiTriple}, {"runtime_abi", m.runtimeAbi}, {"fingerprint", m.abiFingerprint}}},
          {"digests", digests},
          {"compiler", {{"name", "linnet"}, {"version", m.compilerVersion}, {"commit", m.compilerCommit},
                        {"flags", m.flags}, {"planner_revision", m.plannerRevision}}},
          {"runtime_libraries", m.runtimeLibraries},
          {"numerics", m.numerics},
          {"lineage", lineage}};
  if (m.matmulPrecision != "highest") doc["matmul_precision"] = m.matmulPrecision;
  if (m.libraryFile) doc["library"] = *m.libraryFile;
  if (!m.files.empty()) {
    Json files = Json::array();
    for (const ProgramManifest::File &f : m.files)
      files.push_back({{"path", f.path}, {"sha256", f.sha256}, {"bytes", f.bytes}});
    doc["files"] = files;
  }
  return doc;
}

ProgramManifest manifestFromJson(const Json &j) {
  using support::isSha256Hex;
  ObjReader r(j, "");
  expectSchema(r, kManifestSchema);
  ProgramManifest m;
  {
    ObjReader t = r.obj("target");
    m.targetId = t.str("id");
    m.targetKind = t.str("kind");
    m.targetFingerprint = t.str("fingerprint");
    t.done();
  }
  {
    ObjReader d = r.obj("deployment_requirements");
    m.ranks = d.i64("ranks");
    m.dtypes = d.strs("dtypes");
    m.collectives = d.strs("collectives");
    m.memoryBytesPerRank = d.qty("memory_bytes_per_rank");
    m.deploymentId = d.str("deployment");
    m.deploymentFingerprint = d.str("deployment_fingerprint");
    d.done();
  }
  {
    ObjReader a = r.obj("abi");
    m.abiTriple = a.str("triple");
    m.runtimeAbi = a.str("runtime_abi");
    m.abiFingerprint = a.str("fingerprint");
    a.done();
  }
  {
    ObjReader d = r.obj("digests");
    m.portableDigest = d.str("portable");
    m.concreteDigest = d.str("concrete");
    m.machineDigest = d.str("machine");
    if (d.has("library")) m.libraryDigest = d.str("library");
    for (const char *k : {"portable", "concrete", "machine", "library"})
      if (d.has(k) && (d.str(k).rfind("sha256:", 0) != 0 || d.str(k).size() != 7 + 64))
        throw SchemaError(d.at(k), "not a sha256 digest");
    d.done();
  }
  {
    ObjReader c = r.obj("compiler");
    if (c.str("name") != "linnet") throw SchemaError(c.at("name"), "compiler name must be `linnet`");
    m.compilerVersion = c.str("version");
    m.compilerCommit = c.str("commit");
    m.flags = c.strs("flags");
    m.plannerRevision = c.str("planner_revision");
    c.done();
  }
  m.runtimeLibraries = r.strs("runtime_libraries");
  if (r.has("numerics")) m.numerics = r.str("numerics");
  if (r.has("matmul_precision")) m.matmulPrecision = r.str("matmul_precision");
  if (r.has("library")) m.libraryFile = r.str("library");
  if (r.has("files"))
    r.each("files", [&](const Json &e, const std::string &p) {
      ObjReader o(e, p);
      ProgramManifest::File f{o.str("path"), o.str("sha256"), o.i64("bytes")};
      if (!isSha256Hex(f.sha256)) throw SchemaError(o.at("sha256"), "not a SHA-256 (64 lowercase hex digits)");
      o.done();
      m.files.push_back(std::move(f));
    });
  r.each("lineage", [&](const Json &e, const std::string &p) {
    ObjReader o(e, p);
    LineageEntry l{o.str("entry_point"), o.str("command"), o.str("portable_task"), {}, {}, {}, {}};
    if (o.has("implementation")) l.implementation = o.str("implementation");
    if (o.has("machine_symbol")) l.machineSymbol = o.str("machine_symbol");
    if (o.has("ops")) l.ops = o.strs("ops");
    if (o.has("source_location")) l.sourceLocation = o.str("source_location");
    o.done();
    m.lineage.push_back(std::move(l));
  });
  r.done();
  return m;
}

// --- PlanSet ----------------------------------------------------------------

PlanSet planSet(std::vector<Candidate> cands, const std::vector<Objective> &objectives) {
  PlanSet s;
  s.objectives = objectives;
  s.candidates = std::move(cands);
  const auto &c = s.candidates;
  std::vector<bool> dominated(c.size(), false);
  auto value = [&](size_t i, const Objective &o) {
    auto it = c[i].objectives.find(o.metric);
    double v = it == c[i].objectives.end() ? 0 : it->second;
    return o.direction == "maximize" ? -v : v;
  };
  for (size_t a = 0; a < c.size(); ++a)
    for (size_t b = 0; b < c.size(); ++b) {
      if (a == b || !c[a].feasible || !c[b].feasible) continue;
      bool noWorse = true, better = false;
      std::vector<std::string> on;
      for (const Objective &o : objectives) {
        double x = value(a, o), y = value(b, o);
        if (x > y) noWorse = false;
        if (x < y) {
          better = true;
          on.push_back(o.metric);
        }
      }
      if (noWorse && better) {
        dominated[b] = true;
        s.dominance.push_back({c[a].id, c[b].id, on});
      }
    }
  // Among the non-dominated, the objectives in priority order decide.
  std::vector<Objective> byPriority = objectives;
  std::stable_sort(byPriority.begin(), byPriority.end(), [](auto &x, auto &y) { return x.priority < y.priority; });
  int best = -1;
  for (size_t i = 0; i < c.size(); ++i) {
    if (dominated[i] || !c[i].feasible) continue;
    if (best < 0) { best = int(i); continue; }
    for (const Objective &o : byPriority) {
      double x = value(i, o), y = value(size_t(best), o);
      if (x < y) { best = int(i); break; }
      if (x > y) break;
    }
  }
  s.selected = best >= 0 ? c[best].id : "";
  for (size_t i = 0; i < c.size(); ++i)
    if (dominated[i]) s.dominated.push_back(c[i].id);
  std::string rule = "non-dominated feasible candidates, then";
  for (const Objective &o : byPriority) rule += " " + o.direction + " " + o.metric + ",";
  rule += " then candidate order";
  s.selectionRule = rule;
  return s;
}

Json toJson(const PlanSet &s) {
  Json objectives = Json::array(), cands = Json::array(), dom = Json::array();
  for (const Objective &o : s.objectives)
    objectives.push_back({{"id", o.id}, {"metric", o.metric}, {"direction", o.direction}, {"priority", o.priority}});
  for (const Candidate &c : s.candidates) {
    Json j = {{"id", c.id}, {"digest", c.digest}, {"description", c.description}, {"feasible", c.feasible},
              {"objectives", c.objectives}};
    if (!c.feasible) j["rejection"] = c.rejection;
    cands.push_back(j);
  }
  for (const Dominance &d : s.dominance) dom.push_back({{"dominant", d.dominant}, {"dominated", d.dominated}, {"on", d.on}});
  return {{"schema", kPlanSetSchema}, {"objectives", objectives}, {"candidates", cands}, {"dominance", dom},
          {"dominated", s.dominated}, {"selected", s.selected}, {"selection_rule", s.selectionRule}};
}

PlanSet planSetFromJson(const Json &j) {
  ObjReader r(j, "");
  expectSchema(r, kPlanSetSchema);
  PlanSet s;
  r.each("objectives", [&](const Json &e, const std::string &p) {
    ObjReader o(e, p);
    s.objectives.push_back({o.str("id"), o.str("metric"), o.str("direction"), o.i64("priority")});
    o.done();
  });
  std::set<std::string> ids;
  r.each("candidates", [&](const Json &e, const std::string &p) {
    ObjReader o(e, p);
    Candidate c;
    c.id = o.str("id");
    if (!ids.insert(c.id).second) throw SchemaError(o.at("id"), "duplicate candidate id `" + c.id + "`");
    c.digest = o.str("digest");
    c.description = o.str("description");
    c.feasible = o.boolean("feasible");
    ObjReader v = o.obj("objectives");
    const Json &vals = o.req("objectives");
    for (auto it = vals.begin(); it != vals.end(); ++it) c.objectives[it.key()] = v.f64(it.key().c_str());
    v.done();
    if (!c.feasible) c.rejection = o.str("rejection");
    o.done();
    s.candidates.push_back(std::move(c));
  });
  auto known = [&](const std::string &id, const std::string &path) {
    if (!ids.count(id)) throw SchemaError(path, "unknown candidate `" + id + "`");
  };
  r.each("dominance", [&](const Json &e, const std::string &p) {
    ObjReader o(e, p);
    Dominance d{o.str("dominant"), o.str("dominated"), o.strs("on")};
    known(d.dominant, o.at("dominant"));
    known(d.dominated, o.at("dominated"));
    o.done();
    s.dominance.push_back(d);
  });
  s.dominated = r.strs("dominated");
  s.selected = r.str("selected");
  if (!s.selected.empty()) known(s.selected, "/selected");
  s.selectionRule = r.str("selection_rule");
  r.done();
  return s;
}

} // namespace linnet::planning
