#pragma once
// Shared by the distributed GPU tests: the exact product of the driver's integer matrices, and
// a configuration of small-integer runs whose C must equal it bit for bit.
#include <random>
#include <vector>

#include "gemm_checks.hpp"
#include "gemm_reference.hpp"
#include "gpu_skip.hpp"
#include "mpi_test_util.hpp"
#include "scalebench/gpu/gpu.hpp"
#include "scalebench/mpi/mpi.hpp"
#include "scalebench/workloads/gemm/distributed_gemm.hpp"
#include "scalebench/workloads/gemm/gemm_config.hpp"

// NCCL runs one rank per GPU: the NCCL tests skip, saying so, with fewer visible GPUs than ranks.
#define SKIP_WITHOUT_A_GPU_PER_RANK()                                                                        \
  do {                                                                                                       \
    if (visible_gpu_count() < world_size()) {                                                                \
      GTEST_SKIP() << "NCCL needs one GPU per rank: " << world_size() << " rank(s), " << visible_gpu_count() \
                   << " GPU(s) visible";                                                                     \
    }                                                                                                        \
  } while (0)

namespace gpu_test {

using namespace scalebench;

inline GemmConfig integer_config(const GemmShape& shape, Precision p, Transport t, bool overlap = false) {
  GemmConfig cfg;
  cfg.shape = shape;
  cfg.backend = GemmBackendKind::cublas;
  cfg.precision = p;
  cfg.transport = t;
  cfg.fill = Fill::integer;
  cfg.reps = 2;
  cfg.warmup = 0;
  cfg.quiet = true;
  cfg.seed = 4321;
  cfg.overlap = overlap;
  // Ranks beyond the visible GPUs share them (MPI transport only).
  cfg.share_gpu = visible_gpu_count() < world_size();
  return cfg;
}

inline void expect_exact(const GemmShape& shape, Precision p, Transport t, bool overlap = false) {
  const auto comm = Communicator::world();
  const GemmConfig cfg = integer_config(shape, p, t, overlap);
  const GemmResult r = run_gemm_keeping_c(cfg, comm);
  bool same = true;
  if (comm.is_root()) same = r.c == exact_integer_product(shape, cfg.seed);
  EXPECT_TRUE(all_ranks(r.ok)) << "verification failed";
  EXPECT_TRUE(all_ranks(same)) << to_string(p) << " " << to_string(t) << (overlap ? " --overlap " : " ")
                               << shape_on_ranks(shape, comm.size());
}

}  // namespace gpu_test
