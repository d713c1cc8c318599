//===- DerivedPlanSet.cpp - PlanSet ---------------------------------------===//
//
// Plan sets: candidates with their objective values, Pareto dominance among
// the feasible ones, and the choice.
//
//===----------------------------------------------------------------------===//
#include "DerivedImpl.h"

#include <algorithm>
#include <set>

namespace linnet::planning {

using namespace detail;

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
