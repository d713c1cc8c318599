// The CUDA driver emulator (lib/Target/CUDA/Emulator) under the real CUDA
// host runtime: Driver and Device load it as libcuda ($LINNET_LIBCUDA) and
// run the test kernels library (Inputs/emulator-kernels.cpp,
// $LINNET_CUDA_EMULATOR_KERNELS). ctest sets both; run by hand, the binary
// defaults them to the build's files.
#include "linnet/Target/CUDA/Driver.h"

#include "Inputs/emulator-kernels.h"

#include <gtest/gtest.h>

#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

using namespace linnet::cuda;
using namespace linnet_emulator_test;

namespace {

const bool kEnvironmentSet = [] {
  setenv("LINNET_LIBCUDA", LINNET_TEST_CUDA_EMULATOR, 0);
  setenv("LINNET_CUDA_EMULATOR_KERNELS", LINNET_TEST_CUDA_EMULATOR_KERNELS, 0);
  return true;
}();

// The kernels of the test library, in the order loadAll gives them.
enum Kernel { kAddOne, kSharedFill, kSetStatus };

std::unique_ptr<Device> openDevice(std::string &error) {
  (void)kEnvironmentSet;
  return Device::open(error);
}

#define OPEN_DEVICE(dev)                                                       \
  std::string error;                                                           \
  std::unique_ptr<Device> dev = openDevice(error);                             \
  ASSERT_TRUE(dev) << error;                                                   \
  const Driver &api = dev->driver();                                           \
  (void)api

#define LOAD_KERNELS(dev)                                                      \
  ASSERT_TRUE(dev->loadModule(                                                 \
      kAddOnePtx, {"add_one", "shared_fill", "set_status"}, error))            \
      << error

bool contains(const std::string &s, const std::string &part) {
  return s.find(part) != std::string::npos;
}

std::vector<float> iota(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = float(i);
  return v;
}

// Restores an environment variable when it goes.
struct ScopedEnv {
  std::string name;
  std::string old;
  bool had;
  ScopedEnv(const char *n, const char *value) : name(n) {
    const char *o = std::getenv(n);
    had = o != nullptr;
    if (o)
      old = o;
    if (value)
      setenv(n, value, 1);
    else
      unsetenv(n);
  }
  ~ScopedEnv() {
    if (had)
      setenv(name.c_str(), old.c_str(), 1);
    else
      unsetenv(name.c_str());
  }
};

} // namespace

TEST(CudaEmulator, DeviceIsTheEmulator) {
  OPEN_DEVICE(dev);
  EXPECT_EQ(dev->name(), "linnet CUDA driver emulator (CPU)");
  EXPECT_EQ(dev->ccMajor(), 9);
  EXPECT_EQ(dev->ccMinor(), 0);
  EXPECT_EQ(api.version(), 13000);
  EXPECT_EQ(api.deviceCount(), 1);
  EXPECT_NE(api.path().find("liblinnet-cuda-emulator.so"), std::string::npos)
      << api.path();
  int v = -1;
  EXPECT_EQ(api.cuDeviceGetAttribute(&v, 97, 0), 0);
  EXPECT_EQ(v, 232448);
  EXPECT_EQ(api.cuDeviceGetAttribute(&v, 1, 0), 0);
  EXPECT_EQ(v, 1024);
  EXPECT_EQ(api.cuDeviceGetAttribute(&v, 10, 0), 0);
  EXPECT_EQ(v, 32);
  EXPECT_EQ(api.cuDeviceGetAttribute(&v, 16, 0), 0);
  EXPECT_EQ(v, 1);
  EXPECT_EQ(api.cuDeviceGetAttribute(&v, 75, 1), 101); // no device 1
  drv::CUdevice d = -1;
  EXPECT_EQ(api.cuDeviceGet(&d, 1), 101);
  char shortName[8];
  EXPECT_EQ(api.cuDeviceGetName(shortName, sizeof shortName, 0), 0);
  EXPECT_STREQ(shortName, "linnet ");
}

TEST(CudaEmulator, ErrorNamesAndSentences) {
  OPEN_DEVICE(dev);
  for (int code :
       {0, 1, 2, 3, 100, 200, 201, 209, 400, 401, 500, 600, 900, 901, 999}) {
    const char *name = nullptr, *text = nullptr;
    EXPECT_EQ(api.cuGetErrorName(code, &name), 0) << code;
    EXPECT_EQ(api.cuGetErrorString(code, &text), 0) << code;
    EXPECT_TRUE(name && contains(name, "CUDA_")) << code;
    EXPECT_TRUE(text && *text) << code;
  }
  const char *name = "x", *text = "x";
  EXPECT_EQ(api.cuGetErrorName(12345, &name), 1);
  EXPECT_EQ(name, nullptr);
  EXPECT_EQ(api.cuGetErrorString(12345, &text), 1);
  EXPECT_EQ(text, nullptr);
  EXPECT_EQ(api.describe(901),
            "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED: operation failed due to a "
            "previous error during capture");
  EXPECT_EQ(api.describe(12345), "CUDA error 12345");
}

