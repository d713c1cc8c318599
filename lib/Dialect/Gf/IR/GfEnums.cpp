//===- GfEnums.cpp - kinds of the gf dialects as C++ enums -----------------===//

#include "linnet/Dialect/Gf/IR/GfEnums.h"

#include "llvm/ADT/StringSwitch.h"

#include "linnet/Dialect/Gf/IR/GfEnums.cpp.inc"
