//===- Concrete.cpp - ConcretePlanIR serialization and verifier -----------===//
#include "linnet/Planning/Concrete.h"

#include <algorithm>
#include <regex>
#include <set>

namespace linnet::planning {

template <class... Ts> struct Overloaded : Ts... { using Ts::operator()...; };
template <class... Ts> Overloaded(Ts...) -> Overloaded<Ts...>;

const char *bodyKind(const CommandBody &b) {
  static const char *names[] = {"launch", "collective", "transfer", "barrier",
                                "signal", "wait",       "host-call"};
  return names[b.index()];
}

const std::string *bodyImplementation(const CommandBody &b) {
  return std::visit(Overloaded{[](const Launch &l) -> const std::string * { return &l.implementation; },
                               [](const CollectiveCommand &c) -> const std::string * { return &c.implementation; },
                               [](const HostCall &h) -> const std::string * { return &h.implementation; },
                               [](const auto &) -> const std::string * { return nullptr; }},
                    b);
}

const std::string *bodyQueue(const CommandBody &b) {
  return std::visit(Overloaded{[](const Launch &l) -> const std::string * { return &l.queue; },
                               [](const CollectiveCommand &c) -> const std::string * { return &c.queue; },
                               [](const Transfer &t) -> const std::string * { return &t.queue; },
                               [](const auto &) -> const std::string * { return nullptr; }},
                    b);
}

const std::vector<std::string> *bodyBuffers(const CommandBody &b) {
  return std::visit(
      Overloaded{[](const Launch &l) -> const std::vector<std::string> * { return &l.buffers; },
                 [](const CollectiveCommand &c) -> const std::vector<std::string> * { return &c.buffers; },
                 [](const HostCall &h) -> const std::vector<std::string> * { return &h.buffers; },
                 [](const auto &) -> const std::vector<std::string> * { return nullptr; }},
      b);
}

std::vector<std::string> waitsOf(const Sync &s) {
  if (auto *w = std::get_if<WaitSync>(&s)) return w->wait;
  if (auto *w = std::get_if<WaitSignalSync>(&s)) return w->wait;
  return {};
}
std::vector<std::string> signalsOf(const Sync &s) {
  if (auto *w = std::get_if<SignalSync>(&s)) return w->signal;
  if (auto *w = std::get_if<WaitSignalSync>(&s)) return w->signal;
  return {};
}
Sync makeSync(std::vector<std::string> wait, std::vector<std::string> signal) {
  if (wait.empty() && signal.empty()) return NoSync{};
  if (signal.empty()) return WaitSync{std::move(wait)};
  if (wait.empty()) return SignalSync{std::move(signal)};
  return WaitSignalSync{std::move(wait), std::move(signal)};
}

const ImplementationRef *ConcretePlan::implementation(const std::string &id) const {
  for (const auto &i : implementations) if (i.id == id) return &i;
  return nullptr;
}
const Queue *ConcretePlan::queue(const std::string &id) const {
  for (const auto &q : queues) if (q.id == id) return &q;
  return nullptr;
}
const BufferRegion *ConcretePlan::buffer(const std::string &id) const {
  for (const auto &b : buffers) if (b.id == id) return &b;
  return nullptr;
}

namespace {
Json bodyJson(const CommandBody &b) {
  Json j = std::visit(
      Overloaded{
          [](const Launch &l) { return Json{{"implementation", l.implementation}, {"queue", l.queue}, {"buffers", l.buffers}}; },
          [](const CollectiveCommand &c) {
            return Json{{"implementation", c.implementation}, {"queue", c.queue}, {"collective", c.collective},
                        {"group", c.group}, {"buffers", c.buffers}};
          },
          [](const Transfer &t) {
            return Json{{"queue", t.queue}, {"source", t.source}, {"destination", t.destination}, {"bytes", t.bytes}};
          },
          [](const Barrier &b) { return Json{{"group", b.group}}; },
          [](const Signal &s) { return Json{{"token", s.token}}; },
          [](const Wait &w) { return Json{{"token", w.token}}; },
          [](const HostCall &h) { return Json{{"implementation", h.implementation}, {"buffers", h.buffers}}; }},
      b);
  j["kind"] = bodyKind(b);
  return j;
}

CommandBody bodyFrom(ObjReader r) {
  std::string kind = r.str("kind");
  CommandBody b;
  if (kind == "launch") b = Launch{r.str("implementation"), r.str("queue"), r.strs("buffers")};
  else if (kind == "collective")
    b = CollectiveCommand{r.str("implementation"), r.str("queue"), r.str("collective"), r.str("group"), r.strs("buffers")};
  else if (kind == "transfer") b = Transfer{r.str("queue"), r.str("source"), r.str("destination"), r.i64("bytes")};
  else if (kind == "barrier") b = Barrier{r.str("group")};
  else if (kind == "signal") b = Signal{r.str("token")};
  else if (kind == "wait") b = Wait{r.str("token")};
  else if (kind == "host-call") b = HostCall{r.str("implementation"), r.strs("buffers")};
  else throw SchemaError(r.at("kind"), "unknown command body `" + kind + "`");
  r.done();
  return b;
}

Json syncJson(const Sync &s) {
  static const char *kinds[] = {"none", "wait", "signal", "wait-and-signal"};
  Json j = {{"kind", kinds[s.index()]}};
  if (!waitsOf(s).empty()) j["wait"] = waitsOf(s);
  if (!signalsOf(s).empty()) j["signal"] = signalsOf(s);
  return j;
}

Sync syncFrom(ObjReader r) {
  std::string kind = r.str("kind");
  Sync s;
  if (kind == "none") s = NoSync{};
  else if (kind == "wait") s = WaitSync{r.strs("wait")};
  else if (kind == "signal") s = SignalSync{r.strs("signal")};
  else if (kind == "wait-and-signal") s = WaitSignalSync{r.strs("wait"), r.strs("signal")};
  else throw SchemaError(r.at("kind"), "unknown synchronization `" + kind + "`");
  r.done();
  return s;
}
} // namespace

Json toJson(const ConcretePlan &p) {
  Json impls = Json::array();
  for (const auto &i : p.implementations) {
    impls.push_back({{"id", i.id}, {"spec", i.spec}, {"kind", i.kind}, {"capability", i.capability},
                     {"symbol", i.symbol}, {"library", i.library}, {"routine", i.routine},
                     {"soname", i.soname}, {"workspace_bytes", i.workspaceBytes}});
    if (i.fewRowsAtMost > 0)
      impls.back()["few_rows"] = {{"rows_at_most", i.fewRowsAtMost},
                                  {"routine", i.fewRowsRoutine},
                                  {"rows_per_pass", i.fewRowsPerPass}};
  }
  Json devices = Json::array(), engines = Json::array(), queues = Json::array();
  for (const auto &d : p.devices)
    devices.push_back({{"id", d.id}, {"memory_space", d.memorySpace}, {"memory_free_bytes", d.memoryFreeBytes}});
  for (const auto &e : p.engines) engines.push_back({{"id", e.id}, {"device", e.device}, {"kind", e.kind}});
  for (const auto &q : p.queues) queues.push_back({{"id", q.id}, {"device", q.device}, {"engine", q.engine}});
  Json commands = Json::array();
  for (const auto &c : p.commands)
    commands.push_back({{"id", c.id}, {"body", bodyJson(c.body)}, {"sync", syncJson(c.sync)},
                        {"depends_on", c.dependsOn}, {"portable_task", c.portableTask}});
  Json buffers = Json::array();
  for (const auto &b : p.buffers)
    buffers.push_back({{"id", b.id}, {"portable_buffer", b.portableBuffer}, {"memory_space", b.memorySpace},
                       {"external", b.external}, {"offset", b.offset}, {"bytes", b.bytes},
                       {"alignment", b.alignment}, {"first_command", b.firstCommand},
                       {"last_command", b.lastCommand}, {"replaced_bound_bytes", b.replacedBoundBytes},
                       {"persistent", b.persistent}});
  Json arenas = Json::array();
  for (const auto &a : p.arenas)
    arenas.push_back({{"memory_space", a.memorySpace}, {"arena_bytes", a.arenaBytes},
                      {"lower_bound_bytes", a.lowerBoundBytes}, {"external_bytes", a.externalBytes},
                    {"persistent_bytes", a.persistentBytes}});
  Json ext = std::visit(
      Overloaded{[](const CpuSchedule &c) {
                   return Json{{"kind", "cpu-schedule"}, {"threads_per_rank", c.threadsPerRank}, {"vector_bits", c.vectorBits}};
                 },
                 [](const CudaSchedule &c) {
                   Json l = Json::array();
                   for (const auto &x : c.launches)
                     l.push_back({{"command", x.command}, {"grid_x", x.gridX}, {"block_x", x.blockX}, {"shared_bytes", x.sharedBytes}});
                   return Json{{"kind", "cuda-schedule"}, {"launches", l}};
                 }},
      p.extension);
  return {{"schema", p.schema},
          {"id", p.id},
          {"portable", {{"id", p.portableId}, {"digest", p.portableDigest}}},
          {"target", {{"id", p.targetId}, {"fingerprint", p.targetFingerprint}}},
          {"deployment", {{"id", p.deploymentId}, {"fingerprint", p.deploymentFingerprint}}},
          {"abi_fingerprint", p.abiFingerprint},
          {"planner_revision", p.plannerRevision},
          {"planning_evidence", {{"revision", p.planningEvidenceRevision}, {"fingerprint", p.planningEvidenceFingerprint}}},
          {"implementation_policy_fingerprint", p.implementationPolicyFingerprint},
          {"ranks", p.ranks},
          {"rank_devices", p.rankDevices},
          {"devices", devices},
          {"engines", engines},
          {"queues", queues},
          {"implementations", impls},
          {"commands", commands},
          {"buffers", buffers},
          {"arenas", arenas},
          {"extension", ext}};
}

ConcretePlan concreteFromJson(const Json &j) {
  ObjReader r(j, "");
  ConcretePlan p;
  p.schema = r.str("schema");
  if (p.schema != kConcreteSchema)
    throw SchemaError("/schema", "unsupported schema `" + p.schema + "`");
  p.id = r.str("id");
  auto pair = [&](const char *key, const char *second, std::string &a, std::string &b) {
    ObjReader o = r.obj(key);
    a = o.str(key == std::string("planning_evidence") ? "revision" : "id");
    b = o.str(second);
    o.done();
  };
  pair("portable", "digest", p.portableId, p.portableDigest);
  pair("target", "fingerprint", p.targetId, p.targetFingerprint);
  pair("deployment", "fingerprint", p.deploymentId, p.deploymentFingerprint);
  pair("planning_evidence", "fingerprint", p.planningEvidenceRevision, p.planningEvidenceFingerprint);
  p.abiFingerprint = r.str("abi_fingerprint");
  p.plannerRevision = r.str("planner_revision");
  p.implementationPolicyFingerprint = r.str("implementation_policy_fingerprint");
  p.ranks = r.i64("ranks");
  p.rankDevices = r.strs("rank_devices");
  r.each("devices", [&](const Json &e, const std::string &path) {
    ObjReader o(e, path);
    p.devices.push_back({o.str("id"), o.str("memory_space"), o.i64("memory_free_bytes")});
    o.done();
  });
  r.each("engines", [&](const Json &e, const std::string &path) {
    ObjReader o(e, path);
    p.engines.push_back({o.str("id"), o.str("device"), o.str("kind")});
    o.done();
  });
  r.each("queues", [&](const Json &e, const std::string &path) {
    ObjReader o(e, path);
    p.queues.push_back({o.str("id"), o.str("device"), o.str("engine")});
    o.done();
  });
  r.each("implementations", [&](const Json &e, const std::string &path) {
    ObjReader o(e, path);
    p.implementations.push_back({o.str("id"), o.str("spec"), o.str("kind"), o.str("capability"), o.str("symbol"),
                                 o.str("library"), o.str("routine"), o.str("soname"), o.i64("workspace_bytes"),
                                 /*fewRowsAtMost=*/0, /*fewRowsPerPass=*/0, /*fewRowsRoutine=*/""});
    if (o.has("few_rows")) {
      ObjReader f = o.obj("few_rows");
      ImplementationRef &r = p.implementations.back();
      r.fewRowsAtMost = f.i64("rows_at_most");
      r.fewRowsRoutine = f.str("routine");
      r.fewRowsPerPass = f.i64("rows_per_pass");
      if (r.fewRowsAtMost < 1 || r.fewRowsPerPass < 1 || r.fewRowsRoutine.empty())
        throw SchemaError(f.path(), "rows_at_most and rows_per_pass must be at least 1, routine named");
      f.done();
    }
    o.done();
  });
  r.each("commands", [&](const Json &e, const std::string &path) {
    ObjReader o(e, path);
    Command c;
    c.id = o.str("id");
    c.body = bodyFrom(o.obj("body"));
    c.sync = syncFrom(o.obj("sync"));
    c.dependsOn = o.strs("depends_on");
    c.portableTask = o.str("portable_task");
    o.done();
    p.commands.push_back(std::move(c));
  });
  r.each("buffers", [&](const Json &e, const std::string &path) {
    ObjReader o(e, path);
    BufferRegion b;
    b.id = o.str("id");
    b.portableBuffer = o.str("portable_buffer");
    b.memorySpace = o.str("memory_space");
    b.external = o.boolean("external");
    b.offset = o.i64("offset");
    b.bytes = o.i64("bytes");
    b.alignment = o.i64("alignment");
    b.firstCommand = o.i64("first_command");
    b.lastCommand = o.i64("last_command");
    b.replacedBoundBytes = o.i64("replaced_bound_bytes");
    b.persistent = o.has("persistent") && o.boolean("persistent");
    o.done();
    p.buffers.push_back(std::move(b));
  });
  r.each("arenas", [&](const Json &e, const std::string &path) {
    ObjReader o(e, path);
    p.arenas.push_back({o.str("memory_space"), o.i64("arena_bytes"), o.i64("lower_bound_bytes"), o.i64("external_bytes"),
                        o.has("persistent_bytes") ? o.i64("persistent_bytes") : 0});
    o.done();
  });
  {
    ObjReader x = r.obj("extension");
    std::string kind = x.str("kind");
    if (kind == "cpu-schedule") {
      p.extension = CpuSchedule{x.i64("threads_per_rank"), x.i64("vector_bits")};
    } else if (kind == "cuda-schedule") {
      CudaSchedule cs;
      x.each("launches", [&](const Json &e, const std::string &path) {
        ObjReader o(e, path);
        cs.launches.push_back({o.str("command"), o.i64("grid_x"), o.i64("block_x"), o.i64("shared_bytes")});
        o.done();
      });
      p.extension = cs;
    } else {
      throw SchemaError(x.at("kind"), "unknown target schedule extension `" + kind + "`");
    }
    x.done();
  }
  r.done();
  return p;
}

namespace {
struct ConcreteVerifier {
  const ConcretePlan &p;
  const ConcreteContext &ctx;
  Diagnostics out;
  std::map<std::string, size_t> cmdIndex;
  std::vector<std::set<size_t>> ancestors;

