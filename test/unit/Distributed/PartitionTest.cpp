//===- PartitionTest.cpp - A relation's rows split over ranks -------------===//
#include "linnet/Distributed/Partition.h"

#include <gtest/gtest.h>

#include <set>

using namespace linnet::dist;

namespace {
// 6 entities in a ring with a chord: row i reads i-1, i+1 (mod 6), row 0
// also reads 3.
struct Ring {
  std::vector<int64_t> rowPtr = {0, 3, 5, 7, 9, 11, 13};
  std::vector<int64_t> colIdx = {5, 1, 3, 0, 2, 1, 3, 2, 4, 3, 5, 4, 0};
};
} // namespace

TEST(Partition, ContiguousBlocksInteriorFirstThenBoundary) {
  Ring g;
  std::string error;
  std::vector<Part> parts = partition(6, g.rowPtr.data(), g.colIdx.data(), 2, {}, error);
  ASSERT_EQ(parts.size(), 2u) << error;
  // Part 0 owns 0, 1, 2; row 1 reads 0 and 2 only: interior.
  EXPECT_EQ(parts[0].owned, 3);
  EXPECT_EQ(parts[0].interior, 1);
  EXPECT_EQ(parts[0].globalRow, (std::vector<int64_t>{1, 0, 2}));
  // Ghosts of part 0: 3 (read by 0 and 2) and 5 (read by 0), from part 1.
  EXPECT_EQ(parts[0].ghostGlobal, (std::vector<int64_t>{3, 5}));
  EXPECT_EQ(parts[0].recvFrom, (std::vector<int64_t>{1}));
  EXPECT_EQ(parts[0].recvCount, (std::vector<int64_t>{2}));
  // Part 1 sends them as its local rows, in part 0's ghost order.
  ASSERT_EQ(parts[1].sendTo, (std::vector<int64_t>{0}));
  std::vector<int64_t> sent;
  for (int64_t r : parts[1].sendRows[0])
    sent.push_back(parts[1].globalRow[size_t(r)]);
  EXPECT_EQ(sent, (std::vector<int64_t>{3, 5}));
}

TEST(Partition, LocalRelationReadsTheSameSources) {
  Ring g;
  std::string error;
  for (int64_t p : {1, 2, 3, 6}) {
    std::vector<Part> parts = partition(6, g.rowPtr.data(), g.colIdx.data(), p, {}, error);
    ASSERT_EQ(int64_t(parts.size()), p) << error;
    std::set<int64_t> rows;
    for (const Part &part : parts)
      for (int64_t r = 0; r < part.owned; ++r) {
        int64_t gr = part.globalRow[size_t(r)];
        rows.insert(gr);
        ASSERT_EQ(part.rowPtr[size_t(r + 1)] - part.rowPtr[size_t(r)], g.rowPtr[size_t(gr + 1)] - g.rowPtr[size_t(gr)]);
        for (int64_t e = part.rowPtr[size_t(r)]; e < part.rowPtr[size_t(r + 1)]; ++e) {
          int64_t c = part.colIdx[size_t(e)];
          int64_t src = c < part.owned ? part.globalRow[size_t(c)] : part.ghostGlobal[size_t(c - part.owned)];
          EXPECT_EQ(src, g.colIdx[size_t(part.globalEdge[size_t(e)])]);
        }
      }
    EXPECT_EQ(rows.size(), 6u);
  }
}

TEST(Partition, OwnerVectorAndErrors) {
  Ring g;
  std::string error;
  std::vector<Part> parts = partition(6, g.rowPtr.data(), g.colIdx.data(), 2, {0, 1, 0, 1, 0, 1}, error);
  ASSERT_EQ(parts.size(), 2u) << error;
  EXPECT_EQ(parts[0].interior, 0); // every row reads an odd neighbour
  HaloStats s = haloStats(parts);
  EXPECT_EQ(s.edgesCut, 13); // every edge joins an even and an odd entity
  EXPECT_TRUE(partition(6, g.rowPtr.data(), g.colIdx.data(), 2, {0, 1, 2, 0, 0, 0}, error).empty());
  EXPECT_EQ(error, "partition[2] is 2, expected a part from 0 to 1");
  g.colIdx[4] = 6;
  EXPECT_TRUE(partition(6, g.rowPtr.data(), g.colIdx.data(), 2, {}, error).empty());
  EXPECT_EQ(error, "col_idx[4] is 6, expected a source below 6");
}
