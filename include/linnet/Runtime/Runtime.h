//===- Runtime.h - Load and run a CPU ProgramArtifact -----------*- C++ -*-===//
//
// A Model is a loaded artifact (docs/runtime-abi.md): its library, its
// weights bound and checked, its state. Loading reports every problem with
// the weights at once; calling an entry binds the entry's generics from the
// inputs' shapes, checks them, allocates the results and calls the code.
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_RUNTIME_RUNTIME_H
#define LINNET_RUNTIME_RUNTIME_H

#include "linnet/Runtime/Binding.h"
#include "linnet/Runtime/Quantize.h"
#include "linnet/Runtime/TensorFiles.h"

#include "linnet/Runtime/HostCpu.h"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace linnet::rt {

using SigDim = std::variant<int64_t, std::string>;

/// A dim in an entry signature: a constant, or a generic's name or an
/// expression over generics (`N + 1`) as text.
struct TensorSig {
  std::string name;
  DType dtype;
  std::vector<SigDim> shape;
  std::string relation; // set on the row_ptr / col_idx inputs of a CSR relation
  std::string numSrc;   // col_idx: the relation's source count (a dim expression)
};

/// One comparison of an entry's `where` clause, over its generics and its
/// integer scalar inputs; checked before every call.
struct WhereSig {
  SigDim lhs, rhs;
  std::string op;   // == != < <= > >=
  std::string text; // as written, for the message
};

struct EntrySig {
  std::string name, symbol;
  std::vector<std::string> generics;
  std::vector<TensorSig> inputs, results;
  std::vector<WhereSig> where;
};

enum class TensorKind { Param, Buffer, State };

struct ModelTensor {
  std::string path;
  TensorKind kind;
  DType dtype;
  std::vector<int64_t> shape;
  /// A param stored in a block format (runtime.json's dtype "q8_0",
  /// "q4_0"): `shape` is its values', `dtype` U8, and the entry takes its
  /// blocks as a [..., last / block, block bytes] byte tensor.
  std::optional<BlockFormat> storage;
  /// The layout the entries read a q4_0 param's blocks in (runtime.json's
  /// `layouts`): empty for the file's, "q4_0x8" for rows in groups of
  /// eight (docs/cpu-abi.md), which the runtime repacks them into.
  std::string layout;
  bool optional = false, present = true;
  std::string block; // optional sub block it belongs to, if any
  bool required = false; // the block requires it: without it the block is absent
};

/// A run-time check compiled into the library (an index against its bound,
/// an integer divisor against zero): what a failed one reports.
struct CheckInfo {
  std::string kind;   // index, division
  std::string loc;    // file:line:col of the source expression
  std::string tensor; // index: the tensor read
  int64_t axis = 0;   // index: its axis
};

/// The parsed runtime.json of an artifact.
struct ArtifactInfo {
  std::string abi, library;
  std::vector<ModelTensor> tensors;
  std::vector<EntrySig> entries;
  std::map<int64_t, CheckInfo> checks; // by id (1, 2, ...)
  /// Runtime descriptions of the same model with other optional tensors
  /// present (files of the artifact); the load picks the one the weights
  /// match.
  std::vector<std::string> variants;
  /// A library built with `linnet build --profile`: the task (portable
  /// plan id) each timer id stands for.
  std::vector<std::string> profileTasks;
  /// A distributed artifact (`linnet build --ranks N`): the rank count its
  /// plan is for and its relation kernels, by hook id.
  struct DistributedKernel {
    std::string name, symbol;
    std::vector<std::string> roles; // row_ptr, col_idx, src | edge | dst..., out...
    std::vector<int64_t> ranks, elemBytes; // per argument: memref rank (1-8), element size
    /// The concrete plan's commands one call runs: the interior and
    /// boundary rows (the kernel's symbol), and per `src` field its halo
    /// pack, exchange and unpack (pack/unpack: generated functions).
    std::string interiorCommand, boundaryCommand;
    struct Halo {
      std::string field;
      int64_t arg = -1; // the kernel argument the field is (a `src` role)
      std::string packCommand, packSymbol, exchangeCommand, unpackCommand, unpackSymbol;
    };
    std::vector<Halo> halos;
  };
  struct Distributed {
    int64_t ranks = 0;
    std::vector<DistributedKernel> kernels;
  };
  std::optional<Distributed> distributed;
  /// A device artifact's own description (JSON text), read by the device
  /// backend of its ABI; empty for the CPU ABI.
  std::string device;
  /// The CPU the host code was compiled for (HostCpu.h): checked against
  /// this machine's before the library is loaded. Absent in artifacts
  /// older than the member.
  std::optional<CpuRequirement> cpu;
  /// The library's workspace stack (docs/cpu-abi.md): per entry, the most
  /// bytes of it one thread holds during a call, as the build bounded it
  /// (nullopt: no static bound). Empty for a library without the member.
  std::map<std::string, std::optional<uint64_t>> workspacePeak;
};

