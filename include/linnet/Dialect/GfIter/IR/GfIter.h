//===- GfIter.h - gf_iter dialect ----------------------------------*- C++ -*-===//
#ifndef LINNET_DIALECT_GFITER_IR_GFITER_H
#define LINNET_DIALECT_GFITER_IR_GFITER_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "linnet/Dialect/Gf/IR/Gf.h"

#include "linnet/Dialect/GfIter/IR/GfIterOpsDialect.h.inc"

#define GET_TYPEDEF_CLASSES
#include "linnet/Dialect/GfIter/IR/GfIterOpsTypes.h.inc"

#define GET_OP_CLASSES
#include "linnet/Dialect/GfIter/IR/GfIterOps.h.inc"

#endif // LINNET_DIALECT_GFITER_IR_GFITER_H
