//===- CudaRuntime.h - Run CUDA artifacts -------------------------*- C++ -*-===//
//
// The device backend of the runtime for the CUDA target's ABI
// (docs/cuda-abi.md): it loads the artifact's cubin (or its PTX, for the
// driver's JIT) through the CUDA driver API, which it opens with dlopen,
// fills the library's host table (launches, read-backs, allocations), keeps
// weights and state on the device and copies inputs and results. Where
// there is no driver or no GPU, loading a CUDA artifact fails with that
// reason; everything else of the runtime is unaffected.
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_TARGET_CUDA_CUDARUNTIME_H
#define LINNET_TARGET_CUDA_CUDARUNTIME_H

#include <string>

namespace linnet::cuda {

/// Registers the CUDA ABI with the runtime (rt::registerDeviceBackend);
/// idempotent. Programs that load artifacts call it once at start.
void registerCudaRuntime();

/// One line on the libraries the runtime's library calls use: the file
/// each was loaded from, or why not (artifacts then run their generated
/// kernels in place of the calls).
std::string describeLibraries();

} // namespace linnet::cuda

#endif // LINNET_TARGET_CUDA_CUDARUNTIME_H
