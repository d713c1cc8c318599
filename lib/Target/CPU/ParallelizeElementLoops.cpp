//===- ParallelizeElementLoops.cpp - Element loops on the CPU's threads ----===//
//
// -linnet-cpu-parallelize-element-loops (Passes.td): the shared
// target::parallelizeElementLoops, with the CPU's own parallel work (the
// linalg stage's scf.parallel tiles) kept as it is.
//
//===----------------------------------------------------------------------===//

#include "linnet/Target/CPU/Passes.h"
#include "linnet/Target/ElementLoops.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace linnet::cpu {
#define GEN_PASS_DEF_LINNETCPUPARALLELIZEELEMENTLOOPS
#include "linnet/Target/CPU/Passes.h.inc"
} // namespace linnet::cpu

using namespace mlir;

namespace {

struct ParallelizeElementLoopsPass
    : public linnet::cpu::impl::LinnetCPUParallelizeElementLoopsBase<ParallelizeElementLoopsPass> {
  void runOnOperation() override {
    // A tile loop inside an element would start a nested OpenMP region.
    linnet::target::parallelizeElementLoops(getOperation(),
                                            [](Operation *op) { return isa<scf::ParallelOp>(op); });
  }
};

} // namespace
