// Monte Carlo configuration: names, defaults and the values that can never work.
#include <gtest/gtest.h>

#include "scalebench/error.hpp"
#include "scalebench/montecarlo.hpp"

using namespace scalebench;

namespace {
MonteCarloConfig valid(McProblem p) {
  MonteCarloConfig cfg;
  cfg.problem = p;
  resolve_defaults(cfg);
  return cfg;
}
}  // namespace

TEST(MonteCarloConfig, NamesRoundTrip) {
  for (const auto p : {McProblem::pi, McProblem::european, McProblem::asian}) EXPECT_EQ(parse_mc_problem(to_string(p)), p);
  for (const auto b : {McBackendKind::naive, McBackendKind::cpu, McBackendKind::cuda}) {
    EXPECT_EQ(parse_mc_backend(to_string(b)), b);
  }
  EXPECT_EQ(parse_option_kind("put"), OptionKind::put);
  EXPECT_EQ(parse_control_variate("geometric"), ControlVariate::geometric);
  EXPECT_THROW(parse_mc_problem("e"), UsageError);
  EXPECT_THROW(parse_mc_backend("gpu"), UsageError);
  EXPECT_THROW(parse_option_kind("straddle"), UsageError);
  EXPECT_THROW(parse_control_variate("arithmetic"), UsageError);
}

TEST(MonteCarloConfig, DefaultsAreResolved) {
  auto cfg = valid(McProblem::pi);
  EXPECT_EQ(cfg.samples, 1'000'000'000);
  EXPECT_EQ(cfg.chunk_size, 1 << 20);
  EXPECT_EQ(chunk_count(cfg), 954);
  EXPECT_NO_THROW(validate(cfg));
  EXPECT_NO_THROW(validate(valid(McProblem::european)));
  EXPECT_NO_THROW(validate(valid(McProblem::asian)));
}

TEST(MonteCarloConfig, RejectsValuesThatCanNeverWork) {
  auto expect_usage = [](MonteCarloConfig cfg, const char* what) {
    EXPECT_THROW(validate(cfg), UsageError) << what;
  };
  auto c = valid(McProblem::european);
  c.samples = 0;
  expect_usage(c, "samples 0");
  c = valid(McProblem::european);
  c.samples = -5;
  expect_usage(c, "samples < 0");
  c = valid(McProblem::european);
  c.market.sigma = 0;
  expect_usage(c, "sigma 0");
  c = valid(McProblem::european);
  c.market.sigma = -0.2;
  expect_usage(c, "sigma < 0");
  c = valid(McProblem::european);
  c.market.maturity = 0;
  expect_usage(c, "T 0");
  c = valid(McProblem::european);
  c.market.strike = -1;
  expect_usage(c, "strike < 0");
  c = valid(McProblem::european);
  c.market.spot = -1;
  expect_usage(c, "spot < 0");
  c = valid(McProblem::asian);
  c.steps = 0;
  expect_usage(c, "steps 0");
  c = valid(McProblem::european);
  c.control_variate = ControlVariate::geometric;
  expect_usage(c, "control variate on european");
  c = valid(McProblem::pi);
  c.chunk_size = 6;
  expect_usage(c, "chunk not a multiple of 4");
  c = valid(McProblem::pi);
  c.reps = 0;
  expect_usage(c, "reps 0");
  c = valid(McProblem::pi);
  c.share_gpu = true;
  expect_usage(c, "share-gpu without cuda");
}

TEST(MonteCarloConfig, PiIgnoresMarketParameters) {
  auto c = valid(McProblem::pi);
  c.market.sigma = -1;  // not used by pi
  EXPECT_NO_THROW(validate(c));
}
