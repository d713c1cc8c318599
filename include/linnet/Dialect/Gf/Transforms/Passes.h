//===- Passes.h - linnet gf passes ------------------------------*- C++ -*-===//
#ifndef LINNET_DIALECT_GF_TRANSFORMS_PASSES_H
#define LINNET_DIALECT_GF_TRANSFORMS_PASSES_H

#include "linnet/Dialect/Gf/IR/Gf.h"
#include "linnet/Dialect/GfIter/IR/GfIter.h"
#include "linnet/Dialect/GfKernel/IR/GfKernel.h"
#include "linnet/Dialect/GfStorage/IR/GfStorage.h"
#include "linnet/Dialect/GfTask/IR/GfTask.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace linnet::gf {

#define GEN_PASS_DECL
#include "linnet/Dialect/Gf/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "linnet/Dialect/Gf/Transforms/Passes.h.inc"

} // namespace linnet::gf

#endif // LINNET_DIALECT_GF_TRANSFORMS_PASSES_H
