// Freivalds' check and the full check: correct products pass, one wrong element fails.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "scalebench/base/digest.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/base/verify.hpp"
#include "scalebench/cpu/gemm.hpp"

using namespace scalebench;

namespace {

template <class T>
struct Problem {
  std::int64_t m, n, k;
  std::vector<T> a, b, c;
};

template <class T>
Problem<T> make_problem(std::int64_t m, std::int64_t n, std::int64_t k, std::uint64_t seed, Precision p) {
  Problem<T> pr{m, n, k, {}, {}, {}};
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  pr.a.resize(m * k);
  pr.b.resize(k * n);
  for (auto& v : pr.a) v = static_cast<T>(u(gen));
  for (auto& v : pr.b) v = static_cast<T>(u(gen));
  auto gemm = make_cpu_gemm(GemmBackendKind::openblas, 1);
  PhaseRecorder rec;
  gemm->prepare({m, n, k}, p, rec);
  pr.c.assign(m * n, T(0));
  gemm->multiply(pr.a.data(), pr.b.data(), pr.c.data(), rec);
  return pr;
}

template <class T>
RowCheck check(const Problem<T>& pr, double u) {
  const auto x = freivalds_vector(7, pr.n);
  std::vector<double> bx, abx;
  b_times_x(pr.b.data(), pr.k, pr.n, x, bx, abx);
  return freivalds_rows(pr.a.data(), pr.c.data(), pr.m, pr.n, pr.k, x, bx, abx, u, nullptr);
}

}  // namespace

TEST(Freivalds, VectorIsAPureFunctionOfSeedAndNeverNearZero) {
  const auto x1 = freivalds_vector(3, 1000), x2 = freivalds_vector(3, 1000), x3 = freivalds_vector(4, 1000);
  EXPECT_EQ(x1, x2);
  EXPECT_NE(x1, x3);
  for (double v : x1) EXPECT_GE(std::fabs(v), 0.5);
}

TEST(Freivalds, CorrectProductPassesFp64AndFp32OnOddShapes) {
  const auto p64 = make_problem<double>(37, 53, 129, 1, Precision::fp64);
  const auto r64 = check(p64, unit_roundoff(Precision::fp64));
  EXPECT_EQ(r64.rows_failed, 0);
  EXPECT_LT(r64.worst_ratio, 1.0);
  const auto p32 = make_problem<float>(64, 33, 301, 2, Precision::fp32);
  const auto r32 = check(p32, unit_roundoff(Precision::fp32));
  EXPECT_EQ(r32.rows_failed, 0);
}

TEST(Freivalds, CatchesOneCorruptedElement) {
  for (std::int64_t pos : {0L, 17L * 53 + 5, 37L * 53 - 1}) {
    auto p = make_problem<double>(37, 53, 129, 1, Precision::fp64);
    p.c[pos] += 1e-6 * std::max(1.0, std::fabs(p.c[pos]));
    const auto r = check(p, unit_roundoff(Precision::fp64));
    EXPECT_EQ(r.rows_failed, 1) << "position " << pos;
    EXPECT_EQ(r.first_failed_row, pos / 53);
  }
  auto p32 = make_problem<float>(64, 33, 301, 2, Precision::fp32);
  p32.c[100] += 0.25f;
  EXPECT_EQ(check(p32, unit_roundoff(Precision::fp32)).rows_failed, 1);
}

TEST(Freivalds, CatchesNaN) {
  auto p = make_problem<double>(8, 8, 8, 3, Precision::fp64);
  p.c[9] = std::nan("");
  EXPECT_EQ(check(p, unit_roundoff(Precision::fp64)).rows_failed, 1);
}

TEST(FullCheck, PassesCorrectAndCatchesOneWrongElement) {
  auto p = make_problem<double>(20, 30, 40, 4, Precision::fp64);
  EXPECT_EQ(full_check(p.a.data(), p.b.data(), p.c.data(), 20, 30, 40, unit_roundoff(Precision::fp64)).rows_failed, 0);
  p.c[311] *= 1.0 + 1e-9;
  const auto r = full_check(p.a.data(), p.b.data(), p.c.data(), 20, 30, 40, unit_roundoff(Precision::fp64));
  EXPECT_EQ(r.rows_failed, 1);
  EXPECT_EQ(r.first_failed_row, 311 / 30);
}

TEST(GemmBackends, NaiveMatchesOpenBlasWithinTolerance) {
  const std::int64_t m = 19, n = 23, k = 31;
  auto p = make_problem<double>(m, n, k, 5, Precision::fp64);
  auto naive = make_cpu_gemm(GemmBackendKind::naive, 1);
  PhaseRecorder rec;
  naive->prepare({m, n, k}, Precision::fp64, rec);
  std::vector<double> c2(m * n);
  naive->multiply(p.a.data(), p.b.data(), c2.data(), rec);
  EXPECT_EQ(full_check(p.a.data(), p.b.data(), c2.data(), m, n, k, unit_roundoff(Precision::fp64)).rows_failed, 0);
  EXPECT_EQ(rec.phases(), std::vector<std::string>{"compute"});
}

