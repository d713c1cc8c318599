//===- GfEnums.h - kinds of the gf dialects as C++ enums --------*- C++ -*-===//
//
// Realization, CoordinateHierarchy, Traversal (linnet::gf) and TaskKind
// (linnet::gf_task), generated from GfEnums.td: symbolizeX(StringRef) reads
// the string an attribute holds, stringifyX(X) gives it back. The ops keep
// the strings as StrAttr and offer typed accessors (e.g.
// RelationOp::getRealizationKind()) once verified.
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_DIALECT_GF_IR_GFENUMS_H
#define LINNET_DIALECT_GF_IR_GFENUMS_H

#include "mlir/Support/LLVM.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <optional>
#include <string>

#include "linnet/Dialect/Gf/IR/GfEnums.h.inc"

namespace linnet::gf {

/// Every case of an enum spelled as in the IR, each between `quote`s, in
/// declaration order and joined as "a, b or c": the "expected ..." part of a
/// verifier's message. `symbolize` is the enum's symbolizeX(uint32_t).
template <typename EnumT>
std::string describeCases(unsigned maxValue,
                          std::optional<EnumT> (*symbolize)(uint32_t),
                          llvm::StringRef quote = "") {
  std::string out;
  unsigned count = 0, total = 0;
  for (unsigned v = 0; v <= maxValue; ++v)
    total += symbolize(v).has_value();
  for (unsigned v = 0; v <= maxValue; ++v) {
    std::optional<EnumT> e = symbolize(v);
    if (!e)
      continue;
    if (count)
      out += count + 1 == total ? " or " : ", ";
    out += (quote + stringifyEnum(*e) + quote).str();
    ++count;
  }
  return out;
}

} // namespace linnet::gf

#endif // LINNET_DIALECT_GF_IR_GFENUMS_H
