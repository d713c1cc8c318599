//===- Run.h - A distributed artifact's entry on MPI ranks -------*- C++ -*-===//
//
// A distributed artifact (`linnet build --ranks N`) calls each relation
// kernel through `linnet_dist_hook`. `runEntry` sets that hook on every
// rank and runs the concrete plan's commands of each kernel: per `src`
// field the halo pack, the exchange (non-blocking MPI point to point), the
// interior rows while it is in flight, the unpack, then the boundary rows.
// Rank 0 checks the inputs whole, partitions the relation by destination
// rows (Partition.h) and sends each rank its part; every rank runs the
// entry on its rows; rank 0 gathers the per-entity results
// (docs/distributed.md). `linnet run --ranks N`, the C API and Python use
// it under an MPI launcher (mpirun), one process a rank.
//
// Built when CMake finds MPI (LINNET_DISTRIBUTED, on by default).
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_DISTRIBUTED_RUN_H
#define LINNET_DISTRIBUTED_RUN_H

#include "linnet/Runtime/Runtime.h"

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace linnet::dist {

/// True when this process is a rank an MPI launcher started.
bool underLauncher();

/// Why artifact `info` (from `dir`) cannot run on `ranks` ranks, or "".
std::string rankMismatch(const rt::ArtifactInfo &info, const std::string &dir, int64_t ranks);

struct RunOptions {
  std::string entry;
  /// Each entity's part (rank 0; empty: contiguous blocks of rows).
  std::vector<int64_t> owner;
  unsigned repeat = 1;
  /// Any wait (an exchange, a part, a result, a collective) longer ends
  /// the run on every rank.
  double timeoutSeconds = 60;
  /// Rank 0 writes exchange and overlap figures to `log`.
  bool stats = false;
  std::ostream *log = nullptr; // null: std::cerr
  /// The prefix of this run's messages ("linnet run").
  std::string who = "linnet run";
};

/// One rank of a distributed call of `options.entry` of `model` (loaded
/// from `artifact` on every rank). Rank 0 passes the whole inputs, the
/// others none. Initializes MPI when it is not yet (and leaves it so:
/// `finalize` ends it). Returns true on every rank when the call ran, with
/// rank 0's `results` the gathered results (other ranks' are their own
/// rows); false with `error` on every rank when rank 0 refused the inputs.
/// Any other failure on any rank prints its message and aborts every rank
/// (MPI_Abort): a rank cannot leave its peers waiting.
bool runEntry(rt::Model &model, const std::string &artifact, const RunOptions &options,
              const std::vector<rt::OwnedTensor> &inputs, std::vector<rt::OwnedTensor> &results,
              std::string &error);

/// This process's rank and the run's size (after runEntry or init).
int rank();
int size();
/// Starts MPI when it is not yet; true when it is running.
bool init();
/// Ends MPI (once per process; no run afterwards).
void finalize();
/// Broadcasts rank 0's exit status so every rank ends alike.
int agreeOnStatus(int rc);
/// Makes this executor the runtime's (rt::registerDistributedExecutor), for
/// the C API's linnet_model_call_distributed.
void registerExecutor();

/// Prints "WHO: error: rank R: WHAT" and ends every rank (MPI_Abort).
[[noreturn]] void abort(const std::string &who, const std::string &what);

} // namespace linnet::dist

#endif // LINNET_DISTRIBUTED_RUN_H
