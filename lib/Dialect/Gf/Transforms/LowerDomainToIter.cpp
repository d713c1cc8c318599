//===- LowerDomainToIter.cpp - gf.apply -> gf_iter.traverse ----------------===//
//
// Domain IR says which messages exist; Iter IR says how the relation's
// coordinates are enumerated. The enumeration follows from how the relation
// is realized (see gf::coordinateHierarchyFor), so this pass makes no choice
// of its own beyond the destination-major ordering every per-destination
// reduction wants.
//
//===----------------------------------------------------------------------===//

#include "Common.h"
#include "linnet/Dialect/Gf/Transforms/Passes.h"

namespace linnet::gf {
#define GEN_PASS_DEF_GFLOWERDOMAINTOITER
#include "linnet/Dialect/Gf/Transforms/Passes.h.inc"
} // namespace linnet::gf

using namespace mlir;
using namespace linnet;

namespace {
struct LowerDomainToIter
    : gf::impl::GfLowerDomainToIterBase<LowerDomainToIter> {
  void runOnOperation() override {
    SmallVector<gf::ApplyOp> applies;
    getOperation().walk([&](gf::ApplyOp op) { applies.push_back(op); });
    for (gf::ApplyOp apply : applies) {
      auto relation = apply.getRelation().getDefiningOp<gf::RelationOp>();
      if (!relation) {
        apply.emitOpError("cannot choose a coordinate hierarchy: its relation "
                          "is not defined by a gf.relation in this function");
        return signalPassFailure();
      }
      std::optional<gf::CoordinateHierarchy> hierarchy =
          gf::coordinateHierarchyFor(relation.getRealizationKind());
      if (!hierarchy)
        continue; // Paged relations have no Iter form: stay in Domain IR.

      OpBuilder builder(apply);
      auto traverse = builder.create<gf_iter::TraverseOp>(
          apply.getLoc(), apply.getResultTypes(), apply.getRelation(),
          apply.getInputs(), apply.getReducersAttr(),
          apply.getRegionKindsAttr(), apply.getInputSegmentSizesAttr(),
          apply.getSnapshotVersionsAttr(), apply.getEffectsAttr(),
          apply.getDeterministicAttr(), apply.getInputRolesAttr(),
          apply.getInputNamesAttr(),
          builder.getStringAttr(gf::stringifyCoordinateHierarchy(*hierarchy)),
          builder.getStringAttr("destination-major"),
          apply->getNumRegions());
      // Keep any discardable attributes a user or earlier pass attached.
      traverse->setDiscardableAttrs(apply->getDiscardableAttrDictionary());
      gf::moveBodiesRetaggingYields<gf_iter::YieldOp>(apply, traverse);
      apply.replaceAllUsesWith(traverse.getResults());
      apply.erase();
    }
  }
};
} // namespace
