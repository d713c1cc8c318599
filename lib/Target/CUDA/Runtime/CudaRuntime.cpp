//===- CudaRuntime.cpp - The runtime's CUDA device backend -----------------===//
//
// A session per loaded artifact: one device, the artifact's module, the
// bound tensors in device memory. model.so's host code runs on the host
// thread and calls back through its host table for every launch,
// allocation and read-back; errors there are sticky and reported when the
// entry returns (host code cannot unwind).
//
//===----------------------------------------------------------------------===//

#include "linnet/Target/CUDA/CudaRuntime.h"

#include "linnet/Runtime/Artifact.h"
#include "linnet/Runtime/Runtime.h"
#include "linnet/Target/CUDA/Abi.h"
#include "linnet/Target/CUDA/Driver.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <type_traits>

namespace linnet::cuda {
namespace {

using drv::CUdeviceptr;

/// cuBLAS, loaded once per process with dlopen ($LINNET_CUBLAS, else
/// libcublas.so.13 or .12): it is not part of the CUDA driver, so a machine
/// may well lack it, and the artifacts' library calls then fall back to
/// their generated kernels (docs/cuda-abi.md, "Library calls").
struct Cublas {
  using Handle = void *;
  int (*create)(Handle *) = nullptr;
  int (*destroy)(Handle) = nullptr;
  int (*setStream)(Handle, void *) = nullptr;
  int (*sgemm)(Handle, int, int, int, int, int, const float *, const float *, int, const float *, int,
               const float *, float *, int) = nullptr;
  /// cublasGemmEx (optional: half products run their generated kernels
  /// without it).
  int (*gemmEx)(Handle, int, int, int, int, int, const void *, const void *, int, int, const void *, int, int,
                const void *, void *, int, int, int, int) = nullptr;
  std::string path, error;

