//===- Gf.h - gf (Domain) dialect -------------------------------*- C++ -*-===//
#ifndef LINNET_DIALECT_GF_IR_GF_H
#define LINNET_DIALECT_GF_IR_GF_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "linnet/Dialect/Gf/IR/GfEnums.h"
#include "linnet/Dialect/Gf/IR/GfOpsDialect.h.inc"

#define GET_TYPEDEF_CLASSES
#include "linnet/Dialect/Gf/IR/GfOpsTypes.h.inc"

#define GET_OP_CLASSES
#include "linnet/Dialect/Gf/IR/GfOps.h.inc"

#include "linnet/Dialect/Gf/IR/MessageSignature.h"

#endif // LINNET_DIALECT_GF_IR_GF_H
