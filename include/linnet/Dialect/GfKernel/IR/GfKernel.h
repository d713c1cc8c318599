//===- GfKernel.h - gf_kernel dialect ----------------------------------*- C++ -*-===//
#ifndef LINNET_DIALECT_GFKERNEL_IR_GFKERNEL_H
#define LINNET_DIALECT_GFKERNEL_IR_GFKERNEL_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "linnet/Dialect/Gf/IR/Gf.h"

#include "linnet/Dialect/GfKernel/IR/GfKernelOpsDialect.h.inc"

#define GET_TYPEDEF_CLASSES
#include "linnet/Dialect/GfKernel/IR/GfKernelOpsTypes.h.inc"

#define GET_OP_CLASSES
#include "linnet/Dialect/GfKernel/IR/GfKernelOps.h.inc"

#endif // LINNET_DIALECT_GFKERNEL_IR_GFKERNEL_H