TEST(CudaEmulator, MemoryRoundTripAndBlockCache) {
  OPEN_DEVICE(dev);
  constexpr size_t n = 1000;
  std::vector<float> host = iota(n), back(n, -1.0f);
  drv::CUdeviceptr a = dev->alloc(n * 4, error);
  ASSERT_NE(a, 0u) << error;
  EXPECT_EQ(a % 256, 0u);
  ASSERT_TRUE(dev->copyToDevice(a, host.data(), n * 4, error)) << error;
  ASSERT_TRUE(dev->zero(a + 100 * 4, 50 * 4, error)) << error;
  drv::CUdeviceptr b = dev->alloc(n * 4, error);
  ASSERT_NE(b, 0u) << error;
  ASSERT_TRUE(dev->copyDeviceToDevice(b, a, n * 4, error)) << error;
  ASSERT_TRUE(dev->copyToHost(back.data(), b, n * 4, error)) << error;
  for (size_t i = 0; i < n; ++i)
    ASSERT_EQ(back[i], i >= 100 && i < 150 ? 0.0f : float(i)) << "at " << i;

  // The block cache: a released block comes back for the same size only.
  dev->release(b);
  drv::CUdeviceptr c = dev->alloc(n * 8, error);
  ASSERT_NE(c, 0u) << error;
  EXPECT_NE(c, b);
  EXPECT_EQ(dev->alloc(n * 4, error), b);
  drv::CUdeviceptr e1 = dev->alloc(0, error), e2 = dev->alloc(0, error);
  EXPECT_NE(e1, 0u);
  EXPECT_NE(e2, 0u);
  EXPECT_NE(e1, e2);
  for (drv::CUdeviceptr p : {a, b, c, e1, e2})
    dev->release(p);
  EXPECT_TRUE(dev->synchronize(error)) << error;
}

TEST(CudaEmulator, CopiesOutsideAnAllocationFail) {
  OPEN_DEVICE(dev);
  constexpr size_t n = 1000;
  std::vector<float> host = iota(n + 2);
  drv::CUdeviceptr x = dev->alloc(n * 4, error);
  ASSERT_NE(x, 0u) << error;
  EXPECT_FALSE(dev->copyToHost(host.data(), x + (n - 1) * 4, 8, error));
  EXPECT_TRUE(contains(error, "cuMemcpyDtoHAsync failed (8 bytes): "
                              "CUDA_ERROR_INVALID_VALUE"))
      << error;
  EXPECT_FALSE(dev->copyToDevice(x, host.data(), (n + 1) * 4, error));
  EXPECT_TRUE(contains(error, "cuMemcpyHtoDAsync failed")) << error;
  EXPECT_FALSE(dev->zero(x + 4, n * 4, error));
  EXPECT_TRUE(contains(error, "cuMemsetD8Async failed")) << error;
  EXPECT_FALSE(dev->copyDeviceToDevice(x + 4, x, n * 4, error));
  EXPECT_TRUE(contains(error, "cuMemcpyDtoDAsync failed")) << error;
  // A host address is no device memory.
  EXPECT_FALSE(dev->copyToHost(
      host.data(), drv::CUdeviceptr(uintptr_t(host.data() + 1)), 4, error));
  // The whole block, and its end, are fine.
  EXPECT_TRUE(dev->copyToDevice(x, host.data(), n * 4, error)) << error;
  EXPECT_TRUE(dev->copyToHost(host.data(), x + (n - 1) * 4, 4, error)) << error;

  // The driver's own allocations: freed memory is no device memory, and
  // is freed once.
  drv::CUdeviceptr p = 0;
  ASSERT_EQ(api.cuMemAlloc_v2(&p, 64), 0);
  EXPECT_EQ(api.cuMemcpyHtoD_v2(p, host.data(), 64), 0);
  EXPECT_EQ(api.cuMemcpyDtoD_v2(p, x, 64), 0);
  EXPECT_EQ(api.cuMemsetD8_v2(p, 0, 65), 1);
  ASSERT_EQ(api.cuMemFree_v2(p), 0);
  EXPECT_EQ(api.cuMemcpyHtoD_v2(p, host.data(), 64), 1);
  EXPECT_EQ(api.cuMemFree_v2(p), 1);
  EXPECT_EQ(api.cuMemFree_v2(x + 4), 1);
  EXPECT_EQ(api.cuMemAlloc_v2(&p, 0), 1); // as CUDA: no empty allocation
  dev->release(x);
}

TEST(CudaEmulator, MemoryLimit) {
  OPEN_DEVICE(dev);
  ScopedEnv limit("LINNET_CUDA_EMULATOR_MEMORY", "65536");
  drv::CUdeviceptr p = 0, q = 0;
  EXPECT_EQ(api.cuMemAlloc_v2(&p, 65537), 2);
  ASSERT_EQ(api.cuMemAlloc_v2(&p, 40000), 0);
  EXPECT_EQ(api.cuMemAlloc_v2(&q, 40000), 2);
  EXPECT_EQ(dev->alloc(40000, error), 0u);
  EXPECT_TRUE(contains(error, "cuMemAlloc failed (40000 bytes): "
                              "CUDA_ERROR_OUT_OF_MEMORY"))
      << error;
  EXPECT_EQ(api.cuMemFree_v2(p), 0);
  EXPECT_EQ(api.cuMemAlloc_v2(&q, 40000), 0);
  EXPECT_EQ(api.cuMemFree_v2(q), 0);
}

TEST(CudaEmulator, LaunchesAddOneOverAGridOfBlocks) {
  OPEN_DEVICE(dev);
  LOAD_KERNELS(dev);
  constexpr int64_t n = 1000;
  std::vector<float> host = iota(n), back(n);
  drv::CUdeviceptr x = dev->alloc(n * 4, error);
  ASSERT_NE(x, 0u) << error;
  ASSERT_TRUE(dev->copyToDevice(x, host.data(), n * 4, error)) << error;
  int64_t slots[] = {int64_t(x), n};
  ASSERT_TRUE(dev->launch(kAddOne, (n + 127) / 128, 1, 1, 128, 1, 1, 0, slots,
                          2, error))
      << error;
  ASSERT_TRUE(dev->copyToHost(back.data(), x, n * 4, error)) << error;
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(back[i], float(i) + 1.0f) << "at " << i;
  // Half the grid: the second half is untouched.
  slots[1] = n / 2;
  ASSERT_TRUE(dev->launch(kAddOne, 4, 1, 1, 128, 1, 1, 0, slots, 2, error))
      << error;
  ASSERT_TRUE(dev->copyToHost(back.data(), x, n * 4, error)) << error;
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(back[i], float(i) + (i < n / 2 ? 2.0f : 1.0f)) << "at " << i;
  EXPECT_FALSE(dev->launch(3, 1, 1, 1, 1, 1, 1, 0, slots, 2, error));
  EXPECT_TRUE(contains(error, "no kernel 3")) << error;
  dev->release(x);
}

