//===- LinalgCodegen.h - linalg contractions and elementwise ops on CPU -*- C++ -*-===//
//
// -linnet-cpu-lower-linalg: the CPU code generator's stage for memref-level
// linalg ops (what the plan importer produces after one-shot
// bufferization). Contractions (matmul, batch matmul, linalg.generic whose
// maps and body form a contraction) are tiled for the caches and registers,
// their B panel packed, split over threads and vectorized (vector.contract
// lowered as outer products) through the transform-dialect interpreter with a
// schedule built per op from its shape and the target; matrix-vector
// products are streamed once with vector loads on every thread; where the
// implementation policy allows a library, f32 matmuls become `cblas_sgemm`
// calls. Other linalg ops are vectorized when static and elementwise, and
// lowered to loops otherwise. docs/cpu-abi.md, "Contractions", describes it.
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_TARGET_CPU_LINALGCODEGEN_H
#define LINNET_TARGET_CPU_LINALGCODEGEN_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"

#include <cstdint>
#include <string>
#include <vector>

namespace linnet::cpu {

/// Which implementations a contraction may bind to.
///   generated: always the generated kernel (libraries disabled by policy);
///   blas:      f32 matmuls to cblas_sgemm (errors where OpenBLAS is absent);
///   auto:      blas where OpenBLAS is installed, generated otherwise.
/// Matrix-vector products and everything else are always generated.
enum class ImplementationPolicy { Auto, Generated, Blas };

/// Parses "auto" | "generated" | "blas".
bool parseImplementationPolicy(llvm::StringRef text, ImplementationPolicy &out);

/// One implementation choice made for a linalg op, in program order.
struct ImplementationChoice {
  std::string function;  // enclosing func.func
  std::string op;        // "linalg.matmul", "linalg.generic", ...
  std::string role;      // "matmul" | "batch-matmul" | "matvec" | "elementwise" | "other"
  std::string kind;      // "generated" | "library"
  std::string routine;   // library routine (cblas_sgemm) or the schedule's name
  std::vector<int64_t> shape; // loop bounds: batch..., M, N, K (-1 dynamic)
  std::string detail;    // tile sizes / transposes, human-readable
  /// A product dispatched on its rows of x at run time: at most
  /// `fewRowsAtMost` rows run `fewRowsRoutine` instead, which reads W once
  /// per `fewRowsPerPass` rows of x (0: no such branch).
  int64_t fewRowsAtMost = 0, fewRowsPerPass = 0;
  std::string fewRowsRoutine;
};

/// Target facts the schedules are derived from; zeros mean "the host's".
struct LinalgTarget {
  unsigned vectorBits = 0;   // 512 with AVX-512, 256 with AVX2
  int64_t l1Bytes = 0;       // L1 data cache per core
  int64_t l2Bytes = 0;       // L2 per core
  unsigned threads = 2;      // threads the outer tiles are split over
  /// A contraction of fewer multiply-adds runs on one thread: starting a
  /// parallel region costs about what 2^22 of them take on one core.
  int64_t minParallelMacs = int64_t(1) << 22;
  /// How many rows ahead a streamed product (matvec-stream*) prefetches W;
  /// 0: none; -1: streamPrefetchRows of the host.
  int64_t prefetchRows = -1;
  /// --block-products int8: products against block-quantized weights quantize
  /// x to q8_0 and sum integer products (BlockMatvec.cpp).
  bool int8BlockProducts = false;
  /// Integer block products sum bytes with AVX-512 VNNI's vpdpbusd (on
  /// 256-bit vectors): 1 yes, 0 no (AVX2's pmaddubsw and pmaddwd), -1 as
  /// the host has it.
  int int8Dot = -1;
  /// Fills zeros from the host (CPU features, sysconf cache sizes).
  LinalgTarget resolved() const;
};

/// The prefetch distance in rows of W that streamed products use on `cpu`
/// (an LLVM CPU name, "znver4", "sapphirerapids", "x86-64-v3").
int64_t streamPrefetchRows(llvm::StringRef cpu);

/// True when libopenblas is installed (cblas_sgemm can be linked).
bool openBLASAvailable();

/// Registers the dialects, transform extensions and interface models the
/// stage needs.
void registerLinalgCodegenDialects(mlir::DialectRegistry &registry);

/// Runs the stage on every function of `module`; appends the choices made.
/// Leaves no linalg op behind (scf/vector/memref/arith, func.call for BLAS).
mlir::LogicalResult lowerLinalg(mlir::ModuleOp module,
                                ImplementationPolicy policy,
                                const LinalgTarget &target,
                                std::vector<ImplementationChoice> *choices);

/// True when `module` calls a BLAS routine (the library must link -lopenblas).
bool usesBLAS(mlir::ModuleOp module);

/// The choices recorded on a module by the pass (attribute
/// `linnet.cpu.implementations`), e.g. after running it from linnet-opt.
std::vector<ImplementationChoice> recordedChoices(mlir::ModuleOp module);

/// Renders a choice as one JSON object (for runtime.json / the concrete plan).
std::string toJSON(const ImplementationChoice &choice);

/// C source of the BLAS shim linked into libraries that call BLAS: it picks
/// OpenBLAS's kernels for this CPU when the environment does not (OpenBLAS
/// 0.3.21 does not know every AVX-512 CPU and falls back to SSE3 kernels).
const char *blasShimSource();

} // namespace linnet::cpu

#endif // LINNET_TARGET_CPU_LINALGCODEGEN_H
