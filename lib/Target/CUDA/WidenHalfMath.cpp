//===- WidenHalfMath.cpp - Half math functions computed in f32 -------------===//
//
// -linnet-cuda-widen-half-math (Passes.td): the device code's `math` ops on
// bf16 and f16 rebuilt on f32, which NVPTX lowers (to libdevice or PTX's
// approximations), with exact widening before and one rounding after.
//
//===----------------------------------------------------------------------===//

#include "linnet/Target/CUDA/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

namespace linnet::cuda {

#define GEN_PASS_DEF_LINNETCUDAWIDENHALFMATH
#include "linnet/Target/CUDA/Passes.h.inc"

using namespace mlir;

namespace {

/// f32 (or a vector of it) for bf16 and f16 (or vectors of them); null
/// for any other type.
Type widened(Type t) {
  Type elem = getElementTypeOrSelf(t);
  if (!elem.isBF16() && !elem.isF16())
    return nullptr;
  Type f32 = Float32Type::get(t.getContext());
  if (auto vec = dyn_cast<VectorType>(t))
    return vec.clone(f32);
  return isa<ShapedType>(t) ? nullptr : f32;
}

struct WidenHalfMathPass : public impl::LinnetCUDAWidenHalfMathBase<WidenHalfMathPass> {
  void runOnOperation() override {
    SmallVector<Operation *> half;
    getOperation()->walk([&](Operation *op) {
      if (!isa_and_nonnull<math::MathDialect>(op->getDialect()) || op->getNumRegions() != 0)
        return;
      auto isHalf = [](Type t) { return widened(t) != nullptr; };
      if (llvm::any_of(op->getOperandTypes(), isHalf) || llvm::any_of(op->getResultTypes(), isHalf))
        half.push_back(op);
    });
    for (Operation *op : half) {
      OpBuilder b(op);
      Location loc = op->getLoc();
      SmallVector<Value> operands;
      for (Value v : op->getOperands()) {
        Type w = widened(v.getType());
        operands.push_back(w ? b.create<arith::ExtFOp>(loc, w, v).getResult() : v);
      }
      SmallVector<Type> types;
      for (Type t : op->getResultTypes()) {
        Type w = widened(t);
        types.push_back(w ? w : t);
      }
      OperationState state(loc, op->getName(), operands, types, op->getAttrs());
      Operation *wide = b.create(state);
      for (auto [old, now] : llvm::zip(op->getResults(), wide->getResults()))
        old.replaceAllUsesWith(old.getType() == now.getType()
                                   ? now
                                   : b.create<arith::TruncFOp>(loc, old.getType(), now).getResult());
      op->erase();
    }
  }
};

} // namespace
} // namespace linnet::cuda
