//===- HoistInvariantMath.cpp - Math a comprehension repeats, computed once -===//
//
// -linnet-cpu-hoist-invariant-math (Passes.td). A comprehension's body is
// evaluated at every element, so a call that depends on fewer of its axes
// than the element does is repeated along the others. Rotary embeddings as
// Hugging Face writes them are the case that costs: `cos(angle)` and
// `sin(angle)` of an angle of (position, d) are computed for every head,
// two libm calls an element (8 heads: 8x the calls that are needed; in a
// q4_0 decode step 2.6 us a layer, in prefill of 128 tokens ~0.3 ms). The
// pass moves such calls, with the ops they are computed from, into a
// generic over only the axes they read, whose result the comprehension
// reads at its element: the same operations on the same values, so the
// results are the same bits.
//
//===----------------------------------------------------------------------===//

#include "linnet/Target/CPU/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/MapVector.h"

namespace linnet::cpu {
#define GEN_PASS_DEF_LINNETCPUHOISTINVARIANTMATH
#include "linnet/Target/CPU/Passes.h.inc"
} // namespace linnet::cpu

using namespace mlir;

namespace {

/// Calls worth a generic of their own: the ones that become libm calls.
bool isCostlyCall(Operation *op) {
  return isa<math::SinOp, math::CosOp, math::TanhOp, math::ErfOp, math::LogOp, math::PowFOp,
             math::Log2Op, math::Log1pOp, math::AtanOp, math::Atan2Op, math::TanOp>(op);
}

constexpr uint64_t kAll = ~uint64_t(0);

/// The loop dimensions each value of a generic's body depends on (bit k:
/// linalg.index k, or an input's map reads dimension k); kAll for what may
/// not move (the output's element, an op with effects or regions).
class Dependences {
public:
  explicit Dependences(linalg::GenericOp op) {
    Block &body = op.getRegion().front();
    for (OpOperand *in : op.getDpsInputOperands()) {
      uint64_t mask = 0;
      for (AffineExpr e : op.getMatchingIndexingMap(in).getResults())
        e.walk([&](AffineExpr d) {
          if (auto dim = dyn_cast<AffineDimExpr>(d))
            mask |= uint64_t(1) << dim.getPosition();
        });
      deps_[body.getArgument(in->getOperandNumber())] = mask;
    }
    for (OpOperand &out : op.getDpsInitsMutable())
      deps_[body.getArgument(out.getOperandNumber())] = kAll;
    for (Operation &inner : body) {
      uint64_t mask = 0;
      if (auto index = dyn_cast<linalg::IndexOp>(inner))
        mask = uint64_t(1) << index.getDim();
      else if (inner.getNumRegions() != 0 || !isMemoryEffectFree(&inner))
        mask = kAll;
      else
        for (Value v : inner.getOperands())
          mask |= of(v);
      for (Value r : inner.getResults())
        deps_[r] = mask;
    }
  }

  uint64_t of(Value v) const {
    auto it = deps_.find(v);
    return it == deps_.end() ? 0 : it->second; // defined outside: invariant
  }

private:
  DenseMap<Value, uint64_t> deps_;
};

/// The body ops `roots` are computed from, in block order.
SmallVector<Operation *> sliceOf(Block &body, ArrayRef<Operation *> roots) {
  llvm::SmallPtrSet<Operation *, 16> in;
  SmallVector<Operation *> work(roots.begin(), roots.end());
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    if (!in.insert(op).second)
      continue;
    for (Value v : op->getOperands())
      if (Operation *d = v.getDefiningOp(); d && d->getBlock() == &body)
        work.push_back(d);
  }
  SmallVector<Operation *> ordered;
  for (Operation &op : body)
    if (in.contains(&op))
      ordered.push_back(&op);
  return ordered;
}

