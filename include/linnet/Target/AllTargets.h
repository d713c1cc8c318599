//===- AllTargets.h - Register every target linked in ------------*- C++ -*-===//
//
// The one place that names each target (as MLIR's InitAllDialects.h names
// dialects): the compiler, linnet-opt and the caches find targets through
// the registry (Target.h, lookupTarget) after this ran.
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_TARGET_ALLTARGETS_H
#define LINNET_TARGET_ALLTARGETS_H

#include "mlir/IR/DialectRegistry.h"

namespace linnet::target {

/// Registers the CPU and CUDA targets (idempotent, thread-safe).
void registerAllTargets();
/// Every registered target's dialects and passes, for linnet-opt.
void registerAllTargetDialects(mlir::DialectRegistry &registry);
void registerAllTargetPasses();

} // namespace linnet::target

#endif // LINNET_TARGET_ALLTARGETS_H
