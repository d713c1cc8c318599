//===- Profile.h - Measuring an artifact's entry against its plans -*- C++ -*-===//
//
// `linnet profile` as a library: calls an entry of a loaded model with the
// command timers an artifact built with `--profile` carries
// (-linnet-cpu-instrument-commands), pairs their events into executions,
// and turns them into the planning layer's products: the measured
// ObservationSet (what `planning::validate` and `calibrateEvidence` read)
// and a planning::Timeline of the measured run (a Chrome/Perfetto trace,
// `planning::toJson`). Re-costing the plans for a prediction is the
// planning layer's (`costTasks`, `project`, `evaluate`).
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_PROFILE_PROFILE_H
#define LINNET_PROFILE_PROFILE_H

#include "linnet/Planning/Concrete.h"
#include "linnet/Planning/Derived.h"
#include "linnet/Planning/Machine.h"
#include "linnet/Planning/Portable.h"
#include "linnet/Runtime/Runtime.h"

#include <string>
#include <vector>

namespace linnet::profile {

/// One timed call of the entry (steady clock, the timers' clock).
struct TimedCall {
  uint64_t begin = 0, end = 0; // ns
};
/// One execution of a timed command, in the call it ran in.
struct CommandExecution {
  uint32_t timer = 0; // index into the model's profileTasks
  unsigned iteration = 0;
  uint64_t begin = 0, end = 0; // ns
};

/// What a profiled run measured.
struct Measurement {
  std::string entry;
  std::vector<TimedCall> calls;
  std::vector<CommandExecution> commands;
  /// The portable task each timer times (the artifact's profileTasks).
  std::vector<std::string> timerTasks;
  /// Whether the library has command timers (built with --profile).
  bool commandTimers = false;
  /// Timer events that did not fit the library's buffer.
  uint64_t droppedEvents = 0;
};

/// The planning documents an artifact carries, read through its manifest
/// (each file's digest checked, each document through its schema).
struct ArtifactPlans {
  planning::PortablePlan portable;
  planning::ConcretePlan concrete;
  planning::MachineIR machine;
  planning::ProgramManifest manifest;
};
/// False with `error` ("DIR/FILE: [JSON path: ]why") when a document is
/// missing, altered or malformed.
bool readArtifactPlans(const std::string &dir, ArtifactPlans &out, std::string &error);

struct RunOptions {
  unsigned warmup = 2, iterations = 10;
};

/// Calls `entry` `warmup` times untimed, then `iterations` times, timing
/// each call and every command of it. False with `error` when a call fails.
bool measure(rt::Model &model, const std::string &entry, const std::vector<rt::TensorView> &inputs,
             const RunOptions &options, Measurement &out, std::string &error);

/// The measured ObservationSet of `m` against the concrete plan: per
/// command its mean duration of one execution and its executions per call;
/// per entry point the calls' median wall time and (with timers) the mean
/// time inside timed commands. Records sorted by (command, metric).
planning::ObservationSet observations(const Measurement &m, const planning::ConcretePlan &concrete,
                                      const std::string &libraryDigest);

/// The measured run as a timeline: a thread for the entry's calls and one
/// for its commands, each command event carrying its command, portable
/// task, source location, op and (from the manifest's lineage) symbol.
/// Times start at the first call. The bundle names the concrete plan, the
/// observations and the artifact.
planning::Timeline measuredTimeline(const Measurement &m, const planning::PortablePlan &portable,
                                    const planning::ConcretePlan &concrete,
                                    const planning::ProgramManifest &manifest,
                                    const planning::ObservationSet &observations, const std::string &artifact);

} // namespace linnet::profile

#endif // LINNET_PROFILE_PROFILE_H