  void err(const char *code, std::string path, std::string msg) { out.push_back({code, std::move(path), std::move(msg)}); }
  std::string cp(size_t i) const { return "/commands/" + std::to_string(i); }

  bool reaches(size_t a, size_t b) const { return b < ancestors.size() && ancestors[b].count(a); }

  void dag() {
    for (size_t i = 0; i < p.commands.size(); ++i)
      if (!cmdIndex.emplace(p.commands[i].id, i).second)
        err("concrete.dag", cp(i) + "/id", "duplicate command id `" + p.commands[i].id + "`");
    ancestors.assign(p.commands.size(), {});
    // Acyclicity first (Kahn over depends_on), then issue order.
    {
      std::vector<int> indeg(p.commands.size(), 0);
      std::vector<std::vector<size_t>> succ(p.commands.size());
      for (size_t i = 0; i < p.commands.size(); ++i)
        for (const std::string &d : p.commands[i].dependsOn)
          if (auto it = cmdIndex.find(d); it != cmdIndex.end()) {
            succ[it->second].push_back(i);
            ++indeg[i];
          }
      std::vector<size_t> ready;
      for (size_t i = 0; i < indeg.size(); ++i)
        if (!indeg[i]) ready.push_back(i);
      size_t seen = 0;
      while (!ready.empty()) {
        size_t n = ready.back();
        ready.pop_back();
        ++seen;
        for (size_t s : succ[n])
          if (!--indeg[s]) ready.push_back(s);
      }
      if (seen != p.commands.size()) {
        err("concrete.dag", "/commands", "the command dependencies form a cycle");
        return;
      }
    }
    // Issue order must be a topological order: a dependency on a later (or
    // the same) command is a cycle or an ordering violation.
    for (size_t i = 0; i < p.commands.size(); ++i)
      for (size_t k = 0; k < p.commands[i].dependsOn.size(); ++k) {
        const std::string &d = p.commands[i].dependsOn[k];
        auto it = cmdIndex.find(d);
        std::string path = cp(i) + "/depends_on/" + std::to_string(k);
        if (it == cmdIndex.end()) {
          err("concrete.dag", path, "dependency on unknown command `" + d + "`");
          continue;
        }
        if (it->second >= i) {
          err(it->second == i ? "concrete.dag" : "concrete.ordering", path,
              it->second == i ? "command `" + d + "` depends on itself"
                              : "command `" + p.commands[i].id + "` is issued before its dependency `" + d + "`");
          continue;
        }
        ancestors[i].insert(it->second);
        ancestors[i].insert(ancestors[it->second].begin(), ancestors[it->second].end());
      }
  }

