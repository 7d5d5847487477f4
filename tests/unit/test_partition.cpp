#include <gtest/gtest.h>

#include <numeric>

#include "scalebench/base/partition.hpp"

using scalebench::RowPartition;

TEST(RowPartition, EvenSplitCoversEveryRowOnce) {
  for (std::int64_t total : {0, 1, 7, 100, 1001}) {
    for (int parts : {1, 2, 3, 4, 7}) {
      const RowPartition p(total, parts);
      std::int64_t next = 0;
      for (int i = 0; i < parts; ++i) {
        EXPECT_EQ(p.block(i).offset, next);
        next += p.block(i).count;
      }
      EXPECT_EQ(next, total);
    }
  }
}

TEST(RowPartition, UnevenRowsDifferByAtMostOneFirstPartsLarger) {
  const RowPartition p(10, 4);
  EXPECT_EQ(p.counts(), (std::vector<std::int64_t>{3, 3, 2, 2}));
  EXPECT_EQ(p.offsets(), (std::vector<std::int64_t>{0, 3, 6, 8}));
  EXPECT_EQ(p.counts_times(5), (std::vector<std::int64_t>{15, 15, 10, 10}));
  EXPECT_EQ(p.offsets_times(5), (std::vector<std::int64_t>{0, 15, 30, 40}));
}

TEST(RowPartition, WeightedSplitFollowsWeightsAndSumsToTotal) {
  const RowPartition p(100, std::vector<double>{3.0, 1.0});
  EXPECT_EQ(p.counts(), (std::vector<std::int64_t>{75, 25}));
  const RowPartition q(10, std::vector<double>{1.0, 1.0, 1.0});
  EXPECT_EQ(std::accumulate(q.counts().begin(), q.counts().end(), std::int64_t{0}), 10);
  EXPECT_EQ(q.counts(), (std::vector<std::int64_t>{4, 3, 3}));
  const RowPartition z(5, std::vector<double>{0.0, 1.0});
  EXPECT_EQ(z.counts(), (std::vector<std::int64_t>{0, 5}));
}

TEST(RowPartition, RejectsNonsense) {
  EXPECT_THROW(RowPartition(10, 0), std::invalid_argument);
  EXPECT_THROW(RowPartition(10, std::vector<double>{0.0, 0.0}), std::invalid_argument);
  EXPECT_THROW(RowPartition(10, std::vector<double>{-1.0, 2.0}), std::invalid_argument);
}

TEST(RowPartition, LargeCountsDoNotOverflow) {
  const std::int64_t rows = (std::int64_t{1} << 33) + 5;
  const RowPartition p(rows, 3);
  EXPECT_EQ(p.block(2).offset + p.block(2).count, rows);
  EXPECT_EQ(p.counts_times(4)[0], p.counts()[0] * 4);
}
