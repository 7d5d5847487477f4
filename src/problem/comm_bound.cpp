// The communication lower bounds (comm_bound.hpp): each formula as its paper writes it.
#include "scalebench/problem/comm_bound.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>

#include "scalebench/problem/gemm.hpp"

namespace scalebench {

double accessed_words_bound(const GemmShape& s, int p) {
  std::array<double, 3> d = {static_cast<double>(s.m), static_cast<double>(s.n), static_cast<double>(s.k)};
  std::sort(d.begin(), d.end(), std::greater<>());
  const double d1 = d[0], d2 = d[1], d3 = d[2], procs = std::max(1, p);
  if (procs <= d1 / d2) return d2 * d3 + (d1 * d2 + d1 * d3) / procs;
  if (procs <= d1 * d2 / (d3 * d3)) return 2 * std::sqrt(d1 * d2 * d3 * d3 / procs) + d1 * d2 / procs;
  return 3 * std::cbrt(std::pow(d1 * d2 * d3 / procs, 2));
}

double even_share_words(const GemmShape& s, int p) {
  const double m = static_cast<double>(s.m), n = static_cast<double>(s.n), k = static_cast<double>(s.k);
  return (m * n + m * k + n * k) / std::max(1, p);
}

double spread_bound_words(const GemmShape& s, int p) {
  return std::max(0.0, accessed_words_bound(s, p) - even_share_words(s, p));
}

double from_nothing_bound_words(const GemmShape& s, int p, double memory_words) {
  const double d = accessed_words_bound(s, p);
  const double v = static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k) / std::max(1, p);
  if (memory_words <= 0 || memory_words > std::cbrt(v * v)) return d;
  return std::max(d, 2 * v / std::sqrt(memory_words) + memory_words);
}

double schedule_spread_words(const GemmShape& s, const std::vector<std::int64_t>& rows,
                             const std::vector<std::int64_t>& cols) {
  const auto p = static_cast<int>(rows.size() * cols.size());
  const double k = static_cast<double>(s.k);
  double most = 0;
  for (const auto r : rows) {
    for (const auto c : cols) {
      const double mi = static_cast<double>(r), nj = static_cast<double>(c);
      most = std::max(most, mi * k + k * nj + mi * nj);
    }
  }
  return std::max(0.0, most - even_share_words(s, p));
}

}  // namespace scalebench
