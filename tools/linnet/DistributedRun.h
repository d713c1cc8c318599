//===- DistributedRun.h - `linnet run --ranks N` ----------------*- C++ -*-===//
#ifndef LINNET_TOOLS_DISTRIBUTEDRUN_H
#define LINNET_TOOLS_DISTRIBUTEDRUN_H

#include <map>
#include <string>
#include <vector>

namespace linnet::tool {

struct DistributedRunOptions {
  std::string artifact, weights, binding, entry;
  std::map<std::string, std::string> inputs; // input or relation name -> .npy
  std::vector<std::string> outputs;
  int64_t ranks = 0;
  unsigned repeat = 1;
  std::string partition;     // .npy of each entity's part (empty: contiguous blocks)
  double timeoutSeconds = 60; // any wait (exchange, part, result, collective) longer ends the run
  bool stats = false;         // rank 0 prints exchange and overlap figures
};

/// True when this process is a rank that mpirun started.
bool underMpirun();

/// `linnet run --ranks N` outside mpirun: checks that `artifact` was
/// planned for N ranks, then starts `mpirun -n N` on this same command line
/// and returns its exit status.
int launchUnderMpirun(const std::string &artifact, int64_t ranks);

/// One rank of a distributed run (under mpirun): rank 0 reads the inputs,
/// partitions the relation and sends each rank its part; every rank runs
/// the entry with halo exchanges in its relation kernels; rank 0 gathers
/// and writes the results. Returns the exit status (a failing rank aborts
/// every rank).
int runDistributed(const DistributedRunOptions &options);

} // namespace linnet::tool

#endif
