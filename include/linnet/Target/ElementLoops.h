//===- ElementLoops.h - A comprehension's elements in parallel --*- C++ -*-===//
//
// The importer marks the element loop of a comprehension whose elements are
// tensors or computed by loops (attention's heads, each folding over the KV
// cache) `linnet.elements`: its iterations write disjoint elements, by the
// language's rule. After bufferization every target runs those iterations
// in parallel the same way: the loop (with the perfect nest of element
// loops it heads, so that a decode's one query row times 8 heads is 8
// iterations, not 1) becomes one `scf.parallel`, and the scratch buffers
// bufferization shared between its elements become each element's own.
// The CUDA target maps the parallel loop to threads, the CPU target to
// OpenMP.
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_TARGET_ELEMENTLOOPS_H
#define LINNET_TARGET_ELEMENTLOOPS_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace linnet::target {

/// Makes every outermost `linnet.elements` loop of `module` without results
/// an `scf.parallel` over its perfect nest of element loops. A loop stays a
/// loop inside a parallel loop or an op with results, where its body holds a
/// call, work with a schedule of its own, a buffer of run-time size or more
/// than 64 KiB of buffers, or where `keepsSerial` holds for an op around it
/// or inside it (the target's own parallel work).
void parallelizeElementLoops(mlir::ModuleOp module, llvm::function_ref<bool(mlir::Operation *)> keepsSerial);

} // namespace linnet::target

#endif // LINNET_TARGET_ELEMENTLOOPS_H
