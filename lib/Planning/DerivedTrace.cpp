//===- DerivedTrace.cpp - SimulationTraceIR -------------------------------===//
//
// The simulation trace: a discrete-event simulation of the concrete plan
// (kSimulationAdapter), each event with its lineage, and counter samples.
//
//===----------------------------------------------------------------------===//
#include "DerivedImpl.h"

#include <algorithm>
#include <set>

namespace linnet::planning {

using namespace detail;

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

} // namespace linnet::planning
