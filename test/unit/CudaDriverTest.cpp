#include "linnet/Target/CUDA/Driver.h"

#include "Inputs/emulator-kernels.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <vector>

using namespace linnet::cuda;

namespace {

constexpr const char *kStub = "/usr/local/cuda/lib64/stubs/libcuda.so";

using linnet_emulator_test::kAddOnePtx; // x[i] += 1 over {x, n}: one PTX for the GPU and the emulator

// The session of the GPU tests, or null (the reason in `error`).
std::unique_ptr<Device> openDevice(std::string &error) {
  const Driver *driver = Driver::get(error);
  if (!driver || driver->deviceCount() <= 0)
    return nullptr;
  return Device::open(error);
}

#define OPEN_DEVICE_OR_SKIP(dev)                                               \
  std::string error;                                                           \
  std::unique_ptr<Device> dev = openDevice(error);                             \
  if (!dev)                                                                    \
    GTEST_SKIP() << "no GPU: " << error;

std::vector<float> iota(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = float(i);
  return v;
}

} // namespace

TEST(CudaDriver, MissingLibrarySaysThereIsNoDriver) {
  std::string path = "/nonexistent/linnet-test/libcuda.so.1", error;
  EXPECT_EQ(Driver::loadFrom(path, error), nullptr);
  EXPECT_NE(error.find("no CUDA driver on this machine"), std::string::npos)
      << error;
  EXPECT_NE(error.find(path), std::string::npos) << error;
}

TEST(CudaDriver, ToolkitStubSaysThereIsNoNvidiaDriver) {
  if (!std::filesystem::exists(kStub))
    GTEST_SKIP() << kStub << " is absent";
  std::string error;
  EXPECT_EQ(Driver::loadFrom(kStub, error), nullptr);
  EXPECT_NE(error.find("cuInit failed: CUDA_ERROR_STUB_LIBRARY"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("this machine has no NVIDIA driver"), std::string::npos)
      << error;
}

TEST(CudaDriver, LibraryWithoutTheEntryPointsIsNamed) {
  std::string error;
  EXPECT_EQ(Driver::loadFrom("libm.so.6", error), nullptr);
  EXPECT_NE(error.find("the CUDA driver at "), std::string::npos) << error;
  EXPECT_NE(error.find("libm.so.6 lacks cuGetErrorName"), std::string::npos)
      << error;
}

// In a fresh process: get() fails, twice with the same sentence, printed.
[[noreturn]] void getFromMissingLibcuda() {
  setenv("LINNET_LIBCUDA", "/nonexistent/linnet-env/libcuda.so.1", 1);
  std::string first, second;
  bool failed = !Driver::get(first) && !Driver::get(second);
  std::fprintf(stderr, "%s\n", first.c_str());
  std::exit(failed && first == second ? 0 : 1);
}

// get() loads once per process: LINNET_LIBCUDA is tried in a fresh one
// (the threadsafe style re-executes the test binary, nothing inherited).
TEST(CudaDriver, GetHonoursLinnetLibcuda) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(getFromMissingLibcuda(), testing::ExitedWithCode(0),
              "no CUDA driver on this machine: cannot load "
              "/nonexistent/linnet-env/libcuda.so.1");
}

TEST(CudaDevice, MemoryRoundTrip) {
  OPEN_DEVICE_OR_SKIP(dev);
  EXPECT_GT(dev->ccMajor(), 0);
  EXPECT_FALSE(dev->name().empty());
  constexpr size_t n = 1000;
  std::vector<float> host = iota(n), back(n, -1.0f);
  drv::CUdeviceptr a = dev->alloc(n * 4, error);
  ASSERT_NE(a, 0u) << error;
  ASSERT_TRUE(dev->copyToDevice(a, host.data(), n * 4, error)) << error;
  ASSERT_TRUE(dev->zero(a + 100 * 4, 50 * 4, error)) << error;
  drv::CUdeviceptr b = dev->alloc(n * 4, error);
  ASSERT_NE(b, 0u) << error;
  ASSERT_TRUE(dev->copyDeviceToDevice(b, a, n * 4, error)) << error;
  ASSERT_TRUE(dev->copyToHost(back.data(), b, n * 4, error)) << error;
  for (size_t i = 0; i < n; ++i)
    ASSERT_EQ(back[i], i >= 100 && i < 150 ? 0.0f : float(i)) << "at " << i;

  // Empty requests get distinct blocks; a released block is reused.
  drv::CUdeviceptr e1 = dev->alloc(0, error), e2 = dev->alloc(0, error);
  EXPECT_NE(e1, 0u);
  EXPECT_NE(e2, 0u);
  EXPECT_NE(e1, e2);
  dev->release(b);
  EXPECT_EQ(dev->alloc(n * 4, error), b);
  dev->release(a);
  dev->release(b);
  dev->release(e1);
  dev->release(e2);
  EXPECT_TRUE(dev->synchronize(error)) << error;
}

