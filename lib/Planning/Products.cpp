//===- Products.cpp - Pipeline, document dispatch and invalidation --------===//
#include "linnet/Planning/Products.h"
#include "linnet/Planning/Binding.h"

#include <algorithm>

namespace linnet::planning {

std::optional<Products> buildProducts(const PipelineInputs &in, Diagnostics &diags) {
  std::optional<ConcretePlan> concrete =
      bind({in.portable, in.target, in.deployment, in.implementations, in.evidence}, diags);
  if (!concrete)
    return std::nullopt;
  if (in.implementationOverrides) {
    std::map<std::string, const ImplementationRef *> byId;
    for (const ImplementationRef &r : *in.implementationOverrides)
      byId[r.id] = &r;
    // What runs the task (kind, capability, routine, library); the symbols
    // stay the plan's own, one a task (an artifact's are shared by every
    // task generated into one function).
    for (ImplementationRef &r : concrete->implementations)
      if (auto it = byId.find(r.id); it != byId.end()) {
        std::string symbol = r.symbol.empty() ? "linnet_" + r.id.substr(5) : r.symbol;
        r = *it->second;
        if (r.kind == "generated") {
          std::replace(symbol.begin(), symbol.end(), '.', '_');
          r.symbol = symbol;
        }
      }
  }
  Diagnostics d = verifyConcrete(*concrete, {&in.portable, &in.target, &in.deployment});
  if (!d.empty()) {
    diags.insert(diags.end(), d.begin(), d.end());
    return std::nullopt;
  }
  Products p{in.portable, *concrete, lowerToMachine(*concrete, in.target), {}, {}, {}, {}, {}, {}, {}};
  d = verifyMachine(p.machine, &p.concrete, &in.target);
  if (!d.empty()) {
    diags.insert(diags.end(), d.begin(), d.end());
    return std::nullopt;
  }
  p.costs = costTasks(p.portable, in.target, in.deployment, in.evidence, &p.concrete);
  p.projection = project(p.concrete, p.costs, in.target, in.simulation);
  p.projection.phases = projectPhases(p.portable, p.concrete, p.projection, launchOverheadNs(p.costs, in.target, in.simulation));
  p.trace = simulate(p.portable, p.concrete, p.projection);
  p.observations = observeSimulation(p.concrete, p.trace);
  p.timeline = timeline(p.concrete, p.projection, p.trace, in.evidence, in.simulation, {});
  p.report = evaluate(p.portable, p.concrete, p.costs, p.projection, in.evidence);
  p.manifest = artifactManifest({p.portable, p.concrete, p.machine, in.target, in.deployment,
                                 in.compilerVersion, in.compilerCommit, in.flags});
  return p;
}

std::vector<std::pair<std::string, Json>> productDocuments(const Products &p) {
  return {{"portable.json", toJson(p.portable)},         {"concrete.json", toJson(p.concrete)},
          {"machine.json", toJson(p.machine)},           {"costs.json", toJson(p.costs)},
          {"projection.json", toJson(p.projection)},     {"trace.json", toJson(p.trace)},
          {"observations.json", toJson(p.observations)}, {"timeline.json", toJson(p.timeline)},
          {"report.json", toJson(p.report)},             {"manifest.json", toJson(p.manifest)}};
}

std::string schemaOf(const Json &doc) {
  if (!doc.is_object())
    return "";
  // The timeline is a Chrome trace; its bundle carries the schema.
  if (doc.contains("otherData") && doc["otherData"].is_object() && doc["otherData"].contains("schema") &&
      doc["otherData"]["schema"].is_string())
    return doc["otherData"]["schema"].get<std::string>();
  if (doc.contains("schema") && doc["schema"].is_string())
    return doc["schema"].get<std::string>();
  return "";
}

Json readBack(const Json &doc) {
  std::string s = schemaOf(doc);
  if (s == kPortableSchema) return toJson(portableFromJson(doc));
  if (s == kConcreteSchema) return toJson(concreteFromJson(doc));
  if (s == kMachineSchema) return toJson(machineFromJson(doc));
  if (s == kCostsSchema) return toJson(costsFromJson(doc));
  if (s == kProjectionSchema) return toJson(projectionFromJson(doc));
  if (s == kTraceSchema) return toJson(traceFromJson(doc));
  if (s == kObservationSchema) return toJson(observationsFromJson(doc));
  if (s == kTimelineSchema) return toJson(timelineFromJson(doc));
  if (s == kReportSchema) return toJson(reportFromJson(doc));
  if (s == kManifestSchema) return toJson(manifestFromJson(doc));
  if (s == kPlanSetSchema) return toJson(planSetFromJson(doc));
  throw SchemaError("/schema", "unknown planning document schema `" + s + "`");
}

Diagnostics verifyDocument(const Json &doc, const Target *target, const Deployment *deployment) {
  std::string s = schemaOf(doc);
  if (s == kPortableSchema) {
    // Target-bound fields are named before the strict reader would call
    // them merely unknown keys.
    Diagnostics d = scanTargetBoundFields(doc);
    return d.empty() ? verifyPortable(portableFromJson(doc)) : d;
  }
  if (s == kConcreteSchema) {
    ConcreteContext ctx;
    ctx.target = target;
    ctx.deployment = deployment;
    return verifyConcrete(concreteFromJson(doc), ctx);
  }
  if (s == kMachineSchema)
    return verifyMachine(machineFromJson(doc), nullptr, target);
  if (s == kObservationSchema)
    return verifyObservations(observationsFromJson(doc));
  readBack(doc); // the strict reader is the check of the other products
  return {};
}

DerivationKey derivedFrom(const Json &doc) {
  std::string s = schemaOf(doc);
  if (s == kPortableSchema) {
    PortablePlan p = portableFromJson(doc);
    return {{"source", p.sourceDigest}};
  }
  if (s == kConcreteSchema) {
    ConcretePlan c = concreteFromJson(doc);
    return {{"portable", c.portableDigest},
            {"target", c.targetFingerprint},
            {"deployment", c.deploymentFingerprint},
            {"abi", c.abiFingerprint},
            {"planning_evidence", c.planningEvidenceFingerprint},
            {"implementation_policy", c.implementationPolicyFingerprint},
            {"planner", c.plannerRevision}};
  }
  if (s == kMachineSchema) {
    MachineIR m = machineFromJson(doc);
    return {{"concrete", m.concreteDigest}, {"abi", m.abiFingerprint}, {"target", m.targetId}};
  }
  if (s == kCostsSchema) return costsFromJson(doc).key;
  if (s == kProjectionSchema) return projectionFromJson(doc).key;
  if (s == kTraceSchema) return traceFromJson(doc).key;
  if (s == kReportSchema) return reportFromJson(doc).key;
  if (s == kObservationSchema) return observationsFromJson(doc).subject;
  if (s == kTimelineSchema) {
    TimelineBundle b = timelineFromJson(doc).bundle;
    if (b.source == "measured")
      return {{"concrete", b.concrete}, {"observations", b.observations}};
    return {{"concrete", b.concrete},
            {"projection", b.projection},
            {"trace", b.trace},
            {"evaluation_evidence", b.evaluationEvidence},
            {"evidence_policy", b.evidencePolicy},
            {"simulation_policy", b.simulationPolicy}};
  }
  if (s == kManifestSchema) {
    ProgramManifest m = manifestFromJson(doc);
    // Flags are recorded, not derived from: the same build through another
    // --emit gives the same artifact.
    return {{"portable", m.portableDigest},   {"concrete", m.concreteDigest},
            {"machine", m.machineDigest},     {"abi", m.abiFingerprint},
            {"target", m.targetFingerprint},  {"deployment", m.deploymentFingerprint},
            {"compiler", m.compilerVersion + "@" + m.compilerCommit},
            {"planner", m.plannerRevision}};
  }
  throw SchemaError("/schema", "`" + s + "` is not a stored product with a derivation");
}

std::vector<ProductStatus> checkProducts(const std::vector<std::pair<std::string, Json>> &stored,
                                         const Products &current) {
  std::vector<std::pair<std::string, Json>> now = productDocuments(current);
  std::vector<ProductStatus> out;
  for (const auto &[file, doc] : stored) {
    ProductStatus st;
    st.file = file;
    st.schema = schemaOf(doc);
    const Json *cur = nullptr;
    for (const auto &[f, d] : now)
      if (schemaOf(d) == st.schema) cur = &d;
    if (!cur)
      throw SchemaError("/schema", file + ": `" + st.schema + "` is not a product of linnet build");
    DerivationKey was = derivedFrom(doc), is = derivedFrom(*cur);
    for (const auto &[name, v] : is) {
      auto it = was.find(name);
      std::string old = it == was.end() ? "(none)" : it->second;
      if (old != v) st.changes.push_back(name + ": " + old + " -> " + v);
    }
    for (const auto &[name, v] : was)
      if (!is.count(name)) st.changes.push_back(name + ": " + v + " -> (none)");
    if (st.schema == kObservationSchema)
      st.needsNewRevision = !st.changes.empty();
    else
      st.stale = !st.changes.empty();
    out.push_back(std::move(st));
  }
  std::sort(out.begin(), out.end(), [](const ProductStatus &a, const ProductStatus &b) { return a.file < b.file; });
  return out;
}

} // namespace linnet::planning
