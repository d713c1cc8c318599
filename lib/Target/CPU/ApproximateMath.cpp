//===- ApproximateMath.cpp - Exponentials permitted approximate -----------===//
//
// -linnet-cpu-approximate-math (Passes.td). On x86, LLVM has no vector
// exponential: `math.exp` in a loop is a libm call per element, which
// keeps the loop scalar (attention's softmax weights cost ~25 cycles a key,
// spills included). Where the importer permits an approximation (fastmath
// `afn`), the exponential becomes MLIR's polynomial approximation, plain
// arithmetic that vectorizes with its loop. Only those ops: every other
// exponential keeps libm's result, which the interpreter matches
// (-linnet-cpu-exact-exp computes it in vector code where it can).
//
//===----------------------------------------------------------------------===//

#include "linnet/Target/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace linnet::cpu {
#define GEN_PASS_DEF_LINNETCPUAPPROXIMATEMATH
#include "linnet/Target/CPU/Passes.h.inc"
} // namespace linnet::cpu

using namespace mlir;

namespace {

struct ApproximateMathPass
    : public linnet::cpu::impl::LinnetCPUApproximateMathBase<ApproximateMathPass> {
  void runOnOperation() override {
    SmallVector<Operation *> marked;
    getOperation().walk([&](math::ExpOp op) {
      if (bitEnumContainsAll(op.getFastmath(), arith::FastMathFlags::afn) &&
          isa<Float32Type>(getElementTypeOrSelf(op.getType())))
        marked.push_back(op);
    });
    if (marked.empty())
      return;
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns);
    // The marked ops and what their rewriting creates; nothing else.
    GreedyRewriteConfig config;
    config.strictMode = GreedyRewriteStrictness::ExistingAndNewOps;
    if (failed(applyOpPatternsAndFold(marked, std::move(patterns), config)))
      return signalPassFailure();
  }
};

} // namespace