  void tokens() {
    std::map<std::string, size_t> producer;
    for (size_t i = 0; i < p.commands.size(); ++i) {
      std::vector<std::string> sig = signalsOf(p.commands[i].sync);
      if (auto *s = std::get_if<Signal>(&p.commands[i].body)) sig.push_back(s->token);
      for (const std::string &t : sig)
        if (!producer.emplace(t, i).second)
          err("concrete.tokens", cp(i) + "/sync", "token `" + t + "` is signaled twice");
    }
    std::set<std::string> consumed;
    for (size_t i = 0; i < p.commands.size(); ++i) {
      std::vector<std::string> w = waitsOf(p.commands[i].sync);
      if (auto *s = std::get_if<Wait>(&p.commands[i].body)) w.push_back(s->token);
      for (const std::string &t : w) {
        consumed.insert(t);
        auto it = producer.find(t);
        if (it == producer.end())
          err("concrete.tokens", cp(i) + "/sync", "token `" + t + "` is waited on but never signaled");
        else if (!reaches(it->second, i))
          err("concrete.tokens", cp(i) + "/sync",
              "token `" + t + "` is waited on by `" + p.commands[i].id + "`, which does not depend on its producer `" +
                  p.commands[it->second].id + "`");
      }
    }
    for (auto &[t, i] : producer)
      if (!consumed.count(t))
        err("concrete.tokens", cp(i) + "/sync", "token `" + t + "` is signaled but never consumed");
  }

