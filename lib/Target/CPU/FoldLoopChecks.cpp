//===- FoldLoopChecks.cpp - Comparisons decided by loop bounds -------------===//
//
// -linnet-cpu-fold-loop-checks (Passes.td): `arith.cmpi` on induction
// variables of loops with constant bounds, and constants, folded where the
// ranges decide the comparison.
//
//===----------------------------------------------------------------------===//

#include "linnet/Target/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/DenseMap.h"

#include <algorithm>
#include <climits>
#include <optional>

namespace linnet::cpu {
#define GEN_PASS_DEF_LINNETCPUFOLDLOOPCHECKS
#include "linnet/Target/CPU/Passes.h.inc"
} // namespace linnet::cpu

using namespace mlir;

namespace {

/// The values `v` can take, [lo, hi] (signed 64-bit), where it is a
/// constant or the induction variable of a loop with constant bounds.
struct Range {
  int64_t lo, hi;
};

std::optional<int64_t> constantOf(Value v) {
  APInt c;
  if (matchPattern(v, m_ConstantInt(&c)) && c.getBitWidth() <= 64)
    return c.getSExtValue();
  return std::nullopt;
}

/// Bits of an integer or index type (index: 64), 0 for anything else.
unsigned bitsOf(Type t) {
  if (t.isIndex())
    return 64;
  auto i = dyn_cast<IntegerType>(t);
  return i ? i.getWidth() : 0;
}

/// What a value can be, by its definition: constants, induction variables
/// (from their bounds' ranges), and integer arithmetic on those (+, -, *,
/// floor and truncating division and remainder by a positive constant,
/// min, max, casts). Anything else, or a result that could overflow, may
/// be any value (the full range): `min(start + 1, 2048)` is at most 2048
/// whatever `start` is.
constexpr Range kAny{INT64_MIN, INT64_MAX};

class Ranges {
public:
  Range of(Value v, unsigned depth = 0) {
    if (auto it = memo_.find(v); it != memo_.end())
      return it->second;
    Range r = depth > 12 ? kAny : compute(v, depth + 1).value_or(kAny);
    memo_[v] = r;
    return r;
  }

private:
  llvm::DenseMap<Value, Range> memo_;

  /// The values lb, lb + step, ... below ub, where the step is a positive
  /// constant: at least lb's least value, at most ub's greatest minus one.
  std::optional<Range> iv(Value lbV, Value ubV, Value stepV, unsigned depth) {
    std::optional<int64_t> step = constantOf(stepV);
    std::optional<Range> lb = of(lbV, depth), ub = of(ubV, depth);
    if (!step || *step <= 0 || ub->hi <= lb->lo || ub->hi == INT64_MIN)
      return std::nullopt;
    int64_t hi = ub->hi - 1;
    if (lb->lo == lb->hi && hi >= lb->lo) // lb, lb + step, ...: the last one at or below hi
      hi = lb->lo + int64_t((uint64_t(hi) - uint64_t(lb->lo)) / uint64_t(*step) * uint64_t(*step));
    return Range{lb->lo, hi};
  }

  static std::optional<Range> checked(__int128 lo, __int128 hi) {
    if (lo < INT64_MIN || hi > INT64_MAX || lo > hi)
      return std::nullopt;
    return Range{int64_t(lo), int64_t(hi)};
  }

