//===- Passes.h - linnet's CPU target passes --------------------*- C++ -*-===//
#ifndef LINNET_TARGET_CPU_PASSES_H
#define LINNET_TARGET_CPU_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace linnet::cpu {

#define GEN_PASS_DECL
#include "linnet/Target/CPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "linnet/Target/CPU/Passes.h.inc"

} // namespace linnet::cpu

#endif // LINNET_TARGET_CPU_PASSES_H
