//===- DropUnreadAliasedInputs.cpp - A canonicalizer hazard, avoided ------===//
#include "linnet/Target/CPU/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

using namespace mlir;

namespace linnet::cpu {

#define GEN_PASS_DEF_LINNETCPUDROPUNREADALIASEDINPUTS
#include "linnet/Target/CPU/Passes.h.inc"

/// A generic on buffers whose input is its own output buffer and whose body
/// never reads that input (`0 * t[n]` folded to 0 after in-place
/// bufferization) loses the input: MLIR 19's canonicalizer erases such a
/// generic as an identity copy without looking at its body.
static void dropUnreadAliasedInputs(ModuleOp module) {
  SmallVector<linalg::GenericOp> todo;
  module.walk([&](linalg::GenericOp g) {
    if (!g.hasPureBufferSemantics())
      return;
    for (OpOperand *in : g.getDpsInputOperands())
      for (OpOperand &init : g.getDpsInitsMutable())
        if (in->get() == init.get() && !g.payloadUsesValueFromOperand(in)) {
          todo.push_back(g);
          return;
        }
  });
  for (linalg::GenericOp g : todo) {
    SmallVector<Value> ins;
    SmallVector<AffineMap> maps;
    SmallVector<unsigned> dropArgs;
    for (OpOperand *in : g.getDpsInputOperands()) {
      bool aliased = llvm::any_of(g.getDpsInitsMutable(),
                                  [&](OpOperand &init) { return init.get() == in->get(); });
      if (aliased && !g.payloadUsesValueFromOperand(in)) {
        dropArgs.push_back(in->getOperandNumber());
        continue;
      }
      ins.push_back(in->get());
      maps.push_back(g.getMatchingIndexingMap(in));
    }
    SmallVector<Value> outs;
    for (OpOperand &init : g.getDpsInitsMutable()) {
      outs.push_back(init.get());
      maps.push_back(g.getMatchingIndexingMap(&init));
    }
    OpBuilder b(g);
    auto ng = b.create<linalg::GenericOp>(g.getLoc(), TypeRange{}, ins, outs, maps,
                                          g.getIteratorTypesArray());
    ng.getRegion().takeBody(g.getRegion());
    Block &body = ng.getRegion().front();
    for (auto it = dropArgs.rbegin(); it != dropArgs.rend(); ++it)
      body.eraseArgument(*it);
    g.erase();
  }
}

namespace {
struct DropUnreadAliasedInputs
    : public impl::LinnetCPUDropUnreadAliasedInputsBase<DropUnreadAliasedInputs> {
  void runOnOperation() override { dropUnreadAliasedInputs(getOperation()); }
};
} // namespace

} // namespace linnet::cpu