  std::optional<Range> compute(Value v, unsigned depth) {
    if (std::optional<int64_t> c = constantOf(v))
      return Range{*c, *c};
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      Operation *owner = arg.getOwner()->getParentOp();
      if (auto f = dyn_cast<scf::ForOp>(owner); f && v == f.getInductionVar())
        return iv(f.getLowerBound(), f.getUpperBound(), f.getStep(), depth);
      if (auto p = dyn_cast<scf::ParallelOp>(owner); p && arg.getArgNumber() < p.getNumLoops()) {
        unsigned n = arg.getArgNumber();
        return iv(p.getLowerBound()[n], p.getUpperBound()[n], p.getStep()[n], depth);
      }
      return std::nullopt;
    }
    Operation *op = v.getDefiningOp();
    if (!op || op->getNumOperands() == 0)
      return std::nullopt;
    // Arithmetic is followed in 64 bits only (index is 64-bit on every
    // target): a narrower result may wrap where the ranges say it cannot.
    if (bitsOf(v.getType()) != 64) {
      if (!isa<arith::IndexCastOp, arith::IndexCastUIOp>(op))
        return std::nullopt;
      // index -> i32: the range, where it fits.
      Range r = of(op->getOperand(0), depth);
      unsigned w = bitsOf(v.getType());
      if (w < 2 || w > 64 || r.lo < -(int64_t(1) << (w - 1)) || r.hi >= (int64_t(1) << (w - 1)) ||
          (isa<arith::IndexCastUIOp>(op) && r.lo < 0))
        return std::nullopt;
      return r;
    }
    if (isa<arith::IndexCastOp, arith::ExtSIOp>(op))
      return of(op->getOperand(0), depth);
    if (isa<arith::IndexCastUIOp, arith::ExtUIOp>(op)) {
      // Zero extension: the value where it is non-negative as the source.
      Range r = of(op->getOperand(0), depth);
      return r.lo >= 0 ? std::optional<Range>(r) : std::nullopt;
    }
    if (op->getNumOperands() != 2)
      return std::nullopt;
    std::optional<Range> a = of(op->getOperand(0), depth), b = of(op->getOperand(1), depth);
    using I = __int128;
    if (isa<arith::AddIOp>(op))
      return checked(I(a->lo) + b->lo, I(a->hi) + b->hi);
    if (isa<arith::SubIOp>(op))
      return checked(I(a->lo) - b->hi, I(a->hi) - b->lo);
    if (isa<arith::MulIOp>(op)) {
      I p[] = {I(a->lo) * b->lo, I(a->lo) * b->hi, I(a->hi) * b->lo, I(a->hi) * b->hi};
      return checked(*std::min_element(p, p + 4), *std::max_element(p, p + 4));
    }
    if (isa<arith::MinSIOp>(op))
      return Range{std::min(a->lo, b->lo), std::min(a->hi, b->hi)};
    if (isa<arith::MaxSIOp>(op))
      return Range{std::max(a->lo, b->lo), std::max(a->hi, b->hi)};
    bool nonNegative = a->lo >= 0 && b->lo >= 0;
    if (isa<arith::MinUIOp>(op) && nonNegative)
      return Range{std::min(a->lo, b->lo), std::min(a->hi, b->hi)};
    if (isa<arith::MaxUIOp>(op) && nonNegative)
      return Range{std::max(a->lo, b->lo), std::max(a->hi, b->hi)};
    // Division and remainder by a positive constant.
    if (b->lo != b->hi || b->lo <= 0)
      return std::nullopt;
    int64_t d = b->lo;
    auto floorDiv = [](int64_t x, int64_t y) { return x / y - (x % y != 0 && x < 0); };
    if (isa<arith::FloorDivSIOp>(op))
      return Range{floorDiv(a->lo, d), floorDiv(a->hi, d)};
    if (isa<arith::DivSIOp>(op) || (isa<arith::DivUIOp>(op) && a->lo >= 0))
      return Range{a->lo / d, a->hi / d};
    if ((isa<arith::RemSIOp>(op) || isa<arith::RemUIOp>(op)) && a->lo >= 0)
      return a->hi < d ? *a : Range{0, d - 1};
    return std::nullopt;
  }
};

/// The comparison's value when the ranges decide it.
std::optional<bool> decide(arith::CmpIPredicate pred, Range a, Range b) {
  using P = arith::CmpIPredicate;
  bool nonNegative = a.lo >= 0 && b.lo >= 0; // unsigned order is the signed one
  switch (pred) {
  case P::ult:
  case P::ule:
  case P::ugt:
  case P::uge:
    if (!nonNegative)
      return std::nullopt;
    break;
  default:
    break;
  }
  switch (pred) {
  case P::eq:
    if (a.hi < b.lo || b.hi < a.lo)
      return false;
    if (a.lo == a.hi && b.lo == b.hi && a.lo == b.lo)
      return true;
    return std::nullopt;
  case P::ne:
    if (std::optional<bool> e = decide(P::eq, a, b))
      return !*e;
    return std::nullopt;
  case P::slt:
  case P::ult:
    if (a.hi < b.lo)
      return true;
    if (a.lo >= b.hi)
      return false;
    return std::nullopt;
  case P::sle:
  case P::ule:
    if (a.hi <= b.lo)
      return true;
    if (a.lo > b.hi)
      return false;
    return std::nullopt;
  case P::sgt:
  case P::ugt:
    return decide(pred == P::sgt ? P::slt : P::ult, b, a);
  case P::sge:
  case P::uge:
    return decide(pred == P::sge ? P::sle : P::ule, b, a);
  }
  return std::nullopt;
}

struct FoldLoopChecksPass : public linnet::cpu::impl::LinnetCPUFoldLoopChecksBase<FoldLoopChecksPass> {
  void runOnOperation() override {
    SmallVector<std::pair<arith::CmpIOp, bool>> decided;
    Ranges ranges;
    getOperation()->walk([&](arith::CmpIOp cmp) {
      // i1 comparisons, vectors and anything wider than 64 bits are left alone.
      unsigned width = bitsOf(cmp.getLhs().getType());
      if (width < 2 || width > 64)
        return;
      Range a = ranges.of(cmp.getLhs()), b = ranges.of(cmp.getRhs());
      if (std::optional<bool> v = decide(cmp.getPredicate(), a, b))
        decided.push_back({cmp, *v});
    });
    for (auto [cmp, value] : decided) {
      OpBuilder b(cmp);
      cmp.replaceAllUsesWith(b.create<arith::ConstantIntOp>(cmp.getLoc(), value, 1).getResult());
      cmp.erase();
    }
  }
};

} // namespace