TEST(CudaEmulator, LaunchChecksItsConfiguration) {
  OPEN_DEVICE(dev);
  drv::CUmodule m = nullptr;
  ASSERT_EQ(api.cuModuleLoadDataEx(&m, kAddOnePtx.data(), 0, nullptr, nullptr),
            0);
  drv::CUfunction fn = nullptr;
  ASSERT_EQ(api.cuModuleGetFunction(&fn, m, "add_one"), 0);
  drv::CUfunction again = nullptr;
  EXPECT_EQ(api.cuModuleGetFunction(&again, m, "add_one"), 0);
  EXPECT_EQ(again, fn);
  EXPECT_EQ(api.cuModuleGetFunction(&again, m, "nothing"), 500);
  drv::CUdeviceptr x = 0;
  ASSERT_EQ(api.cuMemAlloc_v2(&x, 4096), 0);
  int64_t n = 1024;
  void *params[] = {&x, &n};
  drv::CUstream s = dev->stream();
  EXPECT_EQ(api.cuLaunchKernel(fn, 1, 1, 1, 1024, 1, 1, 0, s, params, nullptr),
            0);
  EXPECT_EQ(api.cuLaunchKernel(fn, 1, 1, 1, 1025, 1, 1, 0, s, params, nullptr),
            1);
  EXPECT_EQ(api.cuLaunchKernel(fn, 1, 1, 1, 32, 16, 4, 0, s, params, nullptr),
            1); // 2048 threads
  EXPECT_EQ(api.cuLaunchKernel(fn, 1, 1, 1, 1, 1, 65, 0, s, params, nullptr),
            1);
  EXPECT_EQ(api.cuLaunchKernel(fn, 0, 1, 1, 32, 1, 1, 0, s, params, nullptr),
            1);
  EXPECT_EQ(api.cuLaunchKernel(fn, 1, 1, 1, 0, 1, 1, 0, s, params, nullptr), 1);
  EXPECT_EQ(api.cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, s, nullptr, nullptr),
            1);
  void *extra[] = {nullptr};
  EXPECT_EQ(api.cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, s, params, extra), 1);
  EXPECT_EQ(
      api.cuLaunchKernel(nullptr, 1, 1, 1, 32, 1, 1, 0, s, params, nullptr),
      400);
  EXPECT_EQ(api.cuModuleUnload(m), 0);
  EXPECT_EQ(api.cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, s, params, nullptr),
            400); // its module is gone
  EXPECT_EQ(api.cuModuleUnload(m), 400);
  EXPECT_EQ(api.cuMemFree_v2(x), 0);
}

TEST(CudaEmulator, RefusesAnImageTheKernelsWereNotBuiltFor) {
  OPEN_DEVICE(dev);
  std::string nonsense = ".version 6.0\n.target sm_52\nnonsense;\n";
  EXPECT_FALSE(dev->loadModule(nonsense, {"add_one"}, error));
  char hash[64];
  std::snprintf(hash, sizeof hash, "0x%016llx",
                static_cast<unsigned long long>(fnv1a(nonsense)));
  EXPECT_EQ(error,
            "cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_IMAGE: device "
            "kernel image is invalid; the driver's JIT log: the image (" +
                std::to_string(nonsense.size()) + " bytes, FNV-1a " + hash +
                ") is not one LINNET_CUDA_EMULATOR_KERNELS=" +
                std::getenv("LINNET_CUDA_EMULATOR_KERNELS") + " was built for");
  // The PTX is read up to its NUL.
  std::string withNul = std::string(kAddOnePtx) + '\0' + "ignored";
  EXPECT_TRUE(dev->loadModule(withNul, {"add_one"}, error)) << error;
  EXPECT_FALSE(dev->loadModule(kAddOnePtx, {"add_two"}, error));
  EXPECT_EQ(error, "cuModuleGetFunction failed (kernel add_two): "
                   "CUDA_ERROR_NOT_FOUND: named symbol not found");
}

TEST(CudaEmulator, NeedsItsKernelsLibrary) {
  OPEN_DEVICE(dev);
  {
    ScopedEnv unset("LINNET_CUDA_EMULATOR_KERNELS", nullptr);
    EXPECT_FALSE(dev->loadModule(kAddOnePtx, {"add_one"}, error));
    EXPECT_TRUE(contains(error, "CUDA_ERROR_NO_BINARY_FOR_GPU")) << error;
    EXPECT_TRUE(contains(
        error, "the driver's JIT log: the CUDA driver emulator runs kernels "
               "compiled for this CPU: set LINNET_CUDA_EMULATOR_KERNELS to the "
               "artifact's kernels.host.so (linnet build --target cuda "
               "--host-kernels)"))
        << error;
  }
  {
    ScopedEnv missing("LINNET_CUDA_EMULATOR_KERNELS",
                      "/nonexistent/linnet-emulator/kernels.host.so");
    EXPECT_FALSE(dev->loadModule(kAddOnePtx, {"add_one"}, error));
    EXPECT_TRUE(contains(error, "CUDA_ERROR_INVALID_IMAGE")) << error;
    EXPECT_TRUE(contains(error, "/nonexistent/linnet-emulator/kernels.host.so"))
        << error;
  }
  {
    ScopedEnv notKernels("LINNET_CUDA_EMULATOR_KERNELS", "libm.so.6");
    EXPECT_FALSE(dev->loadModule(kAddOnePtx, {"add_one"}, error));
    EXPECT_TRUE(contains(error, "CUDA_ERROR_INVALID_IMAGE")) << error;
    EXPECT_TRUE(contains(error, "linnet_kernels_images")) << error;
  }
  EXPECT_TRUE(dev->loadModule(kAddOnePtx, {"add_one"}, error)) << error;
}