/// What the library's workspace stack has done (linnet_workspace_stats).
struct WorkspaceStats {
  uint64_t peak = 0;       // the most bytes one thread held since the last reset
  uint64_t chunks = 0;     // chunks allocated since the library was loaded
  uint64_t chunkBytes = 0; // their bytes
};

/// One timer event of an instrumented library: a command (by timer id,
/// ArtifactInfo::profileTasks) began or ended, CLOCK_MONOTONIC ns.
struct ProfileEvent {
  uint32_t task;
  uint32_t end; // 0: begin, 1: end
  uint64_t ns;
};
/// One execution of a timed command: a begin and an end event paired.
struct TimedCommand {
  uint32_t task;
  uint64_t begin, end; // ns
};
/// Pairs each end event with the latest unmatched begin of the same timer,
/// in event order (timers nest only by accident). Events of timers at or
/// above `timers` and events left unmatched are skipped.
std::vector<TimedCommand> pairProfileEvents(const std::vector<ProfileEvent> &events, size_t timers);

/// Parses runtime.json's text strictly: every field typed, unknown fields,
/// duplicate tensors or entries refused, each entry's symbol the ABI's
/// `linnet_entry_<name>`, signature dims over the entry's declared generics,
/// state sizes representable. Errors name the JSON path ("entries[0].symbol: ...").
bool parseArtifactInfo(std::string_view text, ArtifactInfo &out, std::string &error);

/// Default limit of the bytes one call's results take together;
/// LINNET_MAX_CALL_BYTES overrides.
inline constexpr uint64_t kDefaultMaxCallBytes = 16ull << 30;
uint64_t maxCallBytes();
/// Bytes of a dense tensor, or nullopt when a dim is negative or the size
/// overflows 64 bits.
std::optional<uint64_t> tensorBytes(const std::vector<int64_t> &shape, DType dtype);
/// Adds the bytes of `shape` x `dtype` to `total`, refusing (with `what`
/// named) a size past 64 bits or a total over maxCallBytes().
bool checkCallBytes(const std::string &what, const std::vector<int64_t> &shape, DType dtype,
                    uint64_t &total, std::string &error);

/// What checkEntryInputs found: the generics the inputs bind and the
/// results' shapes.
struct EntryCall {
  std::map<std::string, int64_t> generics;
  std::vector<std::vector<int64_t>> resultShapes;
  uint64_t resultBytes = 0;
};

/// The one check of an entry's inputs, run before anything is allocated
/// or called, by every path that calls an entry (Model::call and check,
/// each rank of a distributed run, the interpreter, the Python binding):
/// the input count; each input's dtype, rank, and bytes against its shape;
/// the generics bound from the shapes and every dim agreeing with them
/// (per-edge inputs against the relation's edge count among them); CSR
/// relations (row_ptr monotone from 0 to the edge count, sources in range);
/// the `where` clause; and the results' sizes, in overflow-checked
/// arithmetic, against maxCallBytes(). Errors name the input or result.
bool checkEntryInputs(const EntrySig &sig, std::span<const TensorView> inputs, EntryCall &call,
                      std::string &error);

class VerifiedArtifact;

/// The device side of a loaded artifact whose ABI is not the CPU's: a
/// device backend (lib/Target/<T>/Runtime) owns the device's memory, its
/// loaded code and the library's host hooks. The Model still checks
/// weights, inputs and shapes; the session moves the bytes and runs.
class DeviceSession {
public:
  virtual ~DeviceSession();
  /// Copies every bound tensor (present parameters, buffers and state, in
  /// the ABI's order) to the device once; state stays there between calls.
  virtual bool bind(const std::vector<TensorView> &bound, std::string &error) = 0;
  /// One call of the library's packed entry `fn` with the inputs, the
  /// bound tensors and `results` (allocated by the caller on the host,
  /// shapes set) as device descriptors; copies the results back.
  virtual bool call(void (*fn)(void **), const std::vector<TensorView> &inputs,
                    std::vector<OwnedTensor> &results, std::string &error) = 0;
  /// Copies bound tensor `index` (a state tensor) back into `out`.
  virtual bool download(size_t index, std::span<std::byte> out, std::string &error) = 0;
};

/// A runtime ABI served by a device backend.
struct DeviceBackend {
  std::string abi;
  /// Opens a session for a loaded artifact: `library` is its dlopen
  /// handle, `art` gives its other files by digest.
  std::function<std::unique_ptr<DeviceSession>(const VerifiedArtifact &art, const ArtifactInfo &info,
                                               void *library, std::string &error)>
      open;
};
/// Makes `backend.abi` loadable (once per ABI; a later one replaces it).
void registerDeviceBackend(DeviceBackend backend);
const DeviceBackend *findDeviceBackend(std::string_view abi);

