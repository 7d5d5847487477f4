// The cut of an --overlap repeat (scalebench/gpu/gpu.hpp): panels tile k, every rank's rows are its
// head plus its blocks exactly once and in order, the sizes follow the documented rule, and the
// panel buffer holds what travels through it.
#include <gtest/gtest.h>

#include "scalebench/gpu/gpu.hpp"

using namespace scalebench;

namespace {

void expect_tiles(const GemmShape& s, int ranks) {
  const RowPartition rows(s.m, ranks);
  const OverlapPlan plan = make_overlap_plan(s, rows);
  SCOPED_TRACE(testing::Message() << s.m << "x" << s.n << "x" << s.k << " on " << ranks << " ranks");
  ASSERT_GE(plan.panels(), 1);
  EXPECT_EQ(plan.panel_first.front(), 0);
  EXPECT_EQ(plan.panel_first.back(), s.k);
  const std::int64_t width = std::min<std::int64_t>(2048, (s.k + 3) / 4);
  for (int p = 0; p < plan.panels(); ++p) {
    const std::int64_t w = plan.panel_first[p + 1] - plan.panel_first[p];
    EXPECT_GT(w, 0);
    // The ramp: a quarter, a quarter, a half, then whole panels; only the last may be short.
    const std::int64_t want = width < 4 ? width : p < 2 ? width / 4 : p == 2 ? width / 2 : width;
    if (p + 1 < plan.panels()) {
      EXPECT_EQ(w, want) << "panel " << p;
    } else {
      EXPECT_LE(w, want) << "panel " << p;
    }
  }
  ASSERT_EQ(static_cast<int>(plan.head.size()), ranks);
  ASSERT_EQ(static_cast<int>(plan.blocks.size()), ranks);
  int most = 0;
  std::int64_t others = 0;
  for (int r = 0; r < ranks; ++r) {
    const std::int64_t count = rows.block(r).count;
    EXPECT_EQ(plan.head[r], (count + 1) / 2);
    std::int64_t next = plan.head[r];
    for (const Block& b : plan.blocks[r]) {
      EXPECT_EQ(b.offset, next);
      EXPECT_GT(b.count, 0);
      EXPECT_LE(b.count, 2048);
      next += b.count;
    }
    EXPECT_EQ(next, count);
    const std::int64_t rest = count - plan.head[r];
    const std::int64_t height = rest > 0 ? std::min<std::int64_t>(2048, (rest + 7) / 8) : 1;
    EXPECT_EQ(static_cast<std::int64_t>(plan.blocks[r].size()), (rest + height - 1) / height);
    most = std::max(most, static_cast<int>(plan.blocks[r].size()));
    if (r > 0) {
      EXPECT_EQ(plan.pack_elements(r, s.k), plan.head[r] * s.k) << "rank " << r;
      others += plan.head[r];
    }
  }
  EXPECT_EQ(plan.rounds(), most);
  EXPECT_EQ(plan.pack_elements(0, s.k), others * s.k);
}

}  // namespace

TEST(OverlapPlan, TilesEveryShape) {
  for (const GemmShape& s : {GemmShape{1, 1, 1}, GemmShape{2, 50, 3}, GemmShape{37, 23, 41}, GemmShape{300, 17, 257},
                             GemmShape{32768, 32768, 32768}, GemmShape{100000, 64, 9000}}) {
    for (int ranks : {1, 2, 3, 8}) {
      if (ranks <= s.m) expect_tiles(s, ranks);
    }
  }
}

TEST(OverlapPlan, BenchmarkShapeIsEighteenPanelsAndEightRounds) {
  const OverlapPlan one = make_overlap_plan({32768, 32768, 32768}, RowPartition(32768, 1));
  EXPECT_EQ(one.panels(), 18);  // 512, 512, 1024, then 15 x 2048
  EXPECT_EQ(one.panel_first[1], 512);
  EXPECT_EQ(one.panel_first[3], 2048);
  EXPECT_EQ(one.head[0], 16384);
  EXPECT_EQ(one.rounds(), 8);
  EXPECT_EQ(one.blocks[0][0].count, 2048);
  const OverlapPlan two = make_overlap_plan({32768, 32768, 32768}, RowPartition(32768, 2));
  EXPECT_EQ(two.head[1], 8192);
  EXPECT_EQ(two.rounds(), 8);
  EXPECT_EQ(two.blocks[1][0].count, 1024);
  // Rank 0's panel buffer carries rank 1's head; rank 1's holds the same.
  EXPECT_EQ(two.pack_elements(0, 32768), std::int64_t{8192} * 32768);
  EXPECT_EQ(two.pack_elements(1, 32768), std::int64_t{8192} * 32768);
}
