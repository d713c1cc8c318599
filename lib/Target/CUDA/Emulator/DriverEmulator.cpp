//===- DriverEmulator.cpp - The CUDA driver API on the CPU ----------------===//
//
// Every entry point of LINNET_CUDA_DRIVER_SYMBOLS (Driver.h), implemented on
// the CPU so that linnet's real CUDA host runtime can be tested on machines
// without a GPU: LINNET_LIBCUDA=build/lib/liblinnet-cuda-emulator.so
// (docs/cuda-abi.md, "The driver emulator").
//
// One device whose memory is host memory: a device pointer is a host
// address. A module image (PTX or cubin) cannot run here: the kernels come
// from the library $LINNET_CUDA_EMULATOR_KERNELS (an artifact's
// kernels.host.so), which declares the FNV-1a hashes of the images it was
// built from (linnet_kernels_images) and, for each kernel NAME,
// linnet_kernel_NAME (runs the whole grid) and linnet_kernel_NAME_params
// (its count of 64-bit parameter slots).
//
// Every operation runs at once on the calling thread, except on a stream
// that is capturing a graph, where it is recorded (a launch's parameter
// values are copied then, as CUDA does) and runs at each cuGraphLaunch.
// What CUDA refuses is refused here with CUDA's error: calls without a
// current context, copies outside a live allocation, launches CUDA would
// not take, calls a thread-local capture prohibits (which invalidate it).
// One mutex serializes every call.
//
// $LINNET_CUDA_EMULATOR_MEMORY=BYTES caps the live allocations;
// $LINNET_CUDA_EMULATOR_TRACE=FILE appends one line per operation.
//
//===----------------------------------------------------------------------===//
#include "linnet/Target/CUDA/Driver.h"

#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include <dlfcn.h>
#include <elf.h>
#include <link.h>

namespace linnet::cuda::drv {
struct CUctx_st {
  int refs = 0; // primary context retains; active while > 0
};
struct CUfunc_st;
struct CUmod_st;
struct CUevent_st;

// One operation of a stream, as a capture records it.
struct Node {
  enum Kind { HtoD, DtoH, DtoD, Memset, Launch, EventRecord } kind;
  explicit Node(Kind k = Launch) : kind(k) {}
  CUdeviceptr dst = 0, src = 0;
  const void *hostSrc = nullptr; // HtoD: read when the node runs
  void *hostDst = nullptr;       // DtoH
  size_t bytes = 0;
  unsigned char value = 0;
  CUfunc_st *fn = nullptr;
  unsigned grid[3] = {1, 1, 1}, block[3] = {1, 1, 1}, shared = 0;
  std::vector<uint64_t> params; // a launch's slot values, copied
  CUevent_st *event = nullptr;
};

struct CUstream_st {
  unsigned flags = 0;
  bool capturing = false, invalidated = false;
  int mode = 0; // CUstreamCaptureMode
  std::thread::id thread;
  std::vector<Node> nodes;
};
struct CUevent_st {
  unsigned flags = 0;
  std::optional<std::chrono::steady_clock::time_point> when;
};
struct CUgraph_st {
  std::vector<Node> nodes;
};
struct CUgraphExec_st {
  std::vector<Node> nodes;
};

using KernelEntry = void (*)(void **, int64_t, int64_t, int64_t, int64_t,
                             int64_t, int64_t, int64_t);
struct CUfunc_st {
  CUmod_st *module = nullptr;
  std::string name;
  KernelEntry entry = nullptr;
  int64_t slots = 0;
  // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
  int sharedLimit = 48 * 1024;
};

struct KernelLibrary {
  std::string path;
  void *handle = nullptr;
  struct link_map *map = nullptr;
  const uint64_t *images = nullptr;
  // The writable globals it exports, with their bytes when it was loaded:
  // a module loaded from it starts from these, as a CUDA module does from
  // its image.
  struct Initial {
    void *address;
    std::vector<unsigned char> bytes;
  };
  std::vector<Initial> globals;
};
struct CUmod_st {
  KernelLibrary *lib = nullptr;
  std::map<std::string, std::unique_ptr<CUfunc_st>> functions;
  std::vector<CUdeviceptr> globals; // registered ranges, one ref each
};
} // namespace linnet::cuda::drv

using namespace linnet::cuda::drv;

#define EMU_API extern "C" __attribute__((visibility("default")))

