//===- Partition.h - A relation's rows split over ranks ----------*- C++ -*-===//
//
// A square CSR relation (N entities, destination-major) partitioned by
// destination rows: each part owns some entities, computes their rows, and
// needs the source rows its edges read that other parts own (its halo).
// Pure data: the MPI executor (Run.h, dist::runEntry) moves what
// it describes (docs/distributed.md).
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_DISTRIBUTED_PARTITION_H
#define LINNET_DISTRIBUTED_PARTITION_H

#include <cstdint>
#include <string>
#include <vector>

namespace linnet::dist {

/// One part, in its local numbering: owned rows first (interior rows,
/// whose edges read only owned sources, then boundary rows; each group in
/// ascending global id), then the ghosts (sources owned elsewhere, by
/// owner rank, then global id).
struct Part {
  int64_t owned = 0, interior = 0;   // boundary rows: [interior, owned)
  std::vector<int64_t> globalRow;    // local row -> global entity
  std::vector<int64_t> rowPtr;       // owned + 1 offsets into colIdx
  std::vector<int64_t> colIdx;       // < owned: an owned row; owned + k: ghost k
  std::vector<int64_t> globalEdge;   // local edge -> global edge id
  std::vector<int64_t> ghostGlobal;  // ghost k -> global entity
  /// Ghosts come from these ranks, recvCount[j] of them each, in ghost order.
  std::vector<int64_t> recvFrom, recvCount;
  /// This part sends sendRows[j] (its local rows, in the order rank
  /// sendTo[j] keeps them as ghosts) to rank sendTo[j].
  std::vector<int64_t> sendTo;
  std::vector<std::vector<int64_t>> sendRows;
};

/// The parts of the relation (rowPtr: n + 1 offsets, colIdx: sources < n).
/// `owner` gives each entity's part (empty: contiguous blocks of n / parts
/// rows, the first n % parts one longer). Sets `error` (and returns
/// nothing) on a relation or an owner vector that is not well formed.
std::vector<Part> partition(int64_t n, const int64_t *rowPtr, const int64_t *colIdx, int64_t parts,
                            const std::vector<int64_t> &owner, std::string &error);

/// Halo sizes of a partition: ghost rows summed over parts (what one
/// exchange moves, in rows) and the largest part's.
struct HaloStats {
  int64_t ghostRows = 0, maxGhostRows = 0, boundaryRows = 0, edgesCut = 0;
};
HaloStats haloStats(const std::vector<Part> &parts);

} // namespace linnet::dist

#endif // LINNET_DISTRIBUTED_PARTITION_H
