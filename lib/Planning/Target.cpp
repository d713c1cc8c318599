//===- Target.cpp - Reading targets, deployments and policies -------------===//
#include "linnet/Planning/Target.h"
#include "linnet/Support/Paths.h"

#include <filesystem>

namespace linnet::planning {

std::string Target::abiFingerprint() const {
  return digestOf(Json{{"triple", abi.triple},
                       {"calling_convention", abi.callingConvention},
                       {"runtime_abi", abi.runtimeAbi},
                       {"features", abi.features}});
}

static void expectSchema(ObjReader &r, const char *schema) {
  std::string s = r.str("schema");
  if (s != schema)
    throw SchemaError("/schema", "expected schema `" + std::string(schema) + "`, found `" + s + "`");
}

Target targetFromJson(const Json &j) {
  ObjReader r(j, "");
  expectSchema(r, "linnet.target/1");
  Target t;
  t.raw = j;
  t.id = r.str("id");
  t.kind = r.str("kind");
  if (t.kind != "cpu" && t.kind != "cuda")
    throw SchemaError("/kind", "target kind must be cpu or cuda");
  r.str("description");
  r.opt("notes");
  {
    ObjReader a = r.obj("abi");
    t.abi = {a.str("triple"), a.str("calling_convention"), a.str("runtime_abi"), a.strs("features"),
             a.strOr("cpu", "")};
    a.done();
  }
  {
    ObjReader d = r.obj("device");
    t.cores = d.i64("cores");
    t.vectorBits = d.i64("vector_bits");
    t.clockGhz = d.f64("clock_ghz");
    ObjReader pf = d.obj("peak_flops");
    const Json &peaks = j.at("device").at("peak_flops");
    for (auto it = peaks.begin(); it != peaks.end(); ++it)
      t.peakFlops[it.key()] = pf.f64(it.key().c_str());
    pf.done();
    t.memoryBandwidth = d.f64("memory_bandwidth_bytes_per_s");
    t.memoryCapacity = d.i64("memory_capacity_bytes");
    t.memorySpace = d.str("memory_space");
    t.alignment = d.i64("alignment_bytes");
    t.maxThreadsPerBlock = d.i64("max_threads_per_block");
    ObjReader en = d.obj("engines");
    const Json &engines = j.at("device").at("engines");
    for (auto it = engines.begin(); it != engines.end(); ++it)
      t.engines[it.key()] = en.i64(it.key().c_str());
    en.done();
    d.done();
    if (t.cores <= 0 || t.memoryCapacity <= 0 || t.memoryBandwidth <= 0 || t.alignment <= 0)
      throw SchemaError("/device", "cores, memory capacity, bandwidth and alignment must be positive");
  }
  {
    ObjReader l = r.obj("interconnect");
    t.linkBandwidth = l.f64("bandwidth_bytes_per_s");
    t.linkLatencyNs = l.f64("latency_ns");
    l.done();
  }
  t.launchOverheadNs = r.f64("launch_overhead_ns");
  t.dtypes = r.strs("dtypes");
  t.capabilities = r.strs("capabilities");
  t.runtimeLibraries = r.strs("runtime_libraries");
  r.done();
  return t;
}

Deployment deploymentFromJson(const Json &j) {
  ObjReader r(j, "");
  expectSchema(r, "linnet.deployment/1");
  Deployment d;
  d.raw = j;
  d.id = r.str("id");
  d.target = r.str("target");
  r.str("description");
  d.oversubscribe = r.boolean("oversubscribe");
  d.runtimeLibraries = r.strs("runtime_libraries");
  r.each("devices", [&](const Json &e, const std::string &p) {
    ObjReader dr(e, p);
    d.devices.push_back({dr.str("id"), dr.i64("memory_free_bytes")});
    dr.done();
  });
  if (d.devices.empty())
    throw SchemaError("/devices", "a deployment needs at least one device");
  r.done();
  return d;
}

ImplementationPolicy implementationPolicyFromJson(const Json &j) {
  ObjReader r(j, "");
  expectSchema(r, "linnet.implementation-policy/1");
  ImplementationPolicy p;
  p.raw = j;
  p.id = r.str("id");
  p.revision = r.str("revision");
  p.strategy = r.str("strategy");
  if (p.strategy != "preference" && p.strategy != "min-estimated-time")
    throw SchemaError("/strategy", "strategy must be preference or min-estimated-time");
  r.each("implementations", [&](const Json &e, const std::string &path) {
    ObjReader ir(e, path);
    ImplementationSpec s;
    s.id = ir.str("id");
    s.kind = ir.str("kind");
    s.capability = ir.str("capability");
    s.targets = ir.strs("targets");
    s.dtypes = ir.strs("dtypes");
    s.library = ir.strOr("library", "");
    s.routine = ir.strOr("routine", "");
    s.soname = ir.strOr("soname", "");
    ObjReader w = ir.obj("workspace");
    s.workspace = {w.str("kind"), w.i64("bytes")};
    w.done();
    ir.done();
    p.implementations.push_back(std::move(s));
  });
  ObjReader pref = r.obj("preference");
  const Json &prefs = j.at("preference");
  for (auto it = prefs.begin(); it != prefs.end(); ++it)
    p.preference[it.key()] = pref.strs(it.key().c_str());
  pref.done();
  r.done();
  return p;
}

static Evidence evidenceFrom(ObjReader r) {
  Evidence e;
  e.revision = r.str("revision");
  e.source = r.str("source");
  e.computeEfficiency = r.f64("compute_efficiency");
  e.memoryEfficiency = r.f64("memory_efficiency");
  e.communicationEfficiency = r.f64("communication_efficiency");
  if (r.has("launch_overhead_ns")) {
    e.launchOverheadNs = r.f64("launch_overhead_ns");
    if (!(*e.launchOverheadNs >= 0))
      throw SchemaError(r.at("launch_overhead_ns"), "launch_overhead_ns must not be negative");
  }
  if (const Json *impls = r.opt("implementations")) {
    if (!impls->is_object())
      throw SchemaError(r.at("implementations"), "expected an object: implementation -> efficiencies");
    for (const auto &[key, value] : impls->items()) {
      ObjReader o(value, r.at("implementations") + "/" + key);
      Evidence::Efficiencies eff{o.f64("compute_efficiency"), o.f64("memory_efficiency")};
      o.done();
      for (double v : {eff.compute, eff.memory})
        if (!(v > 0 && v <= 1))
          throw SchemaError(o.path(), "efficiencies must lie in (0, 1]");
      e.byImplementation[key] = eff;
    }
  }
  r.done();
  for (double v : {e.computeEfficiency, e.memoryEfficiency, e.communicationEfficiency})
    if (!(v > 0 && v <= 1))
      throw SchemaError(r.path(), "efficiencies must lie in (0, 1]");
  return e;
}

EvidencePolicy evidencePolicyFromJson(const Json &j) {
  ObjReader r(j, "");
  expectSchema(r, "linnet.evidence-policy/1");
  EvidencePolicy p;
  p.raw = j;
  p.id = r.str("id");
  p.planning = evidenceFrom(r.obj("planning"));
  p.evaluation = evidenceFrom(r.obj("evaluation"));
  r.done();
  return p;
}

SimulationPolicy simulationPolicyFromJson(const Json &j) {
  ObjReader r(j, "");
  expectSchema(r, "linnet.simulation-policy/1");
  SimulationPolicy p;
  p.raw = j;
  p.id = r.str("id");
  p.revision = r.str("revision");
  p.durations = r.str("durations");
  if (p.durations != "upper" && p.durations != "lower")
    throw SchemaError("/durations", "durations must be `upper` or `lower`");
  p.launchOverhead = r.boolean("launch_overhead");
  r.str("description");
  r.done();
  return p;
}

std::string defaultTargetsDir() {
  if (const char *env = std::getenv("LINNET_TARGETS_DIR"))
    return env;
  return support::dataDir() + "/targets";
}

std::string resolveTargetFile(const std::string &name, const std::string &dir) {
  if (name.find('/') != std::string::npos || name.find(".json") != std::string::npos)
    return name;
  static const std::map<std::string, std::string> aliases = {
      {"cpu", "x86-64-avx2"}, {"cpu-avx2", "x86-64-avx2"}, {"cpu-avx512", "x86-64-avx512"},
      {"cpu-native", "x86-64-native"},
      {"cuda", "cuda-sm90-h200"}, {"cuda-h200", "cuda-sm90-h200"}, {"cuda-h100", "cuda-sm90-h100"}};
  auto it = aliases.find(name);
  return dir + "/" + (it == aliases.end() ? name : it->second) + ".json";
}

std::string defaultDeploymentFile(const Target &t, const std::string &dir) {
  return dir + "/deployments/" + t.id + (t.kind == "cpu" ? "-local" : "-x1") + ".json";
}

} // namespace linnet::planning
