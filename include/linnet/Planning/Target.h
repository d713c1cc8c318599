//===- Target.h - Targets, deployments and policies -------------*- C++ -*-===//
//
// Everything the binding gate consumes besides the portable plan, read from
// JSON files (docs/targets/). Each keeps its canonical JSON so that its
// fingerprint is the digest of exactly what was read.
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_PLANNING_TARGET_H
#define LINNET_PLANNING_TARGET_H

#include "linnet/Planning/Common.h"

#include <map>
#include <optional>

namespace linnet::planning {

struct TargetAbi {
  std::string triple;
  std::string callingConvention;
  std::string runtimeAbi; // e.g. "linnet-cpu-rt/1"
  std::vector<std::string> features;
  /// The CPU the host code is generated for: an LLVM CPU name
  /// (`x86-64-v3`, a portable baseline), or `native` for the build host's
  /// CPU with every extension it has; empty in a file that names none
  /// (the build host's, as `native`).
  std::string cpu;
};

struct Target {
  std::string id;
  std::string kind; // "cpu" | "cuda"
  TargetAbi abi;
  int64_t cores = 0;         // CPU cores or CUDA SMs
  int64_t vectorBits = 0;    // SIMD width (CPU) or warp lanes x 32 (CUDA)
  double clockGhz = 0;
  std::map<std::string, double> peakFlops; // per dtype, whole device
  double memoryBandwidth = 0;              // bytes/s
  int64_t memoryCapacity = 0;              // bytes
  std::string memorySpace;                 // "host" | "hbm"
  int64_t alignment = 64;                  // allocation alignment, bytes
  std::map<std::string, int64_t> engines;  // engine kind -> count
  int64_t maxThreadsPerBlock = 0;          // CUDA only
  double linkBandwidth = 0;                // bytes/s between ranks
  double linkLatencyNs = 0;
  double launchOverheadNs = 0;
  std::vector<std::string> dtypes;
  std::vector<std::string> capabilities;
  std::vector<std::string> runtimeLibraries;
  Json raw;
  std::string fingerprint() const { return digestOf(raw); }
  std::string abiFingerprint() const;
};

struct DeploymentDevice {
  std::string id;          // "cpu:0", "cuda:3"
  int64_t memoryFreeBytes; // what this deployment may use
};

struct Deployment {
  std::string id;
  std::string target; // target id it is written for
  std::vector<DeploymentDevice> devices;
  bool oversubscribe = false; // several ranks per device
  std::vector<std::string> runtimeLibraries; // available at run time
  Json raw;
  std::string fingerprint() const { return digestOf(raw); }
};

struct WorkspaceRule {
  std::string kind; // "none" | "fixed" | "per-row" | "per-edge"
  int64_t bytes = 0;
};

struct ImplementationSpec {
  std::string id;
  std::string kind;       // "generated" | "library" | "collective"
  std::string capability; // prefix of the portable alternative it implements
  std::vector<std::string> targets;
  std::vector<std::string> dtypes;
  std::string library, routine, soname; // libraries and collectives
  WorkspaceRule workspace;
};

struct ImplementationPolicy {
  std::string id;
  std::string revision;
  std::string strategy; // "preference" | "min-estimated-time"
  std::vector<ImplementationSpec> implementations;
  std::map<std::string, std::vector<std::string>> preference; // target kind -> impl ids
  Json raw;
  std::string fingerprint() const { return digestOf(raw); }
};

/// Fractions of the target's peaks a kind of work reaches: planning
/// evidence (used to choose) and evaluation evidence (used to re-cost) are
/// separate, separately revised records.
struct Evidence {
  std::string revision;
  std::string source;
  double computeEfficiency = 1, memoryEfficiency = 1, communicationEfficiency = 1;
  /// Measured cost of issuing one command (a calibration's intercept);
  /// replaces the target's launch_overhead_ns in re-costing when set.
  std::optional<double> launchOverheadNs;
  /// Efficiencies of one implementation (its routine, else its
  /// capability), where a calibration measured them: a library GEMM of 16
  /// rows and the streamed decode product reach different parts of the
  /// bandwidth. Costing a command bound to one uses
  /// these (implementation by implementation; others, the ones above).
  struct Efficiencies {
    double compute = 1, memory = 1;
  };
  std::map<std::string, Efficiencies> byImplementation;
  /// This evidence for an implementation `key`.
  Evidence forImplementation(const std::string &key) const {
    Evidence e = *this;
    if (auto it = byImplementation.find(key); it != byImplementation.end()) {
      e.computeEfficiency = it->second.compute;
      e.memoryEfficiency = it->second.memory;
    }
    return e;
  }
};

struct EvidencePolicy {
  std::string id;
  Evidence planning;
  Evidence evaluation;
  Json raw;
  std::string fingerprint() const { return digestOf(raw); }
};

/// How the timing projection and the simulation trace are derived: which
/// work bound gives the durations and whether each command pays the
/// target's launch overhead. Changing it invalidates the projection and
/// everything derived from it, never the costs.
struct SimulationPolicy {
  std::string id;
  std::string revision;
  std::string durations = "upper"; // "upper" | "lower" work bound
  bool launchOverhead = true;
  Json raw;
  std::string fingerprint() const { return digestOf(raw); }
};

Target targetFromJson(const Json &j);
SimulationPolicy simulationPolicyFromJson(const Json &j);
Deployment deploymentFromJson(const Json &j);
ImplementationPolicy implementationPolicyFromJson(const Json &j);
EvidencePolicy evidencePolicyFromJson(const Json &j);

/// The directory holding the shipped target files.
std::string defaultTargetsDir();
/// "cpu" -> x86-64-avx2.json, "cuda" -> cuda-sm90-h200.json, a path as is.
std::string resolveTargetFile(const std::string &nameOrPath, const std::string &dir);
/// The default deployment of a target id.
std::string defaultDeploymentFile(const Target &t, const std::string &dir);

} // namespace linnet::planning

#endif // LINNET_PLANNING_TARGET_H
