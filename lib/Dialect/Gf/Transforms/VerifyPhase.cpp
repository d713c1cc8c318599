//===- VerifyPhase.cpp - no op of an earlier stage survives a lowering ----===//
//
// Op verifiers check each op on its own; this pass checks the module as a
// whole against the stage the pipeline claims to have reached, so a pass that
// silently skipped an op is caught where it happened, with the op's name.
//
//===----------------------------------------------------------------------===//

#include "linnet/Dialect/Gf/Transforms/Passes.h"

#include "llvm/ADT/StringSwitch.h"

#include <set>

namespace linnet::gf {
#define GEN_PASS_DEF_GFVERIFYPHASE
#include "linnet/Dialect/Gf/Transforms/Passes.h.inc"
} // namespace linnet::gf

using namespace mlir;
using namespace linnet;

namespace {
enum class Stage { Domain, Iter, Kernel, Scheduled, Task };

/// Identifies a relation by what a kernel launch keeps of it: its topology
/// buffers and its number of destinations.
using RelationKey = std::pair<std::vector<void *>, int64_t>;

RelationKey keyOf(ValueRange topology, int64_t numDst) {
  std::vector<void *> key;
  for (Value v : topology)
    key.push_back(v.getAsOpaquePointer());
  return {std::move(key), numDst};
}

struct VerifyPhase : gf::impl::GfVerifyPhaseBase<VerifyPhase> {
  using Base::Base;

  void runOnOperation() override {
    std::optional<Stage> reached =
        llvm::StringSwitch<std::optional<Stage>>(stage)
            .Case("domain", Stage::Domain)
            .Case("iter", Stage::Iter)
            .Case("kernel", Stage::Kernel)
            .Case("scheduled", Stage::Scheduled)
            .Case("task", Stage::Task)
            .Default(std::nullopt);
    if (!reached) {
      getOperation().emitError()
          << "unknown stage '" << stage
          << "'; expected domain, iter, kernel, scheduled or task";
      return signalPassFailure();
    }
    // Relations with placement, collected once so the task-stage check is
    // linear in the module size.
    std::set<RelationKey> placed;
    getOperation().walk([&](gf::RelationOp relation) {
      if (relation.hasPlacement())
        placed.insert(keyOf(relation.getTopology(), relation.getNumDst()));
    });
    bool failed = false;
    auto reject = [&](Operation *op, StringRef what, StringRef pass) {
      op->emitOpError() << "should have been " << what << " by the " << stage
                        << " stage (run " << pass << ")";
      failed = true;
    };
    getOperation().walk([&](Operation *op) {
      if (auto apply = dyn_cast<gf::ApplyOp>(op)) {
        // Paged relations have no Iter form: their applies stay by design.
        auto relation = apply.getRelation().getDefiningOp<gf::RelationOp>();
        bool paged = relation &&
                     relation.getRealizationKind() == gf::Realization::Paged;
        if (*reached >= Stage::Iter && !paged)
          reject(op, "lowered", "-gf-lower-domain-to-iter");
      } else if (isa<gf_iter::TraverseOp>(op)) {
        if (*reached >= Stage::Kernel)
          reject(op, "lowered", "-gf-lower-iter-to-kernel");
      } else if (auto launch = dyn_cast<gf_kernel::LaunchOp>(op)) {
        if (*reached >= Stage::Scheduled && !launch.isScheduled())
          reject(op, "scheduled", "-gf-select-kernel-schedule");
        else if (*reached >= Stage::Task &&
                 !launch->hasAttr("gf_task.planned") &&
                 placed.count(keyOf(launch.getTopology(), launch.getNumRows())))
          reject(op, "planned as tasks (its relation has placement metadata)",
                 "-gf-plan-distributed-tasks");
      }
    });
    if (failed)
      signalPassFailure();
  }
};
} // namespace
