//===- WidenBf16.cpp - bf16 arithmetic as f32 arithmetic, rounded ---------===//
//
// Each arith/math op on bf16 values (scalars or vectors) becomes the same op
// on their f32 extensions, its result rounded back to bf16: the language's
// per-operation rounding, kept (f32 holds more than twice bf16's precision,
// so rounding the f32 result is the correctly rounded bf16 result for +, -,
// *, /). The extensions and roundings are then arith.extf/truncf, which
// arith-expand's bf16 patterns turn into integer code; left to LLVM, a host
// without AVX512-BF16 calls __truncsfbf2 once per rounded element.
//
//===----------------------------------------------------------------------===//

#include "linnet/Target/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinOps.h"

namespace linnet::cpu {
#define GEN_PASS_DEF_LINNETCPUWIDENBF16
#include "linnet/Target/CPU/Passes.h.inc"
} // namespace linnet::cpu

using namespace mlir;

namespace {

/// `t` with a bf16 element type replaced by `to`, or null when it has none.
Type withElement(Type t, Type to) {
  if (t.isBF16())
    return to;
  if (auto v = dyn_cast<VectorType>(t); v && v.getElementType().isBF16())
    return v.clone(to);
  return nullptr;
}

/// Ops computing a bf16 result from bf16 operands (not the conversions).
bool widenable(Operation *op) {
  if (op->getNumResults() != 1 || op->getNumRegions() != 0 || op->getNumOperands() == 0)
    return false;
  if (isa<arith::ExtFOp, arith::TruncFOp, arith::BitcastOp, arith::ConstantOp>(op))
    return false;
  Dialect *d = op->getDialect();
  if (!d || (d->getNamespace() != "arith" && d->getNamespace() != "math"))
    return false;
  if (!withElement(op->getResult(0).getType(), Float32Type::get(op->getContext())))
    return false;
  return llvm::all_of(op->getOperandTypes(), [&](Type t) {
    return withElement(t, Float32Type::get(op->getContext())) || t.isIntOrIndex() ||
           (isa<VectorType>(t) && cast<VectorType>(t).getElementType().isInteger(1));
  });
}

struct WidenBf16Pass : public linnet::cpu::impl::LinnetCPUWidenBf16Base<WidenBf16Pass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (widenable(op))
        ops.push_back(op);
    });
    Type f32 = Float32Type::get(&getContext());
    for (Operation *op : ops) {
      OpBuilder b(op);
      Location loc = op->getLoc();
      SmallVector<Value> operands;
      for (Value v : op->getOperands())
        operands.push_back(withElement(v.getType(), f32)
                               ? b.create<arith::ExtFOp>(loc, withElement(v.getType(), f32), v).getResult()
                               : v);
      Type bfT = op->getResult(0).getType();
      OperationState st(loc, op->getName(), operands, TypeRange{withElement(bfT, f32)}, op->getAttrs());
      Operation *wide = b.create(st);
      Value narrow = b.create<arith::TruncFOp>(loc, bfT, wide->getResult(0));
      op->getResult(0).replaceAllUsesWith(narrow);
      op->erase();
    }
  }
};

} // namespace
