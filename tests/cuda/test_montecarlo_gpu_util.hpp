#pragma once
// Shared by the GPU Monte Carlo tests: a fixture that skips without a GPU, and the configuration
// of a quiet run through the driver.
#include <gtest/gtest.h>

#include <cstdint>

#include "gpu_skip.hpp"
#include "mpi_test_util.hpp"
#include "scalebench/gpu/gpu.hpp"
#include "scalebench/mpi/mpi.hpp"
#include "scalebench/problem/montecarlo.hpp"

namespace gpu_test {

// Each test skips, saying why, without a visible GPU; world_ is the ranks of the run.
class GpuWorldTest : public testing::Test {
 protected:
  void SetUp() override { SKIP_WITHOUT_A_GPU(); }
  const scalebench::Communicator world_ = scalebench::Communicator::world();
};

// `samples` of problem `p` on the GPU backend `b`: `reps` repeats (from two on, the driver checks
// that they agree to the bit), no warm-up, quiet, unpinned; ranks beyond the visible GPUs share
// them.
inline scalebench::MonteCarloConfig mc_config(scalebench::McProblem p, scalebench::McBackendKind b,
                                              std::int64_t samples, std::uint64_t seed, int reps) {
  scalebench::MonteCarloConfig cfg;
  cfg.problem = p;
  cfg.backend = b;
  cfg.samples = samples;
  cfg.seed = seed;
  cfg.reps = reps;
  cfg.warmup = 0;
  cfg.quiet = true;
  cfg.pin = scalebench::PinPolicy::none;
  cfg.share_gpu = scalebench::visible_gpu_count() < world_size();
  return cfg;
}

}  // namespace gpu_test