  void synchronization() {
    // A dependency between commands on different queues (or issued by the
    // host) is only honoured through a token the consumer waits on.
    for (size_t i = 0; i < p.commands.size(); ++i) {
      const Command &c = p.commands[i];
      const std::string *q = bodyQueue(c.body);
      std::vector<std::string> w = waitsOf(c.sync);
      for (const std::string &d : c.dependsOn) {
        auto it = cmdIndex.find(d);
        if (it == cmdIndex.end() || it->second >= i) continue;
        const Command &dep = p.commands[it->second];
        const std::string *dq = bodyQueue(dep.body);
        if (q && dq && *q == *dq) continue; // in-order queue
        std::vector<std::string> s = signalsOf(dep.sync);
        bool synced = std::any_of(s.begin(), s.end(), [&](const std::string &t) {
          return std::find(w.begin(), w.end(), t) != w.end();
        });
        if (!synced && (q || dq))
          err("concrete.synchronization", cp(i) + "/sync",
              "`" + c.id + "` depends on `" + d + "` on another resource but waits on no token it signals");
      }
    }
  }

  void coverage() {
    std::set<std::string> implIds;
    for (size_t i = 0; i < p.implementations.size(); ++i) {
      const ImplementationRef &r = p.implementations[i];
      std::string path = "/implementations/" + std::to_string(i);
      if (!implIds.insert(r.id).second)
        err("concrete.implementation", path, "duplicate implementation `" + r.id + "`");
      if (r.kind == "generated" && r.symbol.empty())
        err("concrete.implementation", path, "generated implementation `" + r.id + "` has no symbol");
      if ((r.kind == "library" || r.kind == "collective") && (r.library.empty() || r.routine.empty()))
        err("concrete.implementation", path, "library implementation `" + r.id + "` names no library routine");
      if (r.workspaceBytes < 0)
        err("concrete.implementation", path, "negative workspace");
    }
    for (size_t i = 0; i < p.commands.size(); ++i) {
      const Command &c = p.commands[i];
      const std::string *impl = bodyImplementation(c.body);
      if (impl && (impl->empty() || !implIds.count(*impl)))
        err("concrete.implementation", cp(i) + "/body/implementation",
            std::string("executable ") + bodyKind(c.body) + " `" + c.id + "` has no valid ImplementationRef");
    }
    if (ctx.portable)
      for (const Task &t : ctx.portable->tasks)
        if (std::none_of(p.commands.begin(), p.commands.end(),
                         [&](const Command &c) { return c.portableTask == t.id && bodyImplementation(c.body); }))
          err("concrete.implementation", "/commands",
              "portable task `" + t.id + "` has no executable command implementing it");
  }

