// The cuRAND materialise-then-reduce backend against the closed forms (z-test), on one GPU:
// π and European call/put with both generators, batches that do not divide the sample count
// (odd, so the normals' pairs straddle batches), many small batches (which would repeat numbers
// if their offsets overlapped), and the record that says what it is. Needs a visible GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <tuple>

#include "mpi_test_util.hpp"
#include "scalebench/gpu/gpu.hpp"
#include "scalebench/mpi/mpi.hpp"
#include "scalebench/problem/montecarlo.hpp"
#include "scalebench/workloads/distributed_montecarlo.hpp"
#include "test_montecarlo_gpu_util.hpp"

using namespace scalebench;

namespace {

MonteCarloConfig config(McProblem p, std::int64_t samples, std::int64_t batch) {
  MonteCarloConfig cfg = gpu_test::mc_config(p, McBackendKind::curand, samples, 4242, 2);
  cfg.batch = batch;
  resolve_defaults(cfg);
  return cfg;
}

class MonteCarloCurand : public gpu_test::GpuWorldTest {};

}  // namespace

TEST_F(MonteCarloCurand, PiAgainstTheClosedFormWithBothGenerators) {
  for (const auto g : {McCurandGenerator::philox, McCurandGenerator::xorwow}) {
    auto cfg = config(McProblem::pi, 20'000'000, 0);
    cfg.curand_generator = g;
    const MonteCarloResult r = run_distributed_montecarlo(cfg, world_);
    EXPECT_TRUE(r.ok) << to_string(g) << " z " << r.outcome.main.z;
    EXPECT_LT(std::fabs(r.outcome.main.z), kZLimit) << to_string(g);
    EXPECT_NEAR(r.outcome.main.estimate, std::numbers::pi, 8 * r.outcome.main.std_error) << to_string(g);
  }
}

TEST_F(MonteCarloCurand, EuropeanCallAndPutAgainstBlackScholes) {
  for (const auto g : {McCurandGenerator::philox, McCurandGenerator::xorwow}) {
    for (const auto option : {OptionKind::call, OptionKind::put}) {
      auto cfg = config(McProblem::european, 2'000'000, 0);
      cfg.curand_generator = g;
      cfg.option = option;
      const MonteCarloResult r = run_distributed_montecarlo(cfg, world_);
      EXPECT_TRUE(r.ok) << to_string(g) << " " << to_string(option) << " z " << r.outcome.main.z;
      EXPECT_NEAR(r.outcome.main.closed_form, black_scholes(cfg.market, option), 1e-12);
    }
  }
}

TEST_F(MonteCarloCurand, BatchesThatDoNotDivideTheSamples) {
  // 1'000'003 = 15 x 65'537 + 16'948: a short last batch; 99'999 normals per batch is odd.
  for (const auto& [p, samples, batch] :
       {std::tuple{McProblem::pi, 1'000'003, 65'537}, std::tuple{McProblem::european, 1'000'003, 99'999}}) {
    const auto cfg = config(p, samples, batch);
    const MonteCarloResult r = run_distributed_montecarlo(cfg, world_);
    EXPECT_TRUE(r.ok) << to_string(p) << " z " << r.outcome.main.z;
    ASSERT_TRUE(r.record.contains("backend"));
    EXPECT_EQ(r.record["backend"]["batch_samples"], batch);
    EXPECT_EQ(r.record["backend"]["batches"], (samples + batch - 1) / batch);
  }
}

TEST_F(MonteCarloCurand, SmallBatchesDrawDisjointNumbers) {
  // 10^4 batches of 999 points (and paths): had every batch drawn the same numbers, the estimate
  // would carry the error of 999 samples, about 100 of the reported standard errors.
  for (const auto p : {McProblem::pi, McProblem::european}) {
    auto cfg = config(p, 9'990'000, 999);
    cfg.reps = 1;
    const MonteCarloResult r = run_distributed_montecarlo(cfg, world_);
    EXPECT_TRUE(r.ok) << to_string(p) << " z " << r.outcome.main.z;
  }
}

TEST_F(MonteCarloCurand, RecordStatesThePhasesTrafficAndThatItIsNotBitIdentical) {
  const auto cfg = config(McProblem::pi, 4'000'000, 1'000'000);
  const MonteCarloResult r = run_distributed_montecarlo(cfg, world_);
  ASSERT_TRUE(r.ok);
  const auto& b = r.record["backend"];
  EXPECT_EQ(b["name"], "curand");
  EXPECT_EQ(b["generator"], "philox");
  EXPECT_EQ(b["reproducible_across_rank_counts"], false);
  EXPECT_FALSE(b["bit_identical"].get<std::string>().empty());
  EXPECT_EQ(b["gpu_memory_traffic"]["bytes_per_sample"]["total"], 34);
  for (const char* phase : {"generate", "kernel", "device_reduce", "compute", "d2h"}) {
    ASSERT_TRUE(r.record["phases"].contains(phase)) << phase;
    EXPECT_GT(r.record["phases"][phase]["median_s"].get<double>(), 0.0) << phase;
  }
  const auto& ph = r.record["phases"];
  EXPECT_NEAR(ph["compute"]["median_s"].get<double>(),
              ph["generate"]["median_s"].get<double>() + ph["kernel"]["median_s"].get<double>() +
                  ph["device_reduce"]["median_s"].get<double>(),
              0.5 * ph["compute"]["median_s"].get<double>());
}
