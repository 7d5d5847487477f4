// Monte Carlo configuration: names, defaults, the values that can never work, the options a
// problem does not read (refused when given, whatever their value) and the inputs the z-test
// cannot judge (too few effective samples, degenerate markets).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
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

// The message validate() throws, or "" when it accepts.
std::string refusal(const MonteCarloConfig& cfg) {
  try {
    validate(cfg);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

bool says(const std::string& message, const std::string& part) { return message.find(part) != std::string::npos; }
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
      {McProblem::pi, [](MonteCarloConfig& c) { c.samples = 2; }, "pi with 2 samples"},
      {McProblem::pi, [](MonteCarloConfig& c) { c.control_variate = ControlVariate::geometric; },
       "control variate on pi"},
      {McProblem::european, [](MonteCarloConfig& c) { c.market.spot = 0; }, "spot 0"},
      {McProblem::european, [](MonteCarloConfig& c) { c.market.sigma = 3; }, "sigma^2 T = 9"},
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

TEST(MonteCarloConfig, PiRefusesTheOptionModelGivenWhateverItsValue) {
  EXPECT_EQ(refusal(valid(McProblem::pi)), "");
  const char* model[] = {"--option", "--spot",     "--strike", "--rate",
                         "--sigma",  "--maturity", "--steps",  "--control-variate"};
  for (const char* option : model) {
    auto c = valid(McProblem::pi);
    c.given_options = {"--samples", "--seed", option};  // given with the default's value
    const std::string m = refusal(c);
    EXPECT_TRUE(says(m, std::string(option) + " applies to the option problems")) << option << ": " << m;
    EXPECT_TRUE(says(m, "not to --problem pi: drop it")) << m;
  }
  // A configuration built in code carries every field: an unread one is no refusal (the thread
  // and rank tests set --steps on every problem); a control variate asked for is.
  auto c = valid(McProblem::pi);
  c.market.sigma = -1;
  c.option = OptionKind::put;
  c.steps = 20;
  EXPECT_EQ(refusal(c), "");
  c.control_variate = ControlVariate::geometric;
  EXPECT_TRUE(says(refusal(c), "--control-variate applies to the option problems")) << refusal(c);
  c = valid(McProblem::pi);
  c.given_options = {"--spot", "--steps", "--control-variate"};
  EXPECT_TRUE(says(refusal(c), "--spot, --steps and --control-variate apply")) << refusal(c);
}

TEST(MonteCarloConfig, EuropeanRefusesTheAsianOptionsWhateverTheirValue) {
  for (const char* option : {"--steps", "--control-variate"}) {
    auto c = valid(McProblem::european);
    c.given_options = {option};
    EXPECT_TRUE(says(refusal(c), std::string(option) + " applies to --problem asian only")) << refusal(c);
    c.problem = McProblem::asian;
    resolve_defaults(c);
    EXPECT_EQ(refusal(c), "") << option;
  }
  auto c = valid(McProblem::european);
  c.given_options = {"--steps", "--control-variate"};
  EXPECT_TRUE(says(refusal(c), "--steps and --control-variate apply to --problem asian only")) << refusal(c);
  c.given_options = {"--option", "--spot", "--strike", "--rate", "--sigma", "--maturity"};
  c.steps = 5;  // in code, unread: no refusal
  EXPECT_EQ(refusal(c), "");
}

TEST(MonteCarloConfig, BatchAndGeneratorAreJudgedByBeingGivenNotByTheirText) {
  // `--batch 0` (automatic) is curand's; given to another backend it is refused like `--batch 5`.
  for (const auto b : {McBackendKind::cpu, McBackendKind::naive, McBackendKind::cuda}) {
    for (const char* option : {"--batch", "--curand-generator"}) {
      auto c = valid(McProblem::european);
      c.backend = b;
      c.given_options = {option};
      EXPECT_TRUE(says(refusal(c), std::string(option) + " needs --backend curand")) << to_string(b) << refusal(c);
    }
  }
  auto c = valid(McProblem::european);
  c.backend = McBackendKind::curand;
  c.given_options = {"--batch", "--curand-generator"};
  EXPECT_EQ(refusal(c), "") << "curand takes --batch 0 (automatic) and the default generator, given";
}

TEST(MonteCarloConfig, SampleMomentsAreTheClosedFormsAndTheirQuadrature) {
  const auto pi = checked_sample_moments(valid(McProblem::pi));
  EXPECT_DOUBLE_EQ(pi.nonzero, std::numbers::pi / 4);
  EXPECT_DOUBLE_EQ(pi.mean, std::numbers::pi);
  EXPECT_DOUBLE_EQ(pi.second, 4 * std::numbers::pi);  // E[(4·hit)²] = 16·π/4
  struct Case {
    McProblem problem;
    OptionKind option;
    double spot, strike, sigma;
    int steps;
  };
  for (const Case& k : {Case{McProblem::european, OptionKind::call, 100, 100, 0.2, 252},
                        Case{McProblem::european, OptionKind::put, 100, 130, 0.5, 252},
                        Case{McProblem::european, OptionKind::call, 1, 1.6, 0.1, 252},
                        Case{McProblem::asian, OptionKind::call, 100, 100, 0.2, 252},
                        Case{McProblem::asian, OptionKind::put, 100, 90, 0.8, 7}}) {
    auto c = valid(k.problem);
    c.option = k.option;
    c.market.spot = k.spot;
    c.market.strike = k.strike;
    c.market.sigma = k.sigma;
    c.steps = k.steps;
    const SampleMoments y = checked_sample_moments(c);
    const double discount = std::exp(-c.market.rate * c.market.maturity);
    const double closed = k.problem == McProblem::european ? black_scholes(c.market, k.option)
                                                           : geometric_asian(c.market, k.option, k.steps);
    EXPECT_NEAR(discount * y.mean, closed, 1e-12 * closed) << "the price estimate_option checks against";
    // The payoff of L = F·exp(s·z - s²/2), z standard normal, integrated by Simpson's rule over
    // the z where it is in the money (from the kink at the strike to 12).
    const double s = std::sqrt(y.log_variance);
    const double kink = (std::log(k.strike / y.forward) + s * s / 2) / s;
    const double from = k.option == OptionKind::call ? kink : -12, to = k.option == OptionKind::call ? 12 : kink;
    const int steps = 20000;
    const double h = (to - from) / steps;
    double p = 0, m1 = 0, m2 = 0;
    for (int i = 0; i <= steps; ++i) {
      const double z = from + i * h;
      const double simpson = (i == 0 || i == steps) ? 1.0 : (i % 2 == 1 ? 4.0 : 2.0);
      const double w = simpson * h / 3 * std::exp(-z * z / 2) / std::sqrt(2 * std::numbers::pi);
      const double l = y.forward * std::exp(s * z - s * s / 2);
      const double payoff = std::max(k.option == OptionKind::call ? l - k.strike : k.strike - l, 0.0);
      p += w;
      m1 += w * payoff;
      m2 += w * payoff * payoff;
    }
    EXPECT_NEAR(y.nonzero, p, 1e-9 * p);
    EXPECT_NEAR(y.mean, m1, 1e-9 * m1);
    EXPECT_NEAR(y.second, m2, 1e-9 * m2);
  }
}

TEST(MonteCarloConfig, TooFewEffectiveSamplesAreRefusedNamingTheCountNeeded) {
  // π: 100 effective samples at π/4 a point: 128 points (the binomial z-test's false alarm there
  // is 6e-4; with 2 points it is 0.66: an estimate of 4 or 0 has no standard error).
  auto c = valid(McProblem::pi);
  c.samples = 2;
  EXPECT_TRUE(says(refusal(c), "--samples must be at least 128 for --problem pi (got 2)")) << refusal(c);
  c.samples = 127;
  EXPECT_TRUE(says(refusal(c), "--samples must be at least 128")) << refusal(c);
  c.samples = 128;
  EXPECT_EQ(refusal(c), "");
  // Options: N·E[Y]²/E[Y²] >= 100, to the sample.
  for (const auto p : {McProblem::european, McProblem::asian}) {
    for (const double strike : {100.0, 150.0}) {
      c = valid(p);
      c.market.strike = strike;
      const SampleMoments y = checked_sample_moments(c);
      const auto need = static_cast<std::int64_t>(std::ceil(kMinEffectiveSamples * y.second / (y.mean * y.mean)));
      c.samples = need - 1;
      EXPECT_TRUE(says(refusal(c), "--samples must be at least " + std::to_string(need))) << refusal(c);
      c.samples = need;
      EXPECT_EQ(refusal(c), "") << to_string(p) << " strike " << strike;
    }
  }
  // Out of the money by so much that no count reaches 100 paths in the money.
  c = valid(McProblem::european);
  c.market.strike = 1e4;
  EXPECT_TRUE(says(refusal(c), "no --samples suffices for --problem european")) << refusal(c);
}

TEST(MonteCarloConfig, DegenerateMarketsAreRefusedNamingTheOptionsAndTheBound) {
  struct Case {
    McProblem problem;
    void (*spoil)(MonteCarloConfig&);
    const char* says;
  };
  const Case cases[] = {
      // Subnormal prices (the closed form is nan) and zero prices.
      {McProblem::european,
       [](MonteCarloConfig& c) {
         c.market = {1e-320, 1e-320, 0.05, 1e-320, 1e-320};
       },
       "--spot must be in [1e-100, 1e100] (got 1e-320)"},
      {McProblem::asian,
       [](MonteCarloConfig& c) {
         c.market.spot = 0;
         c.market.strike = 0;
         c.control_variate = ControlVariate::geometric;
       },
       "--spot must be in [1e-100, 1e100] (got 0)"},
      {McProblem::european, [](MonteCarloConfig& c) { c.market.strike = 0; }, "--strike must be in [1e-100, 1e100]"},
      {McProblem::european, [](MonteCarloConfig& c) { c.market.strike = 1e101; }, "--strike must be in [1e-100"},
      // sigma²T = 99: no sample shows the tail that carries the mean.
      {McProblem::european,
       [](MonteCarloConfig& c) {
         c.market = {1e100, 100, 10, 3, 11};
       },
       "--sigma 3 over --maturity 11 gives a log-price variance sigma^2*T = 99, above 4"},
      {McProblem::asian,
       [](MonteCarloConfig& c) {
         c.market.sigma = 1.01;
         c.market.maturity = 4;
       },
       "sigma^2*T = 4.08, above 4"},
      // The forward S·e^{rT} beyond 1e100, or below 1e-100.
      {McProblem::european,
       [](MonteCarloConfig& c) {
         c.market.spot = 1e100;
         c.market.rate = 1;
       },
       "gives a forward S*exp(rT) = 2.718e+100 outside [1e-100, 1e100]"},
      {McProblem::european,
       [](MonteCarloConfig& c) {
         c.market.spot = 1e-99;
         c.market.rate = -10;
         c.market.maturity = 30;
         c.market.sigma = 0.1;
       },
       "outside [1e-100, 1e100]"},
      // In-the-money payoffs that differ by rounding only.
      {McProblem::european, [](MonteCarloConfig& c) { c.market.sigma = 1e-10; }, "below 0.0001"},
      {McProblem::european,
       [](MonteCarloConfig& c) {
         c.option = OptionKind::put;
         c.market.spot = 1e-6;
       },
       "lost to rounding"},
  };
  for (const Case& k : cases) {
    auto c = valid(k.problem);
    k.spoil(c);
    EXPECT_TRUE(says(refusal(c), k.says)) << k.says << "\n got: " << refusal(c);
  }
}

TEST(MonteCarloConfig, TheBoundsKeepWhatTheShippedStudiesAndTestsRun) {
  // The defaults, the edges of the documented ranges, and the configurations montecarlo_ranks,
  // the CLI tests and jobs/*.yaml run.
  for (const auto p : {McProblem::pi, McProblem::european, McProblem::asian}) EXPECT_EQ(refusal(valid(p)), "");
  auto c = valid(McProblem::european);
  c.market.sigma = 2;  // sigma²T = 4
  EXPECT_EQ(refusal(c), "");
  c.market = {1e-100, 1e-100, 0, 0.2, 1};
  EXPECT_EQ(refusal(c), "");
  c.market = {1e100, 1e100, 0, 0.2, 1};
  EXPECT_EQ(refusal(c), "");
  c.samples = 2000;
  c.market = {};
  EXPECT_EQ(refusal(c), "");
  c = valid(McProblem::asian);
  c.samples = 2001;
  c.steps = 30;
  c.control_variate = ControlVariate::geometric;
  EXPECT_EQ(refusal(c), "");
  for (const auto p : {McProblem::european, McProblem::asian}) {
    c = valid(p);
    c.samples = 1000;
    EXPECT_EQ(refusal(c), "") << to_string(p);
  }
  c = valid(McProblem::pi);
  c.samples = 1000;
  EXPECT_EQ(refusal(c), "");
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