  void placement() {
    std::set<std::string> devs, spaces;
    for (const Device &d : p.devices) {
      devs.insert(d.id);
      spaces.insert(d.memorySpace);
    }
    if (int64_t(p.rankDevices.size()) != p.ranks)
      err("concrete.placement", "/rank_devices", "one device per rank is required");
    for (size_t i = 0; i < p.rankDevices.size(); ++i)
      if (!devs.count(p.rankDevices[i]))
        err("concrete.placement", "/rank_devices/" + std::to_string(i), "unknown device `" + p.rankDevices[i] + "`");
    std::map<std::string, std::string> engineDevice;
    for (size_t i = 0; i < p.engines.size(); ++i) {
      engineDevice[p.engines[i].id] = p.engines[i].device;
      if (!devs.count(p.engines[i].device))
        err("concrete.placement", "/engines/" + std::to_string(i), "engine on unknown device `" + p.engines[i].device + "`");
    }
    for (size_t i = 0; i < p.queues.size(); ++i) {
      auto it = engineDevice.find(p.queues[i].engine);
      if (it == engineDevice.end() || it->second != p.queues[i].device)
        err("concrete.placement", "/queues/" + std::to_string(i),
            "queue `" + p.queues[i].id + "` is not on an engine of its device `" + p.queues[i].device + "`");
    }
    for (size_t i = 0; i < p.commands.size(); ++i) {
      const CommandBody &b = p.commands[i].body;
      const std::string *q = bodyQueue(b);
      const Queue *queue = q ? p.queue(*q) : nullptr;
      if (q && !queue)
        err("concrete.placement", cp(i) + "/body/queue", "unknown queue `" + *q + "`");
      if (const auto *bufs = bodyBuffers(b))
        for (const std::string &bid : *bufs) {
          const BufferRegion *br = p.buffer(bid);
          if (!br) {
            err("concrete.placement", cp(i) + "/body/buffers", "unknown buffer `" + bid + "`");
            continue;
          }
          if (queue && br->memorySpace.rfind(queue->device + "/", 0) != 0)
            err("concrete.placement", cp(i) + "/body/buffers",
                "buffer `" + bid + "` in `" + br->memorySpace + "` is not reachable from queue `" + queue->id + "`");
        }
    }
    for (size_t i = 0; i < p.buffers.size(); ++i)
      if (!spaces.count(p.buffers[i].memorySpace))
        err("concrete.placement", "/buffers/" + std::to_string(i) + "/memory_space",
            "unknown memory space `" + p.buffers[i].memorySpace + "`");
  }

