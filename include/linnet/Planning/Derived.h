//===- Derived.h - Derived products and the artifact manifest ---*- C++ -*-===//
//
// Views computed from canonical plans, each keyed by the digests of what it
// derives from (so a changed input invalidates it), and the ProgramArtifact
// manifest. All are deterministic: the same inputs give the same bytes.
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_PLANNING_DERIVED_H
#define LINNET_PLANNING_DERIVED_H

#include "linnet/Planning/Machine.h"

namespace linnet::planning {

struct TaskCost {
  std::string task;
  std::string bound; // "compute" | "memory" | "network"
  double lowerSeconds = 0, upperSeconds = 0;
};
/// Roofline per task: max(ops / peak, bytes / bandwidth) (network tasks:
/// latency + bytes / link bandwidth), at evaluation evidence, lower and
/// upper work bounds giving the uncertainty.
struct CostedTaskView {
  Json key; // portable digest, target, deployment, evaluation evidence
  std::vector<TaskCost> tasks;
};
CostedTaskView costTasks(const PortablePlan &p, const Target &t, const Deployment &d, const EvidencePolicy &e);

struct Interval {
  std::string command, queue;
  double startNs = 0, endNs = 0;
};
/// Predicted intervals from list scheduling of the issue order on in-order
/// queues (a command starts when its queue is free and its dependencies
/// ended), the critical path and the overlap it buys.
struct TimingProjection {
  Json key; // concrete digest, costs digest, simulation policy
  std::vector<Interval> intervals;
  double makespanNs = 0;
  double serialNs = 0; // sum of durations
  std::vector<std::string> criticalPath;
};
TimingProjection project(const ConcretePlan &c, const CostedTaskView &costs, const Target &t);

/// Chrome trace-event JSON (opens in Perfetto) of a projection; `otherData`
/// carries the TimelineBundle: references, never copies, of the concrete
/// digest, projection, evidence, policy and diagnostics.
Json timelineBundle(const ConcretePlan &c, const TimingProjection &tp, const EvidencePolicy &e,
                    const Diagnostics &diags);

/// Objectives, constraints and bottlenecks of a bound plan.
Json evaluationReport(const PortablePlan &p, const ConcretePlan &c, const CostedTaskView &costs,
                      const TimingProjection &tp, const EvidencePolicy &e);

struct ArtifactInputs {
  const PortablePlan &portable;
  const ConcretePlan &concrete;
  const MachineIR &machine;
  const Target &target;
  const Deployment &deployment;
  std::string compilerVersion, compilerCommit;
  std::vector<std::string> flags;
};
/// The ProgramArtifact manifest: schema, requirements, ABI, SHA-256 of the
/// canonical portable/concrete/machine serializations, compiler, runtime
/// libraries and the lineage map machine entry -> command -> task -> op.
Json artifactManifest(const ArtifactInputs &in);

/// Candidates with their objective values and who dominates whom.
struct Candidate {
  std::string id, digest;
  std::map<std::string, double> objectives; // metric -> value (minimized)
};
Json planSet(const std::vector<Candidate> &candidates, std::string &selected,
             const std::vector<Objective> &objectives);

} // namespace linnet::planning

#endif // LINNET_PLANNING_DERIVED_H
