//===- GfStorageOps.cpp - gf_storage dialect -------------------------------===//

#include "linnet/Dialect/GfStorage/IR/GfStorage.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace linnet::gf_storage;

#include "linnet/Dialect/GfStorage/IR/GfStorageOpsDialect.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "linnet/Dialect/GfStorage/IR/GfStorageOpsTypes.cpp.inc"

void GfStorageDialect::initialize() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "linnet/Dialect/GfStorage/IR/GfStorageOpsTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "linnet/Dialect/GfStorage/IR/GfStorageOps.cpp.inc"
      >();
}

#define GET_OP_CLASSES
#include "linnet/Dialect/GfStorage/IR/GfStorageOps.cpp.inc"

LogicalResult RegionOp::verify() {
  if (getLogicalId().empty())
    return emitOpError("needs a non-empty logical_id");
  if (getElements() < -1)
    return emitOpError("elements must be non-negative, or -1 when unknown");
  if (getVersion() < 0)
    return emitOpError() << "has negative version " << getVersion();
  auto type = cast<RankedTensorType>(getValue().getType());
  if (getElements() >= 0 && type.getRank() >= 1 && !type.isDynamicDim(0) &&
      type.getDimSize(0) != getElements())
    return emitOpError() << "declares " << getElements()
                         << " elements but its tensor has "
                         << type.getDimSize(0);
  return success();
}

LogicalResult InstanceOp::verify() {
  if (getCapacityBytes() < -1)
    return emitOpError() << "has capacity_bytes = " << getCapacityBytes()
                         << "; expected a non-negative size, or -1 when it "
                            "is decided at run time";
  StringRef device = getDevice();
  if (device != "local" && device != "ghost" && device != "replica")
    return emitOpError() << "has device '" << device
                         << "'; expected local, ghost or replica";
  if (getLayout() != "partitioned" && getLayout() != "replicated")
    return emitOpError() << "has layout '" << getLayout()
                         << "'; expected partitioned or replicated";
  if (getMemorySpace() != "device" && getMemorySpace() != "host")
    return emitOpError() << "has memory_space '" << getMemorySpace()
                         << "'; expected device or host";
  if (device == "replica" && getLayout() != "replicated")
    return emitOpError("holds a replica, so its layout must be 'replicated'");
  return success();
}

LogicalResult JoinOp::verify() {
  if (getEvents().empty())
    return emitOpError("needs at least one event to join");
  if (getSnapshotVersion() < 0)
    return emitOpError("has a negative snapshot_version");
  return success();
}

// Joining a single event is that event.
OpFoldResult JoinOp::fold(FoldAdaptor) {
  if (getEvents().size() == 1)
    return getEvents().front();
  return {};
}

namespace {
/// join(a, b, a) -> join(a, b); join(join(a, b), c) -> join(a, b, c) when the
/// inner join has no other user and the same snapshot version.
struct SimplifyJoin : OpRewritePattern<JoinOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(JoinOp op,
                                PatternRewriter &rewriter) const override {
    llvm::SetVector<Value> events;
    bool changed = false;
    for (Value event : op.getEvents()) {
      auto inner = event.getDefiningOp<JoinOp>();
      if (inner && inner->hasOneUse() &&
          inner.getSnapshotVersion() == op.getSnapshotVersion()) {
        events.insert(inner.getEvents().begin(), inner.getEvents().end());
        changed = true;
        continue;
      }
      changed |= !events.insert(event);
    }
    if (!changed)
      return failure();
    rewriter.replaceOpWithNewOp<JoinOp>(op, op.getType(), events.getArrayRef(),
                                        op.getSnapshotVersion());
    return success();
  }
};
} // namespace

void JoinOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                         MLIRContext *context) {
  results.add<SimplifyJoin>(context);
}