  void buffers() {
    for (size_t i = 0; i < p.buffers.size(); ++i) {
      const BufferRegion &b = p.buffers[i];
      std::string path = "/buffers/" + std::to_string(i);
      if (!b.persistent &&
          (b.firstCommand < 0 || b.firstCommand > b.lastCommand || b.lastCommand >= int64_t(p.commands.size())))
        err("concrete.buffer-lifetime", path, "lifetime of `" + b.id + "` is not a valid command interval");
      for (size_t c = 0; c < p.commands.size(); ++c)
        if (const auto *bufs = bodyBuffers(p.commands[c].body))
          if (std::count(bufs->begin(), bufs->end(), b.id) && !b.external && !b.persistent &&
              (int64_t(c) < b.firstCommand || int64_t(c) > b.lastCommand))
            err("concrete.buffer-lifetime", path,
                "`" + b.id + "` is used by `" + p.commands[c].id + "` outside its lifetime");
      if (b.external || b.persistent) continue;
      const ArenaReport *arena = nullptr;
      for (const auto &a : p.arenas) if (a.memorySpace == b.memorySpace) arena = &a;
      if (b.offset < 0 || b.bytes < 0 || (b.alignment > 0 && b.offset % b.alignment) ||
          !arena || b.offset + b.bytes > arena->arenaBytes)
        err("concrete.address-bounds", path,
            "`" + b.id + "` at [" + std::to_string(b.offset) + ", " + std::to_string(b.offset + b.bytes) +
                ") is misaligned or outside its arena of " + std::to_string(arena ? arena->arenaBytes : 0) + " B");
      for (size_t k = i + 1; k < p.buffers.size(); ++k) {
        const BufferRegion &o = p.buffers[k];
        if (o.external || o.persistent || o.memorySpace != b.memorySpace || !b.bytes || !o.bytes) continue;
        bool liveTogether = b.firstCommand <= o.lastCommand && o.firstCommand <= b.lastCommand;
        bool overlap = b.offset < o.offset + o.bytes && o.offset < b.offset + b.bytes;
        if (liveTogether && overlap)
          err("concrete.buffer-overlap", path,
              "`" + b.id + "` and `" + o.id + "` are live at the same time and overlap in memory");
      }
    }
  }

