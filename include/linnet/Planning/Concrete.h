//===- Concrete.h - ConcretePlanIR ------------------------------*- C++ -*-===//
//
// The execution plan after binding a portable plan to a target and a
// deployment, per rank (SPMD): selected implementations, devices, engines
// and queues, commands (one body variant each, with an orthogonal
// synchronization clause), planned buffer regions, fingerprints of what it
// was bound against, the planning evidence it was chosen with, a typed
// target schedule extension, and lineage to portable tasks.
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_PLANNING_CONCRETE_H
#define LINNET_PLANNING_CONCRETE_H

#include "linnet/Planning/Portable.h"
#include "linnet/Planning/Target.h"

#include <variant>

namespace linnet::planning {

inline constexpr const char *kConcreteSchema = "linnet.concrete-plan/1";

/// A selected implementation: a generated kernel (symbol) or a library
/// routine (library, routine, soname), with its actual workspace.
struct ImplementationRef {
  std::string id;   // "impl.<task>"
  std::string spec; // implementation policy entry
  std::string kind; // "generated" | "library" | "collective"
  std::string capability;
  std::string symbol;  // generated: the kernel's symbol
  std::string library; // library/collective
  std::string routine;
  std::string soname;
  int64_t workspaceBytes = 0;
  /// A product the code dispatches on its rows at run time: at most
  /// `fewRowsAtMost` rows run `fewRowsRoutine` (generated), which reads the
  /// weights once per `fewRowsPerPass` rows; more rows run the above.
  /// Written as `few_rows` where set (costs: effectiveTask).
  int64_t fewRowsAtMost = 0, fewRowsPerPass = 0;
  std::string fewRowsRoutine;
};

struct Device {
  std::string id;          // "cuda:0"
  std::string memorySpace; // "cuda:0/hbm"
  int64_t memoryFreeBytes = 0;
};
struct Engine {
  std::string id, device, kind; // kind: compute | copy | communication
};
struct Queue {
  std::string id, device, engine;
};

// Command bodies. Launch, CollectiveCommand and HostCall are executable and
// need an ImplementationRef; Launch, CollectiveCommand and Transfer run on a
// queue; Barrier, Signal, Wait and HostCall are issued by the host.
struct Launch {
  std::string implementation, queue;
  std::vector<std::string> buffers; // buffer regions it reads or writes
};
struct CollectiveCommand {
  std::string implementation, queue;
  std::string collective; // "halo-exchange", ...
  std::string group;
  std::vector<std::string> buffers;
};
struct Transfer {
  std::string queue;
  std::string source, destination; // buffer regions
  int64_t bytes = 0;
};
struct Barrier {
  std::string group;
};
struct Signal {
  std::string token;
};
struct Wait {
  std::string token;
};
struct HostCall {
  std::string implementation;
  std::vector<std::string> buffers;
};
using CommandBody =
    std::variant<Launch, CollectiveCommand, Transfer, Barrier, Signal, Wait, HostCall>;
const char *bodyKind(const CommandBody &b);
/// The ImplementationRef id of an executable body, or null.
const std::string *bodyImplementation(const CommandBody &b);
/// The queue of a queue-capable body, or null.
const std::string *bodyQueue(const CommandBody &b);
const std::vector<std::string> *bodyBuffers(const CommandBody &b);

// Synchronization clauses, orthogonal to the body.
struct NoSync {};
struct WaitSync {
  std::vector<std::string> wait;
};
struct SignalSync {
  std::vector<std::string> signal;
};
struct WaitSignalSync {
  std::vector<std::string> wait, signal;
};
using Sync = std::variant<NoSync, WaitSync, SignalSync, WaitSignalSync>;
std::vector<std::string> waitsOf(const Sync &s);
std::vector<std::string> signalsOf(const Sync &s);
Sync makeSync(std::vector<std::string> wait, std::vector<std::string> signal);

struct Command {
  std::string id;
  CommandBody body;
  Sync sync;
  std::vector<std::string> dependsOn; // commands, issue order respects them
  std::string portableTask;           // lineage
};

struct BufferRegion {
  std::string id;
  std::string portableBuffer;
  std::string memorySpace;
  bool external = false; // bound by the caller, not in the arena
  /// A PARAMETER or STATE buffer: it lives as long as the loaded model
  /// (weights copied once, a KV cache between calls), beside the arena.
  bool persistent = false;
  int64_t offset = 0;    // in the memory space's arena
  int64_t bytes = 0;
  int64_t alignment = 1;
  int64_t firstCommand = 0, lastCommand = 0; // indices into commands
  int64_t replacedBoundBytes = -1; // WORKSPACE: the portable bound it replaced
};

struct ArenaReport {
  std::string memorySpace;
  int64_t arenaBytes = 0;      // the planner's peak
  int64_t lowerBoundBytes = 0; // max over time of live bytes
  int64_t externalBytes = 0;
  int64_t persistentBytes = 0; // parameters and state, beside the arena
};

/// Typed target schedule extensions: meaning that belongs to one target.
struct CpuSchedule {
  int64_t threadsPerRank = 1;
  int64_t vectorBits = 0;
};
struct CudaLaunchConfig {
  std::string command;
  int64_t gridX = 1, blockX = 1, sharedBytes = 0;
};
struct CudaSchedule {
  std::vector<CudaLaunchConfig> launches;
};
using ScheduleExtension = std::variant<CpuSchedule, CudaSchedule>;

struct ConcretePlan {
  std::string schema = kConcreteSchema;
  std::string id;
  std::string portableId, portableDigest;
  std::string targetId, targetFingerprint;
  std::string deploymentId, deploymentFingerprint;
  std::string abiFingerprint;
  std::string plannerRevision;
  std::string planningEvidenceRevision, planningEvidenceFingerprint;
  std::string implementationPolicyFingerprint;
  int64_t ranks = 1;
  std::vector<std::string> rankDevices; // device of each rank
  std::vector<Device> devices;
  std::vector<Engine> engines;
  std::vector<Queue> queues;
  std::vector<ImplementationRef> implementations;
  std::vector<Command> commands;
  std::vector<BufferRegion> buffers;
  std::vector<ArenaReport> arenas;
  ScheduleExtension extension;

  const ImplementationRef *implementation(const std::string &id) const;
  const Queue *queue(const std::string &id) const;
  const BufferRegion *buffer(const std::string &id) const;
};

Json toJson(const ConcretePlan &p);
ConcretePlan concreteFromJson(const Json &j);

/// What the concrete verifier may compare against; each is optional.
struct ConcreteContext {
  const PortablePlan *portable = nullptr;
  const Target *target = nullptr;
  const Deployment *deployment = nullptr;
};
Diagnostics verifyConcrete(const ConcretePlan &p, const ConcreteContext &ctx = {});

} // namespace linnet::planning

#endif // LINNET_PLANNING_CONCRETE_H
