#include "scalebench/base/verify.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <random>
#include <tuple>
#include <utility>

#include "scalebench/base/parallel.hpp"

namespace scalebench {
namespace {

// Rows per thread for row sums of `len` elements: about a million elements, below which starting
// a thread costs more than it saves.
std::int64_t rows_per_thread(std::int64_t len) {
  return std::max<std::int64_t>(1, (std::int64_t{1} << 20) / std::max<std::int64_t>(1, len));
}

}  // namespace

std::vector<double> freivalds_vector(std::uint64_t seed, std::int64_t n) {
  std::mt19937_64 gen(seed ^ 0x9e3779b97f4a7c15ULL);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<double> x(static_cast<std::size_t>(n));
  for (auto& v : x) {
    const double mag = 0.5 + 0.5 * u(gen);
    v = (gen() & 1U) ? mag : -mag;
  }
  return x;
}

// Σ row[j]·x[j] and Σ |row[j]|·abs_x[j] over j < len (abs_x[j] = |x[j]| or a bound of it).
template <class T>
std::pair<double, double> dot_and_bound(const T* row, std::int64_t len, const double* x, const double* abs_x) {
  double s = 0, sa = 0;
  for (std::int64_t j = 0; j < len; ++j) {
    const double v = static_cast<double>(row[j]);
    s += v * x[j];
    sa += std::fabs(v) * abs_x[j];
  }
  return {s, sa};
}

template <class T>
void b_times_x(const T* b, std::int64_t k, std::int64_t n, const std::vector<double>& x, std::vector<double>& bx,
               std::vector<double>& abs_bx, int threads) {
  bx.assign(static_cast<std::size_t>(k), 0.0);
  abs_bx.assign(static_cast<std::size_t>(k), 0.0);
  std::vector<double> abs_x(x.size());
  std::transform(x.begin(), x.end(), abs_x.begin(), [](double v) { return std::fabs(v); });
  for_each_range(k, threads, rows_per_thread(n), [&](int, std::int64_t begin, std::int64_t end) {
    for (std::int64_t l = begin; l < end; ++l)
      std::tie(bx[l], abs_bx[l]) = dot_and_bound(b + l * n, n, x.data(), abs_x.data());
  });
}

template <class T>
void c_times_x(const T* c, std::int64_t rows, std::int64_t n, const std::vector<double>& x, std::vector<double>& cx,
               int threads) {
  cx.assign(static_cast<std::size_t>(rows), 0.0);
  for_each_range(rows, threads, rows_per_thread(n), [&](int, std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      const T* row = c + i * n;
      double s = 0;
      for (std::int64_t j = 0; j < n; ++j) s += static_cast<double>(row[j]) * x[j];
      cx[i] = s;
    }
  });
}

namespace {

// Adds row `i`'s outcome to `out` (ratio: |error| / tolerance, infinite when not finite).
void count_row(RowCheck& out, std::int64_t i, double ratio) {
  if (!(ratio <= 1.0)) {
    if (out.rows_failed == 0) out.first_failed_row = i;
    ++out.rows_failed;
  }
  if (!(ratio <= out.worst_ratio)) out.worst_ratio = ratio;
}

// Folds the outcomes of consecutive ranges, in range order: the same as one pass over all rows.
void merge_ranges(RowCheck& out, const std::vector<RowCheck>& parts) {
  for (const RowCheck& p : parts) {
    if (out.rows_failed == 0 && p.rows_failed > 0) out.first_failed_row = p.first_failed_row;
    out.rows_failed += p.rows_failed;
    if (!(p.worst_ratio <= out.worst_ratio)) out.worst_ratio = p.worst_ratio;
  }
}

}  // namespace

