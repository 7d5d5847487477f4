// Monte Carlo configuration: names, defaults and the values that can never work.
#include <cstdint>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "scalebench/base/error.hpp"
#include "scalebench/problem/montecarlo.hpp"

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
  for (const auto p : {McProblem::pi, McProblem::european, McProblem::asian})
    EXPECT_EQ(parse_mc_problem(to_string(p)), p);
  for (const auto b : {McBackendKind::naive, McBackendKind::cpu, McBackendKind::cuda, McBackendKind::curand}) {
    EXPECT_EQ(parse_mc_backend(to_string(b)), b);
  }
  for (const auto g : {McCurandGenerator::philox, McCurandGenerator::xorwow}) {
    EXPECT_EQ(parse_curand_generator(to_string(g)), g);
  }
  EXPECT_THROW(parse_curand_generator("mtgp32"), UsageError);
  EXPECT_TRUE(uses_gpu(McBackendKind::curand));
  EXPECT_TRUE(uses_gpu(McBackendKind::cuda));
  EXPECT_FALSE(uses_gpu(McBackendKind::cpu));
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
  struct Case {
    McProblem problem;
    void (*spoil)(MonteCarloConfig&);
    const char* what;
  };
  const Case cases[] = {
      {McProblem::european, [](MonteCarloConfig& c) { c.samples = 0; }, "samples 0"},
      {McProblem::european, [](MonteCarloConfig& c) { c.samples = -5; }, "samples < 0"},
      {McProblem::european, [](MonteCarloConfig& c) { c.market.sigma = 0; }, "sigma 0"},
      {McProblem::european, [](MonteCarloConfig& c) { c.market.sigma = -0.2; }, "sigma < 0"},
      {McProblem::european, [](MonteCarloConfig& c) { c.market.maturity = 0; }, "T 0"},
      {McProblem::european, [](MonteCarloConfig& c) { c.market.strike = -1; }, "strike < 0"},
      {McProblem::european, [](MonteCarloConfig& c) { c.market.spot = -1; }, "spot < 0"},
      {McProblem::asian, [](MonteCarloConfig& c) { c.steps = 0; }, "steps 0"},
      {McProblem::european, [](MonteCarloConfig& c) { c.control_variate = ControlVariate::geometric; },
       "control variate on european"},
      {McProblem::pi, [](MonteCarloConfig& c) { c.chunk_size = 6; }, "chunk not a multiple of 4"},
      {McProblem::pi, [](MonteCarloConfig& c) { c.reps = 0; }, "reps 0"},
      {McProblem::pi, [](MonteCarloConfig& c) { c.share_gpu = true; }, "share-gpu without cuda"},
      {McProblem::pi, [](MonteCarloConfig& c) { c.batch = 1000; }, "batch without curand"},
      {McProblem::pi, [](MonteCarloConfig& c) { c.curand_generator = McCurandGenerator::xorwow; },
       "curand generator without curand"},
      {McProblem::pi,
       [](MonteCarloConfig& c) {
         c.backend = McBackendKind::curand;
         c.batch = -1;
       },
       "batch < 0"},
      {McProblem::asian, [](MonteCarloConfig& c) { c.backend = McBackendKind::curand; }, "asian on curand"},
  };
  for (const Case& k : cases) {
    auto c = valid(k.problem);
    k.spoil(c);
    EXPECT_THROW(validate(c), UsageError) << k.what;
  }
}

TEST(MonteCarloConfig, CurandTakesItsOptionsAndSharesGpus) {
  for (const auto p : {McProblem::pi, McProblem::european}) {
    auto c = valid(p);
    c.backend = McBackendKind::curand;
    c.batch = 999;  // need not divide the samples
    c.curand_generator = McCurandGenerator::xorwow;
    c.share_gpu = true;
    EXPECT_NO_THROW(validate(c)) << to_string(p);
  }
}

TEST(MonteCarloConfig, PiIgnoresMarketParameters) {
  auto c = valid(McProblem::pi);
  c.market.sigma = -1;  // not used by pi
  EXPECT_NO_THROW(validate(c));
}

TEST(MonteCarloConfig, SampleCountsStayWithinTheirArithmetic) {
  // Chunk counts round up: samples + chunk size must fit in 64 bits.
  auto c = valid(McProblem::pi);
  c.samples = std::numeric_limits<std::int64_t>::max();
  try {
    validate(c);
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--samples"), std::string::npos) << e.what();
  }
  c.samples = std::int64_t{1} << 62;
  EXPECT_NO_THROW(validate(c));
  // cuRAND's stream offset is 4 per sample: 2^62 samples would wrap it.
  c.backend = McBackendKind::curand;
  try {
    validate(c);
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--backend curand's stream offsets"), std::string::npos) << e.what();
  }
  c.samples = std::numeric_limits<std::int64_t>::max() / 4;
  EXPECT_NO_THROW(validate(c));
}
