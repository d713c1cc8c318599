//===- emulator-kernels.cpp - Test kernels of the CUDA driver emulator ---===//
//
// A hand-written kernels.host.so (docs/cuda-abi.md, "The driver emulator")
// for CudaEmulatorTests and the emulated run of CudaDriverTests: it stands
// for the images of emulator-kernels.h, and each kernel runs its whole
// grid as the GPU would, every thread of every block.
//
//===----------------------------------------------------------------------===//
#include "emulator-kernels.h"

#include <cstdint>
#include <cstring>
#include <vector>

#define KERNELS_API extern "C" __attribute__((visibility("default")))

using namespace linnet_emulator_test;

KERNELS_API const uint64_t linnet_kernels_images[2] = {kPtxHash, kCubinHash};

/// The module's global: the status word of run-time checks.
extern "C" {
__attribute__((visibility("default")))
int64_t linnet_status[kStatusBytes / 8] = {0, 0, 0, 0};
}

namespace {
template <typename T> T slot(void **params, int i) {
  T value;
  std::memcpy(&value, params[i], sizeof value);
  return value;
}
} // namespace

/// add_one as kAddOnePtx computes it: every thread (x, y, z of every block)
/// takes i = ctaid.x * ntid.x + tid.x (32-bit) and adds 1 to x[i] if i < n.
KERNELS_API const int64_t linnet_kernel_add_one_params = 2;
KERNELS_API void linnet_kernel_add_one(void **params, int64_t gx, int64_t gy,
                                       int64_t gz, int64_t bx, int64_t by,
                                       int64_t bz, int64_t shared) {
  (void)shared;
  auto *x = slot<float *>(params, 0);
  auto n = slot<uint64_t>(params, 1);
  for (int64_t cz = 0; cz < gz; ++cz)
    for (int64_t cy = 0; cy < gy; ++cy)
      for (int64_t cx = 0; cx < gx; ++cx)
        for (int64_t tz = 0; tz < bz; ++tz)
          for (int64_t ty = 0; ty < by; ++ty)
            for (int64_t tx = 0; tx < bx; ++tx) {
              uint32_t i = uint32_t(cx) * uint32_t(bx) + uint32_t(tx);
              if (uint64_t(i) < n)
                x[i] += 1.0f;
            }
}

/// shared_fill(out): each block fills its dynamic shared memory with ones
/// and stores their sum, out[block] = the shared bytes it was given.
KERNELS_API const int64_t linnet_kernel_shared_fill_params = 1;
KERNELS_API void linnet_kernel_shared_fill(void **params, int64_t gx,
                                           int64_t gy, int64_t gz, int64_t bx,
                                           int64_t by, int64_t bz,
                                           int64_t shared) {
  (void)bx, (void)by, (void)bz;
  auto *out = slot<int64_t *>(params, 0);
  std::vector<unsigned char> memory(static_cast<size_t>(shared));
  for (int64_t b = 0; b < gx * gy * gz; ++b) {
    std::memset(memory.data(), 1, memory.size());
    int64_t sum = 0;
    for (unsigned char c : memory)
      sum += c;
    out[b] = sum;
  }
}

/// set_status(check, value): a failed run-time check, as the compiled
/// kernels report one, in the module's global.
KERNELS_API const int64_t linnet_kernel_set_status_params = 2;
KERNELS_API void linnet_kernel_set_status(void **params, int64_t gx, int64_t gy,
                                          int64_t gz, int64_t bx, int64_t by,
                                          int64_t bz, int64_t shared) {
  (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shared;
  linnet_status[0] = slot<int64_t>(params, 0);
  linnet_status[1] = slot<int64_t>(params, 1);
}