  static const Cublas &get() {
    static const Cublas lib = load();
    return lib;
  }
  bool available() const { return sgemm != nullptr; }

private:
  static Cublas load() {
    Cublas c;
    std::vector<std::string> names;
    if (const char *env = std::getenv("LINNET_CUBLAS"); env && *env) {
      if (std::string(env) == "none") {
        c.error = "disabled by LINNET_CUBLAS=none";
        return c;
      }
      names.push_back(env);
    } else {
      names = {kCublasSoname, "libcublas.so.12", "libcublas.so"};
    }
    void *h = nullptr;
    for (const std::string &n : names)
      if ((h = ::dlopen(n.c_str(), RTLD_NOW | RTLD_LOCAL))) {
        c.path = n;
        break;
      }
    if (!h) {
      const char *why = ::dlerror();
      c.error = fmt::format("cannot load {}: {}", names.front(), why ? why : "not found");
      return c;
    }
    auto sym = [&](auto &fn, const char *name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(::dlsym(h, name));
      return fn != nullptr;
    };
    if (!sym(c.create, "cublasCreate_v2") || !sym(c.destroy, "cublasDestroy_v2") ||
        !sym(c.setStream, "cublasSetStream_v2") || !sym(c.sgemm, "cublasSgemm_v2")) {
      c.error = c.path + " lacks the cuBLAS v2 entry points";
      c.sgemm = nullptr;
      return c;
    }
    sym(c.gemmEx, "cublasGemmEx");
    return c;
  }
};

class CudaSession final : public rt::DeviceSession {
public:
  static std::unique_ptr<rt::DeviceSession> open(const rt::VerifiedArtifact &art, const rt::ArtifactInfo &info,
                                                 void *library, std::string &error) {
    const std::string where = art.dir() + "/runtime.json: device";
    nlohmann::json desc = nlohmann::json::parse(info.device, nullptr, /*allow_exceptions=*/false);
    auto file = [&](const char *key, std::string &out) {
      if (!desc.is_object() || !desc.contains(key) || !desc[key].is_string()) {
        error = fmt::format("{}.{}: expected a file name", where, key);
        return false;
      }
      out = desc[key].get<std::string>();
      return true;
    };
    std::string kernelsFile, moduleFile, ptxFile;
    if (!file("kernels", kernelsFile) || !file("module", moduleFile) || !file("ptx", ptxFile))
      return nullptr;
    std::string tableText;
    if (!art.read(kernelsFile, tableText, error))
      return nullptr;
    nlohmann::json table = nlohmann::json::parse(tableText, nullptr, false);
    if (!table.is_object() || table.value("schema", "") != kKernelTableSchema || !table["kernels"].is_array()) {
      error = fmt::format("{}/{}: not a kernel table ({})", art.dir(), kernelsFile, kKernelTableSchema);
      return nullptr;
    }
    std::vector<std::string> names;
    for (const nlohmann::json &k : table["kernels"]) {
      if (!k.is_object() || !k["name"].is_string() || !k["id"].is_number_integer() ||
          k["id"].get<int64_t>() != int64_t(names.size())) {
        error = fmt::format("{}/{}: kernels[{}]: expected {{id: {}, name}}", art.dir(), kernelsFile, names.size(),
                            names.size());
        return nullptr;
      }
      names.push_back(k["name"].get<std::string>());
    }
    auto *host = static_cast<HostTable *>(::dlsym(library, kHostTableSymbol));
    if (!host) {
      error = fmt::format("{}/{}: a CUDA artifact's library without its host table '{}'", art.dir(), info.library,
                          kHostTableSymbol);
      return nullptr;
    }
    std::unique_ptr<CudaSession> s(new CudaSession());
    s->device_ = Device::open(error);
    if (!s->device_) {
      error = "cannot run a CUDA artifact here: " + error;
      return nullptr;
    }
    // The cubin first; the PTX (JIT-compiled by the driver) where the
    // cubin does not load (another architecture).
    std::string image, cubinError;
    if (!art.read(moduleFile, image, error))
      return nullptr;
    if (!s->device_->loadModule(image, names, cubinError)) {
      if (moduleFile == ptxFile) {
        error = fmt::format("{}/{}: {}", art.dir(), moduleFile, cubinError);
        return nullptr;
      }
      std::string ptx, ptxError;
      if (!art.read(ptxFile, ptx, error))
        return nullptr;
      ptx.push_back('\0');
      if (!s->device_->loadModule(ptx, names, ptxError)) {
        error = fmt::format("{}/{}: {}; {}/{}: {}", art.dir(), moduleFile, cubinError, art.dir(), ptxFile, ptxError);
        return nullptr;
      }
    }
    // Run-time checks (an index against its bound) fail on the device: the
    // kernels write the device's copy of the status word, which each call
    // brings back into the library's, where the runtime reads it.
    if (void *status = ::dlsym(library, "linnet_status")) {
      size_t bytes = 0;
      if (CUdeviceptr dev = s->device_->global("linnet_status", bytes); dev && bytes == kStatusBytes) {
        s->hostStatus_ = status;
        s->deviceStatus_ = dev;
      }
    }
    s->host_ = host;
    // Profiled commands are events between launches: each enqueued as it
    // comes, no graph.
    s->profiling_ = !info.profileTasks.empty();
    *host = HostTable{kHostTableVersion,      s.get(),
                      &CudaSession::launchHook, &CudaSession::copyHook,
                      &CudaSession::allocHook,  &CudaSession::releaseHook,
                      &CudaSession::sgemmHook,  &CudaSession::markHook,
                      &CudaSession::profileTakeHook, &CudaSession::gemmHook,
                      &CudaSession::copyToDeviceHook};
    return s;
  }

  ~CudaSession() override {
    if (host_)
      *host_ = HostTable{};
    if (blas_)
      Cublas::get().destroy(blas_);
    for (CUdeviceptr p : bound_)
      device_->release(p);
  }

  bool bind(const std::vector<rt::TensorView> &bound, std::string &error) override {
    for (const rt::TensorView &v : bound) {
      CUdeviceptr p = device_->alloc(v.data.size(), error);
      if (!p || !device_->copyToDevice(p, v.data.data(), v.data.size(), error))
        return false;
      bound_.push_back(p);
      boundShapes_.push_back(v.shape);
    }
    return device_->synchronize(error);
  }

