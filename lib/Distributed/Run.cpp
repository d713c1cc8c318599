//===- Run.cpp - A distributed artifact's entry on MPI ranks --------------===//
//
// Every rank sets the library's `linnet_dist_hook`; each relation kernel
// call then runs the concrete plan's commands of that kernel (runtime.json
// names them). Run.h says what a run does; docs/distributed.md how.
//
//===----------------------------------------------------------------------===//
#include "linnet/Distributed/Run.h"

#include "linnet/Distributed/Partition.h"
#include "linnet/Runtime/Runtime.h"

#include <fmt/format.h>

// The C API only (OpenMPI and MPICH would pull in their C++ bindings).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <cctype>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <thread>

using namespace linnet;

namespace {

using Clock = std::chrono::steady_clock;
double secondsSince(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

/// A memref descriptor as MLIR's C interface lays it out: allocated and
/// aligned pointers, offset, sizes[rank], strides[rank].
struct Desc {
  std::vector<int64_t> w;
  int rank = 1;
  static Desc of(const void *p, int rank) {
    Desc d;
    d.rank = rank;
    d.w.resize(size_t(3 + 2 * rank));
    std::memcpy(d.w.data(), p, d.w.size() * sizeof(int64_t));
    return d;
  }
  static Desc over(void *base, int rank, const std::vector<int64_t> &sizes) {
    Desc d;
    d.rank = rank;
    d.w.assign(size_t(3 + 2 * rank), 0);
    d.w[0] = d.w[1] = int64_t(reinterpret_cast<intptr_t>(base));
    int64_t stride = 1;
    for (int k = rank - 1; k >= 0; --k) {
      d.w[size_t(3 + k)] = sizes[size_t(k)];
      d.w[size_t(3 + rank + k)] = stride;
      stride *= sizes[size_t(k)];
    }
    return d;
  }
  char *aligned() const { return reinterpret_cast<char *>(intptr_t(w[1])); }
  void setAligned(const void *p) { w[1] = int64_t(reinterpret_cast<intptr_t>(p)); }
  int64_t size(int k) const { return w[size_t(3 + k)]; }
  void setSize0(int64_t n) { w[3] = n; }
  int64_t stride(int k) const { return w[size_t(3 + rank + k)]; }
  std::vector<int64_t> sizes() const { return {w.begin() + 3, w.begin() + 3 + rank}; }
  /// Elements per leading-axis row; 0 when the layout is not row-major
  /// contiguous (the kernels' layouts always are).
  int64_t rowElems() const {
    int64_t e = 1;
    for (int k = rank - 1; k >= 1; --k) {
      if (stride(k) != e)
        return 0;
      e *= size(k);
    }
    return rank == 1 || stride(0) == e ? e : 0;
  }
};

/// The state of this rank, which the hook (a plain C function pointer the
/// library calls) reaches: one distributed run per process.
struct RankState {
  int rank = 0, size = 1;
  const rt::ArtifactInfo::Distributed *dist = nullptr;
  dist::Part part;
  std::vector<void *> kernels; // C interfaces, by hook id
  /// Per kernel and halo field: the generated pack and unpack functions.
  std::vector<std::vector<std::pair<void *, void *>>> haloFns;
  /// The part's send list (every neighbour's rows, in sendTo order) and
  /// ghost slots (owned + k): the index vectors of pack and unpack.
  std::vector<int64_t> sendIdx, slots;
  double timeout = 60;
  // Figures for --stats.
  int64_t bytesSent = 0, messages = 0, exchanges = 0;
  double interiorS = 0, boundaryS = 0, waitS = 0, packS = 0, kernelS = 0;
  /// Seconds and executions per plan command, in `commandIds` order.
  std::vector<std::string> commandIds;
  std::map<std::string, size_t> commandIndex;
  std::vector<double> commandS;
  std::vector<int64_t> commandRuns;
  void ran(const std::string &command, Clock::time_point since) {
    size_t i = commandIndex.at(command);
    commandS[i] += secondsSince(since);
    ++commandRuns[i];
  }
  /// Fault injection for the tests (docs/distributed.md): this rank kills
  /// itself, or stops answering, at its first relation kernel, or gets a
  /// relation its entry refuses (a row_ptr that ends past its edges).
  int killRank = -1, hangRank = -1, badInputRank = -1;
  /// Where the hanging rank stops: "kernel" (its first relation kernel),
  /// "parts" (before receiving its part) or "results" (before sending them).
  std::string hangStage = "kernel";
  /// Exchange buffers per (kernel, argument), kept from call to call: a
  /// layer called again reuses its pages instead of faulting in and
  /// zeroing new ones.
  struct Buffers {
    std::vector<char> send, recv, extended;
  };
  std::map<std::pair<int64_t, size_t>, Buffers> buffers;
  /// Entity inputs are allocated with room for the part's ghost rows past
  /// their owned rows (the plan's instance capacity): a kernel reading one
  /// as its source gets its ghosts unpacked in place. Start -> bytes.
  std::map<const char *, size_t> ghostRoom;
  /// The prefix of the run's messages, and where --stats figures go.
  std::string who = "linnet run";
  std::ostream *log = &std::cerr;
};
RankState *gState = nullptr;

[[noreturn]] void fail(const std::string &what) {
  int rank = gState ? gState->rank : 0;
  std::cerr << fmt::format("{}: error: rank {}: {}\n", gState ? gState->who : "linnet", rank, what) << std::flush;
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::exit(1);
}

void callKernel(void *fn, const std::vector<void *> &a) {
  using P = void *;
  switch (a.size()) {
  case 3:
    reinterpret_cast<void (*)(P, P, P)>(fn)(a[0], a[1], a[2]);
    return;
  case 4:
    reinterpret_cast<void (*)(P, P, P, P)>(fn)(a[0], a[1], a[2], a[3]);
    return;
  case 5:
    reinterpret_cast<void (*)(P, P, P, P, P)>(fn)(a[0], a[1], a[2], a[3], a[4]);
    return;
  case 6:
    reinterpret_cast<void (*)(P, P, P, P, P, P)>(fn)(a[0], a[1], a[2], a[3], a[4], a[5]);
    return;
  case 7:
    reinterpret_cast<void (*)(P, P, P, P, P, P, P)>(fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6]);
    return;
  case 8:
    reinterpret_cast<void (*)(P, P, P, P, P, P, P, P)>(fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]);
    return;
  case 9:
    reinterpret_cast<void (*)(P, P, P, P, P, P, P, P, P)>(fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8]);
    return;
  case 10:
    reinterpret_cast<void (*)(P, P, P, P, P, P, P, P, P, P)>(fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8],
                                                                 a[9]);
    return;
  default:
    fail(fmt::format("a relation kernel with {} arguments (at most 10 are supported)", a.size()));
  }
}

