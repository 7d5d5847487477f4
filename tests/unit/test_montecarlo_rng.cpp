// The Monte Carlo random numbers: Philox4x32-10 against Random123's known answers, the π kernel's
// vectorised formulation against the library function, and the layout's edge cases.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "cpu/montecarlo_kernels.hpp"

using scalebench::mc::PhiloxCounter;
using scalebench::mc::PhiloxKey;

namespace {

struct Kat {
  PhiloxCounter counter;
  PhiloxKey key;
  PhiloxCounter expected;
};

// The "philox4x32 10" lines of Random123's kat_vectors file.
const Kat kKats[] = {
    {{0x00000000, 0x00000000, 0x00000000, 0x00000000},
     {0x00000000, 0x00000000},
     {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
    {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
     {0xffffffff, 0xffffffff},
     {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
    {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
     {0xa4093822, 0x299f31d0},
     {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
};

}  // namespace

TEST(MonteCarloPhilox, MatchesRandom123KnownAnswers) {
  for (const auto& k : kKats) {
    EXPECT_EQ(scalebench::mc::philox4x32_10(k.counter, k.key), k.expected);
  }
}

TEST(MonteCarloPhilox, LaneFormulationMatchesKnownAnswers) {
  for (const auto& k : kKats) {
    EXPECT_EQ(scalebench::mc::philox4x32_10_lanes(k.counter, k.key), k.expected);
  }
}

TEST(MonteCarloPhilox, LaneFormulationMatchesRandom123OnRandomInputs) {
  std::mt19937_64 gen(7);
  for (int i = 0; i < 20000; ++i) {
    const auto a = gen(), b = gen(), c = gen();
    const PhiloxCounter ctr{static_cast<std::uint32_t>(a), static_cast<std::uint32_t>(a >> 32),
                            static_cast<std::uint32_t>(b), static_cast<std::uint32_t>(b >> 32)};
    const PhiloxKey key{static_cast<std::uint32_t>(c), static_cast<std::uint32_t>(c >> 32)};
    ASSERT_EQ(scalebench::mc::philox4x32_10_lanes(ctr, key), scalebench::mc::philox4x32_10(ctr, key)) << "input " << i;
  }
}

TEST(MonteCarloPi, HitTestIsExactAtTheCircle) {
  using scalebench::mc::pi_hit;
  EXPECT_TRUE(pi_hit(0, 0));
  EXPECT_TRUE(pi_hit(0xffffffffU, 0));  // (2^32-1)² < 2^64
  // 2·3037000499² < 2^64 <= 2·3037000500²  (3037000499.98 = 2^31.5)
  EXPECT_TRUE(pi_hit(3037000499U, 3037000499U));
  EXPECT_FALSE(pi_hit(3037000500U, 3037000500U));
  // (2^32-1)² + y² < 2^64  <=>  y² < 2^33 - 1  <=>  y <= 92681
  EXPECT_TRUE(pi_hit(0xffffffffU, 92681U));
  EXPECT_FALSE(pi_hit(0xffffffffU, 92682U));
  EXPECT_FALSE(pi_hit(92682U, 0xffffffffU));
  EXPECT_FALSE(pi_hit(0xffffffffU, 0xffffffffU));
}

TEST(MonteCarloPi, VectorisedCountMatchesBlockByBlockReference) {
  using scalebench::mc::pi_hits;
  using scalebench::mc::pi_hits_reference;
  // Even and odd ends, tiny ranges, and a range across the 2^32-block boundary of counter word 1.
  const std::int64_t b32 = std::int64_t{1} << 33;  // point index where block index reaches 2^32
  const std::pair<std::int64_t, std::int64_t> ranges[] = {
      {0, 1}, {0, 2}, {1, 2}, {1, 4}, {3, 3}, {0, 100001}, {7, 65543}, {b32 - 1001, b32 + 1000}, {b32 - 2, b32 + 1}};
  for (const auto& [first, last] : ranges) {
    for (const std::uint64_t seed : {std::uint64_t{42}, std::uint64_t{0x123456789abcdefULL}}) {
      EXPECT_EQ(pi_hits(seed, first, last), pi_hits_reference(seed, first, last))
          << "seed " << seed << " points [" << first << ", " << last << ")";
    }
  }
}

TEST(MonteCarloPi, CountIsAdditiveOverAnySplit) {
  using scalebench::mc::pi_hits;
  const std::uint64_t whole = pi_hits(42, 0, 300001);
  EXPECT_EQ(pi_hits(42, 0, 1) + pi_hits(42, 1, 150000) + pi_hits(42, 150000, 150003) + pi_hits(42, 150003, 300001),
            whole);
}

TEST(MonteCarloPi, DifferentSeedsGiveDifferentStreams) {
  using scalebench::mc::pi_hits;
  EXPECT_NE(pi_hits(1, 0, 100000), pi_hits(2, 0, 100000));
}

TEST(MonteCarloNormals, BoxMullerMomentsOnManyBlocks) {
  // 4e5 normals: mean within 4/sqrt(n) of 0, variance within 4·sqrt(2/n) of 1.
  const auto key = scalebench::mc::philox_key(5);
  double sum = 0, sum_sq = 0;
  const int blocks = 100000;
  for (int b = 0; b < blocks; ++b) {
    for (double z :
         scalebench::mc::normals_from_block(scalebench::mc::philox4x32_10({std::uint32_t(b), 0, 0, 1}, key))) {
      ASSERT_TRUE(std::isfinite(z));
      sum += z;
      sum_sq += z * z;
    }
  }
  const double n = 4.0 * blocks;
  EXPECT_LT(std::fabs(sum / n), 4.0 / std::sqrt(n));
  EXPECT_LT(std::fabs(sum_sq / n - 1.0), 4.0 * std::sqrt(2.0 / n));
}

TEST(MonteCarloNormals, ExtremeWordsStayFinite) {
  for (const std::uint32_t w : {0U, 1U, 0x7fffffffU, 0x80000000U, 0xffffffffU}) {
    for (double z : scalebench::mc::normals_from_block({w, w, w, w})) EXPECT_TRUE(std::isfinite(z)) << w;
  }
}