namespace {

// cuda.h's values.
constexpr CUresult kSuccess = 0;
constexpr CUresult kInvalidValue = 1;         // CUDA_ERROR_INVALID_VALUE
constexpr CUresult kOutOfMemory = 2;          // CUDA_ERROR_OUT_OF_MEMORY
constexpr CUresult kNotInitialized = 3;       // CUDA_ERROR_NOT_INITIALIZED
constexpr CUresult kInvalidDevice = 101;      // CUDA_ERROR_INVALID_DEVICE
constexpr CUresult kInvalidImage = 200;       // CUDA_ERROR_INVALID_IMAGE
constexpr CUresult kInvalidContext = 201;     // CUDA_ERROR_INVALID_CONTEXT
constexpr CUresult kNoBinaryForGpu = 209;     // CUDA_ERROR_NO_BINARY_FOR_GPU
constexpr CUresult kInvalidHandle = 400;      // CUDA_ERROR_INVALID_HANDLE
constexpr CUresult kIllegalState = 401;       // CUDA_ERROR_ILLEGAL_STATE
constexpr CUresult kNotFound = 500;           // CUDA_ERROR_NOT_FOUND
constexpr CUresult kNotReady = 600;           // CUDA_ERROR_NOT_READY
constexpr CUresult kIllegalAddress = 700;     // CUDA_ERROR_ILLEGAL_ADDRESS
constexpr CUresult kCaptureUnsupported = 900; // ..._STREAM_CAPTURE_UNSUPPORTED
constexpr CUresult kCaptureInvalidated = 901; // ..._STREAM_CAPTURE_INVALIDATED
constexpr CUresult kCaptureImplicit = 906;    // ..._STREAM_CAPTURE_IMPLICIT
constexpr CUresult kCaptureWrongThread = 908; // ..._STREAM_CAPTURE_WRONG_THREAD
constexpr CUresult kUpdateFailure = 910;      // ..._GRAPH_EXEC_UPDATE_FAILURE

constexpr int kSharedOptin = 232448;
constexpr int kDefaultShared = 48 * 1024;
constexpr size_t kAlignment = 256;
constexpr unsigned kStreamNonBlocking = 1;
constexpr unsigned kEventDisableTiming = 2;
constexpr int kCaptureGlobal = 0, kCaptureThreadLocal = 1, kCaptureRelaxed = 2;
constexpr const char *kDeviceName = "linnet CUDA driver emulator (CPU)";

struct ErrorText {
  CUresult code;
  const char *name, *text;
};
// clang-format off
constexpr ErrorText kErrors[] = {
  {0, "CUDA_SUCCESS", "no error"},
  {1, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
  {2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
  {3, "CUDA_ERROR_NOT_INITIALIZED", "initialization error: cuInit has not been called"},
  {100, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
  {101, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
  {200, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
  {201, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
  {209, "CUDA_ERROR_NO_BINARY_FOR_GPU", "no kernel image is available for execution on the device"},
  {400, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
  {401, "CUDA_ERROR_ILLEGAL_STATE", "the operation cannot be performed in the present state"},
  {500, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
  {600, "CUDA_ERROR_NOT_READY", "device not ready"},
  {700, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"},
  {900, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED", "operation not permitted when stream is capturing"},
  {901, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED", "operation failed due to a previous error during capture"},
  {906, "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT", "operation would make the legacy stream depend on a capturing blocking stream"},
  {908, "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD", "attempt to terminate a thread-local capture sequence from another thread"},
  {910, "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE", "the graph update was not performed because it included changes which violated constraints specific to instantiated graph update"},
  {999, "CUDA_ERROR_UNKNOWN", "unknown error"},
};
// clang-format on

const ErrorText *findError(CUresult r) {
  for (const ErrorText &e : kErrors)
    if (e.code == r)
      return &e;
  return nullptr;
}

uint64_t fnv1a(const unsigned char *p, size_t n) {
  uint64_t h = 14695981039346656037ull;
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
  return h;
}

struct Allocation {
  size_t size;
  void *base;
};
struct GlobalRange {
  size_t size;
  int refs;
};

// The whole emulated driver. Guarded by `mu`.
struct Emulator {
  std::mutex mu;
  bool initialized = false;
  FILE *trace = nullptr;
  CUctx_st primary;
  std::map<CUdeviceptr, Allocation> allocs;
  size_t liveBytes = 0;
  std::map<CUdeviceptr, GlobalRange> globals;
  std::map<std::string, std::unique_ptr<KernelLibrary>> libraries;
  std::unordered_map<CUmod_st *, std::unique_ptr<CUmod_st>> modules;
  std::unordered_map<CUfunc_st *, CUmod_st *> functions;
  std::unordered_map<CUstream_st *, std::unique_ptr<CUstream_st>> streams;
  std::unordered_map<CUevent_st *, std::unique_ptr<CUevent_st>> events;
  std::unordered_map<CUgraph_st *, std::unique_ptr<CUgraph_st>> graphs;
  std::unordered_map<CUgraphExec_st *, std::unique_ptr<CUgraphExec_st>> execs;

  __attribute__((format(printf, 2, 3))) void log(const char *fmt, ...) {
    if (!trace)
      return;
    va_list ap;
    va_start(ap, fmt);
    std::vfprintf(trace, fmt, ap);
    va_end(ap);
    std::fputc('\n', trace);
  }

  // The primary context's resources go with it (cuDevicePrimaryCtxRelease
  // of the last reference, as CUDA resets it).
  void resetContext() {
    for (auto &[ptr, a] : allocs)
      std::free(a.base);
    allocs.clear();
    liveBytes = 0;
    globals.clear();
    modules.clear();
    functions.clear();
    streams.clear();
    events.clear();
    graphs.clear();
    execs.clear();
    log("context reset");
  }
};

Emulator &emu() {
  static Emulator *e = new Emulator; // never destroyed: calls may come late
  return *e;
}

thread_local CUctx_st *tlsContext = nullptr;

CUresult needInit() { return emu().initialized ? kSuccess : kNotInitialized; }
CUresult needContext() {
  if (!emu().initialized)
    return kNotInitialized;
  if (!tlsContext || tlsContext->refs <= 0)
    return kInvalidContext;
  return kSuccess;
}

template <typename Map, typename T> bool live(const Map &m, T *p) {
  return p && m.count(p);
}

// Streams: null and CU_STREAM_LEGACY (0x1) are the legacy stream,
// CU_STREAM_PER_THREAD (0x2) the thread's default stream (neither captures),
// anything else a handle of cuStreamCreate.
bool isLegacy(CUstream s) {
  auto v = reinterpret_cast<uintptr_t>(s);
  return v == 0 || v == 1;
}
bool validStream(CUstream s) {
  auto v = reinterpret_cast<uintptr_t>(s);
  return v <= 2 || live(emu().streams, s);
}
CUstream_st *capturingStream(CUstream s) {
  if (reinterpret_cast<uintptr_t>(s) <= 2)
    return nullptr;
  return s->capturing ? s : nullptr;
}

// [p, p + n) inside one live allocation or one module global.
bool inDevice(CUdeviceptr p, size_t n) {
  Emulator &e = emu();
  auto inside = [&](const auto &map) {
    auto it = map.upper_bound(p);
    if (it == map.begin())
      return false;
    --it;
    CUdeviceptr base = it->first;
    size_t size = it->second.size;
    return p >= base && p - base <= size && n <= size - (p - base);
  };
  return inside(e.allocs) || inside(e.globals);
}

// A call that a capture in progress prohibits on this thread (cuMemAlloc,
// synchronization, the legacy stream's synchronous copies): CUDA refuses
// it and invalidates the capture.
CUresult prohibitedByCapture() {
  bool hit = false;
  std::thread::id self = std::this_thread::get_id();
  for (auto &[p, s] : emu().streams)
    if (s->capturing &&
        (s->mode == kCaptureGlobal ||
         (s->mode == kCaptureThreadLocal && s->thread == self))) {
      if (!s->invalidated)
        emu().log("capture invalidated");
      s->invalidated = true;
      hit = true;
    }
  return hit ? kCaptureUnsupported : kSuccess;
}

// Work on the legacy stream waits for every blocking stream: one that is
// capturing would be joined to it, which CUDA refuses.
CUresult legacyJoinsCapture(CUstream stream) {
  if (!isLegacy(stream))
    return kSuccess;
  bool hit = false;
  for (auto &[p, s] : emu().streams)
    if (s->capturing && !(s->flags & kStreamNonBlocking)) {
      if (!s->invalidated)
        emu().log("capture invalidated");
      s->invalidated = true;
      hit = true;
    }
  return hit ? kCaptureImplicit : kSuccess;
}

const char *nodeName(Node::Kind k) {
  switch (k) {
  case Node::HtoD:
    return "htod";
  case Node::DtoH:
    return "dtoh";
  case Node::DtoD:
    return "dtod";
  case Node::Memset:
    return "memset";
  case Node::Launch:
    return "launch";
  case Node::EventRecord:
    return "event record";
  }
  return "?";
}

void traceNode(const char *prefix, const Node &n) {
  Emulator &e = emu();
  if (!e.trace)
    return;
  if (n.kind == Node::Launch)
    e.log("%slaunch %s grid %ux%ux%u block %ux%ux%u shared %u", prefix,
          n.fn->name.c_str(), n.grid[0], n.grid[1], n.grid[2], n.block[0],
          n.block[1], n.block[2], n.shared);
  else if (n.kind == Node::EventRecord)
    e.log("%sevent record", prefix);
  else
    e.log("%s%s %zu", prefix, nodeName(n.kind), n.bytes);
}

// Runs one operation. `replay`: a node of a graph, whose memory and
// handles were checked when it was recorded and may have gone since.
CUresult execute(const Node &n, bool replay) {
  Emulator &e = emu();
  const CUresult badAddress = replay ? kIllegalAddress : kInvalidValue;
  switch (n.kind) {
  case Node::HtoD:
    if (!inDevice(n.dst, n.bytes))
      return badAddress;
    std::memcpy(reinterpret_cast<void *>(n.dst), n.hostSrc, n.bytes);
    break;
  case Node::DtoH:
    if (!inDevice(n.src, n.bytes))
      return badAddress;
    std::memcpy(n.hostDst, reinterpret_cast<const void *>(n.src), n.bytes);
    break;
  case Node::DtoD:
    if (!inDevice(n.src, n.bytes) || !inDevice(n.dst, n.bytes))
      return badAddress;
    std::memmove(reinterpret_cast<void *>(n.dst),
                 reinterpret_cast<const void *>(n.src), n.bytes);
    break;
  case Node::Memset:
    if (!inDevice(n.dst, n.bytes))
      return badAddress;
    std::memset(reinterpret_cast<void *>(n.dst), n.value, n.bytes);
    break;
  case Node::Launch: {
    if (!e.functions.count(n.fn)) // its module was unloaded
      return kInvalidHandle;
    // A copy of the values: the kernel may write its parameters.
    std::vector<uint64_t> values = n.params;
    std::vector<void *> ptrs(values.size());
    for (size_t i = 0; i < values.size(); ++i)
      ptrs[i] = &values[i];
    traceNode(replay ? "replay " : "", n);
    n.fn->entry(ptrs.data(), n.grid[0], n.grid[1], n.grid[2], n.block[0],
                n.block[1], n.block[2], n.shared);
    return kSuccess;
  }
  case Node::EventRecord:
    if (!e.events.count(n.event))
      return kInvalidHandle;
    n.event->when = std::chrono::steady_clock::now();
    break;
  }
  traceNode(replay ? "replay " : "", n);
  return kSuccess;
}

// An asynchronous operation on `stream`: recorded while it captures, run
// now otherwise.
CUresult enqueue(CUstream stream, Node &&n) {
  if (CUstream_st *s = capturingStream(stream)) {
    if (s->invalidated)
      return kCaptureInvalidated;
    traceNode("record ", n);
    s->nodes.push_back(std::move(n));
    return kSuccess;
  }
  if (CUresult r = legacyJoinsCapture(stream))
    return r;
  return execute(n, false);
}

// A copy or fill: checked when it is issued, recorded or not.
CUresult enqueueTransfer(CUstream stream, Node &&n) {
  if (CUresult r = needContext())
    return r;
  if (!validStream(stream))
    return kInvalidHandle;
  if (n.bytes == 0)
    return kSuccess;
  if ((n.kind == Node::HtoD && !n.hostSrc) ||
      (n.kind == Node::DtoH && !n.hostDst))
    return kInvalidValue;
  bool ok = true;
  if (n.kind != Node::DtoH)
    ok = ok && inDevice(n.dst, n.bytes);
  if (n.kind == Node::DtoH || n.kind == Node::DtoD)
    ok = ok && inDevice(n.src, n.bytes);
  if (!ok)
    return kInvalidValue;
  return enqueue(stream, std::move(n));
}

// The synchronous copies run on the legacy stream, and wait.
CUresult synchronousTransfer(Node &&n) {
  if (CUresult r = needContext())
    return r;
  if (CUresult r = prohibitedByCapture())
    return r;
  return enqueueTransfer(nullptr, std::move(n));
}

// Calls a failure of which the trace reports.
CUresult done(const char *api, CUresult r) {
  if (r != kSuccess)
    emu().log("error %s %d", api, r);
  return r;
}

// Serializes the call and traces its failure.
#define EMU_BODY(...)                                                          \
  std::lock_guard<std::mutex> lock_(emu().mu);                                 \
  return done(__func__, [&]() -> CUresult { __VA_ARGS__ }())

// The module image's length: a cubin's from its ELF64 headers, PTX up to
// its NUL; a fatbin's from its header.
bool imageLength(const void *image, size_t &length, std::string &why) {
  const auto *bytes = static_cast<const unsigned char *>(image);
  // Compared byte by byte: a short PTX text ends at its NUL.
  auto startsWith = [&](const unsigned char *magic, size_t n) {
    for (size_t i = 0; i < n; ++i)
      if (bytes[i] != magic[i])
        return false;
    return true;
  };
  static constexpr unsigned char kElf[] = {0x7f, 'E', 'L', 'F'};
  static constexpr unsigned char kFatbin[] = {0x50, 0xed, 0x55, 0xba};
  if (startsWith(kElf, 4)) {
    Elf64_Ehdr eh;
    std::memcpy(&eh, bytes, sizeof eh);
    if (eh.e_ident[EI_CLASS] != ELFCLASS64) {
      why = "an ELF image that is not ELF64";
      return false;
    }
    uint64_t end = sizeof eh;
    end = std::max<uint64_t>(end, eh.e_phoff +
                                      uint64_t(eh.e_phnum) * eh.e_phentsize);
    uint64_t shnum = eh.e_shnum;
    if (eh.e_shoff && eh.e_shentsize >= sizeof(Elf64_Shdr)) {
      Elf64_Shdr sh;
      if (shnum == 0) { // extended numbering: the count is section 0's size
        std::memcpy(&sh, bytes + eh.e_shoff, sizeof sh);
        shnum = sh.sh_size;
      }
      end = std::max<uint64_t>(end, eh.e_shoff + shnum * eh.e_shentsize);
      for (uint64_t i = 0; i < shnum; ++i) {
        std::memcpy(&sh, bytes + eh.e_shoff + i * eh.e_shentsize, sizeof sh);
        if (sh.sh_type != SHT_NOBITS)
          end = std::max<uint64_t>(end, sh.sh_offset + sh.sh_size);
      }
    }
    length = size_t(end);
    return true;
  }
  if (startsWith(kFatbin, 4)) { // a fatbin: {magic, version, header size, size}
    uint16_t headerSize;
    uint64_t fatSize;
    std::memcpy(&headerSize, bytes + 6, sizeof headerSize);
    std::memcpy(&fatSize, bytes + 8, sizeof fatSize);
    length = size_t(headerSize + fatSize);
    return true;
  }
  length = std::strlen(static_cast<const char *>(image));
  return true;
}

// A symbol the library defines itself (dlsym also searches its
// dependencies), with its ELF symbol.
void *ownSymbol(const KernelLibrary &lib, const std::string &name,
                const ElfW(Sym) **symbol = nullptr) {
  dlerror();
  void *p = dlsym(lib.handle, name.c_str());
  if (!p)
    return nullptr;
  Dl_info info;
  struct link_map *map = nullptr;
  if (!dladdr1(p, &info, reinterpret_cast<void **>(&map), RTLD_DL_LINKMAP) ||
      map != lib.map)
    return nullptr;
  if (symbol) {
    void *sym = nullptr; // a const ElfW(Sym) *
    if (!dladdr1(p, &info, &sym, RTLD_DL_SYMENT) || !sym)
      return nullptr;
    *symbol = static_cast<const ElfW(Sym) *>(sym);
  }
  return p;
}

// Records the initial bytes of the writable objects `lib` exports (its
// file's .dynsym, in sections with SHF_WRITE), its module globals.
void snapshotGlobals(KernelLibrary &lib) {
  const char *file =
      lib.map->l_name && *lib.map->l_name ? lib.map->l_name : lib.path.c_str();
  FILE *f = std::fopen(file, "rb");
  if (!f)
    return;
  std::vector<unsigned char> bytes;
  unsigned char chunk[65536];
  for (size_t n; (n = std::fread(chunk, 1, sizeof chunk, f)) > 0;)
    bytes.insert(bytes.end(), chunk, chunk + n);
  std::fclose(f);
  auto read = [&](auto &out, uint64_t at) {
    if (at > bytes.size() || sizeof out > bytes.size() - at)
      return false;
    std::memcpy(&out, bytes.data() + at, sizeof out);
    return true;
  };
  Elf64_Ehdr eh;
  if (!read(eh, 0) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize < sizeof(Elf64_Shdr))
    return;
  std::vector<Elf64_Shdr> sections(eh.e_shnum);
  for (size_t i = 0; i < sections.size(); ++i)
    if (!read(sections[i], eh.e_shoff + i * eh.e_shentsize))
      return;
  for (const Elf64_Shdr &symtab : sections) {
    if (symtab.sh_type != SHT_DYNSYM || symtab.sh_link >= sections.size() ||
        symtab.sh_entsize < sizeof(Elf64_Sym))
      continue;
    const Elf64_Shdr &strtab = sections[symtab.sh_link];
    if (strtab.sh_offset > bytes.size() ||
        strtab.sh_size > bytes.size() - strtab.sh_offset)
      continue;
    for (uint64_t i = 0; i < symtab.sh_size / symtab.sh_entsize; ++i) {
      Elf64_Sym sym;
      if (!read(sym, symtab.sh_offset + i * symtab.sh_entsize))
        return;
      if (ELF64_ST_TYPE(sym.st_info) != STT_OBJECT || sym.st_size == 0 ||
          sym.st_shndx == SHN_UNDEF || sym.st_shndx >= sections.size() ||
          !(sections[sym.st_shndx].sh_flags & SHF_WRITE) ||
          sym.st_name >= strtab.sh_size)
        continue;
      const char *name = reinterpret_cast<const char *>(bytes.data()) +
                         strtab.sh_offset + sym.st_name;
      if (std::strncmp(name, "linnet_kernel", 13) == 0)
        continue;
      auto *at =
          reinterpret_cast<unsigned char *>(lib.map->l_addr + sym.st_value);
      lib.globals.push_back(
          {at, std::vector<unsigned char>(at, at + size_t(sym.st_size))});
    }
  }
}

// The kernels library at `path`, loaded once.
KernelLibrary *kernelLibrary(const std::string &path, std::string &why) {
  Emulator &e = emu();
  if (auto it = e.libraries.find(path); it != e.libraries.end())
    return it->second.get();
  auto lib = std::make_unique<KernelLibrary>();
  lib->path = path;
  dlerror();
  lib->handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib->handle) {
    const char *err = dlerror();
    why = err ? err : "cannot load " + path;
    return nullptr;
  }
  if (dlinfo(lib->handle, RTLD_DI_LINKMAP, &lib->map) != 0 || !lib->map) {
    why = "cannot inspect " + path;
    dlclose(lib->handle);
    return nullptr;
  }
  lib->images =
      static_cast<const uint64_t *>(ownSymbol(*lib, "linnet_kernels_images"));
  if (!lib->images) {
    const char *err = dlerror();
    why = err ? err : path + ": undefined symbol: linnet_kernels_images";
    dlclose(lib->handle);
    return nullptr;
  }
  snapshotGlobals(*lib);
  KernelLibrary *raw = lib.get();
  e.libraries[path] = std::move(lib);
  return raw;
}

} // namespace

//===----------------------------------------------------------------------===//
// Errors, initialization, the device
//===----------------------------------------------------------------------===//

EMU_API CUresult cuGetErrorName(CUresult error, const char **str) {
  if (!str)
    return kInvalidValue;
  const ErrorText *e = findError(error);
  *str = e ? e->name : nullptr;
  return e ? kSuccess : kInvalidValue;
}

EMU_API CUresult cuGetErrorString(CUresult error, const char **str) {
  if (!str)
    return kInvalidValue;
  const ErrorText *e = findError(error);
  *str = e ? e->text : nullptr;
  return e ? kSuccess : kInvalidValue;
}

EMU_API CUresult cuInit(unsigned flags) {
  EMU_BODY({
    Emulator &e = emu();
    if (flags != 0)
      return kInvalidValue;
    if (!e.initialized) {
      if (const char *path = std::getenv("LINNET_CUDA_EMULATOR_TRACE");
          path && *path && (e.trace = std::fopen(path, "a")))
        std::setvbuf(e.trace, nullptr, _IOLBF, 0);
      e.initialized = true;
      e.log("init");
    }
    return kSuccess;
  });
}

EMU_API CUresult cuDriverGetVersion(int *version) {
  if (!version)
    return kInvalidValue;
  *version = 13000;
  return kSuccess;
}

EMU_API CUresult cuDeviceGetCount(int *count) {
  EMU_BODY({
    if (CUresult r = needInit())
      return r;
    if (!count)
      return kInvalidValue;
    *count = 1;
    return kSuccess;
  });
}

EMU_API CUresult cuDeviceGet(CUdevice *device, int ordinal) {
  EMU_BODY({
    if (CUresult r = needInit())
      return r;
    if (!device)
      return kInvalidValue;
    if (ordinal != 0)
      return kInvalidDevice;
    *device = 0;
    return kSuccess;
  });
}

EMU_API CUresult cuDeviceGetName(char *name, int len, CUdevice dev) {
  EMU_BODY({
    if (CUresult r = needInit())
      return r;
    if (!name || len <= 0)
      return kInvalidValue;
    if (dev != 0)
      return kInvalidDevice;
    size_t n = std::min(std::strlen(kDeviceName), size_t(len) - 1);
    std::memcpy(name, kDeviceName, n);
    name[n] = '\0';
    return kSuccess;
  });
}

EMU_API CUresult cuDeviceGetAttribute(int *value, int attrib, CUdevice dev) {
  EMU_BODY({
    if (CUresult r = needInit())
      return r;
    if (!value || attrib <= 0 || attrib > 255)
      return kInvalidValue;
    if (dev != 0)
      return kInvalidDevice;
    switch (attrib) {
    case 1: // MAX_THREADS_PER_BLOCK
      *value = 1024;
      break;
    case 10: // WARP_SIZE
      *value = 32;
      break;
    case 16: // MULTIPROCESSOR_COUNT
      *value = 1;
      break;
    case 75: // COMPUTE_CAPABILITY_MAJOR
      *value = 9;
      break;
    case 76: // COMPUTE_CAPABILITY_MINOR
      *value = 0;
      break;
    case 97: // MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
      *value = kSharedOptin;
      break;
    default:
      *value = 0;
    }
    return kSuccess;
  });
}

//===----------------------------------------------------------------------===//
// Contexts
//===----------------------------------------------------------------------===//

EMU_API CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice dev) {
  EMU_BODY({
    if (CUresult r = needInit())
      return r;
    if (!ctx)
      return kInvalidValue;
    if (dev != 0)
      return kInvalidDevice;
    ++emu().primary.refs;
    *ctx = &emu().primary;
    return kSuccess;
  });
}

EMU_API CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev) {
  EMU_BODY({
    if (CUresult r = needInit())
      return r;
    if (dev != 0)
      return kInvalidDevice;
    Emulator &e = emu();
    if (e.primary.refs <= 0)
      return kInvalidContext;
    if (--e.primary.refs == 0)
      e.resetContext();
    return kSuccess;
  });
}

EMU_API CUresult cuCtxSetCurrent(CUcontext ctx) {
  EMU_BODY({
    if (CUresult r = needInit())
      return r;
    if (ctx && ctx != &emu().primary)
      return kInvalidContext;
    tlsContext = ctx;
    return kSuccess;
  });
}

EMU_API CUresult cuCtxSynchronize() {
  EMU_BODY({
    if (CUresult r = needContext())
      return r;
    CUresult r = prohibitedByCapture();
    // It waits for every stream, a capturing one too.
    for (auto &[p, s] : emu().streams)
      if (s->capturing) {
        if (!s->invalidated)
          emu().log("capture invalidated");
        s->invalidated = true;
        r = kCaptureUnsupported;
      }
    return r;
  });
}

//===----------------------------------------------------------------------===//
// Modules
//===----------------------------------------------------------------------===//

EMU_API CUresult cuModuleLoadDataEx(CUmodule *module, const void *image,
                                    unsigned numOptions, int *options,
                                    void **optionValues) {
  EMU_BODY({
    if (CUresult r = needContext())
      return r;
    if (!module || !image || (numOptions && (!options || !optionValues)))
      return kInvalidValue;
    char *logBuffer = nullptr;
    size_t logSize = 0;
    int logSizeIndex = -1;
    for (unsigned i = 0; i < numOptions; ++i) {
      if (options[i] == 5) // CU_JIT_ERROR_LOG_BUFFER
        logBuffer = static_cast<char *>(optionValues[i]);
      else if (options[i] == 6) { // CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES
        logSize = size_t(reinterpret_cast<uintptr_t>(optionValues[i]));
        logSizeIndex = int(i);
      } else if (options[i] == 4)  // CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES
        optionValues[i] = nullptr; // nothing written
    }
    auto refuse = [&](CUresult r, const std::string &why) {
      emu().log("module refused: %s", why.c_str());
      if (logBuffer && logSize) {
        size_t n = std::min(why.size(), logSize - 1);
        std::memcpy(logBuffer, why.data(), n);
        logBuffer[n] = '\0';
        if (logSizeIndex >= 0)
          optionValues[logSizeIndex] = reinterpret_cast<void *>(uintptr_t(n));
      }
      return r;
    };
    size_t length = 0;
    std::string why;
    if (!imageLength(image, length, why))
      return refuse(kInvalidImage, why);
    const char *env = std::getenv("LINNET_CUDA_EMULATOR_KERNELS");
    if (!env || !*env)
      return refuse(kNoBinaryForGpu,
                    "the CUDA driver emulator runs kernels compiled for this "
                    "CPU: set LINNET_CUDA_EMULATOR_KERNELS to the artifact's "
                    "kernels.host.so (linnet build --target cuda "
                    "--host-kernels)");
    uint64_t hash = fnv1a(static_cast<const unsigned char *>(image), length);
    KernelLibrary *lib = nullptr;
    std::error_code ec;
    if (std::filesystem::is_directory(env, ec)) {
      // A directory (an artifact cache): the first kernels library under
      // it, in path order, built for this image.
      std::vector<std::string> found;
      for (auto it = std::filesystem::recursive_directory_iterator(env, ec);
           !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (name.size() > 8 && name.compare(name.size() - 8, 8, ".host.so") == 0 &&
            it->is_regular_file(ec))
          found.push_back(it->path().string());
      }
      std::sort(found.begin(), found.end());
      std::string unloadable;
      for (const std::string &path : found) {
        std::string skipped;
        KernelLibrary *candidate = kernelLibrary(path, skipped);
        if (!candidate && unloadable.empty())
          unloadable = "; " + skipped;
        if (candidate && hash != 0 && (hash == candidate->images[0] || hash == candidate->images[1])) {
          lib = candidate;
          break;
        }
      }
      if (!lib) {
        char text[64];
        std::snprintf(text, sizeof text, "0x%016llx", static_cast<unsigned long long>(hash));
        return refuse(kInvalidImage, "no kernels library (*.host.so) under LINNET_CUDA_EMULATOR_KERNELS=" +
                                         std::string(env) + " was built for the image (" +
                                         std::to_string(length) + " bytes, FNV-1a " + text + ")" +
                                         unloadable);
      }
    } else if (!(lib = kernelLibrary(env, why))) {
      return refuse(kInvalidImage, why);
    }
    if (hash == 0 || (hash != lib->images[0] && hash != lib->images[1])) {
      char text[64];
      std::snprintf(text, sizeof text, "0x%016llx",
                    static_cast<unsigned long long>(hash));
      return refuse(kInvalidImage, "the image (" + std::to_string(length) +
                                       " bytes, FNV-1a " + text +
                                       ") is not one "
                                       "LINNET_CUDA_EMULATOR_KERNELS=" +
                                       std::string(env) + " was built for");
    }
    // A new module's globals hold the image's values. (The modules of one
    // kernels library share its globals: the last one loaded resets them.)
    for (const KernelLibrary::Initial &g : lib->globals)
      std::memcpy(g.address, g.bytes.data(), g.bytes.size());
    auto m = std::make_unique<CUmod_st>();
    m->lib = lib;
    *module = m.get();
    emu().log("module load %zu bytes", length);
    emu().modules[m.get()] = std::move(m);
    return kSuccess;
  });
}

EMU_API CUresult cuModuleUnload(CUmodule module) {
  EMU_BODY({
    if (CUresult r = needContext())
      return r;
    Emulator &e = emu();
    auto it = e.modules.find(module);
    if (!module || it == e.modules.end())
      return kInvalidHandle;
    for (auto &[name, fn] : module->functions)
      e.functions.erase(fn.get());
    for (CUdeviceptr g : module->globals)
      if (auto git = e.globals.find(g);
          git != e.globals.end() && --git->second.refs == 0)
        e.globals.erase(git);
    e.modules.erase(it);
    e.log("module unload");
    return kSuccess;
  });
}

EMU_API CUresult cuModuleGetFunction(CUfunction *fn, CUmodule module,
                                     const char *name) {
  EMU_BODY({
    if (CUresult r = needContext())
      return r;
    if (!fn || !name)
      return kInvalidValue;
    Emulator &e = emu();
    if (!live(e.modules, module))
      return kInvalidHandle;
    if (auto it = module->functions.find(name); it != module->functions.end()) {
      *fn = it->second.get();
      return kSuccess;
    }
    std::string entry = std::string("linnet_kernel_") + name;
    void *code = ownSymbol(*module->lib, entry);
    auto *slots = static_cast<const int64_t *>(
        ownSymbol(*module->lib, entry + "_params"));
    if (!code || !slots || *slots < 0)
      return kNotFound;
    auto f = std::make_unique<CUfunc_st>();
    f->module = module;
    f->name = name;
    f->entry = reinterpret_cast<KernelEntry>(code);
    f->slots = *slots;
    *fn = f.get();
    e.functions[f.get()] = module;
    module->functions[name] = std::move(f);
    return kSuccess;
  });
}

EMU_API CUresult cuModuleGetGlobal_v2(CUdeviceptr *dptr, size_t *bytes,
                                      CUmodule module, const char *name) {
  EMU_BODY({
    if (CUresult r = needContext())
      return r;
    if (!name)
      return kInvalidValue;
    Emulator &e = emu();
    if (!live(e.modules, module))
      return kInvalidHandle;
    // The library's own metadata is not a global of the module.
    if (std::strncmp(name, "linnet_kernel", 13) == 0)
      return kNotFound;
    const ElfW(Sym) *sym = nullptr;
    void *p = ownSymbol(*module->lib, name, &sym);
    if (!p || ELF64_ST_TYPE(sym->st_info) != STT_OBJECT)
      return kNotFound;
    auto addr = CUdeviceptr(reinterpret_cast<uintptr_t>(p));
    size_t size = size_t(sym->st_size);
    if (std::find(module->globals.begin(), module->globals.end(), addr) ==
        module->globals.end()) {
      module->globals.push_back(addr);
      GlobalRange &g = e.globals[addr];
      g.size = std::max(g.size, size);
      ++g.refs;
    }
    if (dptr)
      *dptr = addr;
    if (bytes)
      *bytes = size;
    return kSuccess;
  });
}

EMU_API CUresult cuFuncGetAttribute(int *value, int attrib, CUfunction fn) {
  EMU_BODY({
    if (CUresult r = needContext())
      return r;
    if (!value)
      return kInvalidValue;
    if (!live(emu().functions, fn))
      return kInvalidHandle;
    if (attrib < 0 || attrib > 32)
      return kInvalidValue;
    *value = attrib == 0 ? 1024 : attrib == 8 ? fn->sharedLimit : 0;
    return kSuccess;
  });
}

EMU_API CUresult cuFuncSetAttribute(CUfunction fn, int attrib, int value) {
  EMU_BODY({
    if (CUresult r = needContext())
      return r;
    if (!live(emu().functions, fn))
      return kInvalidHandle;
    if (attrib == 8) { // MAX_DYNAMIC_SHARED_SIZE_BYTES
      if (value < 0 || value > kSharedOptin)
        return kInvalidValue;
      fn->sharedLimit = value;
      emu().log("set %s max dynamic shared %d", fn->name.c_str(), value);
      return kSuccess;
    }
    if (attrib == 9) // PREFERRED_SHARED_MEMORY_CARVEOUT: a hint
      return value >= -1 && value <= 100 ? kSuccess : kInvalidValue;
    return kInvalidValue;
  });
}

EMU_API CUresult cuLaunchKernel(CUfunction fn, unsigned gx, unsigned gy,
                                unsigned gz, unsigned bx, unsigned by,
                                unsigned bz, unsigned sharedBytes,
                                CUstream stream, void **kernelParams,
                                void **extra) {
  EMU_BODY({
    if (CUresult r = needContext())
      return r;
    if (!live(emu().functions, fn) || !validStream(stream))
      return kInvalidHandle;
    if (gx < 1 || gy < 1 || gz < 1 || bx < 1 || by < 1 || bz < 1 ||
        gx > 0x7fffffffu || gy > 65535 || gz > 65535 || bx > 1024 ||
        by > 1024 || bz > 64 || uint64_t(bx) * by * bz > 1024)
      return kInvalidValue;
    if (extra || (fn->slots > 0 && !kernelParams))
      return kInvalidValue;
    if (sharedBytes > unsigned(fn->sharedLimit))
      return kInvalidValue;
    Node n;
    n.kind = Node::Launch;
    n.fn = fn;
    n.grid[0] = gx, n.grid[1] = gy, n.grid[2] = gz;
    n.block[0] = bx, n.block[1] = by, n.block[2] = bz;
    n.shared = sharedBytes;
    n.params.resize(size_t(fn->slots));
    for (int64_t i = 0; i < fn->slots; ++i) {
      if (!kernelParams[i])
        return kInvalidValue;
      std::memcpy(&n.params[size_t(i)], kernelParams[i], sizeof(uint64_t));
    }
    return enqueue(stream, std::move(n));
  });
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

EMU_API CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytes) {
  EMU_BODY({
    if (CUresult r = needContext())
      return r;
    if (CUresult r = prohibitedByCapture())
      return r;
    if (!dptr || bytes == 0)
      return kInvalidValue;
    Emulator &e = emu();
    if (const char *cap = std::getenv("LINNET_CUDA_EMULATOR_MEMORY");
        cap && *cap) {
      char *end = nullptr;
      unsigned long long limit = std::strtoull(cap, &end, 10);
      if (end && *end == '\0' &&
          (e.liveBytes > limit || bytes > limit - e.liveBytes))
        return kOutOfMemory;
    }
    if (bytes > (size_t(1) << 48))
      return kOutOfMemory;
    size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
    void *base = std::aligned_alloc(kAlignment, rounded);
    if (!base)
      return kOutOfMemory;
    // Fresh device memory is not zeroed: all ones (NaN, -1) shows a read
    // of what was never written.
    std::memset(base, 0xff, rounded);
    auto p = CUdeviceptr(reinterpret_cast<uintptr_t>(base));
    e.allocs[p] = {bytes, base};
    e.liveBytes += bytes;
    *dptr = p;
    e.log("alloc %zu -> 0x%llx", bytes, p);
    return kSuccess;
  });
}

EMU_API CUresult cuMemFree_v2(CUdeviceptr ptr) {
  EMU_BODY({
    if (CUresult r = needContext())
      return r;
    if (CUresult r = prohibitedByCapture())
      return r;
    Emulator &e = emu();
    auto it = e.allocs.find(ptr);
    if (it == e.allocs.end())
      return kInvalidValue;
    e.liveBytes -= it->second.size;
    std::free(it->second.base);
    e.allocs.erase(it);
    e.log("free 0x%llx", ptr);
    return kSuccess;
  });
}

EMU_API CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src,
                                 size_t bytes) {
  EMU_BODY({
    Node n(Node::HtoD);
    n.dst = dst, n.hostSrc = src, n.bytes = bytes;
    return synchronousTransfer(std::move(n));
  });
}

EMU_API CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t bytes) {
  EMU_BODY({
    Node n(Node::DtoH);
    n.hostDst = dst, n.src = src, n.bytes = bytes;
    return synchronousTransfer(std::move(n));
  });
}

EMU_API CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src,
                                 size_t bytes) {
  EMU_BODY({
    Node n(Node::DtoD);
    n.dst = dst, n.src = src, n.bytes = bytes;
    return synchronousTransfer(std::move(n));
  });
}

EMU_API CUresult cuMemsetD8_v2(CUdeviceptr dst, unsigned char value,
                               size_t count) {
  EMU_BODY({
    Node n(Node::Memset);
    n.dst = dst, n.value = value, n.bytes = count;
    return synchronousTransfer(std::move(n));
  });
}

EMU_API CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src,
                                      size_t bytes, CUstream stream) {
  EMU_BODY({
    Node n(Node::HtoD);
    n.dst = dst, n.hostSrc = src, n.bytes = bytes;
    return enqueueTransfer(stream, std::move(n));
  });
}

EMU_API CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t bytes,
                                      CUstream stream) {
  EMU_BODY({
    Node n(Node::DtoH);
    n.hostDst = dst, n.src = src, n.bytes = bytes;
    return enqueueTransfer(stream, std::move(n));
  });
}

EMU_API CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src,
                                      size_t bytes, CUstream stream) {
  EMU_BODY({
    Node n(Node::DtoD);
    n.dst = dst, n.src = src, n.bytes = bytes;
    return enqueueTransfer(stream, std::move(n));
  });
}

EMU_API CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char value,
                                 size_t count, CUstream stream) {
  EMU_BODY({
    Node n(Node::Memset);
    n.dst = dst, n.value = value, n.bytes = count;
    return enqueueTransfer(stream, std::move(n));
  });
}

//===----------------------------------------------------------------------===//
// Streams and events
//===----------------------------------------------------------------------===//

EMU_API CUresult cuStreamCreate(CUstream *stream, unsigned flags) {
  EMU_BODY({
    if (CUresult r = needContext())
      return r;
    if (!stream || flags > kStreamNonBlocking)
      return kInvalidValue;
    auto s = std::make_unique<CUstream_st>();
    s->flags = flags;
    *stream = s.get();
    emu().streams[s.get()] = std::move(s);
    return kSuccess;
  });
}

EMU_API CUresult cuStreamDestroy_v2(CUstream stream) {
  EMU_BODY({
    if (CUresult r = needContext())
      return r;
    auto it = emu().streams.find(stream);
    if (!stream || it == emu().streams.end())
      return kInvalidHandle;
    if (stream->capturing)
      return kIllegalState;
    emu().streams.erase(it);
    return kSuccess;
  });
}

EMU_API CUresult cuStreamSynchronize(CUstream stream) {
  EMU_BODY({
    if (CUresult r = needContext())
      return r;
    if (!validStream(stream))
      return kInvalidHandle;
    CUresult r = prohibitedByCapture();
    if (CUstream_st *s = capturingStream(stream)) {
      if (!s->invalidated)
        emu().log("capture invalidated");
      s->invalidated = true;
      r = kCaptureUnsupported;
    }
    return r;
  });
}

EMU_API CUresult cuEventCreate(CUevent *event, unsigned flags) {
  EMU_BODY({
    if (CUresult r = needContext())
      return r;
    if (!event || flags > 0xf)
      return kInvalidValue;
    auto ev = std::make_unique<CUevent_st>();
    ev->flags = flags;
    *event = ev.get();
    emu().events[ev.get()] = std::move(ev);
    return kSuccess;
  });
}

EMU_API CUresult cuEventDestroy_v2(CUevent event) {
  EMU_BODY({
    if (CUresult r = needContext())
      return r;
    auto it = emu().events.find(event);
    if (!event || it == emu().events.end())
      return kInvalidHandle;
    emu().events.erase(it);
    return kSuccess;
  });
}

EMU_API CUresult cuEventRecord(CUevent event, CUstream stream) {
  EMU_BODY({
    if (CUresult r = needContext())
      return r;
    if (!live(emu().events, event) || !validStream(stream))
      return kInvalidHandle;
    Node n(Node::EventRecord);
    n.event = event;
    return enqueue(stream, std::move(n));
  });
}

EMU_API CUresult cuEventSynchronize(CUevent event) {
  EMU_BODY({
    if (CUresult r = needContext())
      return r;
    if (!live(emu().events, event))
      return kInvalidHandle;
    return prohibitedByCapture();
  });
}

EMU_API CUresult cuEventElapsedTime(float *ms, CUevent start, CUevent end) {
  EMU_BODY({
    if (CUresult r = needContext())
      return r;
    if (!ms)
      return kInvalidValue;
    if (!live(emu().events, start) || !live(emu().events, end) ||
        (start->flags & kEventDisableTiming) ||
        (end->flags & kEventDisableTiming))
      return kInvalidHandle;
    if (!start->when || !end->when)
      return kNotReady;
    *ms = std::chrono::duration<float, std::milli>(*end->when - *start->when)
              .count();
    return kSuccess;
  });
}

//===----------------------------------------------------------------------===//
// Graphs
//===----------------------------------------------------------------------===//

EMU_API CUresult cuStreamBeginCapture_v2(CUstream stream, int mode) {
  EMU_BODY({
    if (CUresult r = needContext())
      return r;
    if (!validStream(stream))
      return kInvalidHandle;
    if (reinterpret_cast<uintptr_t>(stream) <= 2)
      return kCaptureUnsupported; // the legacy stream cannot capture
    if (mode != kCaptureGlobal && mode != kCaptureThreadLocal &&
        mode != kCaptureRelaxed)
      return kInvalidValue;
    if (stream->capturing)
      return kIllegalState;
    stream->capturing = true;
    stream->invalidated = false;
    stream->mode = mode;
    stream->thread = std::this_thread::get_id();
    stream->nodes.clear();
    emu().log("capture begin");
    return kSuccess;
  });
}

EMU_API CUresult cuStreamEndCapture(CUstream stream, CUgraph *graph) {
  EMU_BODY({
    if (CUresult r = needContext())
      return r;
    if (!graph)
      return kInvalidValue;
    if (!validStream(stream))
      return kInvalidHandle;
    CUstream_st *s = capturingStream(stream);
    if (!s)
      return kIllegalState;
    if (s->mode != kCaptureRelaxed && s->thread != std::this_thread::get_id())
      return kCaptureWrongThread;
    s->capturing = false;
    std::vector<Node> nodes = std::move(s->nodes);
    s->nodes.clear();
    if (s->invalidated) {
      s->invalidated = false;
      *graph = nullptr;
      emu().log("capture end invalidated");
      return kCaptureInvalidated;
    }
    auto g = std::make_unique<CUgraph_st>();
    g->nodes = std::move(nodes);
    emu().log("capture end %zu nodes", g->nodes.size());
    *graph = g.get();
    emu().graphs[g.get()] = std::move(g);
    return kSuccess;
  });
}

EMU_API CUresult cuGraphInstantiateWithFlags(CUgraphExec *exec, CUgraph graph,
                                             unsigned long long flags) {
  EMU_BODY({
    if (CUresult r = needContext())
      return r;
    if (!exec)
      return kInvalidValue;
    if (!live(emu().graphs, graph))
      return kInvalidHandle;
    auto x = std::make_unique<CUgraphExec_st>();
    x->nodes = graph->nodes;
    *exec = x.get();
    emu().execs[x.get()] = std::move(x);
    return kSuccess;
  });
}

EMU_API CUresult cuGraphLaunch(CUgraphExec exec, CUstream stream) {
  EMU_BODY({
    if (CUresult r = needContext())
      return r;
    if (!live(emu().execs, exec) || !validStream(stream))
      return kInvalidHandle;
    if (CUstream_st *s = capturingStream(stream)) {
      // Captured as its nodes (CUDA makes a child graph node).
      if (s->invalidated)
        return kCaptureInvalidated;
      emu().log("record graph launch %zu nodes", exec->nodes.size());
      s->nodes.insert(s->nodes.end(), exec->nodes.begin(), exec->nodes.end());
      return kSuccess;
    }
    if (CUresult r = legacyJoinsCapture(stream))
      return r;
    emu().log("graph launch %zu nodes", exec->nodes.size());
    for (const Node &n : exec->nodes)
      if (CUresult r = execute(n, true))
        return r;
    return kSuccess;
  });
}

EMU_API CUresult cuGraphDestroy(CUgraph graph) {
  EMU_BODY({
    if (CUresult r = needContext())
      return r;
    auto it = emu().graphs.find(graph);
    if (!graph || it == emu().graphs.end())
      return kInvalidHandle;
    emu().graphs.erase(it);
    return kSuccess;
  });
}

EMU_API CUresult cuGraphExecDestroy(CUgraphExec exec) {
  EMU_BODY({
    if (CUresult r = needContext())
      return r;
    auto it = emu().execs.find(exec);
    if (!exec || it == emu().execs.end())
      return kInvalidHandle;
    emu().execs.erase(it);
    return kSuccess;
  });
}

// Updates `exec` in place to `graph`'s parameters when CUDA would: the same
// nodes in the same order (a launch may change its function, grid, shared
// bytes and parameters; a copy or fill its addresses, size and value; a
// copy not its direction). `info` is a CUgraphExecUpdateResultInfo: the
// result (CUgraphExecUpdateResult) and the two nodes at fault, which are
// left null here.
EMU_API CUresult cuGraphExecUpdate_v2(CUgraphExec exec, CUgraph graph,
                                      void *info) {
  EMU_BODY({
    if (CUresult r = needContext())
      return r;
    if (!info)
      return kInvalidValue;
    if (!live(emu().execs, exec) || !live(emu().graphs, graph))
      return kInvalidHandle;
    enum : int {
      kUpdateSuccess = 0,
      kTopologyChanged = 2,
      kNodeTypeChanged = 3,
      kParametersChanged = 5,
    };
    auto isCopy = [](Node::Kind k) {
      return k == Node::HtoD || k == Node::DtoH || k == Node::DtoD;
    };
    int result = kUpdateSuccess;
    if (exec->nodes.size() != graph->nodes.size())
      result = kTopologyChanged;
    for (size_t i = 0; result == kUpdateSuccess && i < exec->nodes.size();
         ++i) {
      Node::Kind a = exec->nodes[i].kind, b = graph->nodes[i].kind;
      if (a != b)
        result = isCopy(a) && isCopy(b) ? kParametersChanged : kNodeTypeChanged;
    }
    struct ResultInfo {
      int result;
      void *errorNode, *errorFromNode;
    } out{result, nullptr, nullptr};
    std::memcpy(info, &out, sizeof out);
    if (result != kUpdateSuccess) {
      emu().log("graph update refused (result %d)", result);
      return kUpdateFailure;
    }
    exec->nodes = graph->nodes;
    emu().log("graph update %zu nodes", exec->nodes.size());
    return kSuccess;
  });
}

// Every entry point has the type the runtime calls it with.
#define LINNET_EMULATOR_CHECK(name, ...)                                       \
  static_assert(std::is_same_v<decltype(&::name), CUresult (*)(__VA_ARGS__)>,  \
                #name " does not have Driver.h's type");
namespace linnet::cuda {
LINNET_CUDA_DRIVER_SYMBOLS(LINNET_EMULATOR_CHECK)
}
#undef LINNET_EMULATOR_CHECK
