//===- LowerIterToKernel.cpp - gf_iter.traverse -> gf_kernel.launch --------===//
//
// A kernel reads buffers, not relation values: the launch takes the
// relation's topology buffers followed by the field inputs, and copies the
// facts a schedule is derived from (rows, degree bounds). The gf.relation op
// is left in place because task planning still needs its placement.
//
//===----------------------------------------------------------------------===//

#include "Common.h"
#include "linnet/Dialect/Gf/Transforms/Passes.h"

namespace linnet::gf {
#define GEN_PASS_DEF_GFLOWERITERTOKERNEL
#include "linnet/Dialect/Gf/Transforms/Passes.h.inc"
} // namespace linnet::gf

using namespace mlir;
using namespace linnet;

namespace {
/// Per-row neighbor bounds implied by the relation, where the realization
/// fixes them (dense: every source; triangular: 1..num_src).
std::pair<std::optional<int64_t>, std::optional<int64_t>>
degreeBounds(gf::RelationOp relation) {
  std::optional<int64_t> lo = relation.getDegreeMin();
  std::optional<int64_t> hi = relation.getDegreeMax();
  int64_t numSrc = relation.getNumSrc();
  gf::Realization realization = relation.getRealizationKind();
  if (numSrc >= 0 && realization == gf::Realization::Dense) {
    lo = lo.value_or(numSrc);
    hi = hi.value_or(numSrc);
  } else if (numSrc >= 0 && realization == gf::Realization::Triangular) {
    lo = lo.value_or(numSrc > 0 ? 1 : 0);
    hi = hi.value_or(numSrc);
  } else if (std::optional<int64_t> k = relation.getK()) {
    lo = lo.value_or(*k);
    hi = hi.value_or(*k);
  }
  return {lo, hi};
}

struct LowerIterToKernel
    : gf::impl::GfLowerIterToKernelBase<LowerIterToKernel> {
  void runOnOperation() override {
    SmallVector<gf_iter::TraverseOp> traversals;
    getOperation().walk(
        [&](gf_iter::TraverseOp op) { traversals.push_back(op); });
    for (gf_iter::TraverseOp traverse : traversals) {
      auto relation = traverse.getRelation().getDefiningOp<gf::RelationOp>();
      if (!relation) {
        traverse.emitOpError("cannot bind buffers: its relation is not "
                             "defined by a gf.relation in this function");
        return signalPassFailure();
      }
      std::optional<gf::Traversal> traversal =
          gf::traversalFor(relation.getRealizationKind());
      if (!traversal) {
        traverse.emitOpError() << "has no kernel traversal for a '"
                               << relation.getRealization() << "' relation";
        return signalPassFailure();
      }
      SmallVector<Value> operands(relation.getTopology());
      llvm::append_range(operands, traverse.getInputs());
      auto [lo, hi] = degreeBounds(relation);

      OpBuilder builder(traverse);
      auto i64 = [&](std::optional<int64_t> v) -> IntegerAttr {
        return v ? builder.getI64IntegerAttr(*v) : IntegerAttr();
      };
      auto launch = builder.create<gf_kernel::LaunchOp>(
          traverse.getLoc(), traverse.getResultTypes(), operands,
          traverse.getReducersAttr(), traverse.getRegionKindsAttr(),
          traverse.getInputSegmentSizesAttr(),
          traverse.getSnapshotVersionsAttr(), traverse.getEffectsAttr(),
          traverse.getDeterministicAttr(), traverse.getInputRolesAttr(),
          traverse.getInputNamesAttr(),
          builder.getStringAttr(gf::stringifyTraversal(*traversal)),
          builder.getI64IntegerAttr(relation.getNumDst()), i64(lo), i64(hi),
          /*schedule_kind=*/StringAttr(), /*block_rows=*/IntegerAttr(),
          /*block_neighbors=*/IntegerAttr(), /*num_warps=*/IntegerAttr(),
          /*pipeline_stages=*/IntegerAttr(), /*execution_roles=*/ArrayAttr(),
          /*instruction_contracts=*/ArrayAttr(),
          /*schedule_handoffs=*/ArrayAttr(),
          /*schedule_resources=*/ArrayAttr(),
          /*target_contract=*/StringAttr(), traverse->getNumRegions());
      launch->setDiscardableAttrs(traverse->getDiscardableAttrDictionary());
      gf::moveBodiesRetaggingYields<gf_kernel::YieldOp>(traverse, launch);
      traverse.replaceAllUsesWith(launch.getResults());
      traverse.erase();
    }
  }
};
} // namespace
