//===- Abi.h - The CUDA target's runtime ABI, by name --------------*- C++ -*-===//
//
// What the code generator and the CUDA runtime agree on (docs/cuda-abi.md),
// with nothing of MLIR: the runtime includes it too.
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_TARGET_CUDA_ABI_H
#define LINNET_TARGET_CUDA_ABI_H

#include <cstdint>

namespace linnet::cuda {

/// The runtime ABI of CUDA artifacts.
inline constexpr const char *kRuntimeAbi = "linnet-cuda-driver-v1";
/// The architecture kernels are compiled for.
inline constexpr const char *kChip = "sm_90a";
/// The kernel table's schema (kernels.json).
inline constexpr const char *kKernelTableSchema = "linnet.cuda-kernels/1";
/// The alignment of every buffer's aligned pointer a kernel receives (the
/// runtime's device allocations are 256-byte aligned); kernels assume it.
inline constexpr uint32_t kDeviceBufferAlignment = 16;
/// The host table's symbol in model.so and its layout version.
inline constexpr const char *kHostTableSymbol = "linnet_cuda_host";
inline constexpr uint64_t kHostTableVersion = 5;
/// The cuBLAS the runtime loads for `linnet_cuda_sgemm` ($LINNET_CUBLAS
/// overrides; `none` disables it), as the concrete plan names it.
inline constexpr const char *kCublasSoname = "libcublas.so.13";

/// The host table model.so defines (its host shim calls through it). The
/// runtime fills it after loading the library.
struct HostTable {
  uint64_t version;
  void *session;
  void (*launch)(void *session, int64_t kernel, int64_t gx, int64_t gy, int64_t gz, int64_t bx, int64_t by,
                 int64_t bz, int64_t shared, const int64_t *slots, int64_t nslots);
  void (*copyToHost)(void *session, void *dst, uint64_t src, int64_t bytes);
  void *(*alloc)(void *session, uint64_t bytes);
  void (*release)(void *session, void *ptr);
  /// Version 2. cuBLAS's sgemm in its column-major convention, alpha = 1,
  /// on the session's stream: C = A' B' + beta C with A' = A or A^T
  /// (transa), B' likewise. Returns non-zero, having done nothing, where
  /// the runtime has no cuBLAS: the host code runs its generated kernel.
  int32_t (*sgemm)(void *session, int32_t transa, int32_t transb, int64_t m, int64_t n, int64_t k, uint64_t a,
                   int64_t lda, uint64_t b, int64_t ldb, float beta, uint64_t c, int64_t ldc);
  /// Version 3 (`linnet build --profile`). A command of the concrete plan
  /// begins (end = 0) or ends (1) here in the stream's order: the runtime
  /// records a CUDA event. profileTake returns the events since the last
  /// take as the runtime's ProfileEvent records, their times those of the
  /// device (ns from the first), *calls counting dropped ones.
  void (*mark)(void *session, int64_t task, int64_t end);
  const void *(*profileTake)(void *session, uint64_t *count, uint64_t *calls);
  /// Version 4. cuBLAS's cublasGemmEx as sgemm above, with A and B of
  /// `type` (GemmType) and C f32, accumulated in f32 (CUBLAS_COMPUTE_32F):
  /// the products of half values taken exactly, as the f32-compute
  /// numerics policy computes them. Non-zero, having done nothing, where
  /// the runtime has no cuBLAS.
  int32_t (*gemm)(void *session, int32_t type, int32_t transa, int32_t transb, int64_t m, int64_t n, int64_t k,
                  uint64_t a, int64_t lda, uint64_t b, int64_t ldb, float beta, uint64_t c, int64_t ldc);
  /// Version 5. Host bytes into device memory, in the stream's order after
  /// everything the call enqueued so far (a relation the host code built
  /// from coordinates it read back: std.graph's knn and radius).
  void (*copyToDevice)(void *session, uint64_t dst, const void *src, int64_t bytes);
};

/// The element type of a gemm's A and B (HostTable::gemm's `type`).
/// kGemmTF32: f32 A and B that the tensor cores may round to TF32
/// (CUBLAS_COMPUTE_32F_FAST_TF32: `--matmul-precision tf32`).
enum GemmType : int32_t { kGemmF32 = 0, kGemmBF16 = 1, kGemmF16 = 2, kGemmTF32 = 3 };

} // namespace linnet::cuda

#endif // LINNET_TARGET_CUDA_ABI_H
