//===- Common.h - helpers shared by the gf lowering passes ------*- C++ -*-===//
#ifndef LINNET_LIB_DIALECT_GF_TRANSFORMS_COMMON_H
#define LINNET_LIB_DIALECT_GF_TRANSFORMS_COMMON_H

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

} // namespace linnet::gf

#endif // LINNET_LIB_DIALECT_GF_TRANSFORMS_COMMON_H
