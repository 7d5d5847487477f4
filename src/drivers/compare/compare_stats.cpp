#include "compare/compare_stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>

namespace scalebench::compare {
namespace {

// The number of orderings of n values of one side among m of the other that give each U = 0..n·m
// (no ties): the coefficients of the Gaussian binomial [n+m choose n] in q, built as the product
// over i = 1..n of (1 − q^(m+i)) / (1 − q^i). Truncating at degree n·m is exact (each step reads
// only lower coefficients); the counts stay whole numbers below 2^53 up to kExactLimit a side.
std::vector<double> u_counts(int n, int m) {
  const int top = n * m;
  std::vector<double> c(static_cast<std::size_t>(top) + 1, 0.0);
  c[0] = 1;
  for (int i = 1; i <= n; ++i) {
    for (int u = top; u >= m + i; --u) c[u] -= c[u - m - i];
    for (int u = i; u <= top; ++u) c[u] += c[u - i];
  }
  return c;
}

// P(U <= u) for every u, from u_counts.
std::vector<double> u_cdf(int n, int m) {
  std::vector<double> c = u_counts(n, m);
  double total = 0;
  for (const double x : c) total += x;
  double run = 0;
  for (double& x : c) {
    run += x;
    x = run / total;
  }
  return c;
}

// The standard normal's upper quantile: z with P(Z > z) = tail (tail in (0, 0.5]).
double normal_upper_quantile(double tail) {
  double lo = 0;
  double hi = 40;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (0.5 * std::erfc(mid / std::sqrt(2.0)) > tail ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

// U of `a` by mid-ranks, and the tie term Σ(t³ − t) over groups of equal values.
std::pair<double, double> u_and_ties(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<std::pair<double, int>> all;
  all.reserve(a.size() + b.size());
  for (const double x : a) all.emplace_back(x, 0);
  for (const double x : b) all.emplace_back(x, 1);
  std::sort(all.begin(), all.end());
  double rank_sum_a = 0;
  double ties = 0;
  for (std::size_t i = 0; i < all.size();) {
    std::size_t j = i;
    while (j < all.size() && all[j].first == all[i].first) ++j;
    const double mid_rank = 0.5 * static_cast<double>(i + 1 + j);  // ranks i+1 .. j
    for (std::size_t k = i; k < j; ++k) {
      if (all[k].second == 0) rank_sum_a += mid_rank;
    }
    const double t = static_cast<double>(j - i);
    ties += t * t * t - t;
    i = j;
  }
  const auto n = static_cast<double>(a.size());
  return {rank_sum_a - n * (n + 1) / 2, ties};
}

// How many of the differences y − x (x of `xs`, y of `ys`, both sorted) are at most `d`.
double differences_at_most(const std::vector<double>& xs, const std::vector<double>& ys, double d) {
  double count = 0;
  for (const double y : ys) {
    count += static_cast<double>(xs.end() - std::lower_bound(xs.begin(), xs.end(), y - d));
  }
  return count;
}

// The k-th smallest (1-based) of the differences y − x, to the precision of a double: bisection on
// the value, counting in O((n + m) log n) a step, so no list of n·m differences is ever made.
double kth_difference(const std::vector<double>& xs, const std::vector<double>& ys, double k) {
  double lo = ys.front() - xs.back();
  double hi = ys.back() - xs.front();
  if (differences_at_most(xs, ys, lo) >= k) return lo;
  for (int i = 0; i < 2000; ++i) {
    const double mid = lo + 0.5 * (hi - lo);
    if (mid <= lo || mid >= hi) break;
    (differences_at_most(xs, ys, mid) >= k ? hi : lo) = mid;
  }
  return hi;
}

}  // namespace

double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

RankTest mann_whitney(const std::vector<double>& a, const std::vector<double>& b) {
  const int n = static_cast<int>(a.size());
  const int m = static_cast<int>(b.size());
  const auto [u, ties] = u_and_ties(a, b);
  if (ties != 0 || n > kExactLimit || m > kExactLimit) return mann_whitney_normal(a, b);
  const double nm = static_cast<double>(n) * static_cast<double>(m);
  const double u_big = std::max(u, nm - u);
  // P(U >= u_big) = P(U <= nm - u_big) by symmetry.
  return RankTest{u, std::min(1.0, 2 * u_cdf(n, m)[static_cast<std::size_t>(nm - u_big)]), true};
}

RankTest mann_whitney_normal(const std::vector<double>& a, const std::vector<double>& b) {
  const auto [u, ties] = u_and_ties(a, b);
  const auto n = static_cast<double>(a.size());
  const auto m = static_cast<double>(b.size());
  const double nm = n * m;
  const double total = n + m;
  RankTest t{u, 1, false};
  const double s = std::sqrt(nm / 12 * ((total + 1) - ties / (total * (total - 1))));
  if (!(s > 0)) return t;  // every value equal: nothing tells the sides apart
  const double z = (std::max(u, nm - u) - nm / 2 - 0.5) / s;
  t.p = std::min(1.0, std::erfc(z / std::sqrt(2.0)));
  return t;
}

double smallest_p(int n, int m) {
  if (n <= 0 || m <= 0) return 1;
  const double log_ways = std::lgamma(n + m + 1.0) - std::lgamma(n + 1.0) - std::lgamma(m + 1.0);
  return std::min(1.0, 2 * std::exp(-log_ways));
}

std::optional<RatioInterval> ratio_interval(const std::vector<double>& a, const std::vector<double>& b,
                                            double confidence) {
  if (a.empty() || b.empty() || !(confidence > 0 && confidence < 1)) return std::nullopt;
  std::vector<double> la;
  std::vector<double> lb;
  for (const double x : a) {
    if (!(x > 0)) return std::nullopt;
    la.push_back(std::log(x));
  }
  for (const double y : b) {
    if (!(y > 0)) return std::nullopt;
    lb.push_back(std::log(y));
  }
  std::sort(la.begin(), la.end());
  std::sort(lb.begin(), lb.end());
  const int n = static_cast<int>(la.size());
  const int m = static_cast<int>(lb.size());
  const double nm = static_cast<double>(n) * static_cast<double>(m);
  const double tail = (1 - confidence) / 2;
  double k = 0;  // the differences left out at each end, plus one
  if (n <= kExactLimit && m <= kExactLimit) {
    const std::vector<double> cdf = u_cdf(n, m);
    // The largest k with P(U <= k − 1) <= tail.
    while (k < nm && cdf[static_cast<std::size_t>(k)] <= tail) ++k;
  } else {
    const double total = static_cast<double>(n) + static_cast<double>(m);
    k = std::floor(nm / 2 - normal_upper_quantile(tail) * std::sqrt(nm * (total + 1) / 12));
  }
  if (k < 1) return std::nullopt;
  const RatioInterval r{std::exp(kth_difference(la, lb, k)), std::exp(kth_difference(la, lb, nm + 1 - k))};
  // Times so far apart that the ratio leaves a double's range have no interval to show.
  if (!std::isfinite(r.lo) || !std::isfinite(r.hi) || !(r.lo > 0)) return std::nullopt;
  return r;
}

}  // namespace scalebench::compare
