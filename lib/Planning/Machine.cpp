//===- Machine.cpp - MachineIR container and target verifier --------------===//
#include "linnet/Planning/Machine.h"

#include <algorithm>
#include <set>

namespace linnet::planning {

Json toJson(const MachineIR &m) {
  Json sections = Json::array(), symbols = Json::array(), entries = Json::array(), exes = Json::array();
  for (const auto &s : m.sections)
    sections.push_back({{"name", s.name}, {"kind", s.kind}, {"state", s.state}, {"bytes", s.bytes}, {"digest", s.digest}});
  for (const auto &s : m.symbols)
    symbols.push_back({{"name", s.name}, {"section", s.section}, {"kind", s.kind}, {"implementation", s.implementation}});
  for (const auto &e : m.entryPoints) entries.push_back({{"name", e.name}, {"commands", e.commands}});
  for (const auto &x : m.executables)
    exes.push_back({{"implementation", x.implementation}, {"kind", x.kind}, {"symbol", x.symbol},
                    {"soname", x.soname}, {"routine", x.routine}});
  return {{"schema", m.schema},
          {"target", {{"id", m.targetId}, {"kind", m.targetKind}}},
          {"abi", {{"triple", m.abiTriple}, {"fingerprint", m.abiFingerprint}}},
          {"concrete_digest", m.concreteDigest},
          {"sections", sections},
          {"symbols", symbols},
          {"entry_points", entries},
          {"executables", exes}};
}

MachineIR machineFromJson(const Json &j) {
  ObjReader r(j, "");
  MachineIR m;
  m.schema = r.str("schema");
  if (m.schema != kMachineSchema) throw SchemaError("/schema", "unsupported schema `" + m.schema + "`");
  {
    ObjReader t = r.obj("target");
    m.targetId = t.str("id");
    m.targetKind = t.str("kind");
    t.done();
    ObjReader a = r.obj("abi");
    m.abiTriple = a.str("triple");
    m.abiFingerprint = a.str("fingerprint");
    a.done();
  }
  m.concreteDigest = r.str("concrete_digest");
  r.each("sections", [&](const Json &e, const std::string &p) {
    ObjReader o(e, p);
    m.sections.push_back({o.str("name"), o.str("kind"), o.str("state"), o.i64("bytes"), o.str("digest")});
    o.done();
  });
  r.each("symbols", [&](const Json &e, const std::string &p) {
    ObjReader o(e, p);
    m.symbols.push_back({o.str("name"), o.str("section"), o.str("kind"), o.str("implementation")});
    o.done();
  });
  r.each("entry_points", [&](const Json &e, const std::string &p) {
    ObjReader o(e, p);
    m.entryPoints.push_back({o.str("name"), o.strs("commands")});
    o.done();
  });
  r.each("executables", [&](const Json &e, const std::string &p) {
    ObjReader o(e, p);
    m.executables.push_back({o.str("implementation"), o.str("kind"), o.str("symbol"), o.str("soname"), o.str("routine")});
    o.done();
  });
  r.done();
  return m;
}

MachineIR lowerToMachine(const ConcretePlan &c, const Target &t) {
  MachineIR m;
  m.targetId = t.id;
  m.targetKind = t.kind;
  m.abiTriple = t.abi.triple;
  m.abiFingerprint = c.abiFingerprint;
  std::string concrete = canonicalDump(toJson(c));
  m.concreteDigest = "sha256:" + sha256Hex(concrete);
  std::string code = t.kind == "cuda" ? ".nv.kernels" : ".text";
  m.sections.push_back({code, t.kind == "cuda" ? "ptx" : "code", "pending-codegen", 0, ""});
  // The plan the runtime schedules from travels with the code.
  m.sections.push_back({".linnet.plan", "rodata", "present", int64_t(concrete.size()), m.concreteDigest});
  m.symbols.push_back({"linnet.plan", ".linnet.plan", "data", ""});
  for (const ImplementationRef &i : c.implementations) {
    if (i.kind == "generated") {
      m.symbols.push_back({i.symbol, code, t.kind == "cuda" ? "kernel" : "function", i.id});
      m.executables.push_back({i.id, "symbol", i.symbol, "", ""});
    } else {
      m.executables.push_back({i.id, "library", "", i.soname, i.routine});
    }
  }
  EntryPoint e;
  e.name = "linnet_rank_main";
  for (const Command &cmd : c.commands)
    if (bodyImplementation(cmd.body) || bodyQueue(cmd.body)) e.commands.push_back(cmd.id);
  m.entryPoints.push_back(e);
  return m;
}

Diagnostics verifyMachine(const MachineIR &m, const ConcretePlan *c, const Target *t) {
  Diagnostics out;
  auto err = [&](const char *code, std::string path, std::string msg) { out.push_back({code, path, msg}); };
  std::set<std::string> sections, symbols;
  for (size_t i = 0; i < m.sections.size(); ++i) {
    const Section &s = m.sections[i];
    std::string path = "/sections/" + std::to_string(i);
    if (!sections.insert(s.name).second) err("machine.section", path, "duplicate section `" + s.name + "`");
    bool cudaKind = s.kind == "ptx" || s.kind == "cubin";
    // A CUDA artifact's host library (launches, allocations) is
    // "host-code"; only a CPU artifact has "code".
    if ((m.targetKind == "cpu" && (cudaKind || s.kind == "host-code")) ||
        (m.targetKind == "cuda" && s.kind == "code"))
      err("machine.section", path + "/kind", "section kind `" + s.kind + "` is illegal on a " + m.targetKind + " target");
    if (s.state != "pending-codegen" && s.state != "present")
      err("machine.section", path + "/state", "unknown section state `" + s.state + "`");
    if (s.state == "present" && (s.digest.rfind("sha256:", 0) != 0 || s.bytes < 0))
      err("machine.section", path, "a present section needs its size and digest");
  }
  for (size_t i = 0; i < m.symbols.size(); ++i) {
    const Symbol &s = m.symbols[i];
    std::string path = "/symbols/" + std::to_string(i);
    if (!symbols.insert(s.name).second) err("machine.symbol", path, "duplicate symbol `" + s.name + "`");
    if (!sections.count(s.section)) err("machine.symbol", path + "/section", "symbol `" + s.name + "` is in unknown section `" + s.section + "`");
  }
  std::set<std::string> exes;
  for (size_t i = 0; i < m.executables.size(); ++i) {
    const ExecutableRef &x = m.executables[i];
    std::string path = "/executables/" + std::to_string(i);
    exes.insert(x.implementation);
    if (x.kind == "symbol" && !symbols.count(x.symbol))
      err("machine.executable", path, "executable `" + x.implementation + "` names missing symbol `" + x.symbol + "`");
    if (x.kind == "library" && t &&
        std::find(t->runtimeLibraries.begin(), t->runtimeLibraries.end(), x.soname) == t->runtimeLibraries.end())
      err("machine.executable", path, "`" + x.soname + "` is not a runtime library of target `" + t->id + "`");
  }
  // Each entry point is one phase (a call of an entry): it issues the
  // commands of the functions it reaches once each. A function reached from
  // several entries (a layer stack run by prefill and by decode) has its
  // commands issued by each of them; within one entry point a command is
  // issued once (the phase's execution counts say how often it runs).
  for (size_t e = 0; e < m.entryPoints.size(); ++e) {
    std::set<std::string> issued;
    for (const std::string &id : m.entryPoints[e].commands)
      if (!issued.insert(id).second)
        err("machine.entry", "/entry_points/" + std::to_string(e),
            "command `" + id + "` is issued twice by entry point `" + m.entryPoints[e].name +
                "`; machine code may not add unplanned work");
  }
  if (t && (m.targetId != t->id || m.abiTriple != t->abi.triple || m.abiFingerprint != t->abiFingerprint()))
    err("machine.abi", "/abi", "MachineIR was lowered for another target or ABI than `" + t->id + "`");
  if (c) {
    if (m.abiFingerprint != c->abiFingerprint)
      err("machine.abi", "/abi/fingerprint", "does not match the concrete plan's ABI fingerprint");
    if (m.concreteDigest != digestOf(toJson(*c)))
      err("machine.lineage", "/concrete_digest", "does not match the concrete plan");
    std::map<std::string, int> seen;
    for (size_t e = 0; e < m.entryPoints.size(); ++e)
      for (const std::string &id : m.entryPoints[e].commands) {
        if (++seen[id] > 1)
          continue; // checked already
        if (std::none_of(c->commands.begin(), c->commands.end(), [&](const Command &x) { return x.id == id; }))
          err("machine.entry", "/entry_points/" + std::to_string(e),
              "entry point issues `" + id + "`, which the concrete plan does not contain (unplanned work)");
      }
    for (const Command &cmd : c->commands) {
      if (!bodyImplementation(cmd.body) && !bodyQueue(cmd.body)) continue;
      if (seen[cmd.id] == 0)
        err("machine.entry", "/entry_points", "command `" + cmd.id + "` is issued by no entry point");
      if (const std::string *impl = bodyImplementation(cmd.body); impl && !exes.count(*impl))
        err("machine.executable", "/executables", "no executable for implementation `" + *impl + "`");
    }
  }
  return out;
}

} // namespace linnet::planning