/// Fault injection: the hanging rank stops answering at `stage`.
void maybeHang(const char *stage) {
  if (gState->rank == gState->hangRank && gState->hangStage == stage)
    for (;;)
      std::this_thread::sleep_for(std::chrono::seconds(1));
}

/// Waits for `reqs`, polling, for at most the run's timeout. Every wait of a
/// distributed run goes through here (point to point and collective alike),
/// so a rank that fails or hangs ends the run with an error on the others,
/// never a wait without end.
void waitAll(std::vector<MPI_Request> &reqs, const std::string &what) {
  auto start = Clock::now();
  for (;;) {
    int done = 0;
    if (MPI_Testall(int(reqs.size()), reqs.data(), &done, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
      fail(fmt::format("{} failed", what));
    if (done)
      return;
    if (secondsSince(start) > gState->timeout)
      fail(fmt::format("{} did not complete in {:g} s (a rank failed or hangs; --timeout)", what, gState->timeout));
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

/// The hook: one relation kernel call of the entry, distributed.
extern "C" void linnetDistributedKernel(int64_t kernel, int64_t nargs, void **descs) {
  RankState &S = *gState;
  if (kernel < 0 || size_t(kernel) >= S.dist->kernels.size())
    fail(fmt::format("the library called distributed kernel {}, runtime.json lists {}", kernel,
                     S.dist->kernels.size()));
  const rt::ArtifactInfo::DistributedKernel &k = S.dist->kernels[size_t(kernel)];
  if (size_t(nargs) != k.roles.size())
    fail(fmt::format("kernel {}: {} arguments, runtime.json says {}", k.name, nargs, k.roles.size()));
  const dist::Part &P = S.part;
  if (S.rank == S.killRank)
    ::raise(SIGKILL);
  maybeHang("kernel");
  auto t0 = Clock::now();
  std::vector<Desc> d;
  std::vector<int64_t> rowBytes(size_t(nargs), 0);
  for (int64_t i = 0; i < nargs; ++i) {
    d.push_back(Desc::of(descs[i], int(k.ranks[size_t(i)])));
    // The offset folded into the aligned pointer: rows start at aligned().
    d.back().w[1] += d.back().w[2] * k.elemBytes[size_t(i)];
    d.back().w[2] = 0;
    const std::string &role = k.roles[size_t(i)];
    if (role == "src" || role == "dst" || role == "out") {
      int64_t e = d.back().rowElems();
      if (e == 0)
        fail(fmt::format("kernel {}: argument {} is not row-major contiguous", k.name, i));
      rowBytes[size_t(i)] = e * k.elemBytes[size_t(i)];
      if (d.back().size(0) != P.owned)
        fail(fmt::format("kernel {}: argument {} ({}) has {} rows, this rank owns {}", k.name, i, role,
                         d.back().size(0), P.owned));
    }
  }
  int64_t ghosts = int64_t(P.ghostGlobal.size());
  bool neighbours = !P.recvFrom.empty() || !P.sendTo.empty();

  // Rows [lo, hi) of the part; `sources` replaces the src descriptors.
  auto run = [&](int64_t lo, int64_t hi, const std::vector<Desc> *sources) {
    if (hi <= lo)
      return;
    std::vector<Desc> a = d;
    a[0] = Desc::over(const_cast<int64_t *>(P.rowPtr.data() + lo), 1, {hi - lo + 1});
    a[1] = Desc::over(const_cast<int64_t *>(P.colIdx.data()), 1, {int64_t(P.colIdx.size())});
    for (int64_t i = 2; i < nargs; ++i) {
      const std::string &role = k.roles[size_t(i)];
      if (role == "src" && sources)
        a[size_t(i)] = (*sources)[size_t(i)];
      if (role == "dst" || role == "out") {
        a[size_t(i)].setAligned(d[size_t(i)].aligned() + lo * rowBytes[size_t(i)]);
        a[size_t(i)].setSize0(hi - lo);
      }
    }
    std::vector<void *> ptrs;
    for (Desc &x : a)
      ptrs.push_back(x.w.data());
    callKernel(S.kernels[size_t(kernel)], ptrs);
  };
  // A generated halo function: (rows, index vector, rows).
  auto rowCopy = [&](void *fn, const Desc &from, const std::vector<int64_t> &idx, const Desc &to) {
    Desc i = Desc::over(const_cast<int64_t *>(idx.data()), 1, {int64_t(idx.size())});
    Desc f = from, t = to;
    callKernel(fn, {f.w.data(), i.w.data(), t.w.data()});
  };
  auto rowsOf = [&](size_t arg, char *base, int64_t rows) {
    std::vector<int64_t> sizes = d[arg].sizes();
    sizes[0] = rows;
    return Desc::over(base, d[arg].rank, sizes);
  };

  if (k.halos.empty() || !neighbours) {
    // No halo, or a part that shares no edge: the interior command is
    // every row (the boundary has no ghost to wait for).
    auto tk = Clock::now();
    run(0, P.owned, nullptr);
    S.ran(k.interiorCommand, tk);
    S.kernelS += secondsSince(tk);
    return;
  }

  // The plan's commands, in its order: pack, exchange (posted), interior,
  // exchange (completed), unpack, boundary.
  std::vector<MPI_Request> reqs;
  std::vector<MPI_Datatype> rowTypes;
  std::vector<RankState::Buffers *> bufs;
  std::vector<Clock::time_point> posted; // an exchange lasts from its post to its completion
  for (size_t h = 0; h < k.halos.size(); ++h) {
    const rt::ArtifactInfo::DistributedKernel::Halo &halo = k.halos[h];
    size_t arg = size_t(halo.arg);
    int64_t rb = rowBytes[arg];
    RankState::Buffers &buf = S.buffers[{kernel, arg}];
    bufs.push_back(&buf);
    buf.send.resize(S.sendIdx.size() * size_t(rb));
    buf.recv.resize(size_t(ghosts * rb));
    auto tPack = Clock::now();
    rowCopy(S.haloFns[size_t(kernel)][h].first, d[arg], S.sendIdx,
            rowsOf(arg, buf.send.data(), int64_t(S.sendIdx.size())));
    S.ran(halo.packCommand, tPack);
    S.packS += secondsSince(tPack);

    posted.push_back(Clock::now());
    MPI_Datatype row;
    MPI_Type_contiguous(int(rb), MPI_BYTE, &row);
    MPI_Type_commit(&row);
    rowTypes.push_back(row);
    int tag = int(kernel * 64 + halo.arg);
    int64_t at = 0;
    for (size_t n = 0; n < P.recvFrom.size(); ++n) {
      reqs.emplace_back();
      MPI_Irecv(buf.recv.data() + at * rb, int(P.recvCount[n]), row, int(P.recvFrom[n]), tag, MPI_COMM_WORLD,
                &reqs.back());
      at += P.recvCount[n];
    }
    at = 0;
    for (size_t n = 0; n < P.sendTo.size(); ++n) {
      int64_t count = int64_t(P.sendRows[n].size());
      reqs.emplace_back();
      MPI_Isend(buf.send.data() + at * rb, int(count), row, int(P.sendTo[n]), tag, MPI_COMM_WORLD, &reqs.back());
      at += count;
      S.bytesSent += count * rb;
      ++S.messages;
    }
  }
  ++S.exchanges;

  // Interior rows read owned sources only: they run while rows travel.
  auto tInt = Clock::now();
  run(0, P.interior, nullptr);
  S.ran(k.interiorCommand, tInt);
  S.interiorS += secondsSince(tInt);
  auto tWait = Clock::now();
  waitAll(reqs, fmt::format("the halo exchange of kernel {}", k.name));
  S.waitS += secondsSince(tWait);
  // The exchange ran concurrently with the interior rows: its duration
  // overlaps theirs.
  for (size_t h = 0; h < k.halos.size(); ++h)
    S.ran(k.halos[h].exchangeCommand, posted[h]);
  for (MPI_Datatype &row : rowTypes)
    MPI_Type_free(&row);

  // Unpack: the owned rows, then the received ghost rows at their slots,
  // into one buffer the boundary rows read as their sources.
  std::vector<Desc> sources = d;
  for (size_t h = 0; h < k.halos.size(); ++h) {
    const auto &halo = k.halos[h];
    size_t arg = size_t(halo.arg);
    int64_t rb = rowBytes[arg];
    auto tUnpack = Clock::now();
    char *base = d[arg].aligned();
    auto room = S.ghostRoom.find(base);
    if (room == S.ghostRoom.end() || room->second < size_t((P.owned + ghosts) * rb)) {
      // A source the entry computed: owned rows copied beside the ghosts.
      std::vector<char> &extended = bufs[h]->extended;
      extended.resize(size_t((P.owned + ghosts) * rb));
      std::memcpy(extended.data(), base, size_t(P.owned * rb));
      base = extended.data();
    }
    sources[arg] = rowsOf(arg, base, P.owned + ghosts);
    rowCopy(S.haloFns[size_t(kernel)][h].second, rowsOf(arg, bufs[h]->recv.data(), ghosts), S.slots, sources[arg]);
    S.ran(halo.unpackCommand, tUnpack);
    S.packS += secondsSince(tUnpack);
  }
  // Boundary rows over owned + ghost sources.
  auto tBnd = Clock::now();
  run(P.interior, P.owned, &sources);
  S.ran(k.boundaryCommand, tBnd);
  S.boundaryS += secondsSince(tBnd);
  S.kernelS += secondsSince(t0);
}

// --- Moving parts and tensors between ranks ----------------------------------

template <class T> MPI_Datatype mpiType();
template <> MPI_Datatype mpiType<int64_t>() { return MPI_INT64_T; }
template <> MPI_Datatype mpiType<std::byte>() { return MPI_BYTE; }
/// MPI counts are ints: a long vector goes in chunks, after its length.
constexpr int64_t kChunk = int64_t(1) << 28;

/// What the messages of each tag carry, for the timeout's message.
const char *tagName(int tag) {
  return tag == 1 ? "its part of the relation" : tag == 2 ? "its inputs" : "the results";
}

/// One point-to-point transfer, waited for with the run's timeout.
void transfer(bool send, void *data, int count, MPI_Datatype type, int peer, int tag) {
  std::vector<MPI_Request> req(1);
  if (send)
    MPI_Isend(data, count, type, peer, tag, MPI_COMM_WORLD, &req[0]);
  else
    MPI_Irecv(data, count, type, peer, tag, MPI_COMM_WORLD, &req[0]);
  waitAll(req, send ? fmt::format("sending {} to rank {}", tagName(tag), peer)
                    : fmt::format("receiving {} from rank {}", tagName(tag), peer));
}

template <class T> void sendVec(const std::vector<T> &v, int to, int tag) {
  int64_t n = int64_t(v.size());
  transfer(true, &n, 1, MPI_INT64_T, to, tag);
  for (int64_t at = 0; at < n; at += kChunk)
    transfer(true, const_cast<T *>(v.data() + at), int(std::min(n - at, kChunk)), mpiType<T>(), to, tag);
}
/// `room` more elements past the message, left zero.
template <class T> std::vector<T> recvVec(int from, int tag, size_t room = 0) {
  int64_t n = 0;
  transfer(false, &n, 1, MPI_INT64_T, from, tag);
  if (n < 0)
    fail(fmt::format("a malformed message from rank {}", from));
  std::vector<T> v(static_cast<size_t>(n) + room);
  for (int64_t at = 0; at < n; at += kChunk)
    transfer(false, v.data() + at, int(std::min(n - at, kChunk)), mpiType<T>(), from, tag);
  return v;
}

/// A collective (`start` posts its non-blocking form), waited for with the
/// run's timeout.
template <class Start> void collective(const std::string &what, Start start) {
  std::vector<MPI_Request> req(1);
  start(&req[0]);
  waitAll(req, what);
}

void sendPart(const dist::Part &p, int to) {
  sendVec(std::vector<int64_t>{p.owned, p.interior}, to, 1);
  for (const std::vector<int64_t> *v : {&p.globalRow, &p.rowPtr, &p.colIdx, &p.globalEdge, &p.ghostGlobal,
                                        &p.recvFrom, &p.recvCount, &p.sendTo})
    sendVec(*v, to, 1);
  for (const std::vector<int64_t> &rows : p.sendRows)
    sendVec(rows, to, 1);
}
dist::Part recvPart() {
  dist::Part p;
  std::vector<int64_t> head = recvVec<int64_t>(0, 1);
  if (head.size() != 2)
    fail("a malformed part from rank 0");
  p.owned = head[0];
  p.interior = head[1];
  for (std::vector<int64_t> *v : {&p.globalRow, &p.rowPtr, &p.colIdx, &p.globalEdge, &p.ghostGlobal, &p.recvFrom,
                                  &p.recvCount, &p.sendTo})
    *v = recvVec<int64_t>(0, 1);
  for (size_t j = 0; j < p.sendTo.size(); ++j)
    p.sendRows.push_back(recvVec<int64_t>(0, 1));
  return p;
}

/// Rows `rows` of `t` (leading axis), in that order.
/// Rows `rows` of `t`, with room for `room` more rows past them.
rt::OwnedTensor takeRows(const rt::OwnedTensor &t, const std::vector<int64_t> &rows, size_t room = 0) {
  rt::OwnedTensor out;
  out.dtype = t.dtype;
  out.shape = t.shape;
  out.shape[0] = int64_t(rows.size());
  size_t rb = t.shape[0] ? t.data.size() / size_t(t.shape[0]) : 0;
  out.data.resize((rows.size() + room) * rb);
  for (size_t r = 0; r < rows.size(); ++r)
    std::memcpy(out.data.data() + r * rb, t.data.data() + size_t(rows[r]) * rb, rb);
  return out;
}

/// How an entry input or result is distributed.
enum class Layout { RowPtr, ColIdx, Entity, Edge, Whole };

std::string dimName(const rt::SigDim &d) {
  const std::string *s = std::get_if<std::string>(&d);
  return s ? *s : "";
}

} // namespace

bool dist::underLauncher() { return std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMI_SIZE"); }

std::string dist::rankMismatch(const rt::ArtifactInfo &info, const std::string &dir, int64_t ranks) {
  if (!info.distributed)
    return fmt::format("'{}' is not a distributed artifact: build it with `linnet build ... --ranks {}`", dir, ranks);
  if (info.distributed->ranks != ranks)
    return fmt::format("'{}' is planned for {} ranks (linnet build --ranks {}); run it with --ranks {} or rebuild it "
                       "with --ranks {}",
                       dir, info.distributed->ranks, info.distributed->ranks, info.distributed->ranks, ranks);
  return "";
}

bool dist::init() {
  int ready = 0;
  MPI_Initialized(&ready);
  if (!ready)
    MPI_Init(nullptr, nullptr);
  int ended = 0;
  MPI_Finalized(&ended);
  return !ended;
}

int dist::rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int dist::size() {
  int n = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

void dist::finalize() {
  int ready = 0, ended = 0;
  MPI_Initialized(&ready);
  MPI_Finalized(&ended);
  if (ready && !ended)
    MPI_Finalize();
}

void dist::registerExecutor() {
  rt::DistributedExecutor x;
  x.call = [](rt::Model &model, const std::string &artifact, const std::string &entry,
              const std::vector<rt::OwnedTensor> &inputs, std::vector<rt::OwnedTensor> &results,
              double timeoutSeconds, std::string &error) {
    RunOptions o;
    o.entry = entry;
    o.timeoutSeconds = timeoutSeconds;
    o.who = "linnet";
    return runEntry(model, artifact, o, inputs, results, error);
  };
  x.rank = [] { return init() ? rank() : -1; };
  x.size = [] { return init() ? size() : -1; };
  x.finalize = [] { finalize(); };
  rt::registerDistributedExecutor(x);
}

void dist::abort(const std::string &who, const std::string &what) {
  std::cerr << fmt::format("{}: error: rank {}: {}\n", who, rank(), what) << std::flush;
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::exit(1);
}

int dist::agreeOnStatus(int rc) {
  RankState S;
  gState = &S;
  collective("agreeing on the exit status", [&](MPI_Request *r) { MPI_Ibcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD, r); });
  gState = nullptr;
  return rc;
}

bool dist::runEntry(rt::Model &model_, const std::string &artifact, const RunOptions &o,
                    const std::vector<rt::OwnedTensor> &inputs, std::vector<rt::OwnedTensor> &global,
                    std::string &runError) {
  if (!init()) {
    runError = "MPI has been finalized in this process: no distributed run can start";
    return false;
  }
  RankState S;
  gState = &S;
  // The run's state is this call's: the hook reaches it through gState.
  struct Reset {
    ~Reset() { gState = nullptr; }
  } reset;
  MPI_Comm_rank(MPI_COMM_WORLD, &S.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &S.size);
  S.timeout = o.timeoutSeconds;
  S.who = o.who;
  if (o.log)
    S.log = o.log;
  if (const char *k = std::getenv("LINNET_FAULT_KILL_RANK"))
    S.killRank = std::atoi(k);
  if (const char *h = std::getenv("LINNET_FAULT_HANG_RANK")) { // RANK[:STAGE]
    S.hangRank = std::atoi(h);
    if (const char *colon = std::strchr(h, ':'))
      S.hangStage = colon + 1;
  }
  if (const char *b = std::getenv("LINNET_FAULT_BAD_INPUT_RANK"))
    S.badInputRank = std::atoi(b);
  // What every rank finds alike (the artifact, the entry) ends the call on
  // each of them with the same error; what one rank finds ends them all.
  auto refuse = [&](std::string why) {
    runError = std::move(why);
    return false;
  };
  // Every rank loaded the artifact and the weights (parameters are whole
  // on each rank).
  rt::Model *model = &model_;
  const rt::ArtifactInfo &info = model->info();
  if (std::string why = rankMismatch(info, artifact, S.size); !why.empty())
    return refuse(why);
  S.dist = &*info.distributed;
  for (const rt::ArtifactInfo::DistributedKernel &k : S.dist->kernels) {
    void *fn = model->librarySymbol(k.symbol);
    if (!fn)
      return refuse(fmt::format("the library has no '{}'", k.symbol));
    S.kernels.push_back(fn);
    std::vector<std::pair<void *, void *>> fns;
    for (const auto &h : k.halos) {
      void *pack = model->librarySymbol(h.packSymbol), *unpack = model->librarySymbol(h.unpackSymbol);
      if (!pack || !unpack)
        return refuse(fmt::format("the library has no '{}'", pack ? h.unpackSymbol : h.packSymbol));
      fns.push_back({pack, unpack});
      for (const std::string *c : {&h.packCommand, &h.exchangeCommand, &h.unpackCommand})
        S.commandIds.push_back(*c);
    }
    S.haloFns.push_back(std::move(fns));
    S.commandIds.push_back(k.interiorCommand);
    if (!k.boundaryCommand.empty())
      S.commandIds.push_back(k.boundaryCommand);
  }
  for (const std::string &c : S.commandIds)
    S.commandIndex.emplace(c, S.commandIndex.size());
  if (S.commandIndex.size() != S.commandIds.size())
    return refuse("runtime.json names a command for two kernels");
  S.commandS.assign(S.commandIds.size(), 0);
  S.commandRuns.assign(S.commandIds.size(), 0);
  const rt::EntrySig *sig = model->findEntry(o.entry);
  if (!sig) {
    std::string names;
    for (const rt::EntrySig &e : info.entries)
      names += (names.empty() ? "" : ", ") + e.name;
    return refuse(fmt::format("no entry '{}' (entries: {})", o.entry, names));
  }
  // The relation and what each input is: entity rows (leading dim the
  // relation's destination or source count), edges, or whole.
  std::string relation, dstDim, srcDim, edgeDim;
  for (const rt::TensorSig &s : sig->inputs)
    if (!s.relation.empty()) {
      if (!relation.empty() && relation != s.relation)
        return refuse(fmt::format("entry '{}' takes two relations ('{}', '{}'): distributed runs take one", o.entry, relation,
                         s.relation));
      relation = s.relation;
      if (!s.numSrc.empty()) {
        srcDim = s.numSrc;
        edgeDim = s.shape.empty() ? "" : dimName(s.shape[0]);
      } else if (!s.shape.empty()) {
        dstDim = dimName(s.shape[0]);
        // "(N + 1)" names N.
        if (dstDim.size() > 6 && dstDim.front() == '(' && dstDim.substr(dstDim.size() - 5) == " + 1)")
          dstDim = dstDim.substr(1, dstDim.size() - 6);
      }
    }
  if (relation.empty())
    return refuse(fmt::format("entry '{}' takes no relation: there is nothing to partition", o.entry));
  if (dstDim.empty() || srcDim.empty() || std::isdigit(static_cast<unsigned char>(srcDim[0])))
    return refuse(fmt::format("entry '{}': relation '{}' has a fixed entity count; a distributed run splits the entities, "
                     "so they must be a generic of the entry (Csr[N, N, E] with N: dim)",
                     o.entry, relation));
  std::vector<Layout> layout;
  for (const rt::TensorSig &s : sig->inputs) {
    std::string lead = s.shape.empty() ? "" : dimName(s.shape[0]);
    if (!s.relation.empty())
      layout.push_back(s.numSrc.empty() ? Layout::RowPtr : Layout::ColIdx);
    else if (!lead.empty() && (lead == dstDim || lead == srcDim))
      layout.push_back(Layout::Entity);
    else if (!lead.empty() && lead == edgeDim)
      layout.push_back(Layout::Edge);
    else
      layout.push_back(Layout::Whole);
  }

  // Rank 0 reads the inputs and checks them whole, as a single-process
  // call would (rt::checkEntryInputs: shapes against the generics, per-edge
  // inputs against the relation's edge count, result sizes against the
  // cap), before anything is partitioned, allocated or sent; every rank
  // learns the outcome and a refused call ends each one with exit status 1.
  const std::vector<rt::OwnedTensor> *in = &inputs;
  int inputsOk = 1;
  if (S.rank == 0) {
    std::string error;
    std::vector<rt::TensorView> whole;
    for (const rt::OwnedTensor &t : inputs)
      whole.push_back(t.view());
    if (!model->check(o.entry, whole, error)) {
      runError = "rank 0: " + error;
      inputsOk = 0;
    }
  }
  collective("agreeing that the inputs are valid", [&](MPI_Request *r) {
    MPI_Ibcast(&inputsOk, 1, MPI_INT, 0, MPI_COMM_WORLD, r);
  });
  if (!inputsOk) {
    if (S.rank != 0)
      runError = "rank 0 refused the inputs";
    return false;
  }

  // Rank 0: the partition, each rank's part and rows.
  std::vector<rt::OwnedTensor> local(sig->inputs.size());
  if (S.rank == 0) {
    const rt::OwnedTensor *rowPtr = nullptr, *colIdx = nullptr;
    for (size_t i = 0; i < layout.size(); ++i) {
      if (layout[i] == Layout::RowPtr)
        rowPtr = &(*in)[i];
      if (layout[i] == Layout::ColIdx)
        colIdx = &(*in)[i];
    }
    if (!rowPtr || !colIdx || rowPtr->dtype != rt::DType::I64 || colIdx->dtype != rt::DType::I64 ||
        rowPtr->shape.size() != 1 || colIdx->shape.size() != 1 || rowPtr->shape[0] < 1)
      fail(fmt::format("relation '{}': expected i64 row_ptr and col_idx vectors", relation));
    int64_t n = rowPtr->shape[0] - 1;
    const auto *rp = reinterpret_cast<const int64_t *>(rowPtr->data.data());
    const auto *ci = reinterpret_cast<const int64_t *>(colIdx->data.data());
    if (rp[n] != colIdx->shape[0])
      fail(fmt::format("relation '{}': row_ptr[{}] is {}, col_idx has {} edges", relation, n, rp[n], colIdx->shape[0]));
    for (size_t i = 0; i < layout.size(); ++i)
      if (layout[i] == Layout::Entity && ((*in)[i].shape.empty() || (*in)[i].shape[0] != n))
        fail(fmt::format("input '{}' has {} rows, relation '{}' {} destinations: distributed runs need a square "
                         "relation (as many sources as destinations)",
                         sig->inputs[i].name, (*in)[i].shape.empty() ? 0 : (*in)[i].shape[0], relation, n));
    const std::vector<int64_t> &owner = o.owner;
    std::string err;
    std::vector<dist::Part> parts = dist::partition(n, rp, ci, S.size, owner, err);
    if (parts.empty())
      fail(fmt::format("relation '{}': {}", relation, err));
    if (o.stats) {
      dist::HaloStats hs = dist::haloStats(parts);
      *S.log << fmt::format("{}: {} ranks, {} entities, {} edges: {} ghost rows in all (largest part "
                               "{}), {} boundary rows, {} edges cut\n",
                               S.who, S.size, n, rp[n], hs.ghostRows, hs.maxGhostRows, hs.boundaryRows, hs.edgesCut);
    }
    // `room`: ghost rows past each entity input's owned rows (rank 0's own
    // part; the others allocate theirs as they receive).
    auto localInputs = [&](const dist::Part &p, size_t room) {
      std::vector<rt::OwnedTensor> l;
      for (size_t i = 0; i < layout.size(); ++i) {
        const rt::OwnedTensor &t = (*in)[i];
        rt::OwnedTensor x;
        x.dtype = rt::DType::I64;
        switch (layout[i]) {
        case Layout::RowPtr:
          x.shape = {int64_t(p.rowPtr.size())};
          x.data.resize(p.rowPtr.size() * 8);
          std::memcpy(x.data.data(), p.rowPtr.data(), x.data.size());
          break;
        case Layout::ColIdx:
          // The entry checks col_idx against its entity count; the kernels
          // read the part's own columns (ghosts past the owned rows), which
          // the hook passes them.
          x.shape = {int64_t(p.colIdx.size())};
          x.data.assign(p.colIdx.size() * 8, std::byte{0});
          break;
        case Layout::Entity:
          x = takeRows(t, p.globalRow, room);
          break;
        case Layout::Edge:
          x = takeRows(t, p.globalEdge);
          break;
        case Layout::Whole:
          x = t;
          break;
        }
        l.push_back(std::move(x));
      }
      return l;
    };
    maybeHang("parts");
    for (int r = 1; r < S.size; ++r) {
      sendPart(parts[size_t(r)], r);
      for (rt::OwnedTensor &t : localInputs(parts[size_t(r)], 0)) {
        sendVec(t.shape, r, 2);
        sendVec(t.data, r, 2);
      }
    }
    local = localInputs(parts[0], parts[0].ghostGlobal.size());
    S.part = std::move(parts[0]);
  } else {
    maybeHang("parts");
    S.part = recvPart();
    for (size_t i = 0; i < sig->inputs.size(); ++i) {
      local[i].dtype = sig->inputs[i].dtype;
      local[i].shape = recvVec<int64_t>(0, 2);
      size_t room = 0;
      if (layout[i] == Layout::Entity && !local[i].shape.empty()) {
        room = S.part.ghostGlobal.size() * rt::dtypeSize(local[i].dtype);
        for (size_t k = 1; k < local[i].shape.size(); ++k)
          room *= size_t(local[i].shape[k]);
      }
      local[i].data = recvVec<std::byte>(0, 2, room);
    }
  }

  if (S.rank == S.badInputRank)
    for (size_t i = 0; i < layout.size(); ++i)
      if (layout[i] == Layout::RowPtr && local[i].data.size() >= 8) {
        int64_t past = int64_t(local[i].data.size() / 8) * 1000;
        std::memcpy(local[i].data.data() + local[i].data.size() - 8, &past, 8);
      }
  // Entity inputs hold their owned rows (the shape the entry sees) and
  // room for the ghosts past them.
  for (size_t i = 0; i < layout.size(); ++i)
    if (layout[i] == Layout::Entity && !local[i].data.empty())
      S.ghostRoom[reinterpret_cast<const char *>(local[i].data.data())] = local[i].data.size();
  // The index vectors of the halo functions: every neighbour's rows in
  // the order the exchange sends them, and the ghost slots past the owned
  // rows in the order they arrive.
  for (const std::vector<int64_t> &rows : S.part.sendRows)
    S.sendIdx.insert(S.sendIdx.end(), rows.begin(), rows.end());
  for (int64_t g = 0; g < int64_t(S.part.ghostGlobal.size()); ++g)
    S.slots.push_back(S.part.owned + g);

  // Every rank runs the entry on its rows.
  auto **hook = static_cast<void (**)(int64_t, int64_t, void **)>(model->librarySymbol("linnet_dist_hook"));
  if (!hook)
    fail("the library has no 'linnet_dist_hook'");
  *hook = &linnetDistributedKernel;
  std::vector<rt::TensorView> views;
  for (const rt::OwnedTensor &t : local)
    views.push_back(t.view());
  std::vector<rt::OwnedTensor> results;
  std::string error;
  collective("the barrier before the run", [](MPI_Request *r) { MPI_Ibarrier(MPI_COMM_WORLD, r); });
  auto tRun = Clock::now();
  for (unsigned i = 0; i < std::max(1u, o.repeat); ++i)
    if (!model->call(o.entry, views, results, error))
      fail(error);
  double runS = secondsSince(tRun);
  *hook = nullptr;

  // Rank 0 gathers the entity rows of each result (the rest is whole on
  // every rank) and writes the results.
  global = results;
  for (size_t r = 0; r < results.size(); ++r) {
    std::string lead = sig->results[r].shape.empty() ? "" : dimName(sig->results[r].shape[0]);
    if (lead.empty() || (lead != dstDim && lead != srcDim))
      continue;
    if (S.rank != 0) {
      maybeHang("results");
      sendVec(S.part.globalRow, 0, 3);
      sendVec(results[r].data, 0, 3);
      continue;
    }
    size_t rb = results[r].shape[0] ? results[r].data.size() / size_t(results[r].shape[0]) : 0;
    int64_t total = S.part.owned;
    std::vector<std::pair<std::vector<int64_t>, std::vector<std::byte>>> pieces;
    pieces.push_back({S.part.globalRow, results[r].data});
    for (int q = 1; q < S.size; ++q) {
      std::vector<int64_t> rows = recvVec<int64_t>(q, 3);
      std::vector<std::byte> bytes = recvVec<std::byte>(q, 3);
      if (bytes.size() != rows.size() * rb)
        fail(fmt::format("rank {} sent {} bytes for {} rows of result {}", q, bytes.size(), rows.size(), r));
      total += int64_t(rows.size());
      pieces.push_back({std::move(rows), std::move(bytes)});
    }
    global[r].shape[0] = total;
    global[r].data.assign(size_t(total) * rb, std::byte{0});
    for (auto &[rows, bytes] : pieces)
      for (size_t k = 0; k < rows.size(); ++k)
        std::memcpy(global[r].data.data() + size_t(rows[k]) * rb, bytes.data() + k * rb, rb);
  }
  if (o.stats) {
    double mine[6] = {double(S.bytesSent), S.interiorS, S.waitS, S.boundaryS, S.kernelS, runS};
    std::vector<double> all(static_cast<size_t>(6 * S.size));
    collective("gathering --dist-stats", [&](MPI_Request *r) {
      MPI_Igather(mine, 6, MPI_DOUBLE, all.data(), 6, MPI_DOUBLE, 0, MPI_COMM_WORLD, r);
    });
    if (S.rank == 0)
      for (int q = 0; q < S.size; ++q) {
        const double *v = &all[size_t(6 * q)];
        *S.log << fmt::format("{}: rank {}: {:.3f} s for {} call(s); sent {} bytes; kernels {:.3f} s: "
                                 "interior {:.3f} s while the exchange was in flight, then waited {:.3f} s, "
                                 "boundary {:.3f} s\n",
                                 S.who, q, v[5], std::max(1u, o.repeat), int64_t(v[0]), v[4], v[1], v[2], v[3]);
      }
    // The plan's commands as they ran: executions, and seconds averaged
    // and at most over the ranks (every rank runs the same commands).
    size_t nc = S.commandIds.size();
    std::vector<double> allS(nc * size_t(S.size));
    collective("gathering --dist-stats", [&](MPI_Request *r) {
      MPI_Igather(S.commandS.data(), int(nc), MPI_DOUBLE, allS.data(), int(nc), MPI_DOUBLE, 0, MPI_COMM_WORLD, r);
    });
    if (S.rank == 0)
      for (size_t c = 0; c < nc; ++c) {
        if (S.commandRuns[c] == 0)
          continue; // a kernel of another entry
        double sum = 0, most = 0;
        for (int q = 0; q < S.size; ++q) {
          sum += allS[size_t(q) * nc + c];
          most = std::max(most, allS[size_t(q) * nc + c]);
        }
        *S.log << fmt::format("{}: command {}: {} run(s) on rank 0, {:.6f} s mean, {:.6f} s max "
                                 "over ranks\n",
                                 S.who, S.commandIds[c], S.commandRuns[c], sum / S.size, most);
      }
  }
  return true;
}
