//===- Common.h - helpers shared by the gf lowering passes ------*- C++ -*-===//
#ifndef LINNET_LIB_DIALECT_GF_TRANSFORMS_COMMON_H
#define LINNET_LIB_DIALECT_GF_TRANSFORMS_COMMON_H

#include "linnet/Dialect/Gf/IR/Gf.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Operation.h"

namespace linnet::gf {

/// Moves every region of `from` into the same-numbered region of `to` and
/// rewrites each region's terminator into a `NewYield` with the same operands:
/// the message computation is carried unchanged from stage to stage.
template <typename NewYield>
void moveBodiesRetaggingYields(mlir::Operation *from, mlir::Operation *to) {
  for (auto [src, dst] : llvm::zip(from->getRegions(), to->getRegions())) {
    dst.takeBody(src);
    for (mlir::Block &block : dst) {
      mlir::Operation *yield = block.getTerminator();
      mlir::OpBuilder builder(yield);
      builder.create<NewYield>(yield->getLoc(), yield->getOperands());
      yield->erase();
    }
  }
}

/// Replaces `rel` (a relation whose rows a pass built: paged, radius, kNN)
/// with a materialized relation over `rowPtr` and `colIdx`, created at `b`'s
/// insertion point: `origin = "derived"`, the given degree bounds, every
/// other fact and the placement carried over.
inline RelationOp replaceWithMaterialized(mlir::OpBuilder &b, RelationOp rel, mlir::Value rowPtr,
                                          mlir::Value colIdx, mlir::IntegerAttr degreeMin,
                                          mlir::IntegerAttr degreeMax) {
  auto materialized = b.create<RelationOp>(
      rel.getLoc(), rel.getType(), mlir::ValueRange{rowPtr, colIdx}, rel.getRelationId(), rel.getVersion(),
      rel.getNumSrc(), rel.getNumDst(), degreeMin, degreeMax, "materialized", "derived", rel.getLifecycle(),
      rel.getMeshShapeAttr(), rel.getMeshAxisAttr(), rel.getPartitionBalanceAttr(), rel.getHaloDepthAttr(),
      mlir::FloatAttr(), mlir::IntegerAttr(), mlir::IntegerAttr(), false);
  rel.replaceAllUsesWith(materialized.getResult());
  rel.erase();
  return materialized;
}

} // namespace linnet::gf

#endif // LINNET_LIB_DIALECT_GF_TRANSFORMS_COMMON_H