  void capacity() {
    for (size_t d = 0; d < p.devices.size(); ++d) {
      const Device &dev = p.devices[d];
      int64_t ranksHere = std::count(p.rankDevices.begin(), p.rankDevices.end(), dev.id);
      int64_t need = 0;
      for (const auto &a : p.arenas)
        if (a.memorySpace == dev.memorySpace) need += (a.arenaBytes + a.externalBytes + a.persistentBytes) * ranksHere;
      if (need > dev.memoryFreeBytes)
        err("concrete.capacity", "/devices/" + std::to_string(d),
            "device `" + dev.id + "` needs " + formatBytes(need) + " for " + std::to_string(ranksHere) +
                " rank(s) but has " + formatBytes(dev.memoryFreeBytes) + " free");
    }
  }

  void fingerprints() {
    static const std::regex digest(R"(sha256:[0-9a-f]{64})");
    std::pair<const char *, const std::string *> fps[] = {
        {"/portable/digest", &p.portableDigest},
        {"/target/fingerprint", &p.targetFingerprint},
        {"/deployment/fingerprint", &p.deploymentFingerprint},
        {"/abi_fingerprint", &p.abiFingerprint},
        {"/planning_evidence/fingerprint", &p.planningEvidenceFingerprint},
        {"/implementation_policy_fingerprint", &p.implementationPolicyFingerprint}};
    for (auto [path, v] : fps)
      if (!std::regex_match(*v, digest))
        err("concrete.fingerprint", path, "not a sha256 digest");
    if (p.planningEvidenceRevision.empty() || p.plannerRevision.empty())
      err("concrete.fingerprint", "/planning_evidence", "planner and planning-evidence revisions are required");
    if (ctx.portable && digestOf(toJson(*ctx.portable)) != p.portableDigest)
      err("concrete.fingerprint", "/portable/digest", "does not match the portable plan it claims to bind");
    if (ctx.target && (ctx.target->fingerprint() != p.targetFingerprint || ctx.target->id != p.targetId))
      err("concrete.fingerprint", "/target", "was bound against a different target than `" + ctx.target->id + "`");
    if (ctx.target && ctx.target->abiFingerprint() != p.abiFingerprint)
      err("concrete.fingerprint", "/abi_fingerprint", "does not match target `" + ctx.target->id + "`'s ABI");
    if (ctx.deployment && ctx.deployment->fingerprint() != p.deploymentFingerprint)
      err("concrete.fingerprint", "/deployment", "was bound against a different deployment than `" + ctx.deployment->id + "`");
  }

