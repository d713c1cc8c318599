//===- Driver.h - The CUDA driver API, loaded at run time --------*- C++ -*-===//
//
// linnet's CUDA host runtime talks to the GPU through the CUDA driver API,
// which it loads with dlopen (libcuda.so.1, or $LINNET_LIBCUDA) instead of
// linking: linnet builds, and its tests run, on machines without an NVIDIA
// driver, and there the failure is one plain sentence, not a loader error.
// cuda.h is not included: the few handle types are declared here.
//
// Driver: the loaded library and its entry points. Device: one session on
// device 0 (primary context, one stream, the modules, a caching allocator,
// events and a CUDA graph), reporting every CUDA error with the call's name.
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_TARGET_CUDA_DRIVER_H
#define LINNET_TARGET_CUDA_DRIVER_H

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace linnet::cuda {

/// The driver API's types, as its ABI has them (cuda.h is not needed).
namespace drv {
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;
struct CUevent_st;
struct CUgraph_st;
struct CUgraphExec_st;
using CUcontext = CUctx_st *;
using CUmodule = CUmod_st *;
using CUfunction = CUfunc_st *;
using CUstream = CUstream_st *;
using CUevent = CUevent_st *;
using CUgraph = CUgraph_st *;
using CUgraphExec = CUgraphExec_st *;
using CUdeviceptr = unsigned long long;
using CUdevice = int;
using CUresult = int; // CUDA_SUCCESS is 0
} // namespace drv

/// Every entry point the runtime uses: X(symbol, parameter types). The
/// symbol is the one the driver exports (the versioned `_v2` where the ABI
/// has one: the unversioned names are the old ABI), and is also the name of
/// the Driver member that holds it. Enums of the API are passed as int.
#define LINNET_CUDA_DRIVER_SYMBOLS(X)                                          \
  X(cuGetErrorName, drv::CUresult, const char **)                              \
  X(cuGetErrorString, drv::CUresult, const char **)                            \
  X(cuInit, unsigned)                                                          \
  X(cuDriverGetVersion, int *)                                                 \
  X(cuDeviceGetCount, int *)                                                   \
  X(cuDeviceGet, drv::CUdevice *, int)                                         \
  X(cuDeviceGetName, char *, int, drv::CUdevice)                               \
  X(cuDeviceGetAttribute, int *, int, drv::CUdevice)                           \
  X(cuDevicePrimaryCtxRetain, drv::CUcontext *, drv::CUdevice)                 \
  X(cuDevicePrimaryCtxRelease_v2, drv::CUdevice)                               \
  X(cuCtxSetCurrent, drv::CUcontext)                                           \
  X(cuCtxSynchronize)                                                          \
  X(cuModuleLoadDataEx, drv::CUmodule *, const void *, unsigned, int *,        \
    void **)                                                                   \
  X(cuModuleUnload, drv::CUmodule)                                             \
  X(cuModuleGetFunction, drv::CUfunction *, drv::CUmodule, const char *)       \
  X(cuModuleGetGlobal_v2, drv::CUdeviceptr *, size_t *, drv::CUmodule,         \
    const char *)                                                              \
  X(cuFuncGetAttribute, int *, int, drv::CUfunction)                           \
  X(cuFuncSetAttribute, drv::CUfunction, int, int)                             \
  X(cuLaunchKernel, drv::CUfunction, unsigned, unsigned, unsigned, unsigned,   \
    unsigned, unsigned, unsigned, drv::CUstream, void **, void **)             \
  X(cuMemAlloc_v2, drv::CUdeviceptr *, size_t)                                 \
  X(cuMemFree_v2, drv::CUdeviceptr)                                            \
  X(cuMemcpyHtoD_v2, drv::CUdeviceptr, const void *, size_t)                   \
  X(cuMemcpyDtoH_v2, void *, drv::CUdeviceptr, size_t)                         \
  X(cuMemcpyDtoD_v2, drv::CUdeviceptr, drv::CUdeviceptr, size_t)               \
  X(cuMemsetD8_v2, drv::CUdeviceptr, unsigned char, size_t)                    \
  X(cuMemcpyHtoDAsync_v2, drv::CUdeviceptr, const void *, size_t,              \
    drv::CUstream)                                                             \
  X(cuMemcpyDtoHAsync_v2, void *, drv::CUdeviceptr, size_t, drv::CUstream)     \
  X(cuMemcpyDtoDAsync_v2, drv::CUdeviceptr, drv::CUdeviceptr, size_t,          \
    drv::CUstream)                                                             \
  X(cuMemsetD8Async, drv::CUdeviceptr, unsigned char, size_t, drv::CUstream)   \
  X(cuStreamCreate, drv::CUstream *, unsigned)                                 \
  X(cuStreamDestroy_v2, drv::CUstream)                                         \
  X(cuStreamSynchronize, drv::CUstream)                                        \
  X(cuEventCreate, drv::CUevent *, unsigned)                                   \
  X(cuEventDestroy_v2, drv::CUevent)                                           \
  X(cuEventRecord, drv::CUevent, drv::CUstream)                                \
  X(cuEventSynchronize, drv::CUevent)                                          \
  X(cuEventElapsedTime, float *, drv::CUevent, drv::CUevent)                   \
  X(cuStreamBeginCapture_v2, drv::CUstream, int)                               \
  X(cuStreamEndCapture, drv::CUstream, drv::CUgraph *)                         \
  X(cuGraphInstantiateWithFlags, drv::CUgraphExec *, drv::CUgraph,             \
    unsigned long long)                                                        \
  X(cuGraphLaunch, drv::CUgraphExec, drv::CUstream)                            \
  X(cuGraphDestroy, drv::CUgraph)                                              \
  X(cuGraphExecDestroy, drv::CUgraphExec)                                      \
  X(cuGraphExecUpdate_v2, drv::CUgraphExec, drv::CUgraph, void *)

/// The CUDA driver library, loaded and initialized (cuInit), with at least
/// one device.
class Driver {
public:
  /// The process's driver: loaded once (thread-safe) from $LINNET_LIBCUDA,
  /// else libcuda.so.1. Null, with the same sentence in `error` on every
  /// call, when this machine has no usable driver or no device.
  static const Driver *get(std::string &error);

  /// Loads and initializes the driver at `path` (a file name dlopen
  /// searches, or a path), not cached: get() uses it, tests call it.
  static std::unique_ptr<Driver> loadFrom(const std::string &path,
                                          std::string &error);

  ~Driver(); // unloads the library unless cuInit succeeded (see .cpp)
  Driver(const Driver &) = delete;
  Driver &operator=(const Driver &) = delete;

  /// `CUDA_ERROR_NAME: the driver's sentence`, or the number when the
  /// driver cannot name it.
  std::string describe(drv::CUresult result) const;

  /// The file the library was loaded from (resolved by the loader).
  const std::string &path() const { return path_; }
  /// cuDriverGetVersion: 1000 * major + 10 * minor.
  int version() const { return version_; }
  /// cuDeviceGetCount, at least 1.
  int deviceCount() const { return deviceCount_; }

  // The entry points: public so the runtime calls them directly.
#define LINNET_CUDA_DRIVER_MEMBER(name, ...)                                   \
  drv::CUresult (*name)(__VA_ARGS__) = nullptr;
  LINNET_CUDA_DRIVER_SYMBOLS(LINNET_CUDA_DRIVER_MEMBER)
#undef LINNET_CUDA_DRIVER_MEMBER

private:
  Driver() = default;
  void *handle_ = nullptr;
  bool initialized_ = false;
  std::string path_;
  int version_ = 0, deviceCount_ = 0;
};

/// One session on device 0: its primary context (retained, made current),
/// one non-blocking stream on which every operation is ordered, the loaded
/// kernels, device memory, events and one captured CUDA graph. Use it from
/// one thread at a time. Every failing call returns false (or 0) and says
/// in `error` which CUDA call failed and why.
class Device {
public:
  /// Opens device 0 through Driver::get().
  static std::unique_ptr<Device> open(std::string &error);

  ~Device(); // frees the graph, events, memory, modules, stream, context
  Device(Device &&) noexcept;
  Device &operator=(Device &&) noexcept;
  Device(const Device &) = delete;
  Device &operator=(const Device &) = delete;

  const Driver &driver() const;
  /// The device's name, e.g. "NVIDIA H100 80GB HBM3".
  const std::string &name() const;
  /// Compute capability: 9 and 0 for sm_90.
  int ccMajor() const;
  int ccMinor() const;
  /// The session's stream, for callers that enqueue work of their own.
  drv::CUstream stream() const;

  /// Loads a PTX, cubin or fatbin image and looks up `kernelNames`, which
  /// get the next kernel indices (the first module's are 0..n-1). A
  /// refused image reports the driver's JIT log; a missing kernel is named.
  bool loadModule(std::string_view image,
                  const std::vector<std::string> &kernelNames,
                  std::string &error);
  /// The device address and size of global `name` of a loaded module; 0
  /// when no loaded module defines it.
  drv::CUdeviceptr global(const std::string &name, size_t &bytes) const;

  /// Enqueues kernel `kernel` whose parameters are `nslots` 64-bit values
  /// (pointers and integers alike, the linnet CUDA calling convention).
  /// Dynamic shared memory above 48 KiB is opted into first.
  bool launch(int64_t kernel, unsigned gx, unsigned gy, unsigned gz,
              unsigned bx, unsigned by, unsigned bz, unsigned sharedBytes,
              const int64_t *slots, int64_t nslots, std::string &error);

  /// Device memory, 0 on failure. A freed block is kept for the next
  /// request of the same size, so steady-state steps allocate nothing; a
  /// 0-byte request gets its own 1-byte block (distinct, non-null). Out of
  /// memory, the cached blocks are freed and the allocation tried again,
  /// unless `mayTrim` is false (a caller that has work not yet enqueued
  /// using released blocks).
  drv::CUdeviceptr alloc(size_t bytes, std::string &error, bool mayTrim = true);
  /// Returns a block of alloc() to the cache (0 is ignored). Work already
  /// enqueued on the stream may still use it: reuse is stream-ordered.
  void release(drv::CUdeviceptr ptr);

  /// Copies and fills, ordered on the stream. copyToDevice may return
  /// before the copy ends (the source is staged); copyToHost waits for it.
  bool copyToDevice(drv::CUdeviceptr dst, const void *src, size_t bytes,
                    std::string &error);
  bool copyToHost(void *dst, drv::CUdeviceptr src, size_t bytes,
                  std::string &error);
  bool copyDeviceToDevice(drv::CUdeviceptr dst, drv::CUdeviceptr src,
                          size_t bytes, std::string &error);
  bool zero(drv::CUdeviceptr dst, size_t bytes, std::string &error);
  /// Waits for everything enqueued on the stream.
  bool synchronize(std::string &error);

  /// Records event `idx` (created on first use) on the stream, for
  /// profiling.
  bool record(int idx, std::string &error);
  /// Milliseconds between the recorded events `from` and `to`; waits for
  /// `to`.
  bool elapsedMs(int from, int to, float &ms, std::string &error);

  /// Captures the stream's work between beginCapture and endCapture into a
  /// CUDA graph (thread-local mode: a synchronizing call on this thread
  /// during capture fails instead of being missed); endCapture instantiates
  /// it, replacing the previous one; replay enqueues it again. During a
  /// capture alloc() only reuses released blocks (cuMemAlloc cannot be
  /// captured), and blocks released in it stay reserved for the graph,
  /// whose replays write their addresses, until the graph is replaced.
  bool beginCapture(std::string &error);
  bool endCapture(std::string &error);
  bool replay(std::string &error);

  /// Graphs the caller keeps by number (the runtime: one per entry), apart
  /// from the one above. captureGraph records into graph `slot` what
  /// `enqueue` puts on the stream (it must allocate nothing): instantiated
  /// the first time, later updated in place (cuGraphExecUpdate) when only
  /// parameters changed (`updated` true), instantiated again when the
  /// driver refuses the update. launchGraph enqueues it.
  bool captureGraph(size_t slot, const std::function<bool(std::string &)> &enqueue, bool &updated,
                    std::string &error);
  bool launchGraph(size_t slot, std::string &error);

private:
  struct State;
  explicit Device(std::unique_ptr<State> state);
  std::unique_ptr<State> s_;
};

} // namespace linnet::cuda

#endif // LINNET_TARGET_CUDA_DRIVER_H
