//===- GfStorage.h - gf_storage dialect ----------------------------------*- C++ -*-===//
#ifndef LINNET_DIALECT_GFSTORAGE_IR_GFSTORAGE_H
#define LINNET_DIALECT_GFSTORAGE_IR_GFSTORAGE_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"


#include "linnet/Dialect/GfStorage/IR/GfStorageOpsDialect.h.inc"

#define GET_TYPEDEF_CLASSES
#include "linnet/Dialect/GfStorage/IR/GfStorageOpsTypes.h.inc"

#define GET_OP_CLASSES
#include "linnet/Dialect/GfStorage/IR/GfStorageOps.h.inc"

#endif // LINNET_DIALECT_GFSTORAGE_IR_GFSTORAGE_H
