//===- Driver.cpp - The CUDA driver API, loaded at run time ---------------===//
//
// libcuda.so.1 is opened with dlopen and its entry points resolved by their
// ABI names (LINNET_CUDA_DRIVER_SYMBOLS); the constants of the API used here
// are spelled out below with their cuda.h names.
//
// Device keeps every operation on its one non-blocking stream: the async
// copies and fills (never the synchronous cuMemcpy/cuMemset, which run on
// the legacy stream and do not order with a non-blocking one, and which a
// graph capture rejects) and the launches. That order is what makes the
// block cache safe: a released block handed out again is used only by work
// enqueued after the work that used it before.
//
//===----------------------------------------------------------------------===//
#include "linnet/Target/CUDA/Driver.h"

#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <set>
#include <unordered_map>

#include <dlfcn.h>
#include <link.h>

using namespace linnet::cuda;
using namespace linnet::cuda::drv;

namespace {

// cuda.h's values of the constants used here.
constexpr CUresult kSuccess = 0;      // CUDA_SUCCESS
constexpr CUresult kOutOfMemory = 2;  // CUDA_ERROR_OUT_OF_MEMORY
constexpr CUresult kStubLibrary = 34; // CUDA_ERROR_STUB_LIBRARY
constexpr CUresult kNoDevice = 100;   // CUDA_ERROR_NO_DEVICE
constexpr int kAttrCcMajor = 75; // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
constexpr int kAttrCcMinor = 76; // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR
constexpr int kAttrSharedOptin = 97; // ..._MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
constexpr int kFuncAttrMaxDynShared = 8;   // ..._MAX_DYNAMIC_SHARED_SIZE_BYTES
constexpr int kJitErrorLogBuffer = 5;      // CU_JIT_ERROR_LOG_BUFFER
constexpr int kJitErrorLogBufferSize = 6;  // ..._ERROR_LOG_BUFFER_SIZE_BYTES
constexpr unsigned kStreamNonBlocking = 1; // CU_STREAM_NON_BLOCKING
constexpr unsigned kEventDefault = 0;      // CU_EVENT_DEFAULT
constexpr int kCaptureThreadLocal = 1; // CU_STREAM_CAPTURE_MODE_THREAD_LOCAL
// Dynamic shared memory a kernel may use without opting in.
constexpr unsigned kDefaultSharedLimit = 48 * 1024;

// Names for when the driver cannot name an error (the stub names nothing).
const char *knownErrorName(CUresult r) {
  // clang-format off
  switch (r) {
  case 1: return "CUDA_ERROR_INVALID_VALUE";
  case 2: return "CUDA_ERROR_OUT_OF_MEMORY";
  case 3: return "CUDA_ERROR_NOT_INITIALIZED";
  case 4: return "CUDA_ERROR_DEINITIALIZED";
  case 34: return "CUDA_ERROR_STUB_LIBRARY";
  case 36: return "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER";
  case 100: return "CUDA_ERROR_NO_DEVICE";
  case 101: return "CUDA_ERROR_INVALID_DEVICE";
  case 200: return "CUDA_ERROR_INVALID_IMAGE";
  case 201: return "CUDA_ERROR_INVALID_CONTEXT";
  case 209: return "CUDA_ERROR_NO_BINARY_FOR_GPU";
  case 218: return "CUDA_ERROR_INVALID_PTX";
  case 221: return "CUDA_ERROR_JIT_COMPILER_NOT_FOUND";
  case 222: return "CUDA_ERROR_UNSUPPORTED_PTX_VERSION";
  case 400: return "CUDA_ERROR_INVALID_HANDLE";
  case 500: return "CUDA_ERROR_NOT_FOUND";
  case 700: return "CUDA_ERROR_ILLEGAL_ADDRESS";
  case 701: return "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES";
  case 900: return "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED";
  case 999: return "CUDA_ERROR_UNKNOWN";
  default: return nullptr;
  }
  // clang-format on
}

template <typename F> bool resolve(void *handle, const char *name, F &fn) {
  fn = reinterpret_cast<F>(dlsym(handle, name));
  return fn != nullptr;
}

// "cuMemAlloc_v2" -> "cuMemAlloc": errors name the call as users know it.
std::string callName(const char *symbol) {
  std::string_view s(symbol);
  if (s.size() > 3 && s.substr(s.size() - 3) == "_v2")
    s.remove_suffix(3);
  return std::string(s);
}

} // namespace

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