TEST(CudaDevice, PtxKernelLaunchedWithSlots) {
  OPEN_DEVICE_OR_SKIP(dev);
  ASSERT_TRUE(dev->loadModule(kAddOnePtx, {"add_one"}, error)) << error;
  constexpr int64_t n = 1000;
  std::vector<float> host = iota(n), back(n);
  drv::CUdeviceptr x = dev->alloc(n * 4, error);
  ASSERT_NE(x, 0u) << error;
  ASSERT_TRUE(dev->copyToDevice(x, host.data(), n * 4, error)) << error;
  int64_t slots[] = {int64_t(x), n};
  ASSERT_TRUE(
      dev->launch(0, (n + 127) / 128, 1, 1, 128, 1, 1, 0, slots, 2, error))
      << error;
  ASSERT_TRUE(dev->copyToHost(back.data(), x, n * 4, error)) << error;
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(back[i], float(i) + 1.0f) << "at " << i;

  EXPECT_FALSE(dev->launch(1, 1, 1, 1, 1, 1, 1, 0, slots, 2, error));
  EXPECT_NE(error.find("no kernel 1"), std::string::npos) << error;
  EXPECT_FALSE(dev->loadModule(kAddOnePtx, {"add_two"}, error));
  EXPECT_NE(error.find("add_two"), std::string::npos) << error;
  EXPECT_FALSE(dev->loadModule(".version 6.0\n.target sm_52\nnonsense;\n",
                               {"add_one"}, error));
  EXPECT_NE(error.find("cuModuleLoadDataEx failed"), std::string::npos)
      << error;
  dev->release(x);
}

TEST(CudaDevice, CapturedGraphReplaysAndEventsTimeIt) {
  OPEN_DEVICE_OR_SKIP(dev);
  ASSERT_TRUE(dev->loadModule(kAddOnePtx, {"add_one"}, error)) << error;
  constexpr int64_t n = 4096;
  std::vector<float> host = iota(n), back(n);
  drv::CUdeviceptr x = dev->alloc(n * 4, error);
  ASSERT_NE(x, 0u) << error;
  ASSERT_TRUE(dev->copyToDevice(x, host.data(), n * 4, error)) << error;
  ASSERT_TRUE(dev->synchronize(error)) << error;
  int64_t slots[] = {int64_t(x), n};
  ASSERT_TRUE(dev->beginCapture(error)) << error;
  ASSERT_TRUE(dev->launch(0, n / 256, 1, 1, 256, 1, 1, 0, slots, 2, error))
      << error;
  ASSERT_TRUE(dev->endCapture(error)) << error;
  ASSERT_TRUE(dev->record(0, error)) << error;
  ASSERT_TRUE(dev->replay(error)) << error;
  ASSERT_TRUE(dev->replay(error)) << error;
  ASSERT_TRUE(dev->record(1, error)) << error;
  float ms = -1;
  ASSERT_TRUE(dev->elapsedMs(0, 1, ms, error)) << error;
  EXPECT_GE(ms, 0.0f);
  ASSERT_TRUE(dev->copyToHost(back.data(), x, n * 4, error)) << error;
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(back[i], float(i) + 2.0f) << "at " << i;
  EXPECT_FALSE(dev->elapsedMs(0, 7, ms, error));
  dev->release(x);
}
