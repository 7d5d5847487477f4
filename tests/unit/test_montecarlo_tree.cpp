// The fixed chunk tree: its value does not depend on how the chunks were cut into ranges.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "scalebench/base/error.hpp"
#include "scalebench/problem/montecarlo.hpp"

using scalebench::ChunkTree;
using scalebench::McSums;
using scalebench::TreeNode;

namespace {

// Leaves with widely varying magnitudes, so that any change of summation order shows in the bits.
std::vector<McSums> random_leaves(std::size_t n, unsigned seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> mant(0.0, 1.0);
  std::uniform_int_distribution<int> expo(-30, 30);
  std::vector<McSums> leaves(n);
  for (auto& l : leaves) {
    for (auto& v : l.v) v = std::ldexp(mant(gen), expo(gen));
  }
  return leaves;
}

// What one rank does with the chunks [first, last): fold work units of at most 2^unit_level
// chunks, push them in order, return the cover.
std::vector<TreeNode> fold_range(const std::vector<McSums>& leaves, std::int64_t first, std::int64_t last,
                                 int unit_level) {
  ChunkTree rank;
  for (const auto& [start, level] : scalebench::dyadic_blocks(first, last, unit_level)) {
    ChunkTree unit;
    for (std::int64_t c = start; c < start + (std::int64_t{1} << level); ++c) unit.push_leaf(c, leaves[c]);
    EXPECT_EQ(unit.nodes().size(), 1U);
    rank.push(unit.nodes().front());
  }
  return rank.nodes();
}

McSums total_of_cuts(const std::vector<McSums>& leaves, const std::vector<std::int64_t>& cuts, int unit_level) {
  ChunkTree root;
  for (std::size_t r = 0; r + 1 < cuts.size(); ++r) {
    const auto nodes = fold_range(leaves, cuts[r], cuts[r + 1], unit_level);
    // through the wire format, as ranks send them
    for (const auto& n : scalebench::deserialize_nodes(scalebench::serialize_nodes(nodes))) root.push(n);
  }
  return root.total();
}

bool bit_equal(const McSums& a, const McSums& b) { return std::memcmp(a.v.data(), b.v.data(), sizeof a.v) == 0; }

}  // namespace

TEST(MonteCarloChunkTree, FiveLeavesFoldAsTheFixedTree) {
  std::vector<McSums> leaves(5);
  for (int i = 0; i < 5; ++i) leaves[i].v[0] = std::ldexp(1.0 + i, 20 * (i % 3) - 20);
  ChunkTree t;
  for (int i = 0; i < 5; ++i) t.push_leaf(i, leaves[i]);
  const double l0 = leaves[0].v[0], l1 = leaves[1].v[0], l2 = leaves[2].v[0], l3 = leaves[3].v[0], l4 = leaves[4].v[0];
  const double expected = ((l0 + l1) + (l2 + l3)) + l4;
  EXPECT_EQ(t.total().v[0], expected);
  ASSERT_EQ(t.nodes().size(), 2U);
  EXPECT_EQ(t.nodes()[0].level, 2);
  EXPECT_EQ(t.nodes()[1].level, 0);
}

TEST(MonteCarloChunkTree, AnyCutIntoRangesGivesTheSameBits) {
  for (const std::size_t n : {1U, 2U, 3U, 17U, 64U, 1000U, 4099U}) {
    const auto leaves = random_leaves(n, static_cast<unsigned>(n));
    const McSums reference = total_of_cuts(leaves, {0, static_cast<std::int64_t>(n)}, 0);
    std::mt19937 gen(static_cast<unsigned>(n) + 1);
    for (int trial = 0; trial < 20; ++trial) {
      const int parts = 1 + static_cast<int>(gen() % 7);
      std::vector<std::int64_t> cuts{0};
      for (int p = 1; p < parts; ++p) cuts.push_back(static_cast<std::int64_t>(gen() % (n + 1)));
      cuts.push_back(static_cast<std::int64_t>(n));
      std::sort(cuts.begin(), cuts.end());
      const int unit_level = static_cast<int>(gen() % 6);
      ASSERT_TRUE(bit_equal(total_of_cuts(leaves, cuts, unit_level), reference))
          << n << " chunks, " << parts << " parts, unit level " << unit_level;
    }
  }
}

TEST(MonteCarloChunkTree, SequentialSumWouldDifferSoTheTestCanFail) {
  // The leaves are chosen so that order matters: a plain left-to-right sum differs from the tree.
  const auto leaves = random_leaves(1000, 1000);
  double seq = 0;
  for (const auto& l : leaves) seq += l.v[0];
  EXPECT_NE(seq, total_of_cuts(leaves, {0, 1000}, 0).v[0]);
}

TEST(MonteCarloChunkTree, RejectsGapsAndMisalignment) {
  ChunkTree t;
  t.push_leaf(0, {});
  EXPECT_THROW(t.push_leaf(2, {}), scalebench::Error);
  ChunkTree u;
  EXPECT_NO_THROW(u.push(TreeNode{1, 1, {}}));  // chunks [2, 4)
  EXPECT_THROW(u.total(), scalebench::Error);   // does not start at chunk 0
}

TEST(MonteCarloChunkTree, DyadicBlocksCoverTheRangeAligned) {
  for (const auto& [first, last] :
       {std::pair<std::int64_t, std::int64_t>{0, 1}, {3, 29}, {0, 64}, {5, 6}, {17, 1000}}) {
    std::int64_t p = first;
    for (const auto& [start, level] : scalebench::dyadic_blocks(first, last, 4)) {
      EXPECT_EQ(start, p);
      EXPECT_LE(level, 4);
      EXPECT_EQ(start % (std::int64_t{1} << level), 0);
      p += std::int64_t{1} << level;
    }
    EXPECT_EQ(p, last);
  }
  EXPECT_TRUE(scalebench::dyadic_blocks(5, 5, 4).empty());
}

TEST(MonteCarloChunkTree, RankChunksAreContiguousAndUneven) {
  for (const int ranks : {1, 2, 3, 4, 7}) {
    std::int64_t next = 0;
    for (int r = 0; r < ranks; ++r) {
      const auto cr = scalebench::rank_chunks(10, r, ranks);
      EXPECT_EQ(cr.first, next);
      EXPECT_GE(cr.last - cr.first, 10 / ranks);
      EXPECT_LE(cr.last - cr.first, 10 / ranks + 1);
      next = cr.last;
    }
    EXPECT_EQ(next, 10);
  }
}
