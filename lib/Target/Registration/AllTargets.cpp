//===- AllTargets.cpp - Register every target linked in --------------------===//
#include "linnet/Target/AllTargets.h"

#include "linnet/Target/CPU/CpuTarget.h"
#include "linnet/Target/CPU/Passes.h"
#include "linnet/Target/CUDA/CudaTarget.h"
#include "linnet/Target/CUDA/Passes.h"
#include "linnet/Target/Target.h"

#include <mutex>

namespace linnet::target {

void registerAllTargets() {
  static std::once_flag once;
  std::call_once(once, [] {
    static const cpu::CpuTarget cpuTarget;
    static const cuda::CudaTarget cudaTarget;
    registerTarget(cpuTarget);
    registerTarget(cudaTarget);
  });
}

void registerAllTargetDialects(mlir::DialectRegistry &registry) {
  registerAllTargets();
  for (const Target *t : registeredTargets())
    t->registerDialects(registry);
}

void registerAllTargetPasses() {
  cpu::registerLinnetCPUPasses();
  cpu::registerBufferizePipeline();
  cpu::registerCPUPipelines();
  cuda::registerLinnetCUDAPasses();
  cuda::registerCUDAPipelines();
}

} // namespace linnet::target