  bool call(void (*fn)(void **), const std::vector<rt::TensorView> &inputs, std::vector<rt::OwnedTensor> &results,
            std::string &error) override {
    std::vector<CUdeviceptr> temporaries;
    auto cleanup = [&] {
      for (CUdeviceptr p : temporaries)
        device_->release(p);
      inputs_.clear();
      recording_ = false;
      pending_.clear();
    };
    std::vector<std::vector<int64_t>> descs;
    for (const rt::TensorView &v : inputs) {
      CUdeviceptr p = device_->alloc(v.data.size(), error);
      if (!p || !device_->copyToDevice(p, v.data.data(), v.data.size(), error))
        return cleanup(), false;
      temporaries.push_back(p);
      inputs_.push_back({p, v.data.data(), v.data.size()});
      descs.push_back(rt::memrefDescriptor(reinterpret_cast<void *>(p), v.shape));
    }
    for (size_t k = 0; k < bound_.size(); ++k)
      descs.push_back(rt::memrefDescriptor(reinterpret_cast<void *>(bound_[k]), boundShapes_[k]));
    std::vector<CUdeviceptr> out;
    for (rt::OwnedTensor &r : results) {
      CUdeviceptr p = device_->alloc(r.data.size(), error);
      if (!p || !device_->zero(p, r.data.size(), error))
        return cleanup(), false;
      temporaries.push_back(p);
      out.push_back(p);
      descs.push_back(rt::memrefDescriptor(reinterpret_cast<void *>(p), r.shape));
    }
    std::vector<void *> args;
    for (auto &d : descs)
      args.push_back(d.data());
    sticky_.clear();
    // The entry's launches are recorded, not enqueued, until it returns or
    // reads a value the device computed: a call that reads none is the same
    // list of launches each time it runs with the same buffers, and runs as
    // a CUDA graph (finishRecorded).
    recording_ = !profiling_ && graphsEnabled();
    pending_.clear();
    fn(args.data());
    if (recording_ && sticky_.empty())
      finishRecorded(reinterpret_cast<const void *>(fn));
    recording_ = false;
    pending_.clear();
    inputs_.clear();
    std::string syncError;
    if (!device_->synchronize(syncError) && sticky_.empty())
      sticky_ = syncError;
    if (!sticky_.empty()) {
      error = sticky_;
      return cleanup(), false;
    }
    for (size_t r = 0; r < results.size(); ++r)
      if (!device_->copyToHost(results[r].data.data(), out[r], results[r].data.size(), error))
        return cleanup(), false;
    if (deviceStatus_) {
      int64_t status[kStatusBytes / 8];
      if (!device_->copyToHost(status, deviceStatus_, kStatusBytes, error))
        return cleanup(), false;
      if (status[0] != 0) {
        std::memcpy(hostStatus_, status, kStatusBytes);
        if (!device_->zero(deviceStatus_, kStatusBytes, error) || !device_->synchronize(error))
          return cleanup(), false;
      }
    }
    cleanup();
    return true;
  }

  bool download(size_t index, std::span<std::byte> out, std::string &error) override {
    if (index >= bound_.size()) {
      error = "no such bound tensor";
      return false;
    }
    return device_->copyToHost(out.data(), bound_[index], out.size(), error);
  }

private:
  CudaSession() = default;

  static void *nowhere() {
    static char byte;
    return &byte;
  }

  void fail(const std::string &what) {
    if (sticky_.empty())
      sticky_ = what;
  }

