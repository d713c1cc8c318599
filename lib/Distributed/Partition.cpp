//===- Partition.cpp - A relation's rows split over ranks -----------------===//
#include "linnet/Distributed/Partition.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace linnet::dist {

std::vector<Part> partition(int64_t n, const int64_t *rowPtr, const int64_t *colIdx, int64_t parts,
                            const std::vector<int64_t> &ownerIn, std::string &error) {
  if (n < 0 || parts < 1) {
    error = fmt::format("cannot split {} entities into {} parts", n, parts);
    return {};
  }
  if (rowPtr[0] != 0) {
    error = fmt::format("row_ptr[0] is {}, expected 0", rowPtr[0]);
    return {};
  }
  for (int64_t i = 0; i < n; ++i)
    if (rowPtr[i + 1] < rowPtr[i]) {
      error = fmt::format("row_ptr decreases at {} ({} then {})", i, rowPtr[i], rowPtr[i + 1]);
      return {};
    }
  int64_t edges = rowPtr[n];
  for (int64_t e = 0; e < edges; ++e)
    if (colIdx[e] < 0 || colIdx[e] >= n) {
      error = fmt::format("col_idx[{}] is {}, expected a source below {}", e, colIdx[e], n);
      return {};
    }
  std::vector<int64_t> owner = ownerIn;
  if (owner.empty()) {
    owner.resize(size_t(n));
    int64_t base = n / parts, extra = n % parts, next = 0;
    for (int64_t p = 0; p < parts; ++p)
      for (int64_t k = 0; k < base + (p < extra); ++k)
        owner[size_t(next++)] = p;
  } else if (int64_t(owner.size()) != n) {
    error = fmt::format("the partition vector has {} entries, the relation {} entities", owner.size(), n);
    return {};
  } else {
    for (int64_t i = 0; i < n; ++i)
      if (owner[size_t(i)] < 0 || owner[size_t(i)] >= parts) {
        error = fmt::format("partition[{}] is {}, expected a part from 0 to {}", i, owner[size_t(i)], parts - 1);
        return {};
      }
  }

  std::vector<Part> out(static_cast<size_t>(parts));
  // Local rows: interior then boundary, ascending global id within each.
  std::vector<int64_t> local(size_t(n), -1);
  for (int64_t p = 0; p < parts; ++p) {
    Part &part = out[size_t(p)];
    std::vector<int64_t> interior, boundary;
    for (int64_t i = 0; i < n; ++i) {
      if (owner[size_t(i)] != p)
        continue;
      bool inside = true;
      for (int64_t e = rowPtr[i]; e < rowPtr[i + 1] && inside; ++e)
        inside = owner[size_t(colIdx[e])] == p;
      (inside ? interior : boundary).push_back(i);
    }
    part.interior = int64_t(interior.size());
    part.globalRow = std::move(interior);
    part.globalRow.insert(part.globalRow.end(), boundary.begin(), boundary.end());
    part.owned = int64_t(part.globalRow.size());
    for (int64_t k = 0; k < part.owned; ++k)
      local[size_t(part.globalRow[size_t(k)])] = k;
  }
  for (int64_t p = 0; p < parts; ++p) {
    Part &part = out[size_t(p)];
    // Ghosts by (owner, global id): contiguous per neighbour.
    std::map<std::pair<int64_t, int64_t>, int64_t> ghost;
    for (int64_t g : part.globalRow)
      for (int64_t e = rowPtr[g]; e < rowPtr[g + 1]; ++e)
        if (owner[size_t(colIdx[e])] != p)
          ghost.emplace(std::make_pair(owner[size_t(colIdx[e])], colIdx[e]), 0);
    int64_t k = 0;
    for (auto &[key, index] : ghost) {
      index = part.owned + k++;
      part.ghostGlobal.push_back(key.second);
      if (part.recvFrom.empty() || part.recvFrom.back() != key.first) {
        part.recvFrom.push_back(key.first);
        part.recvCount.push_back(0);
      }
      ++part.recvCount.back();
    }
    part.rowPtr.reserve(size_t(part.owned + 1));
    part.rowPtr.push_back(0);
    for (int64_t g : part.globalRow) {
      for (int64_t e = rowPtr[g]; e < rowPtr[g + 1]; ++e) {
        int64_t src = colIdx[e];
        part.colIdx.push_back(owner[size_t(src)] == p ? local[size_t(src)] : ghost.at({owner[size_t(src)], src}));
        part.globalEdge.push_back(e);
      }
      part.rowPtr.push_back(int64_t(part.colIdx.size()));
    }
  }
  // What each part sends: the rows its neighbours keep as ghosts, in their
  // ghost order (ascending global id), as the owner's local rows.
  for (int64_t p = 0; p < parts; ++p) {
    const Part &recv = out[size_t(p)];
    size_t at = 0;
    for (size_t j = 0; j < recv.recvFrom.size(); ++j) {
      Part &sender = out[size_t(recv.recvFrom[j])];
      sender.sendTo.push_back(p);
      std::vector<int64_t> rows;
      for (int64_t c = 0; c < recv.recvCount[j]; ++c)
        rows.push_back(local[size_t(recv.ghostGlobal[at++])]);
      sender.sendRows.push_back(std::move(rows));
    }
  }
  return out;
}

HaloStats haloStats(const std::vector<Part> &parts) {
  HaloStats s;
  for (const Part &p : parts) {
    int64_t g = int64_t(p.ghostGlobal.size());
    s.ghostRows += g;
    s.maxGhostRows = std::max(s.maxGhostRows, g);
    s.boundaryRows += p.owned - p.interior;
    for (int64_t e = 0; e < int64_t(p.colIdx.size()); ++e)
      s.edgesCut += p.colIdx[size_t(e)] >= p.owned;
  }
  return s;
}

} // namespace linnet::dist