TEST(CudaEmulator, CubinLengthComesFromItsElfHeaders) {
  OPEN_DEVICE(dev);
  // Bytes after the file's end are not part of the image.
  std::string cubin(reinterpret_cast<const char *>(kCubin.data()),
                    kCubin.size());
  EXPECT_TRUE(dev->loadModule(cubin + "trailing bytes", {"add_one"}, error))
      << error;
  std::string changed = cubin;
  changed[270] ^= 1; // in the PROGBITS section
  EXPECT_FALSE(dev->loadModule(changed, {"add_one"}, error));
  EXPECT_TRUE(contains(error, "the image (288 bytes, FNV-1a 0x")) << error;
}

TEST(CudaEmulator, SharedMemoryAboveTheDefaultIsOptedInto) {
  OPEN_DEVICE(dev);
  LOAD_KERNELS(dev);
  constexpr int blocks = 3;
  drv::CUdeviceptr out = dev->alloc(blocks * 8, error);
  ASSERT_NE(out, 0u) << error;
  int64_t slots[] = {int64_t(out)};
  for (unsigned shared : {0u, 1000u, 49152u, 65536u, 232448u}) {
    ASSERT_TRUE(dev->launch(kSharedFill, blocks, 1, 1, 64, 1, 1, shared, slots,
                            1, error))
        << shared << ": " << error;
    int64_t back[blocks] = {};
    ASSERT_TRUE(dev->copyToHost(back, out, sizeof back, error)) << error;
    for (int b = 0; b < blocks; ++b)
      EXPECT_EQ(back[b], int64_t(shared)) << "block " << b;
  }
  EXPECT_FALSE(
      dev->launch(kSharedFill, 1, 1, 1, 64, 1, 1, 232449, slots, 1, error));
  EXPECT_TRUE(contains(error, "allows at most 232448")) << error;
  dev->release(out);

  // The driver itself: the limit is per function, 48 KiB until raised.
  drv::CUmodule m = nullptr;
  ASSERT_EQ(api.cuModuleLoadDataEx(&m, kAddOnePtx.data(), 0, nullptr, nullptr),
            0);
  drv::CUfunction fn = nullptr;
  ASSERT_EQ(api.cuModuleGetFunction(&fn, m, "shared_fill"), 0);
  drv::CUdeviceptr p = 0;
  ASSERT_EQ(api.cuMemAlloc_v2(&p, 8), 0);
  void *params[] = {&p};
  int v = -1;
  EXPECT_EQ(api.cuFuncGetAttribute(&v, 8, fn), 0);
  EXPECT_EQ(v, 49152);
  EXPECT_EQ(api.cuFuncGetAttribute(&v, 0, fn), 0);
  EXPECT_EQ(v, 1024);
  EXPECT_EQ(
      api.cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 49153, nullptr, params, nullptr),
      1);
  EXPECT_EQ(api.cuFuncSetAttribute(fn, 8, 232449), 1);
  EXPECT_EQ(api.cuFuncSetAttribute(fn, 8, 100000), 0);
  EXPECT_EQ(api.cuFuncGetAttribute(&v, 8, fn), 0);
  EXPECT_EQ(v, 100000);
  EXPECT_EQ(api.cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 100000, nullptr, params,
                               nullptr),
            0);
  EXPECT_EQ(api.cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 100001, nullptr, params,
                               nullptr),
            1);
  EXPECT_EQ(api.cuMemFree_v2(p), 0);
  EXPECT_EQ(api.cuModuleUnload(m), 0);
}

TEST(CudaEmulator, GlobalsAreDeviceMemory) {
  OPEN_DEVICE(dev);
  size_t bytes = 0;
  EXPECT_EQ(dev->global("linnet_status", bytes), 0u); // no module yet
  LOAD_KERNELS(dev);
  drv::CUdeviceptr status = dev->global("linnet_status", bytes);
  ASSERT_NE(status, 0u);
  EXPECT_EQ(bytes, kStatusBytes);
  int64_t slots[] = {7, 42};
  ASSERT_TRUE(dev->launch(kSetStatus, 1, 1, 1, 1, 1, 1, 0, slots, 2, error))
      << error;
  int64_t back[4] = {-1, -1, -1, -1};
  ASSERT_TRUE(dev->copyToHost(back, status, sizeof back, error)) << error;
  EXPECT_EQ(back[0], 7);
  EXPECT_EQ(back[1], 42);
  EXPECT_EQ(back[2], 0);
  EXPECT_FALSE(dev->copyToHost(back, status + 8, sizeof back, error));
  EXPECT_TRUE(contains(error, "CUDA_ERROR_INVALID_VALUE")) << error;
  // A module loaded again starts from the image's values.
  LOAD_KERNELS(dev);
  ASSERT_EQ(dev->global("linnet_status", bytes), status);
  ASSERT_TRUE(dev->copyToHost(back, status, sizeof back, error)) << error;
  EXPECT_EQ(back[0], 0);
  EXPECT_EQ(back[1], 0);
  size_t none = 0;
  for (const char *name : {"nothing", "linnet_kernels_images",
                           "linnet_kernel_add_one", "malloc", "environ"})
    EXPECT_EQ(dev->global(name, none), 0u) << name;
}

