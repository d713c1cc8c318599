//===- DerivedTimeline.cpp - TimelineBundle -------------------------------===//
//
// The timeline bundle (digests of what it shows) and its Chrome trace-event
// export: a thread per queue, token signals, counter tracks.
//
//===----------------------------------------------------------------------===//
#include "DerivedImpl.h"

#include <algorithm>

namespace linnet::planning {

using namespace detail;

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
  Json bundle = t.bundle.source == "measured"
                    ? Json{{"schema", kTimelineSchema},
                           {"source", "measured"},
                           {"concrete", t.bundle.concrete},
                           {"observations", t.bundle.observations},
                           {"artifact", t.bundle.artifact},
                           {"diagnostics", diags}}
                    : Json{{"schema", kTimelineSchema},
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
    if (b.has("source")) {
      t.bundle.source = b.str("source");
      if (t.bundle.source != "measured")
        throw SchemaError(b.at("source"), "a TimelineBundle's source is `measured` when given, not `" +
                                               t.bundle.source + "`");
    }
    t.bundle.concrete = b.str("concrete");
    if (t.bundle.source == "measured") {
      t.bundle.observations = b.str("observations");
      t.bundle.artifact = b.str("artifact");
    } else {
      t.bundle.projection = b.str("projection");
      t.bundle.trace = b.str("trace");
      t.bundle.evaluationEvidence = b.str("evaluation_evidence");
      t.bundle.evidencePolicy = b.str("evidence_policy");
      t.bundle.simulationPolicy = b.str("simulation_policy");
    }
    b.each("diagnostics", [&](const Json &e, const std::string &p) {
      ObjReader o(e, p);
      t.bundle.diagnostics.push_back({o.str("code"), o.str("path")});
      o.done();
    });
    b.done();
    bool measured = t.bundle.source == "measured";
    for (const std::string *ref : {&t.bundle.concrete, measured ? &t.bundle.observations : &t.bundle.projection,
                                   measured ? &t.bundle.observations : &t.bundle.trace})
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

} // namespace linnet::planning
