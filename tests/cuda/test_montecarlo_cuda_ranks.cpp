// The distributed Monte Carlo on GPUs gives the CPU's π to the bit at any GPU count: run on 1 and
// on 2 ranks (one GPU each where there are two; sharing one GPU otherwise).
#include <gtest/gtest.h>

#include <cstring>

#include "montecarlo_reference.hpp"
#include "mpi_test_util.hpp"
#include "scalebench/cpu/montecarlo.hpp"
#include "scalebench/gpu/gpu.hpp"
#include "scalebench/mpi/mpi.hpp"

using namespace scalebench;

TEST(MonteCarloCudaRanks, PiOnEveryGpuCountHasTheCpuBits) {
  if (visible_gpu_count() == 0) GTEST_SKIP() << "no GPU: " << gpu_absence_reason();
  const auto comm = Communicator::world();
  MonteCarloConfig cfg;
  cfg.problem = McProblem::pi;
  cfg.backend = McBackendKind::cuda;
  cfg.samples = 200'000'003;
  cfg.seed = 2718;
  cfg.reps = 1;
  cfg.warmup = 0;
  cfg.quiet = true;
  cfg.pin = scalebench::PinPolicy::none;
  cfg.share_gpu = visible_gpu_count() < comm.size();
  const MonteCarloResult gpu = run_distributed_montecarlo(cfg, comm);

  const McOutcome cpu = cpu_reference(cfg, 2);

  const double a = gpu.outcome.main.estimate, b = cpu.main.estimate;
  EXPECT_TRUE(all_ranks(gpu.ok)) << "verification failed on the GPU run";
  EXPECT_TRUE(all_ranks(std::memcmp(&a, &b, sizeof a) == 0))
      << "GPU on " << comm.size() << " rank(s): " << a << " vs CPU " << b;
}
