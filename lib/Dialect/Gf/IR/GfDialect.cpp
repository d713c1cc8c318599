//===- GfDialect.cpp - gf (Domain) dialect ---------------------------------===//

#include "linnet/Dialect/Gf/IR/Gf.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace linnet::gf;

#include "linnet/Dialect/Gf/IR/GfOpsDialect.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "linnet/Dialect/Gf/IR/GfOpsTypes.cpp.inc"

void GfDialect::initialize() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "linnet/Dialect/Gf/IR/GfOpsTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "linnet/Dialect/Gf/IR/GfOps.cpp.inc"
      >();
}
