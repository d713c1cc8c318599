//===- FromTaskIR.h - PortablePlanIR from Task IR ---------------*- C++ -*-===//
#ifndef LINNET_PLANNING_FROMTASKIR_H
#define LINNET_PLANNING_FROMTASKIR_H

#include "linnet/Planning/Portable.h"

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace linnet::planning {

/// Builds the portable plan of a module after -gf-plan-distributed-tasks.
/// Planned kernels become their interior/boundary/halo tasks; a kernel that
/// task planning left alone becomes one "whole" task on a single partition.
/// `sourceFile`/`sourceText` give the plan's source lineage. Findings that
/// stop the import (a kernel over an unknown relation, ...) go to `diags`.
std::optional<PortablePlan> buildPortablePlan(mlir::ModuleOp module, const std::string &sourceFile,
                                              const std::string &sourceText, Diagnostics &diags);

/// A module imported from a linnet plan (func/linalg/tensor/scf on tensors,
/// gf relations where the importer made them) after a compilation's task
/// pipeline (linnet/Target/Target.h; this reads it, runs nothing): takes its
/// tasks, and adds the linalg work of every function without
/// one: a task per linalg op (exact facts: trip counts x body
/// ops, 2·M·N·K for a matmul; bytes from the operands), or a single "whole"
/// task for a function without any. Single partition unless gf planned one.
/// One phase per entry (a public function) with each task's executions per
/// call. With `tagOps`, the op each task comes from gets `linnet.task` (its
/// id): what `linnet build --profile` times (-linnet-cpu-instrument-commands).
std::optional<PortablePlan> buildPortablePlanFromTasks(mlir::ModuleOp module, const std::string &sourceFile,
                                                       const std::string &sourceText, Diagnostics &diags,
                                                       bool tagOps = false);

/// Parses an .mlir file (Domain, Iter, Kernel or Task IR), runs the gf
/// pipeline up to task planning (each pass leaves what is already lowered
/// alone) and builds the portable plan.
std::optional<PortablePlan> importMlirFile(const std::string &path, Diagnostics &diags);

/// A candidate portable plan and the structural decision that makes it.
struct PortableCandidate {
  std::string description;
  PortablePlan plan;
};
/// The PlanSet's candidates: the source's plan first, then one plan per
/// other axis of the relations' mesh to partition destinations over (a
/// different partition count, halo volume and per-rank work). Task IR that
/// is already partitioned, or a program without placement, has one.
std::vector<PortableCandidate> importMlirCandidates(const std::string &path, Diagnostics &diags);

} // namespace linnet::planning

#endif // LINNET_PLANNING_FROMTASKIR_H
