//===- BlockRepack.h - q4_0 params in groups of eight rows ------*- C++ -*-===//
//
// The layout -linnet-cpu-repack-block-params gives a q4_0 param and the
// streamed products read (docs/cpu-abi.md, "q4_0 in groups of eight rows"):
// rows in groups of 8; per group and block of 32 values, 144 bytes: the
// eight rows' f16 scales (2 bytes each, row order), then each row's 16
// quant bytes (row order). The runtime repacks the file's blocks into it
// when it binds the weights (runtime.json's `layouts`).
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_LIB_TARGET_CPU_BLOCKREPACK_H
#define LINNET_LIB_TARGET_CPU_BLOCKREPACK_H

#include "mlir/IR/AffineExpr.h"

#include <cstdint>

namespace linnet::cpu {

/// The layout's name in runtime.json and on the view that reads it.
inline constexpr const char *kQ4_0x8 = "q4_0x8";
inline constexpr int64_t kRepackRows = 8;
inline constexpr int64_t kRepackGroupBytes = 144; // 8 * 2 + 8 * 16

/// Where byte `byte` of a q4_0 block of row `row` lies in its group's 144
/// bytes: a scale byte (0, 1) at 2 * (row mod 8) + byte, a quant byte
/// (2 .. 17) at 16 + 16 * (row mod 8) + byte - 2.
inline mlir::AffineExpr repackedByte(mlir::AffineExpr row, mlir::AffineExpr byte) {
  mlir::AffineExpr r = row % kRepackRows;
  auto c = mlir::dyn_cast<mlir::AffineConstantExpr>(byte);
  if (c && c.getValue() < 2)
    return r * 2 + byte;
  // `e + 2` (the importer's form) as e + 16: one constant term.
  auto add = mlir::dyn_cast<mlir::AffineBinaryOpExpr>(byte);
  auto two = add && add.getKind() == mlir::AffineExprKind::Add
                 ? mlir::dyn_cast<mlir::AffineConstantExpr>(add.getRHS())
                 : nullptr;
  if (two)
    return r * 16 + add.getLHS() + (two.getValue() + 14);
  return r * 16 + byte + 14;
}
inline int64_t repackedByte(int64_t rowInGroup, int64_t byte) {
  return byte < 2 ? rowInGroup * 2 + byte : rowInGroup * 16 + byte + 14;
}

} // namespace linnet::cpu

#endif // LINNET_LIB_TARGET_CPU_BLOCKREPACK_H