TEST(GemmBackends, CpuBackendsRefuseGpuPrecisions) {
  auto g = make_cpu_gemm(GemmBackendKind::openblas, 1);
  PhaseRecorder rec;
  EXPECT_THROW(g->prepare({4, 4, 4}, Precision::tf32, rec), scalebench::UsageError);
}

TEST(Freivalds, ThreadCountChangesNoBit) {
  auto p = make_problem<double>(301, 257, 129, 5, Precision::fp64);
  p.c[static_cast<std::size_t>(150 * 257 + 3)] += 1e-3;  // row 150 fails
  p.c[static_cast<std::size_t>(290 * 257 + 9)] += 1e-3;  // and row 290
  const auto x = freivalds_vector(11, p.n);
  std::vector<double> bx1, abx1, cx1;
  b_times_x(p.b.data(), p.k, p.n, x, bx1, abx1, 1);
  const RowCheck one = freivalds_rows(p.a.data(), p.c.data(), p.m, p.n, p.k, x, bx1, abx1,
                                      unit_roundoff(Precision::fp64), &cx1, 1);
  EXPECT_EQ(one.rows_failed, 2);
  EXPECT_EQ(one.first_failed_row, 150);
  for (int threads : {2, 3, 7, 64}) {
    std::vector<double> bx, abx, cx, cx_direct;
    b_times_x(p.b.data(), p.k, p.n, x, bx, abx, threads);
    EXPECT_EQ(bx, bx1);
    EXPECT_EQ(abx, abx1);
    const RowCheck r = freivalds_rows(p.a.data(), p.c.data(), p.m, p.n, p.k, x, bx, abx, unit_roundoff(Precision::fp64),
                                      &cx, threads);
    EXPECT_EQ(cx, cx1) << threads;
    c_times_x(p.c.data(), p.m, p.n, x, cx_direct, threads);
    EXPECT_EQ(cx_direct, cx1) << threads;
    EXPECT_EQ(r.rows_failed, 2) << threads;
    EXPECT_EQ(r.first_failed_row, 150) << threads;
    EXPECT_EQ(r.worst_ratio, one.worst_ratio) << threads;
  }
}

TEST(FullCheck, ThreadCountChangesNoVerdict) {
  auto p = make_problem<double>(41, 23, 17, 6, Precision::fp64);
  p.c[static_cast<std::size_t>(30 * 23 + 1)] = std::nan("");
  p.c[static_cast<std::size_t>(35 * 23 + 2)] += 1.0;
  const RowCheck one = full_check(p.a.data(), p.b.data(), p.c.data(), p.m, p.n, p.k, unit_roundoff(Precision::fp64), 1);
  EXPECT_EQ(one.rows_failed, 2);
  EXPECT_EQ(one.first_failed_row, 30);
  for (int threads : {2, 5, 41, 100}) {
    const RowCheck r = full_check(p.a.data(), p.b.data(), p.c.data(), p.m, p.n, p.k, unit_roundoff(Precision::fp64),
                                  threads);
    EXPECT_EQ(r.rows_failed, 2) << threads;
    EXPECT_EQ(r.first_failed_row, 30) << threads;
  }
}

TEST(Digest, SameOnAnyThreadCountAndMovedByAnyWord) {
  // Three whole 1 MiB chunks, a partial one, and bytes past the last whole word.
  std::vector<unsigned char> bytes((std::size_t{3} << 20) + 4096 + 13);
  std::mt19937_64 gen(9);
  for (auto& b : bytes) b = static_cast<unsigned char>(gen());
  const std::string d1 = bytes_digest(bytes.data(), bytes.size(), 1);
  EXPECT_EQ(d1.rfind("fnv1a64w:", 0), 0U);
  EXPECT_EQ(d1.size(), 9U + 16U);
  for (int threads : {2, 3, 4, 64}) EXPECT_EQ(bytes_digest(bytes.data(), bytes.size(), threads), d1) << threads;
  for (std::size_t at :
       {std::size_t{0}, std::size_t{8}, std::size_t{(1U << 20) + 24}, bytes.size() - 20, bytes.size() - 1}) {
    auto changed = bytes;
    changed[at] ^= 0x80;
    EXPECT_NE(bytes_digest(changed.data(), changed.size(), 4), d1) << at;
  }
  // Two words swapped between lanes, and one byte fewer.
  auto swapped = bytes;
  std::swap_ranges(swapped.begin(), swapped.begin() + 8, swapped.begin() + 8);
  EXPECT_NE(bytes_digest(swapped.data(), swapped.size(), 4), d1);
  EXPECT_NE(bytes_digest(bytes.data(), bytes.size() - 1, 4), d1);
  EXPECT_NE(bytes_digest(bytes.data(), 0, 4), d1);
}
