//===- DerivedManifest.cpp - The ProgramArtifact manifest -----------------===//
//
// The ProgramArtifact manifest: requirements, ABI, the digests of the plans
// and of every file the runtime reads, and the lineage from machine entries
// to source ops.
//
//===----------------------------------------------------------------------===//
#include "DerivedImpl.h"

#include <algorithm>

namespace linnet::planning {

using namespace detail;

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
  m.blockProducts = in.portable.blockProducts;
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
  if (m.blockProducts != "exact") doc["block_products"] = m.blockProducts;
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
  if (r.has("block_products")) m.blockProducts = r.str("block_products");
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

} // namespace linnet::planning
