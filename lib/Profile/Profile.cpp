//===- Profile.cpp - Measuring an artifact's entry against its plans ------===//

#include "linnet/Profile/Profile.h"

#include "linnet/Runtime/Artifact.h"
#include "linnet/Support/Input.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <tuple>

namespace linnet::profile {

namespace {
uint64_t nowNs() {
  // steady_clock is CLOCK_MONOTONIC on Linux, the timers' clock.
  return uint64_t(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

double median(std::vector<double> v) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

std::string entryPoint(const std::string &entry) { return "linnet_entry_" + entry; }
} // namespace

bool readArtifactPlans(const std::string &dir, ArtifactPlans &out, std::string &error) {
  std::unique_ptr<rt::VerifiedArtifact> art = rt::VerifiedArtifact::open(dir, error);
  if (!art)
    return false;
  auto doc = [&](const std::string &name, auto parse, auto &into) {
    std::string bytes;
    if (!art->read(name, bytes, error))
      return false;
    try {
      into = parse(planning::Json::parse(bytes));
    } catch (const planning::SchemaError &e) {
      error = fmt::format("{}/{}: {}: {}", dir, name, e.path, e.what());
      return false;
    } catch (const std::exception &e) {
      error = fmt::format("{}/{}: {}", dir, name, e.what());
      return false;
    }
    return true;
  };
  if (!doc("portable.json", planning::portableFromJson, out.portable) ||
      !doc("concrete.json", planning::concreteFromJson, out.concrete) ||
      !doc("machine.json", planning::machineFromJson, out.machine))
    return false;
  // The lineage is the manifest's: read as VerifiedArtifact read it, a
  // regular file within the JSON limit.
  std::string text, why;
  if (!input::readFile(dir + "/manifest.json", input::maxJsonBytes(), "LINNET_MAX_JSON_BYTES", text, why)) {
    error = fmt::format("{}/manifest.json: {}", dir, why);
    return false;
  }
  try {
    out.manifest = planning::manifestFromJson(planning::Json::parse(text));
  } catch (const std::exception &e) {
    error = fmt::format("{}/manifest.json: {}", dir, e.what());
    return false;
  }
  return true;
}

bool measure(rt::Model &model, const std::string &entry, const std::vector<rt::TensorView> &inputs,
             const RunOptions &options, Measurement &out, std::string &error) {
  out = Measurement();
  out.entry = entry;
  out.timerTasks = model.info().profileTasks;
  out.commandTimers = model.profiled();
  std::vector<rt::OwnedTensor> results;
  uint64_t dropped = 0;
  for (unsigned i = 0; i < options.warmup; ++i)
    if (!model.call(entry, inputs, results, error))
      return false;
  model.takeProfile(dropped); // the warm-up's events are not measured
  for (unsigned it = 0; it < options.iterations; ++it) {
    uint64_t begin = nowNs();
    bool ok = model.call(entry, inputs, results, error);
    uint64_t end = nowNs();
    if (!ok)
      return false;
    out.calls.push_back({begin, end});
    std::vector<rt::ProfileEvent> events = model.takeProfile(dropped);
    out.droppedEvents += dropped;
    for (const rt::TimedCommand &t : rt::pairProfileEvents(events, out.timerTasks.size()))
      out.commands.push_back({t.task, it, t.begin, t.end});
  }
  return true;
}

planning::ObservationSet observations(const Measurement &m, const planning::ConcretePlan &concrete,
                                      const std::string &libraryDigest) {
  std::map<std::string, const planning::Command *> commandOf;
  for (const planning::Command &c : concrete.commands)
    commandOf.emplace(c.portableTask, &c);
  std::map<uint32_t, std::pair<double, int64_t>> perTimer; // total ns, executions
  for (const CommandExecution &x : m.commands) {
    perTimer[x.timer].first += double(x.end - x.begin);
    perTimer[x.timer].second += 1;
  }
  const double n = std::max<double>(1, double(m.calls.size()));
  planning::ObservationSet obs;
  obs.id = "observations." + concrete.id + ".measured";
  obs.source = "measured";
  obs.subject = {{"concrete", planning::digestOf(planning::toJson(concrete))},
                 {"library", libraryDigest},
                 {"entry", m.entry}};
  double attributed = 0;
  for (const auto &[timer, total] : perTimer) {
    if (timer >= m.timerTasks.size())
      continue;
    auto c = commandOf.find(m.timerTasks[timer]);
    if (c == commandOf.end())
      continue;
    obs.records.push_back({c->second->id, m.timerTasks[timer], "duration_ns", total.first / double(total.second)});
    obs.records.push_back({c->second->id, m.timerTasks[timer], "executions", double(total.second) / n});
    attributed += total.first / n;
  }
  std::vector<double> wall;
  for (const TimedCall &c : m.calls)
    wall.push_back(double(c.end - c.begin));
  obs.records.push_back({entryPoint(m.entry), "", "call_ns", median(wall)});
  if (m.commandTimers)
    obs.records.push_back({entryPoint(m.entry), "", "attributed_ns", attributed});
  std::sort(obs.records.begin(), obs.records.end(), [](const auto &a, const auto &b) {
    return std::tie(a.command, a.metric) < std::tie(b.command, b.metric);
  });
  return obs;
}

planning::Timeline measuredTimeline(const Measurement &m, const planning::PortablePlan &portable,
                                    const planning::ConcretePlan &concrete,
                                    const planning::ProgramManifest &manifest,
                                    const planning::ObservationSet &observations, const std::string &artifact) {
  std::map<std::string, const planning::Command *> commandOf;
  for (const planning::Command &c : concrete.commands)
    commandOf.emplace(c.portableTask, &c);
  std::map<std::string, const planning::Task *> taskById;
  for (const planning::Task &t : portable.tasks)
    taskById[t.id] = &t;
  std::map<std::string, std::string> symbolOf;
  for (const planning::LineageEntry &l : manifest.lineage)
    if (l.machineSymbol)
      symbolOf[l.command] = *l.machineSymbol;

  planning::Timeline tl;
  uint64_t origin = m.calls.empty() ? 0 : m.calls.front().begin;
  auto us = [&](uint64_t ns) { return double(ns - std::min(ns, origin)) / 1000.0; };
  auto thread = [&](int64_t tid, const char *name) {
    planning::ChromeEvent ev;
    ev.name = "thread_name";
    ev.ph = "M";
    ev.pid = 1;
    ev.tid = tid;
    ev.args = {{"name", name}};
    tl.events.push_back(ev);
  };
  thread(1, "entry");
  thread(2, "commands");
  for (size_t i = 0; i < m.calls.size(); ++i) {
    planning::ChromeEvent ev;
    ev.name = m.entry;
    ev.cat = "entry";
    ev.ph = "X";
    ev.pid = 1;
    ev.tid = 1;
    ev.ts = us(m.calls[i].begin);
    ev.dur = double(m.calls[i].end - m.calls[i].begin) / 1000.0;
    ev.args = {{"entry_point", entryPoint(m.entry)}, {"iteration", i}};
    tl.events.push_back(ev);
  }
  for (const CommandExecution &x : m.commands) {
    const std::string task = x.timer < m.timerTasks.size() ? m.timerTasks[x.timer] : "";
    auto c = commandOf.find(task);
    std::string cmd = c == commandOf.end() ? "" : c->second->id;
    planning::ChromeEvent ev;
    ev.name = task;
    ev.cat = "command";
    ev.ph = "X";
    ev.pid = 1;
    ev.tid = 2;
    ev.ts = us(x.begin);
    ev.dur = double(x.end - x.begin) / 1000.0;
    ev.args = {{"command", cmd}, {"task", task}, {"iteration", x.iteration}};
    if (auto t = taskById.find(task); t != taskById.end()) {
      ev.args["source"] = t->second->provenance.location;
      ev.args["op"] = t->second->provenance.op;
      ev.name = t->second->name;
    }
    if (auto s = symbolOf.find(cmd); s != symbolOf.end())
      ev.args["symbol"] = s->second;
    tl.events.push_back(ev);
  }
  tl.bundle.source = "measured";
  tl.bundle.concrete = planning::digestOf(planning::toJson(concrete));
  tl.bundle.observations = planning::digestOf(planning::toJson(observations));
  tl.bundle.artifact = artifact;
  return tl;
}

} // namespace linnet::profile