  static void launchHook(void *session, int64_t kernel, int64_t gx, int64_t gy, int64_t gz, int64_t bx,
                         int64_t by, int64_t bz, int64_t shared, const int64_t *slots, int64_t nslots) {
    auto *s = static_cast<CudaSession *>(session);
    if (!s->sticky_.empty())
      return; // the call already failed: run nothing more
    if (nslots < 0 || (nslots > 0 && !slots)) {
      s->fail(fmt::format("kernel {} launched with {} parameter slots", kernel, nslots));
      return;
    }
    Op op{Op::Launch, {kernel, gx, gy, gz, bx, by, bz, shared}};
    op.words.insert(op.words.end(), slots, slots + nslots);
    if (s->recording_) {
      s->pending_.push_back(std::move(op));
      return;
    }
    std::string error;
    if (!s->enqueue(op, error))
      s->fail(error);
  }
  static void copyHook(void *session, void *dst, uint64_t src, int64_t bytes) {
    auto *s = static_cast<CudaSession *>(session);
    // An input's element (a position): the input never changes on the
    // device, its host copy is read without waiting for the device.
    for (const InputCopy &in : s->inputs_)
      if (bytes >= 0 && src >= in.device && src - in.device <= in.bytes && uint64_t(bytes) <= in.bytes - (src - in.device)) {
        std::memcpy(dst, static_cast<const std::byte *>(in.host) + (src - in.device), size_t(bytes));
        return;
      }
    // A value the device computes: what was recorded runs first, and the
    // rest of the call is enqueued as it comes (no graph).
    s->flushRecorded();
    std::string error;
    if (!s->sticky_.empty() || !s->device_->copyToHost(dst, CUdeviceptr(src), size_t(bytes), error)) {
      // The host code goes on with what it reads: zeros, not garbage.
      std::memset(dst, 0, size_t(bytes));
      s->fail(error);
    }
  }
  static void copyToDeviceHook(void *session, uint64_t dst, const void *src, int64_t bytes) {
    auto *s = static_cast<CudaSession *>(session);
    // Host data the call computed: what was recorded runs first, and the
    // rest of the call is enqueued as it comes (no graph: the bytes change
    // from call to call).
    s->flushRecorded();
    std::string error;
    if (!s->sticky_.empty())
      return;
    if (bytes < 0 || (bytes > 0 && !src))
      return s->fail(fmt::format("a copy of {} bytes to the device from no host memory", bytes));
    // From pageable memory the copy has taken the bytes when it returns:
    // the host code may free them.
    if (!s->device_->copyToDevice(CUdeviceptr(dst), src, size_t(bytes), error))
      s->fail(error);
  }
  static void *allocHook(void *session, uint64_t bytes) {
    auto *s = static_cast<CudaSession *>(session);
    std::string error;
    // Recorded launches may use blocks released to the cache: the cache is
    // not freed under them (out of memory, they are enqueued first).
    CUdeviceptr p = s->device_->alloc(size_t(bytes), error, s->pending_.empty());
    if (!p && !s->pending_.empty()) {
      s->flushRecorded();
      error.clear();
      p = s->device_->alloc(size_t(bytes), error);
    }
    if (!p) {
      s->fail(error);
      // A pointer the kernels never touch (launches stop after a failure).
      return nowhere();
    }
    return reinterpret_cast<void *>(p);
  }
  static void releaseHook(void *session, void *ptr) {
    auto *s = static_cast<CudaSession *>(session);
    if (ptr && ptr != nowhere())
      s->device_->release(CUdeviceptr(reinterpret_cast<uintptr_t>(ptr)));
  }

  /// cuBLAS's sgemm on the session's stream (the host table's `sgemm`):
  /// 1 where this machine has no cuBLAS or a size does not fit its int
  /// arguments (the host code then runs the generated kernel), 0 when
  /// enqueued; a failure of cuBLAS itself fails the call.
  static int32_t sgemmHook(void *session, int32_t transa, int32_t transb, int64_t m, int64_t n, int64_t k,
                           uint64_t a, int64_t lda, uint64_t b, int64_t ldb, float beta, uint64_t c, int64_t ldc) {
    return gemmHook(session, kGemmF32, transa, transb, m, n, k, a, lda, b, ldb, beta, c, ldc);
  }
  /// The same with A and B of `type` (the host table's `gemm`: GemmType),
  /// through cublasGemmEx with f32 accumulation.
  static int32_t gemmHook(void *session, int32_t type, int32_t transa, int32_t transb, int64_t m, int64_t n,
                          int64_t k, uint64_t a, int64_t lda, uint64_t b, int64_t ldb, float beta, uint64_t c,
                          int64_t ldc) {
    auto *s = static_cast<CudaSession *>(session);
    const Cublas &lib = Cublas::get();
    if (type != kGemmF32 && ((type != kGemmBF16 && type != kGemmF16 && type != kGemmTF32) || !lib.gemmEx))
      return 1;
    constexpr int64_t kMax = std::numeric_limits<int>::max();
    // cuBLAS refuses a leading dimension shorter than its column (a view
    // with a zero stride): such a product runs the generated kernel.
    bool shaped = lda >= std::max<int64_t>(1, transa ? k : m) && ldb >= std::max<int64_t>(1, transb ? n : k) &&
                  ldc >= std::max<int64_t>(1, m);
    if (!lib.available() || !s->sticky_.empty() || !shaped || m > kMax || n > kMax || k > kMax || lda > kMax ||
        ldb > kMax || ldc > kMax)
      return 1;
    if (!s->blas_) {
      if (int rc = lib.create(&s->blas_); rc != 0) {
        s->blas_ = nullptr;
        return 1; // no handle (no memory for its workspace): the kernel runs
      }
      lib.setStream(s->blas_, s->device_->stream());
    }
    uint32_t betaBits;
    std::memcpy(&betaBits, &beta, sizeof betaBits);
    Op op{Op::Gemm,
          {type, transa, transb, m, n, k, int64_t(a), lda, int64_t(b), ldb, int64_t(betaBits), int64_t(c), ldc}};
    if (s->recording_)
      s->pending_.push_back(std::move(op));
    else if (std::string error; !s->enqueue(op, error))
      s->fail(error);
    return 0;
  }

