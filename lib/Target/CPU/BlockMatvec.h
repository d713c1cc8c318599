//===- BlockMatvec.h - streamed products over block-quantized W -*- C++ -*-===//
#ifndef LINNET_LIB_TARGET_CPU_BLOCKMATVEC_H
#define LINNET_LIB_TARGET_CPU_BLOCKMATVEC_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <optional>
#include <string>
#include <vector>

namespace linnet::cpu {

/// What rewriteBlockMatvec chose, for the build report.
struct BlockMatvecChoice {
  std::string routine, detail; // "matvec-stream-q8_0", "rows_per_block=..."
  std::vector<int64_t> shape;  // the op's loop ranges (-1: dynamic)
};

/// Rewrites `op` into a streaming kernel when it is a product against a
/// param stored in a block format, as the importer reads one (BlockMatvec.cpp):
/// `width` f32 lanes a vector, W's rows split over `threads`, each step
/// prefetching the rows `prefetchRows` on (0: none). With `int8`
/// (--block-products int8), x is quantized to q8_0 once a call and each
/// block's products are summed as integers (AVX2 targets; with `vnni`,
/// AVX-512 VNNI's vpdpbusd on 256-bit vectors).
std::optional<BlockMatvecChoice> rewriteBlockMatvec(mlir::linalg::LinalgOp op, unsigned width, unsigned threads,
                                                    int64_t prefetchRows, bool int8, bool vnni);

} // namespace linnet::cpu

#endif // LINNET_LIB_TARGET_CPU_BLOCKMATVEC_H
