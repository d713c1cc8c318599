//===- UpliftCountedWhile.cpp - counted scf.while loops as scf.for ---------===//
//
// -linnet-uplift-counted-while: before one-shot bufferization, which copies
// every tensor an scf.while carries through its condition region once an
// iteration, while an scf.for carries them in place.
//
//===----------------------------------------------------------------------===//
#include "linnet/Target/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace linnet::cpu {

#define GEN_PASS_DEF_LINNETUPLIFTCOUNTEDWHILE
#include "linnet/Target/CPU/Passes.h.inc"

namespace {
struct UpliftCountedWhile : impl::LinnetUpliftCountedWhileBase<UpliftCountedWhile> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    scf::populateUpliftWhileToForPatterns(patterns);
    GreedyRewriteConfig config;
    // Only the loops: no folding of the rest of the module.
    config.strictMode = GreedyRewriteStrictness::ExistingOps;
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns), config)))
      return signalPassFailure();
  }
};
} // namespace

} // namespace linnet::cpu
