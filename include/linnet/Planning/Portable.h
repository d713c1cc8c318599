//===- Portable.h - PortablePlanIR ------------------------------*- C++ -*-===//
//
// Target-neutral execution intent: tasks and their dependency DAG, exact (or
// bounded) work facts, abstract resources and buffers, implementation
// capability alternatives, concurrency groups, objectives and constraints,
// and lineage back to the source. Nothing here names a device, queue,
// vendor library, address or time: that is the binding gate's to decide.
//
// The plan is SPMD: one plan describes the work of each of `ranks` ranks on
// its own partition; sizes are per rank.
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_PLANNING_PORTABLE_H
#define LINNET_PLANNING_PORTABLE_H

#include "linnet/Planning/Common.h"

#include <map>
#include <optional>

namespace linnet::planning {

inline constexpr const char *kPortableSchema = "linnet.portable-plan/1";

/// Where an entity came from: the op that produced it and the chain of ops
/// it was lowered from (model op -> distributed task -> portable task).
struct Provenance {
  std::string op;       // e.g. "gf_task.launch"
  std::string location; // "file:line:col" of that op
  std::vector<std::string> lineage; // outermost (model op) first
};

/// Counts per task, per rank. `ops` are arithmetic operations (one per
/// arith op in the message body and reducer combine, per message); bytes
/// are those the task's definition must move, whatever its implementation.
struct WorkloadFacts {
  Quantity ops;
  Quantity readBytes;
  Quantity writeBytes;
  Quantity messageBytes; // produced by the message body (or sent, for halo)
  Quantity messages;     // relation edges visited (or halo entities)
  /// Mean reads of each distinct element read (>= 1 when anything is read),
  /// at the upper bounds.
  double reuse = 0;
  /// ops.upper / (readBytes.upper + writeBytes.upper); 0 without bytes.
  double arithmeticIntensity = 0;
  std::string derivation; // how the numbers follow from the IR
  /// A contraction of an operand with rows (the activations: each row of
  /// the result is a row of it against the whole of the other) by another
  /// without them (the weights): its rows (-1: a run-time extent) and the
  /// weights' bytes. What a few-rows implementation's cost depends on
  /// (ImplementationRef::fewRowsAtMost). Written as `contraction` where set.
  struct Contraction {
    int64_t rows = -1;
    int64_t weightBytes = 0;
  };
  std::optional<Contraction> contraction;
};

/// Abstract needs; the gate maps them onto target resources.
struct ResourceRequirements {
  std::string engineClass;   // "compute" | "communication" | "copy"
  Quantity parallelism;      // independent work items (rows, entities)
  Quantity memoryBytes;      // bytes live while the task runs
  std::vector<std::string> dtypes;
  std::string collective;    // "" or an abstract collective, e.g. "halo-exchange"
};

enum class BufferRole { Input, Output, Parameter, State, Intermediate, Workspace, Communication };
enum class StorageClass { External, Transient, Persistent };
const char *toString(BufferRole r);
const char *toString(StorageClass s);

struct Buffer {
  std::string id;
  std::string name;  // the user's field name, for messages
  std::string dtype;        // storage
  std::string computeDtype; // what its values compute in (the numerics policy)
  BufferRole role = BufferRole::Intermediate;
  StorageClass storage = StorageClass::Transient;
  Quantity bytes;
  /// For bounds (WORKSPACE always): the semantic the bound stands for, e.g.
  /// "unfused_message_materialization_upper_bound", and its derivation.
  std::string boundSemantic;
  std::string boundDerivation;
  std::vector<std::string> writers; // task ids
  std::vector<std::string> readers; // task ids
  std::string firstUse;             // task ids delimiting the lifetime
  std::string lastUse;
  /// Exact sizes need no semantic; bounds must say what they bound.
  bool isBoundRecorded() const;
};

/// A way the task may be implemented, by capability class, never by vendor:
/// "generated.csr-row-neighbor", "library-class.spmv-csr", ...
struct Alternative {
  std::string capability;
  std::vector<std::string> needs; // capability names the target must offer
};

/// The Kernel IR schedule a compute task carries (provider-neutral).
struct KernelInfo {
  std::string function;     // symbol of the function holding the kernel
  std::string traversal;    // "csr-row", "dense-row", ...
  std::string scheduleKind; // "" when unscheduled
  int64_t rows = 0;         // destinations of this task (upper bound)
  int64_t blockRows = 0, blockNeighbors = 0, numWarps = 0, pipelineStages = 0;
  std::string reducer;      // symbol of the reducer
  bool deterministic = false;
};

struct Task {
  std::string id;
  std::string name;
  std::string kind; // "compute" | "halo-pack" | "halo-exchange" | "halo-unpack"
  std::vector<std::string> dependsOn;
  std::vector<std::string> reads;  // buffer ids
  std::vector<std::string> writes; // buffer ids
  WorkloadFacts facts;
  ResourceRequirements resources;
  std::vector<Alternative> alternatives;
  std::optional<KernelInfo> kernel;
  Provenance provenance;
};

struct ConcurrencyGroup {
  std::string id;
  std::vector<std::string> tasks; // mutually independent
  std::string reason;
};

/// An entry's phase plan (seed 002's inference phases: prefill and decode
/// are planned apart): the tasks one call of the entry runs, each with how
/// many times it runs per call, in task order.
struct PhaseTask {
  std::string task;
  int64_t executions = 1;
  /// The times one call starts the task's command: the calls of its
  /// function. `executions` also counts the trips of the loops around it in
  /// that function, which run in the same launch (a fold's step).
  int64_t launches = 1;
};
struct Phase {
  std::string id;    // "phase.<entry>"
  std::string entry; // the entry's function
  std::vector<PhaseTask> tasks;
  std::string derivation; // how executions were counted, in words
};

struct Objective {
  std::string id;
  std::string metric;    // "latency" | "peak_memory_bytes" | "devices"
  std::string direction; // "minimize" | "maximize"
  int64_t priority = 0;  // lower first
};

struct Constraint {
  std::string id;
  std::string kind;   // "memory-capacity" | "determinism" | "max-ranks"
  std::string metric; // metric it bounds ("" when boolean)
  int64_t bound = 0;
  std::string objective; // objective id it protects, or ""
};

/// Early requirements on any target: counts and capabilities, never a vendor.
struct TargetRequirements {
  int64_t ranks = 1;
  std::vector<std::string> dtypes;
  std::vector<std::string> collectives;
  Quantity memoryBytesPerRank;
};

struct Partitioning {
  std::string scheme; // "destination" | "single"
  std::vector<int64_t> meshShape;
  int64_t meshAxis = 0;
  int64_t parts = 1;
};

struct PortablePlan {
  std::string schema = kPortableSchema;
  std::string id;
  std::string sourceFile;
  std::string sourceDigest; // "sha256:..." of the input text
  /// The numerics policy the tasks compute under ("as-written",
  /// "f32-compute": docs/language/08); each buffer's compute dtype follows.
  std::string numerics = "as-written";
  /// What f32 matrix products may round to ("highest", "tf32":
  /// docs/language/08); written only when it is not "highest".
  std::string matmulPrecision = "highest";
  /// --block-products: "int8" where products against block-quantized weights
  /// may quantize their activations (docs/language/08 §8.4).
  std::string blockProducts = "exact";
  Partitioning partitioning;
  TargetRequirements requirements;
  std::vector<Task> tasks;
  std::vector<Buffer> buffers;
  std::vector<ConcurrencyGroup> concurrencyGroups;
  std::vector<Phase> phases; // one per entry; empty for Task IR without entries
  std::vector<Objective> objectives;
  std::vector<Constraint> constraints;

  const Task *task(const std::string &id) const;
  const Buffer *buffer(const std::string &id) const;
};

Json toJson(const PortablePlan &p);
/// Throws SchemaError with a JSON path on any violation of the schema.
PortablePlan portableFromJson(const Json &j);
/// Every check of the seed's list; each finding names its check.
Diagnostics verifyPortable(const PortablePlan &p);
/// Target-bound keys or values anywhere in a portable document.
Diagnostics scanTargetBoundFields(const Json &j);
/// Recomputes the derived ratios of `f` from its counts.
void finalizeFacts(WorkloadFacts &f, int64_t distinctReadElements, int64_t elementReads);

/// Topological order of task indices, or nullopt when the DAG has a cycle.
std::optional<std::vector<size_t>> topoOrder(const PortablePlan &p);

} // namespace linnet::planning

#endif // LINNET_PLANNING_PORTABLE_H