struct HoistInvariantMathPass
    : public linnet::cpu::impl::LinnetCPUHoistInvariantMathBase<HoistInvariantMathPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> generics;
    getOperation().walk([&](linalg::GenericOp g) {
      if (g.hasPureTensorSemantics() && g.getNumLoops() <= 64 &&
          g.getNumReductionLoops() == 0 && g.getNumDpsInits() == 1)
        generics.push_back(g);
    });
    for (linalg::GenericOp g : generics)
      hoist(g);
  }

  void hoist(linalg::GenericOp g) {
    unsigned loops = g.getNumLoops();
    uint64_t all = loops == 64 ? kAll : (uint64_t(1) << loops) - 1;
    SmallVector<int64_t> ranges = g.getStaticLoopRanges();
    Dependences deps(g);
    Block &body = g.getRegion().front();
    // The costly calls by the dimensions they read, where that leaves out a
    // dimension of more than one iteration (the repeats to save).
    llvm::MapVector<uint64_t, SmallVector<Operation *>> groups;
    for (Operation &inner : body) {
      if (!isCostlyCall(&inner) || inner.getNumResults() != 1)
        continue;
      uint64_t mask = deps.of(inner.getResult(0));
      if (mask == kAll || (mask & ~all) != 0 || mask == all)
        continue;
      // The dimensions left out are static: the table is computed at every
      // point the comprehension reads it, never where it has no elements.
      bool repeats = false, known = true;
      for (unsigned d = 0; d < loops; ++d)
        if (!(mask >> d & 1)) {
          known &= !ShapedType::isDynamic(ranges[d]) && ranges[d] >= 1;
          repeats |= ranges[d] > 1;
        }
      if (repeats && known)
        groups[mask].push_back(&inner);
    }
    if (groups.empty())
      return;

    OpBuilder b(g);
    Location loc = g.getLoc();
    SmallVector<Range, 4> loopRanges = cast<linalg::LinalgOp>(g.getOperation()).createLoopRanges(b, loc);
    SmallVector<Value> tables;
    SmallVector<AffineMap> tableMaps;
    SmallVector<Operation *> replaced;
    for (auto &[mask, calls] : groups) {
      SmallVector<unsigned> dims;
      SmallVector<AffineExpr> exprs;
      SmallVector<OpFoldResult> sizes;
      for (unsigned d = 0; d < loops; ++d)
        if (mask >> d & 1) {
          dims.push_back(d);
          exprs.push_back(b.getAffineDimExpr(d));
          sizes.push_back(loopRanges[d].size);
        }
      SmallVector<Operation *> slice = sliceOf(body, calls);
      // Only ops of the body; inputs' elements are not carried over.
      if (llvm::any_of(slice, [&](Operation *op) {
            return llvm::any_of(op->getOperands(), [&](Value v) {
              return isa<BlockArgument>(v) && cast<BlockArgument>(v).getOwner() == &body;
            });
          }))
        continue;
      SmallVector<Value> empties;
      SmallVector<Type> types;
      for (Operation *call : calls) {
        Type t = call->getResult(0).getType();
        empties.push_back(b.create<tensor::EmptyOp>(loc, sizes, t));
        types.push_back(empties.back().getType());
      }
      AffineMap identity = b.getMultiDimIdentityMap(dims.size());
      SmallVector<AffineMap> maps(calls.size(), identity);
      SmallVector<utils::IteratorType> iters(dims.size(), utils::IteratorType::parallel);
      auto table = b.create<linalg::GenericOp>(
          loc, types, ValueRange{}, empties, maps, iters,
          [&](OpBuilder &nb, Location nl, ValueRange) {
            IRMapping map;
            for (Operation *op : slice) {
              if (auto index = dyn_cast<linalg::IndexOp>(op)) {
                unsigned at = llvm::find(dims, index.getDim()) - dims.begin();
                map.map(index.getResult(), nb.create<linalg::IndexOp>(index.getLoc(), at).getResult());
                continue;
              }
              nb.clone(*op, map);
            }
            SmallVector<Value> yields;
            for (Operation *call : calls)
              yields.push_back(map.lookup(call->getResult(0)));
            nb.create<linalg::YieldOp>(nl, yields);
          });
      for (auto [i, call] : llvm::enumerate(calls)) {
        tables.push_back(table.getResult(i));
        tableMaps.push_back(AffineMap::get(loops, 0, exprs, b.getContext()));
        replaced.push_back(call);
      }
    }
    if (tables.empty())
      return;

    // The comprehension again, reading the tables as inputs.
    SmallVector<Value> inputs(g.getDpsInputs());
    unsigned firstNew = inputs.size();
    inputs.append(tables);
    SmallVector<AffineMap> maps;
    for (OpOperand *in : g.getDpsInputOperands())
      maps.push_back(g.getMatchingIndexingMap(in));
    maps.append(tableMaps);
    for (OpOperand &out : g.getDpsInitsMutable())
      maps.push_back(g.getMatchingIndexingMap(&out));
    auto next = b.create<linalg::GenericOp>(loc, g.getResultTypes(), inputs, g.getDpsInits(), maps,
                                            g.getIteratorTypesArray());
    next->setDiscardableAttrs(g->getDiscardableAttrDictionary());
    next.getRegion().takeBody(g.getRegion());
    Block &moved = next.getRegion().front();
    for (auto [i, call] : llvm::enumerate(replaced)) {
      BlockArgument arg = moved.insertArgument(firstNew + i, call->getResult(0).getType(), call->getLoc());
      call->getResult(0).replaceAllUsesWith(arg);
      call->erase();
    }
    g.replaceAllUsesWith(next.getResults());
    g.erase();
  }
};

} // namespace
