//===- Passes.h - linnet's CUDA target passes -------------------*- C++ -*-===//
#ifndef LINNET_TARGET_CUDA_PASSES_H
#define LINNET_TARGET_CUDA_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace linnet::cuda {

#define GEN_PASS_DECL
#include "linnet/Target/CUDA/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "linnet/Target/CUDA/Passes.h.inc"

} // namespace linnet::cuda

#endif // LINNET_TARGET_CUDA_PASSES_H