/// MLIR's strided memref descriptor of a dense row-major tensor at `data`,
/// as a flat int64 buffer: {allocated, aligned, offset, sizes[N], strides[N]}.
std::vector<int64_t> memrefDescriptor(const void *data, const std::vector<int64_t> &shape);

struct LoadOptions {
  std::string weightsPath;
  /// Map the weights (the default: they must not change during the run)
  /// or read them into memory first (`--no-mmap`; SafeTensorsFile::open).
  bool mapWeights = true;
  /// Maps a canonical path to the tensor's name in the weights file
  /// (a binding manifest); identity when unset.
  std::function<std::string(const std::string &)> externalName;
  /// The binding manifest itself, for the tensors it says are stored in
  /// another row order (applyBindingTransforms); none when unset.
  std::shared_ptr<const BindingMap> binding;
};

class Model {
public:
  /// Loads the artifact in `dir` through its manifest (Artifact.h): the
  /// runtime description and the library are read once, checked against
  /// their digests, and used from those bytes. On failure returns null and
  /// sets `error` to every problem found, one per line.
  static std::unique_ptr<Model> load(const std::string &dir, const LoadOptions &opts,
                                     std::string &error);
  ~Model();

  const ArtifactInfo &info() const { return info_; }
  const EntrySig *findEntry(const std::string &name) const;

  /// Calls `entry` with `inputs`; fills `results`. Errors name the input.
  bool call(const std::string &entry, const std::vector<TensorView> &inputs,
            std::vector<OwnedTensor> &results, std::string &error);
  /// Checks `inputs` as call() does (dtypes, shapes, relations, the
  /// entry's `where` clause) without running: a tool can see a whole run's
  /// calls fit before starting it (`linnet generate` and the KV cache).
  bool check(const std::string &entry, const std::vector<TensorView> &inputs,
             std::string &error);

  /// Current value of a state tensor (for tests and tools).
  const OwnedTensor *state(const std::string &path) const;
  /// Whether the library times its commands (built with --profile).
  bool profiled() const { return profileTake_ != nullptr; }
  /// The timer events of the calls since the last take, oldest first, and
  /// how many did not fit the library's buffer (`dropped`). Empty when the
  /// library is not instrumented.
  std::vector<ProfileEvent> takeProfile(uint64_t &dropped);
  /// The workspace stack's counters (resetting the peak when asked);
  /// nullopt for a library without a workspace stack.
  std::optional<WorkspaceStats> workspaceStats(bool resetPeak = false) const;
  /// A symbol the library defines (a distributed kernel's C interface, the
  /// distributed hook), or null.
  void *librarySymbol(const std::string &name) const;

private:
  Model() = default;
  /// call()'s checks and its results' shapes; runs the entry when `run`.
  bool invoke(const std::string &entry, const std::vector<TensorView> &inputs,
              std::vector<OwnedTensor> &results, std::string &error, bool run);
  ArtifactInfo info_;
  std::unique_ptr<SafeTensorsFile> weights_;
  void *library_ = nullptr;
  int libraryFd_ = -1; // the memfd the library was opened from
  std::map<std::string, void (*)(void **)> symbols_;
  /// The library's `linnet_status` (failed check id, value, bound), when it
  /// has checks.
  int64_t *status_ = nullptr;
  /// The profile shim's `linnet_profile_take`, in an instrumented library.
  const ProfileEvent *(*profileTake_)(uint64_t *count, uint64_t *calls) = nullptr;
  /// One view per present tensor, in ABI order; state views point into state_.
  std::vector<TensorView> bound_;
  /// Blocks quantized at load (a block-format param from f32 weights).
  std::vector<std::vector<std::byte>> quantized_;
  /// Host copies of the state; on a device, refreshed by state().
  mutable std::map<std::string, OwnedTensor> state_;
  std::unique_ptr<DeviceSession> device_;
};

/// The executor of distributed artifacts (LinnetDistributed, built where
/// MPI is) as the C API reaches it without depending on MPI: the library
/// that has one registers it (`dist::registerExecutor`).
struct DistributedExecutor {
  /// One rank's share of a call (rank 0 passes the inputs and gets the
  /// gathered results); false with `error` when rank 0 refused the inputs.
  bool (*call)(Model &model, const std::string &artifact, const std::string &entry,
               const std::vector<OwnedTensor> &inputs,
               std::vector<OwnedTensor> &results, double timeoutSeconds, std::string &error);
  int (*rank)();
  int (*size)();
  void (*finalize)();
};
void registerDistributedExecutor(const DistributedExecutor &executor);
/// The registered executor, or null.
const DistributedExecutor *distributedExecutor();

} // namespace linnet::rt

#endif // LINNET_RUNTIME_RUNTIME_H
