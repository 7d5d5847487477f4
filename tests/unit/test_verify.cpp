// Freivalds' check and the full check: correct products pass, one wrong element fails.
#include <gtest/gtest.h>

#include <random>

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
