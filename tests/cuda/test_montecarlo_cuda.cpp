// GPU Monte Carlo against the CPU reference: π hits identical to the bit, option estimates equal
// up to the GPU's fp32 path arithmetic, results independent of how chunks are split over GPUs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "mpi_test_util.hpp"
#include "scalebench/cpu/montecarlo.hpp"
#include "scalebench/gpu/gpu.hpp"
#include "scalebench/mpi/mpi.hpp"
#include "scalebench/workloads/distributed_montecarlo.hpp"
#include "test_montecarlo_gpu_util.hpp"
#include "workloads/montecarlo/gpu_montecarlo.hpp"

using namespace scalebench;

namespace {

// Relative tolerance for fp32 path arithmetic against the fp64 CPU: per path a few fp32 ulps
// (2^-24) of the spot through exp, Box–Muller and, for the Asian, 252 steps of the log-price;
// 1e-4 is about 1700 ulps yet still 100x below the statistical error of the runs compared.
constexpr double kFp32PathTolerance = 1e-4;

struct Computed {
  McPartial part;
  McOutcome outcome;
};

Computed compute(std::unique_ptr<McKernel> kernel, const MonteCarloConfig& cfg, ChunkRange range) {
  PhaseRecorder setup, rec;
  kernel->prepare(cfg, range, setup);
  Computed c;
  c.part = kernel->run(rec);
  if (cfg.problem == McProblem::pi) {
    c.outcome = estimate_pi(c.part.hits, cfg.samples);
  } else if (range.first == 0 && range.last == chunk_count(cfg)) {
    ChunkTree tree;
    for (const auto& n : c.part.nodes) tree.push(n);
    c.outcome = estimate_option(cfg, tree.total(), cfg.samples);
  }
  return c;
}

MonteCarloConfig config(McProblem p, std::int64_t samples) {
  MonteCarloConfig cfg;
  cfg.problem = p;
  cfg.backend = McBackendKind::cuda;
  cfg.samples = samples;
  cfg.seed = 31337;
  resolve_defaults(cfg);
  return cfg;
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

class MonteCarloCuda : public gpu_test::GpuWorldTest {};

}  // namespace

TEST_F(MonteCarloCuda, PiHitsIdenticalToCpu) {
  for (const std::int64_t samples : {std::int64_t{1'000'003}, std::int64_t{300'000'001}}) {
    auto cfg = config(McProblem::pi, samples);
    const std::int64_t chunks = chunk_count(cfg);
    const auto gpu = compute(make_gpu_montecarlo(cfg, world_), cfg, {0, chunks});
    const auto cpu = compute(make_cpu_montecarlo(2), cfg, {0, chunks});
    EXPECT_EQ(gpu.part.hits, cpu.part.hits) << samples << " points";
    EXPECT_TRUE(same_bits(gpu.outcome.main.estimate, cpu.outcome.main.estimate));
    EXPECT_TRUE(gpu.outcome.ok) << "z " << gpu.outcome.main.z;
  }
}

TEST_F(MonteCarloCuda, PiHitsIdenticalToCpuOnAPartialRangeWithSmallChunks) {
  auto cfg = config(McProblem::pi, 1'000'001);
  cfg.chunk_size = 1000;
  const ChunkRange range{37, 1001};  // includes the last, odd-length chunk
  const auto gpu = compute(make_gpu_montecarlo(cfg, world_), cfg, range);
  const auto cpu = compute(make_cpu_montecarlo(2), cfg, range);
  EXPECT_EQ(gpu.part.hits, cpu.part.hits);
}

// The kernel holds the high counter word fixed over a run of blocks: a chunk whose blocks cross
// 2^32 (sample 2^33) is two runs. Chunks of 10^6 samples put that crossing inside chunk 8589; the
// last chunk is short and odd.
TEST_F(MonteCarloCuda, PiHitsIdenticalToCpuWhereTheCounterCarriesIntoItsHighWord) {
  auto cfg = config(McProblem::pi, (std::int64_t{1} << 33) + 1'000'001);
  cfg.chunk_size = 1'000'000;
  const ChunkRange range{8588, chunk_count(cfg)};
  ASSERT_EQ(range.last, 8591);
  const auto gpu = compute(make_gpu_montecarlo(cfg, world_), cfg, range);
  const auto cpu = compute(make_cpu_montecarlo(2), cfg, range);
  EXPECT_EQ(gpu.part.hits, cpu.part.hits);
}

TEST_F(MonteCarloCuda, EuropeanMatchesCpuUpToFp32PathArithmetic) {
  for (const auto option : {OptionKind::call, OptionKind::put}) {
    auto cfg = config(McProblem::european, 100'003);
    cfg.option = option;
    const auto gpu = compute(make_gpu_montecarlo(cfg, world_), cfg, {0, chunk_count(cfg)});
    const auto cpu = compute(make_cpu_montecarlo(2), cfg, {0, chunk_count(cfg)});
    EXPECT_NEAR(gpu.outcome.main.estimate, cpu.outcome.main.estimate, kFp32PathTolerance * cpu.outcome.main.estimate);
    EXPECT_NEAR(gpu.outcome.main.std_error, cpu.outcome.main.std_error, 1e-3 * cpu.outcome.main.std_error);
    EXPECT_LT(std::fabs(gpu.outcome.main.z), kZLimit);
  }
}

TEST_F(MonteCarloCuda, AsianMatchesCpuUpToFp32PathArithmetic) {
  auto cfg = config(McProblem::asian, 5003);
  cfg.control_variate = ControlVariate::geometric;
  const auto gpu = compute(make_gpu_montecarlo(cfg, world_), cfg, {0, chunk_count(cfg)});
  const auto cpu = compute(make_cpu_montecarlo(2), cfg, {0, chunk_count(cfg)});
  EXPECT_NEAR(gpu.outcome.main.estimate, cpu.outcome.main.estimate, kFp32PathTolerance * cpu.outcome.main.estimate);
  EXPECT_NEAR(gpu.outcome.checked.estimate, cpu.outcome.checked.estimate,
              kFp32PathTolerance * cpu.outcome.checked.estimate);
  EXPECT_TRUE(gpu.outcome.ok);
}

TEST_F(MonteCarloCuda, SplitOverGpusGivesTheSameBits) {
  // Two "GPUs" (ranges computed separately, folded in order) against one.
  for (const auto p : {McProblem::european, McProblem::asian}) {
    auto cfg = config(p, p == McProblem::asian ? 20'001 : 1'000'001);
    const std::int64_t chunks = chunk_count(cfg);
    const auto whole = compute(make_gpu_montecarlo(cfg, world_), cfg, {0, chunks});
    ChunkTree tree;
    for (const ChunkRange r : {ChunkRange{0, chunks / 3}, ChunkRange{chunks / 3, chunks}}) {
      for (const auto& n : compute(make_gpu_montecarlo(cfg, world_), cfg, r).part.nodes) tree.push(n);
    }
    const McOutcome split = estimate_option(cfg, tree.total(), cfg.samples);
    EXPECT_TRUE(same_bits(split.main.estimate, whole.outcome.main.estimate)) << to_string(p);
    EXPECT_TRUE(same_bits(split.main.std_error, whole.outcome.main.std_error)) << to_string(p);
  }
}

TEST_F(MonteCarloCuda, EuropeanCallAgainstBlackScholesAtAMillionPaths) {
  const auto cfg = config(McProblem::european, 1'000'000);
  const auto gpu = compute(make_gpu_montecarlo(cfg, world_), cfg, {0, chunk_count(cfg)});
  EXPECT_LT(std::fabs(gpu.outcome.main.z), kZLimit) << gpu.outcome.main.estimate;
}

TEST_F(MonteCarloCuda, DriverOnGpuIsBitIdenticalToCpuForPi) {
  auto cfg = config(McProblem::pi, 50'000'001);
  cfg.quiet = true;
  cfg.reps = 2;
  const MonteCarloResult gpu = run_distributed_montecarlo(cfg, world_);
  cfg.backend = McBackendKind::cpu;
  cfg.threads = 2;
  const MonteCarloResult cpu = run_distributed_montecarlo(cfg, world_);
  EXPECT_TRUE(same_bits(gpu.outcome.main.estimate, cpu.outcome.main.estimate));
  EXPECT_TRUE(gpu.ok);
}