  /// A command's boundary (linnet build --profile): a CUDA event on the
  /// stream, its time read when the profile is taken.
  static void markHook(void *session, int64_t task, int64_t end) {
    auto *s = static_cast<CudaSession *>(session);
    s->flushRecorded();
    if (!s->sticky_.empty())
      return;
    if (s->marks_.size() >= kMaxMarks) {
      ++s->droppedMarks_;
      return;
    }
    std::string error;
    if (!s->device_->record(int(s->marks_.size()), error))
      return s->fail(error);
    s->marks_.push_back({uint32_t(task), uint32_t(end != 0), 0});
  }
  static const void *profileTakeHook(void *session, uint64_t *count, uint64_t *calls) {
    auto *s = static_cast<CudaSession *>(session);
    s->taken_.clear();
    s->taken_.swap(s->marks_);
    *calls = s->taken_.size() + s->droppedMarks_;
    s->droppedMarks_ = 0;
    // Device time from the first event: every event is on the one stream.
    std::string error;
    for (size_t i = 0; i < s->taken_.size(); ++i) {
      float ms = 0;
      if (i > 0 && !s->device_->elapsedMs(0, int(i), ms, error)) {
        s->fail(error);
        s->taken_.resize(i);
        break;
      }
      s->taken_[i].ns = uint64_t(double(ms) * 1e6);
    }
    *count = s->taken_.size();
    return s->taken_.data();
  }

  /// What the host code asked of the device, recorded: a launch (kernel,
  /// grid, block, shared bytes, then its slots) or a cuBLAS gemm (the
  /// operands' type, then its arguments, beta's bits).
  struct Op {
    enum Kind { Launch, Gemm } kind;
    std::vector<int64_t> words;
    bool operator==(const Op &o) const { return kind == o.kind && words == o.words; }
    /// Same node in a graph: the same kernel, whatever its grid and slots.
    bool sameNode(const Op &o) const {
      return kind == o.kind && words[0] == o.words[0] && words.size() == o.words.size();
    }
  };
  struct InputCopy {
    CUdeviceptr device;
    const void *host;
    size_t bytes;
  };
  /// An entry's graph: the launches it was captured from, and the list of
  /// the call before (a graph is made the second time a list is seen).
  struct EntryGraph {
    size_t slot = 0;
    bool captured = false;
    std::vector<Op> graphOps, lastOps;
  };

  static bool graphsEnabled() {
    const char *env = std::getenv("LINNET_CUDA_GRAPHS");
    return !(env && std::string(env) == "0");
  }

  bool enqueue(const Op &op, std::string &error) {
    const std::vector<int64_t> &w = op.words;
    if (op.kind == Op::Launch)
      return device_->launch(w[0], unsigned(w[1]), unsigned(w[2]), unsigned(w[3]), unsigned(w[4]), unsigned(w[5]),
                             unsigned(w[6]), unsigned(w[7]), w.data() + 8, int64_t(w.size()) - 8, error);
    const Cublas &lib = Cublas::get();
    const float alpha = 1.0f;
    float beta;
    uint32_t betaBits = uint32_t(w[10]);
    std::memcpy(&beta, &betaBits, sizeof beta);
    auto ld = [&](size_t i) { return int(std::max<int64_t>(w[i], 1)); };
    const void *A = reinterpret_cast<const void *>(w[6]), *B = reinterpret_cast<const void *>(w[8]);
    void *C = reinterpret_cast<void *>(w[11]);
    int rc;
    if (w[0] == kGemmF32) {
      rc = lib.sgemm(blas_, w[1] ? 1 : 0, w[2] ? 1 : 0, int(w[3]), int(w[4]), int(w[5]), &alpha,
                     static_cast<const float *>(A), ld(7), static_cast<const float *>(B), ld(9), &beta,
                     static_cast<float *>(C), ld(12));
    } else {
      // cudaDataType CUDA_R_32F / _16F / _16BF; CUBLAS_COMPUTE_32F (_FAST_TF32
      // for f32 operands under --matmul-precision tf32); CUBLAS_GEMM_DEFAULT.
      constexpr int kR32F = 0, kR16F = 2, kR16BF = 14, kCompute32F = 68, kCompute32FFastTF32 = 77,
                    kGemmDefault = -1;
      int ab = w[0] == kGemmBF16 ? kR16BF : w[0] == kGemmF16 ? kR16F : kR32F;
      int compute = w[0] == kGemmTF32 ? kCompute32FFastTF32 : kCompute32F;
      rc = lib.gemmEx(blas_, w[1] ? 1 : 0, w[2] ? 1 : 0, int(w[3]), int(w[4]), int(w[5]), &alpha, A, ab, ld(7), B, ab,
                      ld(9), &beta, C, kR32F, ld(12), compute, kGemmDefault);
    }
    if (rc != 0) {
      error = fmt::format("{} failed (status {}) for m={} n={} k={}", w[0] == kGemmF32 ? "cublasSgemm" : "cublasGemmEx",
                          rc, w[3], w[4], w[5]);
      return false;
    }
    return true;
  }

