#pragma once
// The statistics of `scalebench compare` (docs/compare.md), over the repeats of one phase of two
// runs: the Mann–Whitney U test (two-sided; exact without ties for up to kExactLimit repeats a
// side, else the normal approximation with the tie correction and a continuity correction of 1/2,
// as scipy.stats.mannwhitneyu computes them), and the Hodges–Lehmann confidence interval of the
// ratio b/a (the interval of the shift in log time that inverts the same test). Pure functions of
// their arguments: no file, no option, no randomness.
#include <optional>
#include <vector>

namespace scalebench::compare {

// Up to this many repeats a side (and no ties), the p-value is exact.
inline constexpr int kExactLimit = 20;

// The median of a non-empty list (the mean of the two middle values of an even count).
double median_of(std::vector<double> values);

struct RankTest {
  double u = 0;        // U of `a`: the pairs (a_i, b_j) with a_i > b_j, ties counting 1/2
  double p = 1;        // two-sided p-value
  bool exact = false;  // exact distribution (else the normal approximation)
};
// The Mann–Whitney U test of `a` against `b` (each non-empty).
RankTest mann_whitney(const std::vector<double>& a, const std::vector<double>& b);
// The same by the normal approximation whatever the sizes and ties (what mann_whitney does beyond
// the exact test's reach).
RankTest mann_whitney_normal(const std::vector<double>& a, const std::vector<double>& b);

// The smallest two-sided p-value the test can give for n and m repeats (no ties: 2 / C(n+m, n),
// at most 1): a p-value threshold at or below it cannot be reached, whatever the times.
double smallest_p(int n, int m);

struct RatioInterval {
  double lo = 0;
  double hi = 0;
};
// The `confidence` (in (0, 1)) interval of the ratio b/a: exp of the Hodges–Lehmann interval of the
// shift log b − log a, the k-th smallest and k-th largest of the n·m pairwise differences, k from
// the exact distribution of U (normal approximation beyond kExactLimit). Empty when a time is not
// positive, or when the repeats are too few for an interval at that confidence.
std::optional<RatioInterval> ratio_interval(const std::vector<double>& a, const std::vector<double>& b,
                                            double confidence);

}  // namespace scalebench::compare