const Driver *Driver::get(std::string &error) {
  struct Loaded {
    const Driver *driver;
    std::string error;
  };
  // Loaded once per process and never unloaded: contexts and modules of
  // the driver live as long as the process.
  static const Loaded loaded = [] {
    const char *env = std::getenv("LINNET_LIBCUDA");
    std::string path = env && *env ? env : "libcuda.so.1", err;
    std::unique_ptr<Driver> driver = loadFrom(path, err);
    return Loaded{driver.release(), err};
  }();
  if (!loaded.driver)
    error = loaded.error;
  return loaded.driver;
}

std::unique_ptr<Driver> Driver::loadFrom(const std::string &path,
                                         std::string &error) {
  std::unique_ptr<Driver> d(new Driver);
  dlerror();
  d->handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!d->handle_) {
    const char *why = dlerror();
    error = "no CUDA driver on this machine: cannot load " + path + " (" +
            (why ? why : "unknown reason") + ")";
    return nullptr;
  }
  d->path_ = path;
  struct link_map *map = nullptr;
  if (dlinfo(d->handle_, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name &&
      *map->l_name)
    d->path_ = map->l_name;

#define LINNET_CUDA_DRIVER_RESOLVE(name, ...)                                  \
  if (!resolve(d->handle_, #name, d->name)) {                                  \
    error = "the CUDA driver at " + d->path_ + " lacks " #name;                \
    return nullptr;                                                            \
  }
  LINNET_CUDA_DRIVER_SYMBOLS(LINNET_CUDA_DRIVER_RESOLVE)
#undef LINNET_CUDA_DRIVER_RESOLVE

  if (CUresult r = d->cuInit(0); r != kSuccess) {
    if (r == kStubLibrary)
      error = "cuInit failed: CUDA_ERROR_STUB_LIBRARY (the CUDA driver "
              "library is the toolkit's stub: this machine has no NVIDIA "
              "driver)";
    else if (r == kNoDevice)
      error = "cuInit failed: CUDA_ERROR_NO_DEVICE (the NVIDIA driver finds "
              "no CUDA device on this machine)";
    else
      error = "cuInit failed: " + d->describe(r);
    return nullptr;
  }
  d->initialized_ = true;
  if (CUresult r = d->cuDriverGetVersion(&d->version_); r != kSuccess) {
    error = "cuDriverGetVersion failed: " + d->describe(r);
    return nullptr;
  }
  if (CUresult r = d->cuDeviceGetCount(&d->deviceCount_); r != kSuccess) {
    error = "cuDeviceGetCount failed: " + d->describe(r);
    return nullptr;
  }
  if (d->deviceCount_ <= 0) {
    error = "the CUDA driver reports no device";
    return nullptr;
  }
  return d;
}

Driver::~Driver() {
  // An initialized driver has started threads of its own and may hold
  // contexts: unloading it under them is not safe, so it stays loaded.
  if (handle_ && !initialized_)
    dlclose(handle_);
}

std::string Driver::describe(CUresult result) const {
  const char *name = nullptr, *text = nullptr;
  if (cuGetErrorName && cuGetErrorName(result, &name) != kSuccess)
    name = nullptr;
  if (cuGetErrorString && cuGetErrorString(result, &text) != kSuccess)
    text = nullptr;
  if (!name)
    name = knownErrorName(result);
  std::string out =
      name ? std::string(name) : "CUDA error " + std::to_string(result);
  if (text && *text)
    out += std::string(": ") + text;
  return out;
}

//===----------------------------------------------------------------------===//
// Device
//===----------------------------------------------------------------------===//

struct Device::State {
  const Driver *d = nullptr;
  CUdevice dev = 0;
  CUcontext ctx = nullptr;
  bool ctxRetained = false;
  CUstream stream = nullptr;
  std::string name;
  int major = 0, minor = 0;
  unsigned sharedOptin = kDefaultSharedLimit;

  struct Kernel {
    CUfunction fn;
    std::string name;
    unsigned sharedLimit; // dynamic shared memory opted into so far
  };
  std::vector<CUmodule> modules;
  std::vector<Kernel> kernels;
  std::vector<void *> params; // reused by every launch

  // Every block alloc() made, by address: its size and whether it is out.
  struct Block {
    size_t size;
    bool live;
  };
  std::unordered_map<CUdeviceptr, Block> blocks;
  // Released blocks by size, each size's lowest address handed out first:
  // the same allocations in the same order get the same addresses on every
  // call, whatever order they were released in, so a call's launches repeat
  // exactly and replay as a CUDA graph.
  std::unordered_map<size_t, std::set<CUdeviceptr>> freeBySize;
  // Blocks released during a capture: the graph may use their addresses on
  // every replay, so they are reused only within the capture, then kept
  // for the graph until it is replaced.
  std::vector<CUdeviceptr> captureFree, graphBlocks;

  std::vector<CUevent> events; // by index, null until first recorded

  bool capturing = false;
  CUgraph graph = nullptr;
  CUgraphExec exec = nullptr;
  // captureGraph's graphs, by slot.
  std::vector<CUgraphExec> execs;

  ~State();

  // Reports a failed call: "<call> failed[ (detail)]: <describe>". A
  // computed detail is passed as a callable: the successful path (every
  // launch, copy, allocation) builds no string.
  bool check(CUresult r, const char *symbol, std::string &error) const {
    return check(r, symbol, error, "");
  }
  template <typename Detail>
  bool check(CUresult r, const char *symbol, std::string &error,
             Detail &&detail) const {
    if (r == kSuccess)
      return true;
    error = callName(symbol) + " failed";
    std::string text;
    if constexpr (std::is_invocable_v<Detail>)
      text = detail();
    else
      text = detail;
    if (!text.empty())
      error += " (" + text + ")";
    error += ": " + d->describe(r);
    return false;
  }
  // The context is per thread: made current for each call, so a Device
  // may move between threads (used by one at a time).
  bool makeCurrent(std::string &error) const {
    return check(d->cuCtxSetCurrent(ctx), "cuCtxSetCurrent", error);
  }
  void returnBlocks(std::vector<CUdeviceptr> &ptrs) {
    for (CUdeviceptr p : ptrs)
      freeBySize[blocks[p].size].insert(p);
    ptrs.clear();
  }
  void dropGraph() {
    if (exec)
      d->cuGraphExecDestroy(exec);
    if (graph)
      d->cuGraphDestroy(graph);
    exec = nullptr;
    graph = nullptr;
    returnBlocks(graphBlocks);
  }
  // Frees the cached blocks, after the work that may still use them.
  bool trimCache() {
    if (d->cuStreamSynchronize(stream) != kSuccess)
      return false;
    bool freed = false;
    for (auto &[size, ptrs] : freeBySize) {
      for (CUdeviceptr p : ptrs) {
        d->cuMemFree_v2(p);
        blocks.erase(p);
        freed = true;
      }
      ptrs.clear();
    }
    return freed;
  }
};

Device::State::~State() {
  if (!ctx)
    return;
  d->cuCtxSetCurrent(ctx);
  if (capturing) {
    CUgraph abandoned = nullptr;
    if (d->cuStreamEndCapture(stream, &abandoned) == kSuccess && abandoned)
      d->cuGraphDestroy(abandoned);
  }
  if (stream)
    d->cuStreamSynchronize(stream);
  dropGraph();
  for (CUgraphExec e : execs)
    if (e)
      d->cuGraphExecDestroy(e);
  for (CUevent e : events)
    if (e)
      d->cuEventDestroy_v2(e);
  for (auto &[ptr, block] : blocks)
    d->cuMemFree_v2(ptr);
  for (CUmodule m : modules)
    d->cuModuleUnload(m);
  if (stream)
    d->cuStreamDestroy_v2(stream);
  if (ctxRetained)
    d->cuDevicePrimaryCtxRelease_v2(dev);
}

Device::Device(std::unique_ptr<State> state) : s_(std::move(state)) {}
Device::~Device() = default;
Device::Device(Device &&) noexcept = default;
Device &Device::operator=(Device &&) noexcept = default;

std::unique_ptr<Device> Device::open(std::string &error) {
  const Driver *d = Driver::get(error);
  if (!d)
    return nullptr;
  auto s = std::make_unique<State>();
  s->d = d;
  if (!s->check(d->cuDeviceGet(&s->dev, 0), "cuDeviceGet", error))
    return nullptr;
  char name[256] = {};
  if (!s->check(d->cuDeviceGetName(name, sizeof name - 1, s->dev),
                "cuDeviceGetName", error))
    return nullptr;
  s->name = name;
  int optin = 0;
  if (!s->check(d->cuDeviceGetAttribute(&s->major, kAttrCcMajor, s->dev),
                "cuDeviceGetAttribute", error, "compute capability") ||
      !s->check(d->cuDeviceGetAttribute(&s->minor, kAttrCcMinor, s->dev),
                "cuDeviceGetAttribute", error, "compute capability") ||
      !s->check(d->cuDeviceGetAttribute(&optin, kAttrSharedOptin, s->dev),
                "cuDeviceGetAttribute", error, "shared memory opt-in"))
    return nullptr;
  if (optin > 0)
    s->sharedOptin = static_cast<unsigned>(optin);
  if (!s->check(d->cuDevicePrimaryCtxRetain(&s->ctx, s->dev),
                "cuDevicePrimaryCtxRetain", error))
    return nullptr;
  s->ctxRetained = true;
  if (!s->makeCurrent(error) ||
      !s->check(d->cuStreamCreate(&s->stream, kStreamNonBlocking),
                "cuStreamCreate", error))
    return nullptr;
  return std::unique_ptr<Device>(new Device(std::move(s)));
}

const Driver &Device::driver() const { return *s_->d; }
const std::string &Device::name() const { return s_->name; }
int Device::ccMajor() const { return s_->major; }
int Device::ccMinor() const { return s_->minor; }
CUstream Device::stream() const { return s_->stream; }

bool Device::loadModule(std::string_view image,
                        const std::vector<std::string> &kernelNames,
                        std::string &error) {
  State &s = *s_;
  const Driver *d = s.d;
  if (image.empty()) {
    error = "cannot load an empty CUDA module image";
    return false;
  }
  if (!s.makeCurrent(error))
    return false;
  // PTX is read up to its NUL, which a string_view need not have.
  std::string text(image);
  std::string log(16 * 1024, '\0');
  int options[] = {kJitErrorLogBuffer, kJitErrorLogBufferSize};
  void *values[] = {log.data(),
                    reinterpret_cast<void *>(uintptr_t(log.size() - 1))};
  CUmodule module = nullptr;
  if (CUresult r =
          d->cuModuleLoadDataEx(&module, text.data(), 2, options, values);
      r != kSuccess) {
    error = "cuModuleLoadDataEx failed: " + d->describe(r);
    log.resize(std::strlen(log.c_str()));
    while (!log.empty() && (log.back() == '\n' || log.back() == ' '))
      log.pop_back();
    if (!log.empty())
      error += "; the driver's JIT log: " + log;
    return false;
  }
  std::vector<State::Kernel> found;
  for (const std::string &kernel : kernelNames) {
    CUfunction fn = nullptr;
    if (!s.check(d->cuModuleGetFunction(&fn, module, kernel.c_str()),
                 "cuModuleGetFunction", error,
                 [&] { return "kernel " + kernel; })) {
      d->cuModuleUnload(module);
      return false;
    }
    found.push_back({fn, kernel, kDefaultSharedLimit});
  }
  s.modules.push_back(module);
  s.kernels.insert(s.kernels.end(), found.begin(), found.end());
  return true;
}

bool Device::launch(int64_t kernel, unsigned gx, unsigned gy, unsigned gz,
                    unsigned bx, unsigned by, unsigned bz, unsigned sharedBytes,
                    const int64_t *slots, int64_t nslots, std::string &error) {
  State &s = *s_;
  const Driver *d = s.d;
  if (kernel < 0 || kernel >= int64_t(s.kernels.size())) {
    error = "no kernel " + std::to_string(kernel) + " to launch (" +
            std::to_string(s.kernels.size()) + " loaded)";
    return false;
  }
  State::Kernel &k = s.kernels[size_t(kernel)];
  if (nslots < 0 || (nslots > 0 && !slots)) {
    error = "kernel " + k.name + " launched with " + std::to_string(nslots) +
            " parameter slots";
    return false;
  }
  if (!s.makeCurrent(error))
    return false;
  if (sharedBytes > k.sharedLimit) {
    if (sharedBytes > s.sharedOptin) {
      error = "kernel " + k.name + " asks for " + std::to_string(sharedBytes) +
              " bytes of shared memory; " + s.name + " allows at most " +
              std::to_string(s.sharedOptin);
      return false;
    }
    if (!s.check(d->cuFuncSetAttribute(k.fn, kFuncAttrMaxDynShared,
                                       int(sharedBytes)),
                 "cuFuncSetAttribute", error, [&] {
                   return "kernel " + k.name + ", " +
                          std::to_string(sharedBytes) +
                          " bytes of dynamic shared memory";
                 }))
      return false;
    k.sharedLimit = sharedBytes;
  }
  s.params.resize(size_t(nslots));
  for (int64_t i = 0; i < nslots; ++i)
    s.params[size_t(i)] = const_cast<int64_t *>(slots + i);
  CUresult r = d->cuLaunchKernel(k.fn, gx, gy, gz, bx, by, bz, sharedBytes,
                                 s.stream, s.params.data(), nullptr);
  if (r == kSuccess)
    return true;
  return s.check(r, "cuLaunchKernel", error, [&] {
    return "kernel " + k.name + ", grid " + std::to_string(gx) + "x" +
           std::to_string(gy) + "x" + std::to_string(gz) + ", block " +
           std::to_string(bx) + "x" + std::to_string(by) + "x" +
           std::to_string(bz) + ", " + std::to_string(sharedBytes) +
           " bytes shared";
  });
}

CUdeviceptr Device::alloc(size_t bytes, std::string &error, bool mayTrim) {
  State &s = *s_;
  const Driver *d = s.d;
  size_t size = bytes ? bytes : 1;
  auto take = [&](std::vector<CUdeviceptr> &list) {
    CUdeviceptr p = list.back();
    list.pop_back();
    s.blocks[p].live = true;
    return p;
  };
  if (s.capturing) {
    for (size_t i = s.captureFree.size(); i-- > 0;)
      if (s.blocks[s.captureFree[i]].size == size) {
        std::swap(s.captureFree[i], s.captureFree.back());
        return take(s.captureFree);
      }
  }
  if (auto it = s.freeBySize.find(size);
      it != s.freeBySize.end() && !it->second.empty()) {
    CUdeviceptr p = *it->second.begin();
    it->second.erase(it->second.begin());
    s.blocks[p].live = true;
    return p;
  }
  if (s.capturing) {
    error = "cannot allocate " + std::to_string(bytes) +
            " bytes of device memory while capturing a CUDA graph: no "
            "released block of that size (allocate before capturing)";
    return 0;
  }
  if (!s.makeCurrent(error))
    return 0;
  CUdeviceptr p = 0;
  CUresult r = d->cuMemAlloc_v2(&p, size);
  if (r == kOutOfMemory && mayTrim && s.trimCache())
    r = d->cuMemAlloc_v2(&p, size);
  if (!s.check(r, "cuMemAlloc_v2", error,
               [&] { return std::to_string(bytes) + " bytes"; }))
    return 0;
  s.blocks[p] = {size, true};
  return p;
}

void Device::release(CUdeviceptr ptr) {
  State &s = *s_;
  auto it = s.blocks.find(ptr);
  if (ptr == 0 || it == s.blocks.end() || !it->second.live)
    return;
  it->second.live = false;
  if (s.capturing)
    s.captureFree.push_back(ptr);
  else
    s.freeBySize[it->second.size].insert(ptr);
}

namespace {
/// One stream-ordered transfer of `bytes` (none for zero bytes): `call`
/// returns the driver's result, `symbol` names it in the error.
template <typename SessionState, typename Call>
bool transfer(const SessionState &s, size_t bytes, const char *symbol, std::string &error, Call &&call) {
  if (bytes == 0)
    return true;
  return s.makeCurrent(error) &&
         s.check(call(), symbol, error, [&] { return std::to_string(bytes) + " bytes"; });
}
} // namespace

bool Device::copyToDevice(CUdeviceptr dst, const void *src, size_t bytes,
                          std::string &error) {
  const State &s = *s_;
  return transfer(s, bytes, "cuMemcpyHtoDAsync_v2", error,
                  [&] { return s.d->cuMemcpyHtoDAsync_v2(dst, src, bytes, s.stream); });
}

bool Device::copyToHost(void *dst, CUdeviceptr src, size_t bytes,
                        std::string &error) {
  const State &s = *s_;
  return transfer(s, bytes, "cuMemcpyDtoHAsync_v2", error,
                  [&] { return s.d->cuMemcpyDtoHAsync_v2(dst, src, bytes, s.stream); }) &&
         (bytes == 0 || s.check(s.d->cuStreamSynchronize(s.stream), "cuStreamSynchronize", error,
                                "after a copy to the host"));
}

bool Device::copyDeviceToDevice(CUdeviceptr dst, CUdeviceptr src, size_t bytes,
                                std::string &error) {
  const State &s = *s_;
  return transfer(s, bytes, "cuMemcpyDtoDAsync_v2", error,
                  [&] { return s.d->cuMemcpyDtoDAsync_v2(dst, src, bytes, s.stream); });
}

bool Device::zero(CUdeviceptr dst, size_t bytes, std::string &error) {
  const State &s = *s_;
  return transfer(s, bytes, "cuMemsetD8Async", error,
                  [&] { return s.d->cuMemsetD8Async(dst, 0, bytes, s.stream); });
}

CUdeviceptr Device::global(const std::string &name, size_t &bytes) const {
  const State &s = *s_;
  std::string error;
  if (!s.makeCurrent(error))
    return 0;
  for (CUmodule m : s.modules) {
    CUdeviceptr ptr = 0;
    size_t size = 0;
    if (s.d->cuModuleGetGlobal_v2(&ptr, &size, m, name.c_str()) == kSuccess) {
      bytes = size;
      return ptr;
    }
  }
  return 0;
}

bool Device::synchronize(std::string &error) {
  const State &s = *s_;
  return s.makeCurrent(error) && s.check(s.d->cuStreamSynchronize(s.stream),
                                         "cuStreamSynchronize", error);
}

bool Device::record(int idx, std::string &error) {
  State &s = *s_;
  const Driver *d = s.d;
  if (idx < 0) {
    error = "event index " + std::to_string(idx) + " is negative";
    return false;
  }
  if (!s.makeCurrent(error))
    return false;
  if (size_t(idx) >= s.events.size())
    s.events.resize(size_t(idx) + 1, nullptr);
  CUevent &e = s.events[size_t(idx)];
  if (!e &&
      !s.check(d->cuEventCreate(&e, kEventDefault), "cuEventCreate", error))
    return false;
  return s.check(d->cuEventRecord(e, s.stream), "cuEventRecord", error,
                 [&] { return "event " + std::to_string(idx); });
}

bool Device::elapsedMs(int from, int to, float &ms, std::string &error) {
  State &s = *s_;
  const Driver *d = s.d;
  for (int idx : {from, to})
    if (idx < 0 || size_t(idx) >= s.events.size() || !s.events[size_t(idx)]) {
      error = "event " + std::to_string(idx) + " was never recorded";
      return false;
    }
  CUevent start = s.events[size_t(from)], end = s.events[size_t(to)];
  return s.makeCurrent(error) &&
         s.check(d->cuEventSynchronize(end), "cuEventSynchronize", error,
                 [&] { return "event " + std::to_string(to); }) &&
         s.check(d->cuEventElapsedTime(&ms, start, end), "cuEventElapsedTime",
                 error, [&] {
                   return "events " + std::to_string(from) + " to " +
                          std::to_string(to);
                 });
}

bool Device::beginCapture(std::string &error) {
  State &s = *s_;
  if (s.capturing) {
    error = "a CUDA graph capture is already under way";
    return false;
  }
  if (!s.makeCurrent(error) ||
      !s.check(s.d->cuStreamBeginCapture_v2(s.stream, kCaptureThreadLocal),
               "cuStreamBeginCapture_v2", error))
    return false;
  s.capturing = true;
  return true;
}

bool Device::endCapture(std::string &error) {
  State &s = *s_;
  const Driver *d = s.d;
  if (!s.capturing) {
    error = "no CUDA graph capture is under way";
    return false;
  }
  if (!s.makeCurrent(error))
    return false;
  s.capturing = false;
  CUgraph graph = nullptr;
  CUgraphExec exec = nullptr;
  if (!s.check(d->cuStreamEndCapture(s.stream, &graph), "cuStreamEndCapture",
               error) ||
      !s.check(d->cuGraphInstantiateWithFlags(&exec, graph, 0),
               "cuGraphInstantiateWithFlags", error)) {
    if (graph)
      d->cuGraphDestroy(graph);
    s.returnBlocks(s.captureFree); // no graph refers to them
    return false;
  }
  // The previous graph may still be running: its exec is freed when it
  // ends, and its blocks are reused only by work enqueued after it.
  s.dropGraph();
  s.graph = graph;
  s.exec = exec;
  s.graphBlocks.swap(s.captureFree);
  return true;
}

bool Device::replay(std::string &error) {
  const State &s = *s_;
  if (!s.exec) {
    error = "no CUDA graph to replay: none was captured";
    return false;
  }
  return s.makeCurrent(error) &&
         s.check(s.d->cuGraphLaunch(s.exec, s.stream), "cuGraphLaunch", error);
}

bool Device::captureGraph(size_t slot, const std::function<bool(std::string &)> &enqueue, bool &updated,
                          std::string &error) {
  State &s = *s_;
  const Driver *d = s.d;
  updated = false;
  if (s.capturing) {
    error = "a CUDA graph capture is already under way";
    return false;
  }
  if (!s.makeCurrent(error) ||
      !s.check(d->cuStreamBeginCapture_v2(s.stream, kCaptureThreadLocal), "cuStreamBeginCapture_v2", error))
    return false;
  // alloc() refuses new memory while `capturing`: enqueue must not allocate.
  s.capturing = true;
  std::string enqueueError;
  bool enqueued = enqueue(enqueueError);
  s.capturing = false;
  s.returnBlocks(s.captureFree);
  CUgraph graph = nullptr;
  CUresult ended = d->cuStreamEndCapture(s.stream, &graph);
  if (!enqueued) {
    if (graph)
      d->cuGraphDestroy(graph);
    error = enqueueError;
    return false;
  }
  if (!s.check(ended, "cuStreamEndCapture", error))
    return false;
  if (s.execs.size() <= slot)
    s.execs.resize(slot + 1, nullptr);
  CUgraphExec &exec = s.execs[slot];
  // CUgraphExecUpdateResultInfo: the result and two nodes (24 bytes).
  alignas(8) unsigned char info[32] = {};
  if (exec && d->cuGraphExecUpdate_v2(exec, graph, info) == kSuccess) {
    updated = true;
  } else {
    CUgraphExec fresh = nullptr;
    if (!s.check(d->cuGraphInstantiateWithFlags(&fresh, graph, 0), "cuGraphInstantiateWithFlags", error)) {
      d->cuGraphDestroy(graph);
      return false;
    }
    // A graph launched before may still run: the driver frees its exec
    // when it ends.
    if (exec)
      d->cuGraphExecDestroy(exec);
    exec = fresh;
  }
  d->cuGraphDestroy(graph); // the exec keeps what it needs
  return true;
}

bool Device::launchGraph(size_t slot, std::string &error) {
  State &s = *s_;
  if (slot >= s.execs.size() || !s.execs[slot]) {
    error = "no CUDA graph " + std::to_string(slot) + " to launch: none was captured";
    return false;
  }
  return s.makeCurrent(error) && s.check(s.d->cuGraphLaunch(s.execs[slot], s.stream), "cuGraphLaunch", error);
}