TEST(CudaEmulator, CapturedLaunchRunsOnlyWhenReplayed) {
  OPEN_DEVICE(dev);
  LOAD_KERNELS(dev);
  constexpr int64_t n = 4096;
  std::vector<float> host = iota(n), back(n);
  drv::CUdeviceptr x = dev->alloc(n * 4, error);
  ASSERT_NE(x, 0u) << error;
  ASSERT_TRUE(dev->copyToDevice(x, host.data(), n * 4, error)) << error;
  ASSERT_TRUE(dev->synchronize(error)) << error;
  int64_t slots[] = {int64_t(x), n};
  ASSERT_TRUE(dev->beginCapture(error)) << error;
  ASSERT_TRUE(
      dev->launch(kAddOne, n / 256, 1, 1, 256, 1, 1, 0, slots, 2, error))
      << error;
  ASSERT_TRUE(dev->endCapture(error)) << error;
  // The launch copied its parameters when it was captured.
  slots[1] = 0;
  ASSERT_TRUE(dev->copyToHost(back.data(), x, n * 4, error)) << error;
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(back[i], float(i)) << "the capture ran the kernel, at " << i;
  for (float expected : {1.0f, 2.0f}) {
    ASSERT_TRUE(dev->replay(error)) << error;
    ASSERT_TRUE(dev->copyToHost(back.data(), x, n * 4, error)) << error;
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(back[i], float(i) + expected) << "at " << i;
  }
  dev->release(x);
}

TEST(CudaEmulator, CapturedHostCopyReadsTheHostAtReplay) {
  OPEN_DEVICE(dev);
  constexpr size_t n = 256;
  std::vector<float> host(n, 1.0f), back(n);
  drv::CUdeviceptr x = dev->alloc(n * 4, error);
  ASSERT_NE(x, 0u) << error;
  ASSERT_TRUE(dev->zero(x, n * 4, error)) << error;
  ASSERT_TRUE(dev->beginCapture(error)) << error;
  ASSERT_TRUE(dev->copyToDevice(x, host.data(), n * 4, error)) << error;
  ASSERT_TRUE(dev->endCapture(error)) << error;
  ASSERT_TRUE(dev->copyToHost(back.data(), x, n * 4, error)) << error;
  EXPECT_EQ(back[0], 0.0f);
  host.assign(n, 5.0f);
  ASSERT_TRUE(dev->replay(error)) << error;
  ASSERT_TRUE(dev->copyToHost(back.data(), x, n * 4, error)) << error;
  EXPECT_EQ(back[0], 5.0f);
  EXPECT_EQ(back[n - 1], 5.0f);
  dev->release(x);
}

TEST(CudaEmulator, AllocationDuringCaptureReusesReleasedBlocks) {
  OPEN_DEVICE(dev);
  drv::CUdeviceptr a = dev->alloc(1024, error);
  ASSERT_NE(a, 0u) << error;
  dev->release(a);
  ASSERT_TRUE(dev->beginCapture(error)) << error;
  EXPECT_EQ(dev->alloc(1024, error), a); // cuMemAlloc is not called
  EXPECT_EQ(dev->alloc(2048, error), 0u);
  EXPECT_TRUE(contains(error, "while capturing a CUDA graph")) << error;
  ASSERT_TRUE(dev->zero(a, 1024, error)) << error;
  dev->release(a);
  EXPECT_EQ(dev->alloc(1024, error), a); // released in the capture
  ASSERT_TRUE(dev->endCapture(error)) << error;
  ASSERT_TRUE(dev->replay(error)) << error;
  dev->release(a);
}

