//===- DerivedReport.cpp - EvaluationReport, validation, calibration ------===//
//
// The evaluation report (objectives, constraints, bottlenecks), its
// validation against measured observations, and evidence calibrated from
// them.
//
//===----------------------------------------------------------------------===//
#include "DerivedImpl.h"
#include "linnet/Planning/Binding.h"

#include <algorithm>
#include <cmath>

namespace linnet::planning {

using namespace detail;

// --- EvaluationReport --------------------------------------------------------

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

// --- Validation and calibration ----------------------------------------------

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
  return calibrateEvidence(e, {{&p, &measured}}, c, t, why);
}

std::optional<Json> calibrateEvidence(const EvidencePolicy &e, const std::vector<CalibrationRun> &runs,
                                      const ConcretePlan &c, const Target &t, std::string &why) {
  // One row per measured command of each run: [1, compute, memory] seconds
  // at full efficiency (only the side the current evidence bounds it by),
  // by the facts of the plan at that run's extents; weight = executions per
  // call, target = measured seconds per execution.
  struct Row {
    double x[3], y, w;
    std::string impl; // the command's implementation key
  };
  std::map<std::string, const ImplementationRef *> implOf = taskImplementations(c);
  std::vector<Row> rows;
  std::string digests;
  for (const CalibrationRun &run : runs) {
    if (run.measured->source != "measured") {
      why = "calibration needs measured observations (source `measured`), not `" + run.measured->source + "`";
      return std::nullopt;
    }
    auto rec = recordsOf(*run.measured);
    digests += digestOf(toJson(*run.measured));
    for (const Command &cmd : c.commands) {
      auto d = rec.find({cmd.id, "duration_ns"});
      auto n = rec.find({cmd.id, "executions"});
      const Task *planned = run.plan->task(cmd.portableTask);
      if (d == rec.end() || n == rec.end() || !planned || planned->resources.engineClass == "communication")
        continue;
      // The task as the code that ran it reads, at this run's extents.
      EffectiveTask et =
          effectiveTask(*planned, implOf.count(cmd.portableTask) ? implOf.at(cmd.portableTask) : nullptr);
      auto [compute, memory] = rooflineSides(et.task, t);
      std::string impl = et.key;
      Evidence cur = e.evaluation.forImplementation(impl);
      bool computeBound = compute / cur.computeEfficiency > memory / cur.memoryEfficiency;
      rows.push_back({{1, computeBound ? compute : 0, computeBound ? 0 : memory}, d->second * 1e-9,
                      std::max(1.0, n->second), impl});
    }
  }
  if (rows.size() < 3) {
    why = "calibration needs at least 3 measured commands, found " + std::to_string(rows.size());
    return std::nullopt;
  }
  // Weighted least squares over the terms in `use` (y less a fixed
  // overhead where one is given); the subset with the least residual among
  // those whose coefficients are all non-negative wins.
  auto fit = [](const std::vector<const Row *> &rs, const std::vector<std::vector<int>> &subsets,
                double overhead) -> std::vector<double> {
    auto solve = [&](const std::vector<int> &use, std::vector<double> &coef) {
      size_t k = use.size();
      std::vector<std::vector<double>> a(k, std::vector<double>(k + 1, 0));
      for (const Row *r : rs)
        for (size_t i = 0; i < k; ++i) {
          for (size_t j = 0; j < k; ++j)
            a[i][j] += r->w * r->x[use[i]] * r->x[use[j]];
          a[i][k] += r->w * r->x[use[i]] * (r->y - overhead);
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
      coef[0] = overhead;
      for (size_t i = 0; i < k; ++i)
        coef[use[i]] = a[i][k] / a[i][i];
      return true;
    };
    std::vector<double> best;
    double bestResidual = -1;
    for (const std::vector<int> &use : subsets) {
      std::vector<double> coef;
      if (!solve(use, coef) || coef[0] < 0 || coef[1] < 0 || coef[2] < 0)
        continue;
      double res = 0;
      for (const Row *r : rs) {
        double pred = coef[0] + coef[1] * r->x[1] + coef[2] * r->x[2];
        res += r->w * (pred - r->y) * (pred - r->y);
      }
      if (bestResidual < 0 || res < bestResidual) {
        bestResidual = res;
        best = coef;
      }
    }
    return best;
  };
  std::vector<const Row *> all;
  for (const Row &r : rows)
    all.push_back(&r);
  std::vector<double> best = fit(all, {{0, 1, 2}, {0, 2}, {0, 1}, {1, 2}, {2}, {1}}, 0);
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
  // Then each implementation with commands enough for its own fit (the
  // overhead shared): its efficiencies where they differ from the rest.
  std::map<std::string, std::vector<const Row *>> byImpl;
  for (const Row &r : rows)
    if (!r.impl.empty())
      byImpl[r.impl].push_back(&r);
  Json impls = Json::object();
  for (const auto &[impl, rs] : byImpl) {
    if (rs.size() < 3)
      continue;
    std::vector<double> coef = fit(rs, {{1, 2}, {2}, {1}}, best[0]);
    if (coef.empty())
      continue;
    impls[impl] = {{"compute_efficiency", efficiency(coef[1], ev["compute_efficiency"].get<double>())},
                   {"memory_efficiency", efficiency(coef[2], ev["memory_efficiency"].get<double>())}};
  }
  if (!impls.empty())
    ev["implementations"] = impls;
  else
    ev.erase("implementations");
  // One run keeps its observations' digest; several, the digest of theirs.
  std::string digest = runs.size() == 1 ? digestOf(toJson(*runs[0].measured)) : digestOf(Json(digests));
  ev["revision"] = "evaluation-evidence/calibrated-" + digest.substr(7, 12);
  ev["source"] = "fitted by linnet profile from measured observations " + digest + " of `" + c.id + "` on target `" +
                 t.id + "`" + (runs.size() > 1 ? " (" + std::to_string(runs.size()) + " runs)" : "") +
                 ": per command, overhead + compute/efficiency + memory/efficiency, least squares weighted "
                 "by executions over " + std::to_string(rows.size()) + " commands";
  doc["id"] = e.id + "+calibrated";
  return doc;
}

} // namespace linnet::planning