  bool enqueueAll(const std::vector<Op> &ops, std::string &error) {
    for (const Op &op : ops)
      if (!enqueue(op, error))
        return false;
    return true;
  }

  /// The call reads a value the device computes: what was recorded is
  /// enqueued, and recording stops for the rest of the call.
  void flushRecorded() {
    if (!recording_)
      return;
    recording_ = false;
    std::string error;
    if (sticky_.empty() && !enqueueAll(pending_, error))
      fail(error);
    pending_.clear();
  }

  /// The entry returned having read nothing from the device: its launches
  /// are `pending_`. The same list as the graph's replays the graph; a
  /// list of the same kernels (a new position, a new grid) updates the
  /// graph in place; a list seen for the first time runs as it is.
  void finishRecorded(const void *entry) {
    auto [it, inserted] = graphs_.try_emplace(entry);
    EntryGraph &g = it->second;
    if (inserted)
      g.slot = graphs_.size() - 1;
    std::string error;
    auto sameNodes = [&](const std::vector<Op> &a) {
      return a.size() == pending_.size() &&
             std::equal(a.begin(), a.end(), pending_.begin(), [](const Op &x, const Op &y) { return x.sameNode(y); });
    };
    if (pending_.empty())
      return;
    if (g.captured && g.graphOps == pending_) {
      if (!device_->launchGraph(g.slot, error))
        fail(error);
      return;
    }
    if ((g.captured && sameNodes(g.graphOps)) || sameNodes(g.lastOps)) {
      bool updated = false;
      if (!device_->captureGraph(g.slot, [&](std::string &e) { return enqueueAll(pending_, e); }, updated, error) ||
          !device_->launchGraph(g.slot, error)) {
        fail(error);
        return;
      }
      g.captured = true;
      g.graphOps = pending_;
      return;
    }
    if (!enqueueAll(pending_, error))
      fail(error);
    g.lastOps = std::move(pending_);
    pending_.clear();
  }

  /// The status word of run-time checks: {failed check id, value, bound, 0}.
  static constexpr size_t kStatusBytes = 4 * sizeof(int64_t);
  std::unique_ptr<Device> device_;
  HostTable *host_ = nullptr;
  Cublas::Handle blas_ = nullptr;
  void *hostStatus_ = nullptr;
  CUdeviceptr deviceStatus_ = 0;
  std::vector<CUdeviceptr> bound_;
  std::vector<std::vector<int64_t>> boundShapes_;
  std::string sticky_;
  // The call under way: its inputs' device copies, whether its launches
  // are recorded, and those recorded so far.
  std::vector<InputCopy> inputs_;
  bool recording_ = false;
  std::vector<Op> pending_;
  std::map<const void *, EntryGraph> graphs_;
  // linnet build --profile: command boundaries recorded, not yet taken.
  static constexpr size_t kMaxMarks = size_t(1) << 20;
  bool profiling_ = false;
  std::vector<rt::ProfileEvent> marks_, taken_;
  uint64_t droppedMarks_ = 0;
};

} // namespace

std::string describeLibraries() {
  const Cublas &lib = Cublas::get();
  return lib.available() ? "cuBLAS: " + lib.path
                         : "cuBLAS: none (" + lib.error + "): matrix products run their generated kernels";
}

void registerCudaRuntime() {
  static std::once_flag once;
  std::call_once(once, [] { rt::registerDeviceBackend({kRuntimeAbi, &CudaSession::open}); });
}

} // namespace linnet::cuda
