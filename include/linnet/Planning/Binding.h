//===- Binding.h - The portable-to-concrete binding gate --------*- C++ -*-===//
#ifndef LINNET_PLANNING_BINDING_H
#define LINNET_PLANNING_BINDING_H

#include "linnet/Planning/Concrete.h"

namespace linnet::planning {

inline constexpr const char *kPlannerRevision = "linnet-planner/1";

struct BindInputs {
  const PortablePlan &portable;
  const Target &target;
  const Deployment &deployment;
  const ImplementationPolicy &implementations;
  const EvidencePolicy &evidence;
};

/// The seed's six steps: (1) target capability and ABI, (2) legal
/// implementations, (3) abstract -> target resources, (4) placement and
/// memory spaces, (5) queues, synchronization and buffers, (6) typed
/// rejection of what cannot be met. Returns nullopt with `diags` on failure.
std::optional<ConcretePlan> bind(const BindInputs &in, Diagnostics &diags);

/// One allocation request of the memory planner: live over the inclusive
/// interval [first, last] of command indices.
struct Allocation {
  int64_t bytes = 0;
  int64_t first = 0, last = 0;
  int64_t offset = -1; // result
};
struct ArenaPlan {
  int64_t peak = 0;       // arena size the offsets need
  int64_t lowerBound = 0; // max over time of live (aligned) bytes
};
/// Assigns offsets so that allocations live at the same time never
/// overlap: largest first, each at the lowest aligned gap that fits.
ArenaPlan planArena(std::vector<Allocation> &allocs, int64_t alignment);

/// The two sides of a compute task's roofline at full efficiency: its ops
/// at the target's peak for its dtypes (the slowest), its bytes at the
/// target's bandwidth (upper bounds, or lower with `lower`).
struct RooflineSides {
  double computeSeconds = 0, memorySeconds = 0;
};
RooflineSides rooflineSides(const Task &t, const Target &target, bool lower = false);
/// Roofline seconds of a task's work at the given evidence (upper bounds).
double rooflineSeconds(const Task &t, const Target &target, const Evidence &e, bool lower = false);

} // namespace linnet::planning

#endif // LINNET_PLANNING_BINDING_H
