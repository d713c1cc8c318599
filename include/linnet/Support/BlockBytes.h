//===- BlockBytes.h - Where a block format keeps each value ------*- C++ -*-===//
//
// The bytes value k of a row reads from its block, as affine expressions of
// k: the importer reads a block-quantized param through them (one
// linalg.generic input per byte) and the CPU target's block products check
// a generic's maps against them before they replace it.
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_SUPPORT_BLOCKBYTES_H
#define LINNET_SUPPORT_BLOCKBYTES_H

#include "linnet/Support/BlockFormat.h"

#include "mlir/IR/AffineExpr.h"
#include "llvm/ADT/SmallVector.h"

namespace linnet::support {

/// Block `k / blockElems` of a row holds value k; these are the positions
/// in that block of the bytes ggml's dequantize_row_* reads for it, in the
/// order the importer's dequantize takes them (k' = k mod blockElems):
/// - q8_0: d (2 bytes); the i8 quant at 2 + k';
/// - q4_0: d; the byte at 2 + k' mod 16 (k' < 16: its low nibble);
/// - q4_K, q5_K: d, dmin; sub-block s = k' / 32's 6-bit scale and min in
///   bytes 4 + s % 4, 8 + s % 4 and 12 + s % 4 (get_scale_min_k4); q5_K's
///   fifth bit in byte 16 + k' % 32 (bit s); the quant's byte, holding
///   sub-blocks 2i (low nibble) and 2i + 1 (high), at 32 (k' / 64) + k' % 32
///   after the scales (and q5_K's qh);
/// - q6_K: in half n = k' / 128, quarter t = k' % 128 / 32, l = k' % 32: ql
///   at 64n + 32 (t % 2) + l (the high nibble in quarters 2, 3), qh at
///   128 + 32n + l (bits 2t, 2t + 1), the i8 scale at 192 + 8n + 2t + l / 16,
///   d at 208.
inline llvm::SmallVector<mlir::AffineExpr> blockBytes(BlockFormat f, mlir::AffineExpr k) {
  mlir::MLIRContext *ctx = k.getContext();
  auto c = [&](int64_t v) { return mlir::getAffineConstantExpr(v, ctx); };
  switch (f) {
  case BlockFormat::Q8_0:
    return {c(0), c(1), k % 32 + 2};
  case BlockFormat::Q4_0:
    return {c(0), c(1), k % 16 + 2};
  case BlockFormat::Q4_K:
  case BlockFormat::Q5_K: {
    bool q5 = f == BlockFormat::Q5_K;
    mlir::AffineExpr kk = k % 256, sc = kk.floorDiv(32) % 4 + 4;
    llvm::SmallVector<mlir::AffineExpr> r = {c(0), c(1), c(2), c(3), sc, sc + 4, sc + 8};
    if (q5)
      r.push_back(kk % 32 + 16);
    r.push_back(kk.floorDiv(64) * 32 + kk % 32 + (q5 ? 48 : 16));
    return r;
  }
  case BlockFormat::Q6_K: {
    mlir::AffineExpr kk = k % 256, n = kk.floorDiv(128), t = (kk % 128).floorDiv(32), l = kk % 32;
    return {n * 64 + (t % 2) * 32 + l, n * 32 + l + 128, n * 8 + t * 2 + l.floorDiv(16) + 192, c(208), c(209)};
  }
  }
  return {};
}

} // namespace linnet::support

#endif // LINNET_SUPPORT_BLOCKBYTES_H