  void extension() {
    std::string want = ctx.target ? ctx.target->kind : "";
    if (auto *c = std::get_if<CpuSchedule>(&p.extension)) {
      if (want == "cuda")
        err("concrete.extension", "/extension/kind", "a CUDA plan carries a CPU schedule extension");
      if (c->threadsPerRank < 1 || (ctx.target && c->threadsPerRank > ctx.target->cores))
        err("concrete.extension", "/extension/threads_per_rank", "threads per rank must lie in [1, cores]");
    } else if (auto *c = std::get_if<CudaSchedule>(&p.extension)) {
      if (want == "cpu")
        err("concrete.extension", "/extension/kind", "a CPU plan carries a CUDA schedule extension");
      int64_t maxThreads = ctx.target ? ctx.target->maxThreadsPerBlock : 1024;
      for (size_t i = 0; i < c->launches.size(); ++i) {
        const CudaLaunchConfig &l = c->launches[i];
        std::string path = "/extension/launches/" + std::to_string(i);
        auto it = cmdIndex.find(l.command);
        if (it == cmdIndex.end() || !std::holds_alternative<Launch>(p.commands[it->second].body))
          err("concrete.extension", path + "/command", "`" + l.command + "` is not a launch command");
        if (l.gridX < 1 || l.blockX < 1 || l.blockX > maxThreads || l.blockX % 32)
          err("concrete.extension", path, "block size must be a multiple of 32 in [32, " + std::to_string(maxThreads) +
                                              "] and the grid non-empty");
      }
    }
  }

  void lineage() {
    for (size_t i = 0; i < p.commands.size(); ++i) {
      const Command &c = p.commands[i];
      if (!bodyImplementation(c.body) && !bodyQueue(c.body)) continue; // host sync needs no task
      if (c.portableTask.empty())
        err("concrete.lineage", cp(i) + "/portable_task", "command `" + c.id + "` has no portable task");
      else if (ctx.portable && !ctx.portable->task(c.portableTask))
        err("concrete.lineage", cp(i) + "/portable_task", "unknown portable task `" + c.portableTask + "`");
    }
    if (ctx.portable)
      for (size_t i = 0; i < p.buffers.size(); ++i)
        if (!ctx.portable->buffer(p.buffers[i].portableBuffer))
          err("concrete.lineage", "/buffers/" + std::to_string(i) + "/portable_buffer",
              "unknown portable buffer `" + p.buffers[i].portableBuffer + "`");
  }
};
} // namespace

Diagnostics verifyConcrete(const ConcretePlan &p, const ConcreteContext &ctx) {
  ConcreteVerifier v{p, ctx, {}, {}, {}};
  if (p.schema != kConcreteSchema) v.err("concrete.schema", "/schema", "unsupported schema");
  v.dag();
  v.tokens();
  v.synchronization();
  v.coverage();
  v.placement();
  v.buffers();
  v.capacity();
  v.fingerprints();
  v.extension();
  v.lineage();
  return v.out;
}

} // namespace linnet::planning
