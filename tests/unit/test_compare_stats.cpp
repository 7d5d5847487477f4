// The statistics of `scalebench compare` against known values: the Mann–Whitney U test's p-values
// (exact and by the normal approximation) and the Hodges–Lehmann interval of a ratio.
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "drivers/compare/compare_stats.hpp"

namespace {

using scalebench::compare::mann_whitney;
using scalebench::compare::mann_whitney_normal;
using scalebench::compare::median_of;
using scalebench::compare::ratio_interval;
using scalebench::compare::smallest_p;

// The example of scipy.stats.mannwhitneyu's documentation (scipy 1.7 and later, "Examples"; the
// data of Conover, Practical Nonparametric Statistics): U1 = 17, exact two-sided p =
// 0.1111111111111111, asymptotic (continuity-corrected) p = 0.11134688653314041.
const std::vector<double> kMales = {19, 22, 16, 29, 24};
const std::vector<double> kFemales = {20, 11, 17, 12};

TEST(CompareStats, MannWhitneyExactMatchesScipysExample) {
  const auto t = mann_whitney(kMales, kFemales);
  EXPECT_TRUE(t.exact);
  EXPECT_DOUBLE_EQ(t.u, 17);
  EXPECT_NEAR(t.p, 0.1111111111111111, 1e-15);
}

TEST(CompareStats, MannWhitneyNormalMatchesScipysExample) {
  const auto t = mann_whitney_normal(kMales, kFemales);
  EXPECT_FALSE(t.exact);
  EXPECT_DOUBLE_EQ(t.u, 17);
  EXPECT_NEAR(t.p, 0.11134688653314041, 1e-12);
}

// Two samples wholly apart: p = 2 / C(n+m, n), the count of orderings (exact by hand).
TEST(CompareStats, MannWhitneyExactOfSeparatedSamples) {
  EXPECT_NEAR(mann_whitney({1, 2, 3, 4, 5}, {6, 7, 8, 9, 10}).p, 2.0 / 252, 1e-15);
  EXPECT_NEAR(mann_whitney({6, 7, 8, 9, 10}, {1, 2, 3, 4, 5}).p, 2.0 / 252, 1e-15);
  EXPECT_NEAR(mann_whitney({1, 2, 3}, {4, 5, 6}).p, 0.1, 1e-15);
  EXPECT_NEAR(mann_whitney({1, 2, 3, 4}, {5, 6, 7, 8}).p, 2.0 / 70, 1e-15);
  EXPECT_DOUBLE_EQ(mann_whitney({1}, {2}).p, 1.0);
}

// The critical values of the two-sided test for n = m = 10 in the standard tables (e.g. Siegel &
// Castellan, Nonparametric Statistics, Table J; Zar, Biostatistical Analysis, Table B.11): U <= 23
// at α = 0.05, U <= 16 at α = 0.01.
std::vector<double> with_u(const std::vector<int>& below) {  // a_i above below[i] of b = 10, 20, …, 100
  std::vector<double> a;
  for (std::size_t i = 0; i < below.size(); ++i) a.push_back(below[i] * 10 + 1 + 0.1 * static_cast<double>(i));
  return a;
}
const std::vector<double> kTen = {10, 20, 30, 40, 50, 60, 70, 80, 90, 100};

TEST(CompareStats, MannWhitneyExactMatchesTheCriticalValuesTable) {
  const auto u16 = mann_whitney(with_u({0, 0, 0, 0, 0, 0, 1, 3, 6, 6}), kTen);
  const auto u17 = mann_whitney(with_u({0, 0, 0, 0, 0, 0, 1, 3, 6, 7}), kTen);
  const auto u23 = mann_whitney(with_u({0, 0, 0, 0, 0, 1, 3, 6, 6, 7}), kTen);
  const auto u24 = mann_whitney(with_u({0, 0, 0, 0, 0, 1, 3, 6, 7, 7}), kTen);
  ASSERT_DOUBLE_EQ(u16.u, 16);
  ASSERT_DOUBLE_EQ(u17.u, 17);
  ASSERT_DOUBLE_EQ(u23.u, 23);
  ASSERT_DOUBLE_EQ(u24.u, 24);
  EXPECT_LE(u16.p, 0.01);
  EXPECT_GT(u17.p, 0.01);
  EXPECT_LE(u23.p, 0.05);
  EXPECT_GT(u24.p, 0.05);
}

// Ties go to the normal approximation with the tie correction: a = {1,2,2,3}, b = {2,3,3,4,5}
// give mid-ranks 1, 3, 3, 6 for a (U = 3), tie groups of 3 and 3 (Σ t³ − t = 48), σ² = 20/12 ·
// (10 − 48/72), z = (17 − 10 − 0.5)/σ, p = erfc(z/√2) = 0.09934224785346527 (scipy.stats.
// mannwhitneyu's asymptotic formula, evaluated with Python's math.erfc).
TEST(CompareStats, MannWhitneyTiesUseTheCorrectedNormalApproximation) {
  const auto t = mann_whitney({1, 2, 2, 3}, {2, 3, 3, 4, 5});
  EXPECT_FALSE(t.exact);
  EXPECT_DOUBLE_EQ(t.u, 3);
  EXPECT_NEAR(t.p, 0.09934224785346527, 1e-12);
  EXPECT_DOUBLE_EQ(mann_whitney({1, 1, 1}, {1, 1, 1}).p, 1.0);  // all equal: nothing to tell apart
}

TEST(CompareStats, LargeSamplesUseTheNormalApproximation) {
  std::vector<double> a;
  std::vector<double> b;
  for (int i = 0; i < 30; ++i) {
    a.push_back(1 + 0.01 * i);
    b.push_back(1.5 + 0.01 * i);
  }
  const auto t = mann_whitney(a, b);
  EXPECT_FALSE(t.exact);
  EXPECT_LT(t.p, 1e-9);
}

TEST(CompareStats, SmallestPIsTwoOverTheOrderings) {
  EXPECT_NEAR(smallest_p(5, 5), 2.0 / 252, 1e-15);
  EXPECT_NEAR(smallest_p(4, 4), 2.0 / 70, 1e-15);
  EXPECT_DOUBLE_EQ(smallest_p(1, 1), 1.0);
  EXPECT_DOUBLE_EQ(smallest_p(0, 5), 1.0);
  EXPECT_LT(smallest_p(100, 100), 1e-50);
}

TEST(CompareStats, MedianOfOddAndEvenCounts) {
  EXPECT_DOUBLE_EQ(median_of({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median_of({4, 1, 2, 3}), 2.5);
  EXPECT_DOUBLE_EQ(median_of({7}), 7);
}

// log a = 0..4 and log b = 10..14: the 25 differences are 6..14 with counts 1,2,3,4,5,4,3,2,1;
// for n = m = 5 at 95% the exact distribution leaves k − 1 = 2 out at each end (P(U <= 2) =
// 4/252 <= 0.025 < P(U <= 3) = 7/252), so the interval is [e^7, e^13].
TEST(CompareStats, HodgesLehmannIntervalByHand) {
  std::vector<double> a;
  std::vector<double> b;
  for (int i = 0; i < 5; ++i) {
    a.push_back(std::exp(i));
    b.push_back(std::exp(10 + i));
  }
  const auto ci = ratio_interval(a, b, 0.95);
  ASSERT_TRUE(ci.has_value());
  EXPECT_NEAR(std::log(ci->lo), 7, 1e-9);
  EXPECT_NEAR(std::log(ci->hi), 13, 1e-9);
}

TEST(CompareStats, HodgesLehmannIntervalHoldsTheShift) {
  std::vector<double> a;
  std::vector<double> b;
  for (int i = 0; i < 30; ++i) {  // the normal approximation's k
    a.push_back(1 + 0.013 * ((i * 7) % 30));
    b.push_back(1.2 * (1 + 0.013 * ((i * 11) % 30)));
  }
  const auto ci = ratio_interval(a, b, 0.95);
  ASSERT_TRUE(ci.has_value());
  EXPECT_LT(ci->lo, 1.2);
  EXPECT_GT(ci->hi, 1.2);
  EXPECT_GT(ci->lo, 1.1);
  EXPECT_LT(ci->hi, 1.3);
}

TEST(CompareStats, NoIntervalFromTooFewRepeatsOrZeroTimes) {
  EXPECT_FALSE(ratio_interval({1, 2}, {3, 4}, 0.95).has_value());  // P(U = 0) = 1/6 > 0.025
  EXPECT_FALSE(ratio_interval({0, 1, 2, 3, 4}, {1, 2, 3, 4, 5}, 0.95).has_value());
  EXPECT_TRUE(ratio_interval({1, 2}, {3, 4}, 0.5).has_value());
}

}  // namespace