TEST(CudaEmulator, SynchronizingDuringCaptureInvalidatesIt) {
  OPEN_DEVICE(dev);
  LOAD_KERNELS(dev);
  constexpr int64_t n = 256;
  std::vector<float> host = iota(n), back(n);
  drv::CUdeviceptr x = dev->alloc(n * 4, error);
  ASSERT_NE(x, 0u) << error;
  ASSERT_TRUE(dev->copyToDevice(x, host.data(), n * 4, error)) << error;
  ASSERT_TRUE(dev->beginCapture(error)) << error;
  EXPECT_FALSE(dev->copyToHost(back.data(), x, n * 4, error));
  EXPECT_TRUE(contains(error, "cuStreamSynchronize failed (after a copy to the "
                              "host): CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED"))
      << error;
  // The stream refuses more work until the capture ends.
  int64_t slots[] = {int64_t(x), n};
  EXPECT_FALSE(dev->launch(kAddOne, 1, 1, 1, n, 1, 1, 0, slots, 2, error));
  EXPECT_TRUE(contains(error, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED"))
      << error;
  EXPECT_FALSE(dev->endCapture(error));
  EXPECT_EQ(error, "cuStreamEndCapture failed: "
                   "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED: operation failed "
                   "due to a previous error during capture");
  EXPECT_FALSE(dev->replay(error));

  // A new capture works.
  ASSERT_TRUE(dev->beginCapture(error)) << error;
  ASSERT_TRUE(dev->launch(kAddOne, 1, 1, 1, n, 1, 1, 0, slots, 2, error))
      << error;
  ASSERT_TRUE(dev->endCapture(error)) << error;
  ASSERT_TRUE(dev->replay(error)) << error;
  ASSERT_TRUE(dev->copyToHost(back.data(), x, n * 4, error)) << error;
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(back[i], float(i) + 1.0f) << "at " << i;
  dev->release(x);
}

TEST(CudaEmulator, CaptureRulesOfTheDriver) {
  OPEN_DEVICE(dev);
  drv::CUstream s = nullptr;
  ASSERT_EQ(api.cuStreamCreate(&s, 1), 0);
  drv::CUdeviceptr p = 0;
  ASSERT_EQ(api.cuMemAlloc_v2(&p, 64), 0);
  ASSERT_EQ(api.cuMemsetD8_v2(p, 0, 64), 0);
  drv::CUgraph g = nullptr;
  EXPECT_EQ(api.cuStreamEndCapture(s, &g), 401);           // not capturing
  EXPECT_EQ(api.cuStreamBeginCapture_v2(nullptr, 1), 900); // legacy stream
  ASSERT_EQ(api.cuStreamBeginCapture_v2(s, 1), 0);
  EXPECT_EQ(api.cuStreamBeginCapture_v2(s, 1), 401);
  EXPECT_EQ(api.cuMemsetD8Async(p, 1, 64, s), 0);
  // Another thread may not end a thread-local capture, and is not bound by
  // it.
  drv::CUcontext ctx = nullptr;
  ASSERT_EQ(api.cuDevicePrimaryCtxRetain(&ctx, 0), 0);
  std::thread([&] {
    drv::CUgraph other = nullptr;
    EXPECT_EQ(api.cuStreamEndCapture(s, &other), 201); // no context yet
    ASSERT_EQ(api.cuCtxSetCurrent(ctx), 0);
    EXPECT_EQ(api.cuStreamEndCapture(s, &other), 908);
    drv::CUdeviceptr mine = 0;
    EXPECT_EQ(api.cuMemAlloc_v2(&mine, 64), 0);
    EXPECT_EQ(api.cuMemFree_v2(mine), 0);
  }).join();
  EXPECT_EQ(api.cuDevicePrimaryCtxRelease_v2(0), 0);
  drv::CUdeviceptr q = 0;
  EXPECT_EQ(api.cuMemAlloc_v2(&q, 64), 900);
  EXPECT_EQ(api.cuStreamEndCapture(s, &g), 901);
  EXPECT_EQ(g, nullptr);

  // A synchronous copy during a capture, and the graph of a clean one.
  ASSERT_EQ(api.cuStreamBeginCapture_v2(s, 1), 0);
  EXPECT_EQ(api.cuMemsetD8Async(p, 2, 64, s), 0);
  unsigned char back[64] = {};
  EXPECT_EQ(api.cuMemcpyDtoH_v2(back, p, 64), 900);
  EXPECT_EQ(api.cuStreamEndCapture(s, &g), 901);
  ASSERT_EQ(api.cuStreamBeginCapture_v2(s, 1), 0);
  EXPECT_EQ(api.cuMemsetD8Async(p, 3, 64, s), 0);
  EXPECT_EQ(api.cuMemsetD8Async(p, 3, 65, s), 1); // checked when recorded
  ASSERT_EQ(api.cuStreamEndCapture(s, &g), 0);
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(api.cuMemcpyDtoH_v2(back, p, 64), 0);
  EXPECT_EQ(back[0], 0); // the invalidated captures' memsets never ran
  drv::CUgraphExec exec = nullptr;
  ASSERT_EQ(api.cuGraphInstantiateWithFlags(&exec, g, 0), 0);
  ASSERT_EQ(api.cuGraphLaunch(exec, s), 0);
  EXPECT_EQ(api.cuMemcpyDtoH_v2(back, p, 64), 0);
  EXPECT_EQ(back[63], 3);
  // Its memory freed, a replay is an illegal address.
  EXPECT_EQ(api.cuMemFree_v2(p), 0);
  EXPECT_EQ(api.cuGraphLaunch(exec, s), 700);
  EXPECT_EQ(api.cuGraphExecDestroy(exec), 0);
  EXPECT_EQ(api.cuGraphExecDestroy(exec), 400);
  EXPECT_EQ(api.cuGraphDestroy(g), 0);
  EXPECT_EQ(api.cuStreamDestroy_v2(s), 0);
}

TEST(CudaEmulator, GraphExecUpdateKeepsTheTopology) {
  OPEN_DEVICE(dev);
  drv::CUstream s = dev->stream();
  drv::CUdeviceptr p = 0;
  ASSERT_EQ(api.cuMemAlloc_v2(&p, 64), 0);
  unsigned char back[64] = {};
  auto capture = [&](auto &&body) {
    drv::CUgraph g = nullptr;
    EXPECT_EQ(api.cuStreamBeginCapture_v2(s, 1), 0);
    body();
    EXPECT_EQ(api.cuStreamEndCapture(s, &g), 0);
    return g;
  };
  drv::CUgraph one = capture([&] { api.cuMemsetD8Async(p, 1, 64, s); });
  drv::CUgraph two = capture([&] { api.cuMemsetD8Async(p, 2, 32, s); });
  drv::CUgraph twice = capture([&] {
    api.cuMemsetD8Async(p, 3, 64, s);
    api.cuMemsetD8Async(p, 4, 64, s);
  });
  drv::CUgraph copy =
      capture([&] { api.cuMemcpyDtoHAsync_v2(back, p, 64, s); });
  drv::CUgraphExec exec = nullptr;
  ASSERT_EQ(api.cuGraphInstantiateWithFlags(&exec, one, 0), 0);
  struct {
    int result;
    void *node, *fromNode;
  } info{-1, nullptr, nullptr};
  EXPECT_EQ(api.cuGraphExecUpdate_v2(exec, twice, &info), 910);
  EXPECT_EQ(info.result, 2); // CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED
  EXPECT_EQ(api.cuGraphExecUpdate_v2(exec, copy, &info), 910);
  EXPECT_EQ(info.result, 3); // CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED
  EXPECT_EQ(api.cuGraphExecUpdate_v2(exec, two, nullptr), 1);
  EXPECT_EQ(api.cuGraphExecUpdate_v2(exec, two, &info), 0);
  EXPECT_EQ(info.result, 0);
  ASSERT_EQ(api.cuMemsetD8_v2(p, 0, 64), 0);
  ASSERT_EQ(api.cuGraphLaunch(exec, s), 0);
  ASSERT_EQ(api.cuMemcpyDtoH_v2(back, p, 64), 0);
  EXPECT_EQ(back[0], 2);
  EXPECT_EQ(back[31], 2);
  EXPECT_EQ(back[32], 0);
  EXPECT_EQ(api.cuGraphExecDestroy(exec), 0);
  for (drv::CUgraph g : {one, two, twice, copy})
    EXPECT_EQ(api.cuGraphDestroy(g), 0);
  EXPECT_EQ(api.cuMemFree_v2(p), 0);
}

TEST(CudaEmulator, GraphSlotsAreCapturedThenUpdated) {
  OPEN_DEVICE(dev);
  LOAD_KERNELS(dev);
  constexpr int64_t n = 1024;
  std::vector<float> host = iota(n), back(n);
  drv::CUdeviceptr x = dev->alloc(n * 4, error);
  ASSERT_NE(x, 0u) << error;
  ASSERT_TRUE(dev->copyToDevice(x, host.data(), n * 4, error)) << error;
  int64_t slots[] = {int64_t(x), n};
  auto addOne = [&](std::string &e) {
    return dev->launch(kAddOne, n / 256, 1, 1, 256, 1, 1, 0, slots, 2, e);
  };
  bool updated = true;
  ASSERT_TRUE(dev->captureGraph(0, addOne, updated, error)) << error;
  EXPECT_FALSE(updated);
  ASSERT_TRUE(dev->copyToHost(back.data(), x, n * 4, error)) << error;
  EXPECT_EQ(back[0], 0.0f); // captured, not run
  ASSERT_TRUE(dev->launchGraph(0, error)) << error;
  slots[1] = n / 2; // the same kernel, new parameters: updated in place
  ASSERT_TRUE(dev->captureGraph(0, addOne, updated, error)) << error;
  EXPECT_TRUE(updated);
  ASSERT_TRUE(dev->launchGraph(0, error)) << error;
  ASSERT_TRUE(dev->copyToHost(back.data(), x, n * 4, error)) << error;
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(back[i], float(i) + (i < n / 2 ? 2.0f : 1.0f)) << "at " << i;

  EXPECT_FALSE(dev->launchGraph(1, error));
  EXPECT_TRUE(contains(error, "no CUDA graph 1")) << error;
  EXPECT_FALSE(dev->captureGraph(
      1, [&](std::string &e) { return dev->alloc(12345, e) != 0; }, updated,
      error));
  EXPECT_TRUE(contains(error, "while capturing a CUDA graph")) << error;
  // A synchronization in the capture invalidates it.
  EXPECT_FALSE(dev->captureGraph(
      1, [&](std::string &e) { return dev->synchronize(e); }, updated, error));
  EXPECT_TRUE(contains(error, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED"))
      << error;
  // The stream is usable after the failed captures.
  ASSERT_TRUE(dev->launchGraph(0, error)) << error;
  ASSERT_TRUE(dev->copyToHost(back.data(), x, n * 4, error)) << error;
  EXPECT_EQ(back[0], 3.0f);
  EXPECT_EQ(back[n - 1], float(n - 1) + 1.0f);
  dev->release(x);
}

TEST(CudaEmulator, ContextIsPerThread) {
  OPEN_DEVICE(dev);
  drv::CUcontext ctx = nullptr;
  ASSERT_EQ(api.cuDevicePrimaryCtxRetain(&ctx, 0), 0);
  std::thread([&] {
    drv::CUdeviceptr p = 0;
    EXPECT_EQ(api.cuMemAlloc_v2(&p, 64), 201);
    ASSERT_EQ(api.cuCtxSetCurrent(ctx), 0);
    ASSERT_EQ(api.cuMemAlloc_v2(&p, 64), 0);
    EXPECT_EQ(api.cuMemFree_v2(p), 0);
  }).join();
  EXPECT_EQ(api.cuDevicePrimaryCtxRelease_v2(0), 0);
}

TEST(CudaEmulator, ConcurrentThreadsAreSerialized) {
  OPEN_DEVICE(dev);
  drv::CUcontext ctx = nullptr;
  ASSERT_EQ(api.cuDevicePrimaryCtxRetain(&ctx, 0), 0);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      if (api.cuCtxSetCurrent(ctx) != 0)
        return void(++failures);
      std::vector<unsigned char> in(4096, static_cast<unsigned char>(t)),
          out(4096);
      for (int i = 0; i < 200; ++i) {
        drv::CUdeviceptr p = 0;
        if (api.cuMemAlloc_v2(&p, in.size()) != 0 ||
            api.cuMemcpyHtoD_v2(p, in.data(), in.size()) != 0 ||
            api.cuMemcpyDtoH_v2(out.data(), p, out.size()) != 0 ||
            api.cuMemFree_v2(p) != 0 || out != in)
          ++failures;
      }
    });
  for (std::thread &t : threads)
    t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(api.cuDevicePrimaryCtxRelease_v2(0), 0);
}

TEST(CudaEmulator, EventsTimeTheStream) {
  OPEN_DEVICE(dev);
  LOAD_KERNELS(dev);
  constexpr int64_t n = 1 << 16;
  drv::CUdeviceptr x = dev->alloc(n * 4, error);
  ASSERT_NE(x, 0u) << error;
  ASSERT_TRUE(dev->zero(x, n * 4, error)) << error;
  int64_t slots[] = {int64_t(x), n};
  ASSERT_TRUE(dev->record(0, error)) << error;
  ASSERT_TRUE(
      dev->launch(kAddOne, n / 256, 1, 1, 256, 1, 1, 0, slots, 2, error))
      << error;
  ASSERT_TRUE(dev->record(1, error)) << error;
  float ms = -1;
  ASSERT_TRUE(dev->elapsedMs(0, 1, ms, error)) << error;
  EXPECT_GE(ms, 0.0f);
  EXPECT_FALSE(dev->elapsedMs(0, 2, ms, error));
  EXPECT_TRUE(contains(error, "event 2 was never recorded")) << error;

  drv::CUevent a = nullptr, b = nullptr, untimed = nullptr;
  ASSERT_EQ(api.cuEventCreate(&a, 0), 0);
  ASSERT_EQ(api.cuEventCreate(&b, 0), 0);
  ASSERT_EQ(api.cuEventCreate(&untimed, 2), 0); // CU_EVENT_DISABLE_TIMING
  EXPECT_EQ(api.cuEventRecord(a, dev->stream()), 0);
  EXPECT_EQ(api.cuEventElapsedTime(&ms, a, b), 600); // b never recorded
  EXPECT_EQ(api.cuEventRecord(b, dev->stream()), 0);
  EXPECT_EQ(api.cuEventSynchronize(b), 0);
  EXPECT_EQ(api.cuEventElapsedTime(&ms, a, b), 0);
  EXPECT_EQ(api.cuEventRecord(untimed, dev->stream()), 0);
  EXPECT_EQ(api.cuEventElapsedTime(&ms, a, untimed), 400);
  for (drv::CUevent e : {a, b, untimed})
    EXPECT_EQ(api.cuEventDestroy_v2(e), 0);
  EXPECT_EQ(api.cuEventDestroy_v2(a), 400);
  dev->release(x);
}

TEST(CudaEmulator, ReleasingThePrimaryContextFreesItsMemory) {
  drv::CUdeviceptr p = 0;
  const Driver *driver = nullptr;
  {
    OPEN_DEVICE(dev);
    driver = &dev->driver();
    ASSERT_EQ(api.cuMemAlloc_v2(&p, 64), 0);
  } // the last reference: the context goes, and its memory
  EXPECT_EQ(driver->cuMemFree_v2(p), 201); // no context now
  OPEN_DEVICE(dev);
  EXPECT_EQ(api.cuMemFree_v2(p), 1);
}

// In a fresh process (the threadsafe style re-executes the test binary):
// the driver before cuInit.
[[noreturn]] void callBeforeInit() {
  void *h = dlopen(std::getenv("LINNET_LIBCUDA"), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    std::fprintf(stderr, "cannot load the emulator\n");
    std::exit(1);
  }
  using CountFn = int (*)(int *);
  using AllocFn = int (*)(unsigned long long *, size_t);
  using InitFn = int (*)(unsigned);
  auto count = reinterpret_cast<CountFn>(dlsym(h, "cuDeviceGetCount"));
  auto alloc = reinterpret_cast<AllocFn>(dlsym(h, "cuMemAlloc_v2"));
  auto version = reinterpret_cast<CountFn>(dlsym(h, "cuDriverGetVersion"));
  auto init = reinterpret_cast<InitFn>(dlsym(h, "cuInit"));
  int n = 0, v = 0;
  unsigned long long p = 0;
  int before = count(&n), allocBefore = alloc(&p, 64);
  int versionRc = version(&v), initRc = init(0), after = count(&n);
  int allocAfter = alloc(&p, 64); // no context
  std::fprintf(stderr, "%d %d %d %d %d %d %d\n", before, allocBefore, versionRc,
               v, initRc, after, allocAfter);
  std::exit(0);
}

TEST(CudaEmulator, EverythingWaitsForCuInit) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(callBeforeInit(), testing::ExitedWithCode(0),
              "3 3 0 13000 0 0 201");
}

// In a fresh process: the trace of a session's operations.
[[noreturn]] void traceSession(const std::string &path) {
  std::remove(path.c_str());
  setenv("LINNET_CUDA_EMULATOR_TRACE", path.c_str(), 1);
  std::string error;
  auto fail = [&](const std::string &what) {
    std::fprintf(stderr, "%s\n", what.c_str());
    std::exit(1);
  };
  {
    std::unique_ptr<Device> dev = Device::open(error);
    if (!dev)
      fail(error);
    constexpr int64_t n = 1000;
    std::vector<float> host = iota(n);
    drv::CUdeviceptr x = dev->alloc(n * 4, error);
    int64_t slots[] = {int64_t(x), n};
    if (!x || !dev->copyToDevice(x, host.data(), n * 4, error) ||
        !dev->loadModule(kAddOnePtx, {"add_one"}, error) ||
        !dev->launch(0, 8, 1, 1, 128, 1, 1, 0, slots, 2, error) ||
        !dev->beginCapture(error) ||
        !dev->launch(0, 8, 1, 1, 128, 1, 1, 0, slots, 2, error) ||
        !dev->endCapture(error) || !dev->record(0, error) ||
        !dev->replay(error) || !dev->replay(error) ||
        !dev->copyToHost(host.data(), x, n * 4, error))
      fail(error);
  }
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  auto count = [&](const std::string &prefix) {
    int k = 0;
    for (const std::string &l : lines)
      k += l.rfind(prefix, 0) == 0;
    return k;
  };
  struct Expect {
    const char *prefix;
    int count;
  };
  const Expect expected[] = {
      {"alloc 4000 -> 0x", 1},
      {"htod 4000", 1},
      {"launch add_one grid 8x1x1 block 128x1x1 shared 0", 1},
      {"capture begin", 1},
      {"record launch add_one grid 8x1x1 block 128x1x1 shared 0", 1},
      {"capture end 1 nodes", 1},
      {"event record", 1},
      {"graph launch 1 nodes", 2},
      {"replay launch add_one", 2},
      {"dtoh 4000", 1},
      {"free 0x", 1},
      {"error", 0},
  };
  std::string report;
  for (const Expect &e : expected)
    if (count(e.prefix) != e.count)
      report += std::string(e.prefix) + ": " + std::to_string(count(e.prefix)) +
                " lines, expected " + std::to_string(e.count) + "\n";
  std::remove(path.c_str());
  if (!report.empty()) {
    for (const std::string &l : lines)
      report += "| " + l + "\n";
    fail(report);
  }
  std::exit(0);
}

TEST(CudaEmulator, TraceHasALinePerOperation) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  std::string path = testing::TempDir() + "linnet-emulator-trace-" +
                     std::to_string(getpid()) + ".txt";
  EXPECT_EXIT(traceSession(path), testing::ExitedWithCode(0), "");
}