template <class T>
RowCheck freivalds_rows(const T* a, const T* c, std::int64_t rows, std::int64_t n, std::int64_t k,
                        const std::vector<double>& x, const std::vector<double>& bx, const std::vector<double>& abs_bx,
                        double unit_roundoff, std::vector<double>* cx_out, int threads) {
  std::vector<double> cx;
  c_times_x(c, rows, n, x, cx, threads);
  const double gamma = static_cast<double>(2 * k + 2 * n + 4) * unit_roundoff;
  std::vector<RowCheck> parts(static_cast<std::size_t>(range_count(rows, threads, rows_per_thread(k))));
  for_each_range(rows, threads, rows_per_thread(k), [&](int part, std::int64_t begin, std::int64_t end) {
    RowCheck& mine = parts[static_cast<std::size_t>(part)];
    for (std::int64_t i = begin; i < end; ++i) {
      const auto [abx, bound] = dot_and_bound(a + i * k, k, bx.data(), abs_bx.data());
      const double tol = gamma * bound + DBL_MIN;
      const double diff = std::fabs(cx[i] - abx);
      count_row(mine, i, std::isfinite(diff) ? diff / tol : INFINITY);
    }
  });
  RowCheck out;
  out.rows_checked = rows;
  merge_ranges(out, parts);
  if (cx_out) *cx_out = std::move(cx);
  return out;
}

template <class T>
RowCheck full_check(const T* a, const T* b, const T* c, std::int64_t m, std::int64_t n, std::int64_t k,
                    double unit_roundoff, int threads) {
  const double gamma = static_cast<double>(2 * k + 4) * unit_roundoff;
  std::vector<RowCheck> parts(static_cast<std::size_t>(range_count(m, threads, 1)));
  for_each_range(m, threads, 1, [&](int part, std::int64_t begin, std::int64_t end) {
    RowCheck& mine = parts[static_cast<std::size_t>(part)];
    std::vector<double> ref(static_cast<std::size_t>(n)), mag(static_cast<std::size_t>(n));
    for (std::int64_t i = begin; i < end; ++i) {
      std::fill(ref.begin(), ref.end(), 0.0);
      std::fill(mag.begin(), mag.end(), 0.0);
      for (std::int64_t l = 0; l < k; ++l) {
        const double av = static_cast<double>(a[i * k + l]);
        const T* brow = b + l * n;
        for (std::int64_t j = 0; j < n; ++j) {
          ref[j] += av * static_cast<double>(brow[j]);
          mag[j] += std::fabs(av) * std::fabs(static_cast<double>(brow[j]));
        }
      }
      double worst = 0;
      for (std::int64_t j = 0; j < n; ++j) {
        const double tol = gamma * mag[j] + DBL_MIN;
        const double diff = std::fabs(static_cast<double>(c[i * n + j]) - ref[j]);
        const double ratio = std::isfinite(diff) ? diff / tol : INFINITY;
        if (!(ratio <= worst) && !std::isnan(worst)) worst = ratio;  // a NaN stays: the row fails
      }
      count_row(mine, i, worst);
    }
  });
  RowCheck out;
  out.rows_checked = m;
  merge_ranges(out, parts);
  return out;
}

std::string freivalds_tolerance_text() {
  return "|(C x)_i - (A (B x))_i| <= (2k + 2n + 4) * u * (|A| (|B| |x|))_i, x_j = +-[0.5, 1) from the seed, "
         "u = unit roundoff of the precision";
}
std::string full_tolerance_text() { return "|C_ij - (A B)_ij| <= (2k + 4) * u * (|A| |B|)_ij, reference in double"; }

#define SCALEBENCH_VERIFY_INSTANTIATE(T)                                                                             \
  template void b_times_x<T>(const T*, std::int64_t, std::int64_t, const std::vector<double>&, std::vector<double>&, \
                             std::vector<double>&, int);                                                             \
  template void c_times_x<T>(const T*, std::int64_t, std::int64_t, const std::vector<double>&, std::vector<double>&, \
                             int);                                                                                   \
  template RowCheck freivalds_rows<T>(const T*, const T*, std::int64_t, std::int64_t, std::int64_t,                  \
                                      const std::vector<double>&, const std::vector<double>&,                        \
                                      const std::vector<double>&, double, std::vector<double>*, int);                \
  template RowCheck full_check<T>(const T*, const T*, const T*, std::int64_t, std::int64_t, std::int64_t, double, int);
SCALEBENCH_VERIFY_INSTANTIATE(double)
SCALEBENCH_VERIFY_INSTANTIATE(float)
#undef SCALEBENCH_VERIFY_INSTANTIATE

}  // namespace scalebench
