//===- CudaTarget.h - The CUDA target ----------------------------*- C++ -*-===//
//
// Task IR on tensors -> -linnet-bufferize -> the shared lowering to loops
// (linalg as parallel loops) -> -linnet-cuda-map-to-gpu -> gpu kernel
// outlining, then two consumers of the same kernels:
//
//   device: gpu.module -> NVVM -> PTX (LLVM's NVPTX back end, in process,
//           libdevice linked) -> cubin (ptxas -arch=sm_90a, when found),
//           kernels.ptx kept for the driver's JIT;
//   host:   launches -> linnet_cuda_launch_slots calls (docs/cuda-abi.md),
//           allocations through the CUDA runtime, compiled by the CPU
//           pipeline into model.so;
//
// or, with CodegenRequest::emulate, the kernels as CPU loops
// (-linnet-cuda-cpuify) in model.so, loaded by the CPU runtime ABI: the
// CPU execution tests hold against the reference interpreter.
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_TARGET_CUDA_CUDATARGET_H
#define LINNET_TARGET_CUDA_CUDATARGET_H

#include "linnet/Target/CUDA/Abi.h"
#include "linnet/Target/Target.h"

#include <string>
#include <vector>

namespace linnet::cuda {

/// The schedule contract of the CUDA target's gf kernels.
inline constexpr const char *kScheduleContract = "provider-neutral-v1";

/// What ptxas reported of one kernel (`ptxas -v`).
struct KernelResources {
  std::string name;
  int64_t registers = -1, sharedBytes = 0, stackBytes = 0, spillStores = 0, spillLoads = 0;
};

/// The device code of a module of gpu kernels.
struct DeviceCode {
  std::string ptx, cubin;             // cubin empty when ptxas is not found
  std::string ptxas;                  // the ptxas used ("" when none)
  std::vector<KernelResources> kernels; // from ptxas -v, in its order
};

/// `gpu.module`s (after outlining, on memrefs) to PTX, and to a cubin by
/// ptxas when one is found: $LINNET_PTXAS, else the one CMake found. The
/// module is consumed. Errors name the stage.
llvm::Expected<DeviceCode> compileDeviceModule(mlir::ModuleOp gpuModules);

/// Parses `ptxas -v` output into per-kernel resources.
std::vector<KernelResources> parsePtxasReport(llvm::StringRef text);

/// A symbol as PTX spells it: identifiers are [A-Za-z0-9_$] only, so `.`
/// becomes `_$_` (as NVPTX spells globals) and any other byte outside that
/// set `_$XX_` (linnet's own symbols have no `$`, so no two collide).
/// Kernels keep these names in the image and in kernels.json.
std::string ptxSymbolName(llvm::StringRef name);

/// Registers -linnet-cuda-lower-to-gpu (linnet-opt): the mapping pipeline.
void registerCUDAPipelines();

class CudaTarget final : public target::Target {
public:
  llvm::StringRef kind() const override { return "cuda"; }
  llvm::StringRef scheduleContract() const override { return kScheduleContract; }
  llvm::StringRef runtimeAbi() const override { return kRuntimeAbi; }
  /// The kernels' architecture and the host code's CPU.
  std::string codeIdentity() const override;
  /// Attention's key axis in up to 32 chunks of at least 64 keys, one
  /// thread a (query, head, chunk): decode has few heads and many keys.
  unsigned foldChunks() const override { return 32; }
  void registerDialects(mlir::DialectRegistry &registry) const override;
  std::string unsupported(const target::CodegenRequest &request) const override;
  llvm::Expected<target::GeneratedLibrary> generateCode(mlir::ModuleOp module,
                                                        const target::CodegenRequest &request) const override;
};

} // namespace linnet::cuda

#endif // LINNET_TARGET_CUDA_CUDATARGET_H
