//===- GfTask.h - gf_task dialect ----------------------------------*- C++ -*-===//
#ifndef LINNET_DIALECT_GFTASK_IR_GFTASK_H
#define LINNET_DIALECT_GFTASK_IR_GFTASK_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "linnet/Dialect/Gf/IR/Gf.h"
#include "linnet/Dialect/GfStorage/IR/GfStorage.h"
#include "mlir/IR/OpImplementation.h"

#include "linnet/Dialect/GfTask/IR/GfTaskOpsDialect.h.inc"

#define GET_TYPEDEF_CLASSES
#include "linnet/Dialect/GfTask/IR/GfTaskOpsTypes.h.inc"

#define GET_OP_CLASSES
#include "linnet/Dialect/GfTask/IR/GfTaskOps.h.inc"

#endif // LINNET_DIALECT_GFTASK_IR_GFTASK_H
