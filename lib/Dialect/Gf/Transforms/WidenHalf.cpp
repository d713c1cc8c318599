//===- WidenHalf.cpp - f16/bf16 arithmetic in f32, rounded where kept ------===//
//
// The f32-compute numerics policy (Passes.td, docs/language/08). Each
// arith/math op touching a half value is rebuilt on f32 values; its result
// is rounded back (a truncf) for the users that keep it, while later
// arithmetic takes the f32 value itself. The rounding that remains is the
// one at the boundary of arithmetic, which is where the reference
// interpreter rounds under the same policy: tensor elements, carried
// states, branch results. The pass runs before fusion, so a tensor that
// fusion later removes still rounds its elements as the interpreter does
// (an explicit truncf/extf pair without fast-math flags is not folded).
//
//===----------------------------------------------------------------------===//

#include "linnet/Dialect/Gf/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace linnet::gf {
#define GEN_PASS_DEF_GFWIDENHALF
#include "linnet/Dialect/Gf/Transforms/Passes.h.inc"
} // namespace linnet::gf

using namespace mlir;

namespace {

bool isHalf(Type t) { return t.isBF16() || t.isF16(); }

/// `t` (a half scalar or a vector of halves) with its element type replaced
/// by `to`; null for any other type (tensors keep their dtype: an op on
/// whole tensors rounds each element, which is storage).
Type withElement(Type t, Type to) {
  if (isHalf(t))
    return to;
  if (auto v = dyn_cast<VectorType>(t); v && isHalf(v.getElementType()))
    return v.clone(to);
  return nullptr;
}

bool isArithmetic(Operation *op) {
  Dialect *d = op->getDialect();
  return d && (d->getNamespace() == "arith" || d->getNamespace() == "math") && op->getNumRegions() == 0;
}

struct WidenHalf : linnet::gf::impl::GfWidenHalfBase<WidenHalf> {
  void runOnOperation() override {
    Type f32 = Float32Type::get(&getContext());
    auto touchesHalf = [&](Operation *op) {
      return llvm::any_of(op->getOperandTypes(), [&](Type t) { return withElement(t, f32); }) ||
             llvm::any_of(op->getResultTypes(), [&](Type t) { return withElement(t, f32); });
    };
    SmallVector<Operation *> ops;
    getOperation().walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isArithmetic(op) && !isa<arith::ConstantOp, arith::BitcastOp>(op) && touchesHalf(op))
        ops.push_back(op);
    });

    // A half value's unrounded f32 value, where it has one.
    DenseMap<Value, Value> wide;
    SmallVector<arith::TruncFOp> roundings;
    // Any other half value is widened once, where it is defined, so that
    // every later reader shares the extension.
    auto wideOf = [&](Location loc, Value v) -> Value {
      if (Value w = wide.lookup(v))
        return w;
      OpBuilder b(&getContext());
      if (Operation *def = v.getDefiningOp())
        b.setInsertionPointAfter(def);
      else
        b.setInsertionPointToStart(cast<BlockArgument>(v).getOwner());
      Value w = b.create<arith::ExtFOp>(loc, withElement(v.getType(), f32), v);
      wide[v] = w;
      return w;
    };

    for (Operation *op : ops) {
      OpBuilder b(op);
      Location loc = op->getLoc();
      if (auto ext = dyn_cast<arith::ExtFOp>(op)) {
        // half -> wider: the unrounded value where there is one.
        Value w = wide.lookup(ext.getIn());
        if (!w)
          continue;
        Value r = ext.getType() == w.getType() ? w : b.create<arith::ExtFOp>(loc, ext.getType(), w).getResult();
        ext.replaceAllUsesWith(r);
        ext.erase();
        continue;
      }
      if (auto trunc = dyn_cast<arith::TruncFOp>(op)) {
        // wider -> half (a cast, a half sum's result): arithmetic reads the
        // value before this rounding; an f64 is rounded to f32 only.
        if (!withElement(trunc.getType(), f32))
          continue;
        Value in = trunc.getIn();
        Type inWide = withElement(trunc.getType(), f32);
        if (Value w = wide.lookup(in))
          in = w; // f16 <-> bf16 goes through f32
        if (in.getType() != inWide) {
          if (getElementTypeOrSelf(in.getType()).getIntOrFloatBitWidth() > 32)
            in = b.create<arith::TruncFOp>(loc, inWide, in);
          else
            in = b.create<arith::ExtFOp>(loc, inWide, in);
        }
        wide[trunc.getResult()] = in;
        roundings.push_back(trunc);
        continue;
      }
      SmallVector<Value> operands;
      for (Value v : op->getOperands())
        operands.push_back(withElement(v.getType(), f32) ? wideOf(loc, v) : v);
      SmallVector<Type> types;
      for (Type t : op->getResultTypes())
        types.push_back(withElement(t, f32) ? withElement(t, f32) : t);
      OperationState st(loc, op->getName(), operands, types, op->getAttrs());
      Operation *w = b.create(st);
      for (auto [old, now] : llvm::zip(op->getResults(), w->getResults())) {
        if (old.getType() == now.getType()) {
          old.replaceAllUsesWith(now);
          continue;
        }
        auto narrow = b.create<arith::TruncFOp>(loc, old.getType(), now);
        roundings.push_back(narrow);
        wide[narrow.getResult()] = now;
        old.replaceAllUsesWith(narrow.getResult());
      }
      op->erase();
    }
    // Roundings that only arithmetic read (ours, and the importer's casts
    // and half sums' final roundings) are gone with their readers.
    for (arith::TruncFOp t : roundings)
      if (t->use_empty())
        t->erase();
    // The plans record the policy the module now computes under.
    getOperation()->setAttr("linnet.numerics", StringAttr::get(&getContext(), "f32-compute"));
  }
};

} // namespace
