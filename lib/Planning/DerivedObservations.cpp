//===- DerivedObservations.cpp - ObservationSet ---------------------------===//
//
// Observation sets: immutable simulated or measured records per command
// and metric; a new revision supersedes the digest of the one it replaces.
//
//===----------------------------------------------------------------------===//
#include "DerivedImpl.h"

#include <set>

namespace linnet::planning {

using namespace detail;

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

} // namespace linnet::planning
