// The distributed Monte Carlo on GPUs gives the CPU's π to the bit at any GPU count: run on 1 and
// on 2 ranks (one GPU each where there are two; sharing one GPU otherwise).
#include <gtest/gtest.h>

#include <cstring>

#include "montecarlo_reference.hpp"
#include "mpi_test_util.hpp"
#include "scalebench/gpu/gpu.hpp"
#include "scalebench/mpi/mpi.hpp"
#include "scalebench/problem/montecarlo.hpp"
#include "scalebench/workloads/distributed_montecarlo.hpp"
#include "test_montecarlo_gpu_util.hpp"

using namespace scalebench;

TEST(MonteCarloCudaRanks, PiOnEveryGpuCountHasTheCpuBits) {
  SKIP_WITHOUT_A_GPU();
  const auto comm = Communicator::world();
  const MonteCarloConfig cfg = gpu_test::mc_config(McProblem::pi, McBackendKind::cuda, 200'000'003, 2718, 1);
  const MonteCarloResult gpu = run_distributed_montecarlo(cfg, comm);

  const McOutcome cpu = cpu_reference(cfg, 2);

  const double a = gpu.outcome.main.estimate, b = cpu.main.estimate;
  EXPECT_TRUE(all_ranks(gpu.ok)) << "verification failed on the GPU run";
  EXPECT_TRUE(all_ranks(std::memcmp(&a, &b, sizeof a) == 0))
      << "GPU on " << comm.size() << " rank(s): " << a << " vs CPU " << b;
}
