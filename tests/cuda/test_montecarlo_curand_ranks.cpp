// The cuRAND backend sharded over ranks (one GPU each where there are enough, else sharing one):
// π and the European call pass the z-test on every rank count, every rank agrees on the outcome,
// and the samples are split by chunks as for the other backends. Needs a visible GPU.
#include <gtest/gtest.h>

#include <cmath>

#include "mpi_test_util.hpp"
#include "scalebench/gpu/gpu.hpp"
#include "scalebench/mpi/mpi.hpp"
#include "scalebench/problem/montecarlo.hpp"
#include "scalebench/workloads/distributed_montecarlo.hpp"
#include "test_montecarlo_gpu_util.hpp"

using namespace scalebench;

TEST(MonteCarloCurandRanks, ClosedFormsHoldOnEveryGpuCount) {
  SKIP_WITHOUT_A_GPU();
  const auto comm = Communicator::world();
  for (const auto p : {McProblem::pi, McProblem::european}) {
    MonteCarloConfig cfg = gpu_test::mc_config(p, McBackendKind::curand, p == McProblem::pi ? 100'000'007 : 4'000'003,
                                               1618, 2);
    cfg.batch = 3'000'017;  // divides neither the samples nor a rank's share
    const MonteCarloResult r = run_distributed_montecarlo(cfg, comm);
    EXPECT_TRUE(all_ranks(r.ok)) << to_string(p) << " on " << comm.size() << " rank(s): z " << r.outcome.main.z;
    EXPECT_TRUE(all_ranks(std::fabs(r.outcome.main.z) < kZLimit)) << to_string(p);
    if (comm.is_root()) {
      std::int64_t total = 0;
      for (const auto& n : r.record["partition"]["samples_per_rank"]) total += n.get<std::int64_t>();
      EXPECT_EQ(total, cfg.samples);
      EXPECT_EQ(r.record["partition"]["samples_per_rank"].size(), static_cast<std::size_t>(comm.size()));
    }
  }
}
