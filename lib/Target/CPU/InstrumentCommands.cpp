//===- InstrumentCommands.cpp - Timers at command boundaries --------------===//
//
// -linnet-cpu-instrument-commands: `linnet build --profile` brackets every
// op the portable plan tagged with its task (`linnet.task`) with calls to
// the profile shim's timers, so `linnet profile` measures each command of
// the concrete plan where it runs (docs/profiling.md).
//
//===----------------------------------------------------------------------===//
#include "linnet/Target/CPU/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringMap.h"

using namespace mlir;

namespace linnet::cpu {

#define GEN_PASS_DEF_LINNETCPUINSTRUMENTCOMMANDS
#include "linnet/Target/CPU/Passes.h.inc"

static void declareTimer(ModuleOp module, StringRef name) {
  if (module.lookupSymbol(name))
    return;
  OpBuilder b(module.getBodyRegion());
  b.setInsertionPointToStart(module.getBody());
  auto fn = b.create<func::FuncOp>(module.getLoc(), name,
                                   b.getFunctionType({b.getI64Type()}, {}));
  fn.setPrivate();
}

static void instrumentCommands(ModuleOp module) {
  // Tagged ops in program order; a task tagged on several ops (a kernel
  // outlined once per call site) shares one id.
  SmallVector<std::pair<Operation *, StringAttr>> tagged;
  module.walk([&](Operation *op) {
    if (auto t = op->getAttrOfType<StringAttr>("linnet.task"))
      tagged.push_back({op, t});
  });
  if (tagged.empty())
    return;
  declareTimer(module, "linnet_prof_begin");
  declareTimer(module, "linnet_prof_end");
  llvm::StringMap<int64_t> ids;
  SmallVector<Attribute> table;
  MLIRContext *ctx = module.getContext();
  for (auto [op, task] : tagged) {
    auto [it, fresh] = ids.try_emplace(task.getValue(), int64_t(table.size()));
    if (fresh)
      table.push_back(task);
    int64_t id = it->second;
    auto timer = [&](OpBuilder &b, Location loc, StringRef name) {
      Value c = b.create<arith::ConstantIntOp>(loc, id, 64);
      b.create<func::CallOp>(loc, name, TypeRange{}, ValueRange{c});
    };
    op->removeAttr("linnet.task");
    if (auto fn = dyn_cast<func::FuncOp>(op)) {
      if (fn.isExternal())
        continue;
      OpBuilder b(ctx);
      b.setInsertionPointToStart(&fn.getBody().front());
      timer(b, fn.getLoc(), "linnet_prof_begin");
      fn.walk([&](func::ReturnOp ret) {
        OpBuilder rb(ret);
        timer(rb, ret.getLoc(), "linnet_prof_end");
      });
      continue;
    }
    OpBuilder b(op);
    timer(b, op->getLoc(), "linnet_prof_begin");
    b.setInsertionPointAfter(op);
    timer(b, op->getLoc(), "linnet_prof_end");
  }
  module->setAttr("linnet.profile.tasks", ArrayAttr::get(ctx, table));
}

namespace {
struct InstrumentCommands : public impl::LinnetCPUInstrumentCommandsBase<InstrumentCommands> {
  void runOnOperation() override { instrumentCommands(getOperation()); }
};
} // namespace

} // namespace linnet::cpu
