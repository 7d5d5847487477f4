// Monte Carlo estimates on the CPU backend against closed forms (fixed seeds, |z| < 4), the
// control variate's gain, and independence from the thread count.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <numbers>

#include "montecarlo_reference.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/problem/montecarlo.hpp"

using namespace scalebench;

namespace {

MonteCarloConfig config(McProblem p, std::int64_t samples) {
  MonteCarloConfig cfg;
  cfg.problem = p;
  cfg.samples = samples;
  cfg.seed = 20240601;
  return cfg;
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

}  // namespace

TEST(MonteCarloClosedForm, BlackScholesReferenceValues) {
  const MarketParams m;  // S = K = 100, r = 5%, sigma = 20%, T = 1
  EXPECT_NEAR(black_scholes(m, OptionKind::call), 10.4505835722, 1e-9);
  // put-call parity: C - P = S - K e^{-rT}
  EXPECT_NEAR(black_scholes(m, OptionKind::call) - black_scholes(m, OptionKind::put), 100.0 - 100.0 * std::exp(-0.05),
              1e-12);
  EXPECT_NEAR(black_scholes(m, OptionKind::put), 5.5735260223, 1e-9);
}

TEST(MonteCarloClosedForm, GeometricAsianWithOneFixingIsBlackScholes) {
  const MarketParams m;
  EXPECT_NEAR(geometric_asian(m, OptionKind::call, 1), black_scholes(m, OptionKind::call), 1e-12);
  EXPECT_NEAR(geometric_asian(m, OptionKind::put, 1), black_scholes(m, OptionKind::put), 1e-12);
}

TEST(MonteCarloClosedForm, GeometricAsianTendsToTheContinuousFormula) {
  // Continuous averaging: ln G ~ N(ln S + (r - sigma²/2) T/2, sigma² T/3).
  const MarketParams m;
  const double mu = std::log(m.spot) + (m.rate - 0.5 * m.sigma * m.sigma) * m.maturity / 2;
  const double s = m.sigma * std::sqrt(m.maturity / 3);
  const double fwd = std::exp(mu + 0.5 * s * s);
  const double d1 = (std::log(fwd / m.strike) + 0.5 * s * s) / s;
  const double continuous = std::exp(-m.rate * m.maturity) * (fwd * normal_cdf(d1) - m.strike * normal_cdf(d1 - s));
  EXPECT_NEAR(geometric_asian(m, OptionKind::call, 1'000'000), continuous, 1e-5);
  EXPECT_GT(std::fabs(geometric_asian(m, OptionKind::call, 12) - continuous), 1e-3);  // discrete differs
}

TEST(MonteCarloEstimate, PiWithinFourStandardErrors) {
  const McOutcome o = cpu_reference(config(McProblem::pi, 20'000'000), 2);
  EXPECT_TRUE(o.ok) << o.main.estimate << " z " << o.main.z;
  EXPECT_LT(std::fabs(o.main.z), kZLimit);
  EXPECT_NEAR(o.main.std_error, 4 * std::sqrt(std::numbers::pi / 4 * (1 - std::numbers::pi / 4) / 2e7), 1e-6);
}

TEST(MonteCarloEstimate, EuropeanCallAgainstBlackScholes) {
  const McOutcome o = cpu_reference(config(McProblem::european, 200'000), 2);
  EXPECT_EQ(o.main.closed_form, black_scholes(MarketParams{}, OptionKind::call));
  EXPECT_LT(std::fabs(o.main.z), kZLimit) << o.main.estimate << " +- " << o.main.std_error;
  EXPECT_NEAR(o.main.std_error, 14.7 / std::sqrt(2e5), 0.005);  // payoff sd about 14.7
  EXPECT_TRUE(o.ok);
}

TEST(MonteCarloEstimate, EuropeanPutAgainstBlackScholes) {
  auto cfg = config(McProblem::european, 200'000);
  cfg.option = OptionKind::put;
  cfg.market.strike = 110;
  const McOutcome o = cpu_reference(cfg, 2);
  EXPECT_NEAR(o.main.closed_form, black_scholes(cfg.market, OptionKind::put), 1e-12);
  EXPECT_LT(std::fabs(o.main.z), kZLimit) << o.main.estimate << " +- " << o.main.std_error;
}

TEST(MonteCarloEstimate, GeometricAsianWith252FixingsAgainstClosedForm) {
  auto cfg = config(McProblem::asian, 20'000);
  const McOutcome o = cpu_reference(cfg, 2);
  EXPECT_NEAR(o.checked.closed_form, geometric_asian(cfg.market, OptionKind::call, 252), 1e-12);
  EXPECT_LT(std::fabs(o.checked.z), kZLimit) << o.checked.estimate << " +- " << o.checked.std_error;
  EXPECT_GT(o.main.estimate, o.checked.estimate);  // arithmetic >= geometric on every path
  EXPECT_TRUE(o.ok);
}

TEST(MonteCarloEstimate, ControlVariateCutsStdErrorTenfold) {
  auto cfg = config(McProblem::asian, 20'000);
  const McOutcome plain = cpu_reference(cfg, 2);
  cfg.control_variate = ControlVariate::geometric;
  const McOutcome cv = cpu_reference(cfg, 2);
  ASSERT_TRUE(cv.plain.has_value());
  EXPECT_TRUE(same_bits(cv.plain->estimate, plain.main.estimate));
  EXPECT_GE(plain.main.std_error / cv.main.std_error, 10.0)
      << "plain " << plain.main.std_error << " with control variate " << cv.main.std_error;
  // Both estimate the same price.
  EXPECT_LT(std::fabs(cv.main.estimate - plain.main.estimate), kZLimit * plain.main.std_error);
  EXPECT_GT(cv.cv_beta, 0.9);
  EXPECT_LT(cv.cv_beta, 1.2);
  EXPECT_TRUE(cv.ok);
}

TEST(MonteCarloEstimate, OneTwoAndThreeThreadsGiveTheSameBits) {
  for (const auto p : {McProblem::pi, McProblem::european, McProblem::asian}) {
    auto cfg = config(p, p == McProblem::asian ? 3001 : 200'003);
    cfg.chunk_size = p == McProblem::asian ? 16 : 1000;  // many chunks, an uneven last one
    cfg.steps = 20;
    const McOutcome one = cpu_reference(cfg, 1);
    for (const int threads : {2, 3}) {
      const McOutcome many = cpu_reference(cfg, threads);
      EXPECT_TRUE(same_bits(one.main.estimate, many.main.estimate)) << to_string(p) << " threads " << threads;
      EXPECT_TRUE(same_bits(one.main.std_error, many.main.std_error)) << to_string(p) << " threads " << threads;
    }
  }
}

TEST(MonteCarloEstimate, ChunkSizeChangesOnlyTheRounding) {
  auto cfg = config(McProblem::european, 100'000);
  cfg.chunk_size = 1000;
  const McOutcome a = cpu_reference(cfg, 1);
  cfg.chunk_size = 4096;
  const McOutcome b = cpu_reference(cfg, 1);
  EXPECT_NEAR(a.main.estimate, b.main.estimate, 1e-12 * a.main.estimate);
}

TEST(MonteCarloEstimate, WrongResultsFailVerification) {
  const McOutcome pi = estimate_pi(800'000, 1'000'000);  // 3.2
  EXPECT_FALSE(pi.ok);
  EXPECT_GT(pi.main.z, kZLimit);
  ASSERT_EQ(pi.failures.size(), 1U);
  auto cfg = config(McProblem::european, 1000);
  McSums s;
  s.v[kSumY] = 1000 * 12.0;  // mean payoff 12 (price 11.4) with a tiny spread
  s.v[kSumYY] = 1000 * 144.5;
  EXPECT_FALSE(estimate_option(cfg, s, 1000).ok);
  s.v[kSumY] = 1000 * 10.4505835722 * std::exp(0.05);
  s.v[kSumYY] = 1000 * 300.0;
  EXPECT_TRUE(estimate_option(cfg, s, 1000).ok);
}

TEST(MonteCarloEstimate, AsianBelowGeometricCallFailsTheBound) {
  auto cfg = config(McProblem::asian, 1000);
  cfg.control_variate = ControlVariate::geometric;
  const double geo = geometric_asian(cfg.market, OptionKind::call, cfg.steps) * std::exp(0.05);
  McSums s;  // geometric exactly at its price, arithmetic payoffs 1.0 below it: impossible pathwise
  s.v[kSumX] = 1000 * geo;
  s.v[kSumXX] = 1000 * (geo * geo + 25);
  s.v[kSumY] = 1000 * (geo - 1.0);
  s.v[kSumYY] = 1000 * ((geo - 1.0) * (geo - 1.0) + 25);
  s.v[kSumXY] = 1000 * (geo * (geo - 1.0) + 25);
  const McOutcome o = estimate_option(cfg, s, 1000);
  EXPECT_NEAR(o.checked.z, 0.0, 1e-6);
  EXPECT_FALSE(o.ok);
}
