//===- Derived.h - Derived products and the artifact manifest ---*- C++ -*-===//
//
// Views computed from canonical plans, each keyed by the digests of what it
// derives from (so a changed input invalidates it: Invalidation.h), and the
// ProgramArtifact manifest. Every product is a typed structure with a
// canonical JSON form and a strict reader: reading a product and writing it
// back gives the same bytes. All are deterministic.
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_PLANNING_DERIVED_H
#define LINNET_PLANNING_DERIVED_H

#include "linnet/Planning/Machine.h"

#include <map>
#include <optional>

namespace linnet::planning {

inline constexpr const char *kCostsSchema = "linnet.costed-task-view/1";
inline constexpr const char *kProjectionSchema = "linnet.timing-projection/1";
inline constexpr const char *kTraceSchema = "linnet.simulation-trace/1";
inline constexpr const char *kTimelineSchema = "linnet.timeline-bundle/1";
inline constexpr const char *kReportSchema = "linnet.evaluation-report/1";
inline constexpr const char *kObservationSchema = "linnet.observation-set/1";
inline constexpr const char *kManifestSchema = "linnet.program-artifact/1";
inline constexpr const char *kPlanSetSchema = "linnet.plan-set/1";
/// The revision of the simulation adapter that turns a projection into a
/// trace; part of every trace's key.
inline constexpr const char *kSimulationAdapter = "linnet-sim/list-scheduling/1";

/// What a product derives from: input name -> digest (or revision).
using DerivationKey = std::map<std::string, std::string>;

// --- CostedTaskView ---------------------------------------------------------

struct TaskCost {
  std::string task;
  std::string bound; // "compute" | "memory" | "network"
  double lowerSeconds = 0, upperSeconds = 0;
};
/// Roofline per task: max(ops / peak, bytes / bandwidth) (network tasks:
/// latency + bytes / link bandwidth), at evaluation evidence, lower and
/// upper work bounds giving the uncertainty.
struct CostedTaskView {
  DerivationKey key; // portable, target, deployment, evaluation evidence
  std::vector<TaskCost> tasks;
  /// The evaluation evidence's measured per-command overhead, which the
  /// projection pays instead of the target's launch overhead.
  std::optional<double> launchOverheadNs;
};
/// With the concrete plan, a task bound to an implementation the evidence
/// has efficiencies for is costed with those (Evidence::byImplementation).
CostedTaskView costTasks(const PortablePlan &p, const Target &t, const Deployment &d, const EvidencePolicy &e,
                         const ConcretePlan *c = nullptr);
/// The key of an implementation in Evidence::byImplementation: its routine,
/// else its capability.
std::string implementationKey(const ImplementationRef &r);
/// Each portable task's implementation under `c` (tasks its commands run).
std::map<std::string, const ImplementationRef *> taskImplementations(const ConcretePlan &c);
/// What runs `task` under `r` (null: unbound) at the plan's extents: the
/// implementation key its efficiencies are looked up by, and its facts as
/// that code reads. A product with a few-rows branch whose rows are known
/// and at most the branch's runs the branch's routine, reading the weights
/// once per `fewRowsPerPass` rows.
struct EffectiveTask {
  std::string key;
  Task task;
};
EffectiveTask effectiveTask(const Task &task, const ImplementationRef *r);
Json toJson(const CostedTaskView &v);
CostedTaskView costsFromJson(const Json &j);

// --- TimingProjection -------------------------------------------------------

struct Interval {
  std::string command, queue;
  double startNs = 0, endNs = 0;
};
/// One entry's phase plan, timed: its commands in issue order, each lasting
/// its interval's duration times the executions per call (PortablePlan's
/// phases), list-scheduled on the queues as the whole plan is.
struct PhaseTiming {
  std::string phase, entry;
  int64_t executions = 0; // command executions per call of the entry
  double makespanNs = 0, serialNs = 0;
};
/// Predicted intervals from list scheduling of the issue order on in-order
/// queues (a command starts when its queue is free and its dependencies
/// ended), the critical path and the overlap it buys.
struct TimingProjection {
  DerivationKey key; // concrete, costs, simulation policy
  std::vector<Interval> intervals;
  double makespanNs = 0;
  double serialNs = 0; // sum of durations; overlap = serial - makespan
  std::vector<std::string> criticalPath;
  /// Per entry (one call of it); the makespan above is the plan's DAG with
  /// every command once, which no single call runs.
  std::vector<PhaseTiming> phases;
};
TimingProjection project(const ConcretePlan &c, const CostedTaskView &costs, const Target &t,
                         const SimulationPolicy &sim);
/// The phases of `p` timed on the intervals of `tp` (TimingProjection::phases).
/// The launch overhead project() adds to every interval.
double launchOverheadNs(const CostedTaskView &costs, const Target &t, const SimulationPolicy &sim);
/// `launchNs`: what each interval of `tp` holds of the launch overhead,
/// paid once a launch (PhaseTask::launches), the rest once an execution.
std::vector<PhaseTiming> projectPhases(const PortablePlan &p, const ConcretePlan &c, const TimingProjection &tp,
                                       double launchNs);
Json toJson(const TimingProjection &tp);
TimingProjection projectionFromJson(const Json &j);

// --- SimulationTraceIR ------------------------------------------------------

/// One event of the simulated run with its lineage: command -> portable
/// task -> implementation -> source ops.
struct SimEvent {
  double timeNs = 0;
  std::string kind; // "begin" | "end" | "signal"
  std::string command, queue, portableTask, implementation, token;
  std::vector<std::string> lineage; // the portable task's op chain
};
/// A counter sample: the value holds from timeNs until the next sample.
struct CounterSample {
  std::string counter; // "busy_queues", "live_bytes:<memory space>"
  double timeNs = 0;
  double value = 0;
};
struct SimulationTrace {
  DerivationKey key; // projection, concrete, portable, adapter
  std::vector<SimEvent> events;     // by time, then issue order
  std::vector<CounterSample> counters;
  double endNs = 0;
};
/// Discrete-event simulation of the concrete plan: each queue runs its
/// commands in issue order, a command starts when its queue is free and its
/// dependencies have ended, and lasts its projected duration.
SimulationTrace simulate(const PortablePlan &p, const ConcretePlan &c, const TimingProjection &tp);
Json toJson(const SimulationTrace &t);
SimulationTrace traceFromJson(const Json &j);

// --- ObservationSet ---------------------------------------------------------

struct ObservationRecord {
  std::string command, portableTask;
  std::string metric; // "duration_ns", "start_ns"
  double value = 0;
};
/// Immutable measured or simulated records. A set is never changed: new
/// records make a new revision whose `supersedes` is the digest of the
/// revision it replaces.
struct ObservationSet {
  std::string id;
  int64_t revision = 1;
  std::string supersedes; // "" for revision 1
  std::string source;     // "simulated" | "measured"
  DerivationKey subject;  // concrete (and trace, for simulated records)
  std::vector<ObservationRecord> records;
};
/// Revision 1 of the simulated observations of a trace.
ObservationSet observeSimulation(const ConcretePlan &c, const SimulationTrace &t);
/// The next revision after `previous` (which is left untouched).
ObservationSet supersede(const ObservationSet &previous, DerivationKey subject, std::string source,
                         std::vector<ObservationRecord> records);
Json toJson(const ObservationSet &o);
ObservationSet observationsFromJson(const Json &j);
/// Revision numbering and the supersedes digest (against `previous` when
/// given).
Diagnostics verifyObservations(const ObservationSet &o, const ObservationSet *previous = nullptr);

// --- TimelineBundle and its Chrome trace-event export -----------------------

/// References, never copies: digests of the concrete plan, the projection,
/// the trace, the evidence and policies, and the diagnostics by code/path.
struct TimelineBundle {
  /// "simulated" (a projection and its trace) or "measured" (a profiled
  /// run: `observations` and `artifact` instead of the projection's digests).
  std::string source = "simulated";
  std::string concrete, projection, trace;
  std::string evaluationEvidence, evidencePolicy, simulationPolicy;
  std::string observations, artifact; // measured
  std::vector<std::pair<std::string, std::string>> diagnostics; // code, path
};
struct ChromeEvent {
  std::string name, ph;
  std::optional<std::string> cat;
  int64_t pid = 0, tid = 0;
  std::optional<double> ts, dur; // microseconds
  std::optional<std::string> scope; // "s" of instant events
  Json args = Json::object();
};
/// Chrome trace-event JSON (opens in Perfetto): one thread per queue with a
/// complete event per command, instant events for token signals and
/// counter tracks from the simulation trace; `otherData` is the bundle.
struct Timeline {
  std::vector<ChromeEvent> events;
  TimelineBundle bundle;
};
Timeline timeline(const ConcretePlan &c, const TimingProjection &tp, const SimulationTrace &trace,
                  const EvidencePolicy &e, const SimulationPolicy &sim, const Diagnostics &diags);
Json toJson(const Timeline &t);
Timeline timelineFromJson(const Json &j);

// --- EvaluationReport -------------------------------------------------------

struct ObjectiveValue {
  std::string id, metric;
  double value = 0;
};
struct ConstraintResult {
  std::string id, kind;
  double value = 0;
  int64_t bound = 0;
  bool satisfied = true;
};
struct Bottleneck {
  std::string command, portableTask, bound;
  double durationNs = 0;
};
/// A report's validation (seed 002: "objectives, constraints, bottlenecks,
/// validation"): predicted against measured, per command and per entry.
struct CommandValidation {
  std::string command, portableTask;
  int64_t executions = 0;             // measured per call of the entry
  double predictedNs = 0, measuredNs = 0; // per execution
};
struct PhaseValidation {
  std::string phase, entry;
  double predictedNs = 0;  // the phase's makespan
  double measuredNs = 0;   // the entry call, wall clock (median)
  double attributedNs = 0; // of that, inside timed commands
};
struct Validation {
  std::string observations; // digest of the measured ObservationSet
  std::vector<CommandValidation> commands;
  std::vector<PhaseValidation> phases;
};

struct EvaluationReport {
  DerivationKey key; // portable, concrete, costs, projection, evidence
  std::vector<ObjectiveValue> objectives;
  std::vector<ConstraintResult> constraints;
  std::vector<Bottleneck> bottlenecks; // critical path, longest first
  std::vector<std::string> criticalPath;
  double makespanNs = 0, overlapNs = 0;
  std::vector<ArenaReport> memory;
  std::vector<PhaseTiming> phases; // the projection's, per entry
  std::optional<Validation> validation;
};
EvaluationReport evaluate(const PortablePlan &p, const ConcretePlan &c, const CostedTaskView &costs,
                          const TimingProjection &tp, const EvidencePolicy &e);
Json toJson(const EvaluationReport &r);
EvaluationReport reportFromJson(const Json &j);

/// Predicted (the report's projection) against a measured ObservationSet
/// (`linnet profile`): records `duration_ns` and `executions` per command,
/// and per entry point (`linnet_entry_<entry>`) `call_ns` and
/// `attributed_ns`.
Validation validate(const ConcretePlan &c, const TimingProjection &tp, const ObservationSet &measured);

/// A calibrated evaluation evidence for the target the observations were
/// measured on: per command, measured ≈ overhead + a·compute + b·memory
/// (the roofline's time at full efficiency of the side the current
/// evidence bounds it by), least squares weighted by executions; the
/// efficiencies become 1/a and 1/b (at most 1) and the overhead the
/// launch overhead. Returns the new policy document (planning evidence
/// unchanged, evaluation revised) or nullopt with `why`.
std::optional<Json> calibrateEvidence(const EvidencePolicy &e, const PortablePlan &p, const ConcretePlan &c,
                                      const Target &t, const ObservationSet &measured, std::string &why);
/// A measured run and the portable plan at its extents (`linnet build
/// --emit portable --at ...`: the same tasks, facts at the run's sizes).
struct CalibrationRun {
  const PortablePlan *plan;
  const ObservationSet *measured;
};
/// calibrateEvidence over several runs of one artifact (prefill and decode
/// at their lengths): one fit to every run's commands.
std::optional<Json> calibrateEvidence(const EvidencePolicy &e, const std::vector<CalibrationRun> &runs,
                                      const ConcretePlan &c, const Target &t, std::string &why);
/// Objective values by metric: latency (s), peak_memory_bytes, devices.
std::map<std::string, double> objectiveValues(const ConcretePlan &c, const TimingProjection &tp);

// --- ProgramArtifact manifest ----------------------------------------------

struct LineageEntry {
  std::string entryPoint, command, portableTask;
  std::optional<std::string> implementation, machineSymbol, sourceLocation;
  std::optional<std::vector<std::string>> ops;
};
struct ProgramManifest {
  std::string targetId, targetKind, targetFingerprint;
  int64_t ranks = 1;
  std::vector<std::string> dtypes, collectives;
  Quantity memoryBytesPerRank;
  std::string deploymentId, deploymentFingerprint;
  std::string abiTriple, runtimeAbi, abiFingerprint;
  std::string portableDigest, concreteDigest, machineDigest;
  std::string compilerVersion, compilerCommit, plannerRevision;
  std::vector<std::string> flags;
  std::vector<std::string> runtimeLibraries;
  /// The numerics policy the code computes under (the portable plan's):
  /// the interpreter evaluates an artifact's plan under the same one.
  std::string numerics = "as-written";
  /// What f32 products may round to (the portable plan's; written only
  /// when it is not "highest").
  std::string matmulPrecision = "highest";
  std::string blockProducts = "exact";
  std::vector<LineageEntry> lineage;
  /// A built artifact: its code library (`model.so`) and the SHA-256 of its
  /// bytes, which the runtime checks before loading it; absent for a plan
  /// without built code.
  std::optional<std::string> libraryFile, libraryDigest;
  /// Every file of a built artifact the runtime may read (the library,
  /// runtime.json, the plans), each with the SHA-256 and size of the bytes
  /// the build wrote: `files: [{path, sha256, bytes}]` (docs/runtime-abi.md).
  struct File {
    std::string path, sha256;
    int64_t bytes = 0;
  };
  std::vector<File> files;
};
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
ProgramManifest artifactManifest(const ArtifactInputs &in);
Json toJson(const ProgramManifest &m);
ProgramManifest manifestFromJson(const Json &j);

// --- PlanSet ----------------------------------------------------------------

/// A candidate portable plan with its objective values (all minimized
/// unless the objective says maximize). An infeasible candidate (the gate
/// rejected it) has no values and the gate's first diagnostic.
struct Candidate {
  std::string id, digest;
  std::string description; // the structural decision, e.g. "destinations over mesh axis 1 (4 parts)"
  std::map<std::string, double> objectives;
  bool feasible = true;
  std::string rejection;
};
struct Dominance {
  std::string dominant, dominated;
  std::vector<std::string> on; // metrics where dominant is strictly better
};
/// An immutable set of candidates with dominance provenance and the choice.
struct PlanSet {
  std::vector<Objective> objectives;
  std::vector<Candidate> candidates;
  std::vector<Dominance> dominance;
  std::vector<std::string> dominated; // candidate ids
  std::string selected;
  std::string selectionRule;
};
/// Pareto dominance among the feasible candidates; among the non-dominated
/// the objectives in priority order decide (ties: candidate order).
PlanSet planSet(std::vector<Candidate> candidates, const std::vector<Objective> &objectives);
Json toJson(const PlanSet &s);
PlanSet planSetFromJson(const Json &j);

} // namespace linnet::planning

#endif // LINNET_PLANNING_DERIVED_H
