// `scalebench gemm --backend cublas` under the real mpirun, where a GPU is visible: every
// precision runs and verifies, the rank -> GPU map is printed, a wrong element fails the run,
// ranks beyond the GPUs need --share-gpu, NCCL with one rank says that nothing moves.
#include <gtest/gtest.h>

#include "../cli/cli_runner.hpp"
#include "gpu_skip.hpp"
#include "scalebench/gpu/gpu.hpp"

using scalebench::gpu_absence_reason;
using scalebench::visible_gpu_count;

TEST(GemmCliGpu, EveryPrecisionRunsAndVerifies) {
  SKIP_WITHOUT_A_GPU();
  for (const char* p : {"fp64", "fp32", "tf32", "bf16"}) {
    const CliRun r = run_scalebench_mpi(1, std::string("gemm --backend cublas --n 333 --reps 2 --precision ") + p);
    EXPECT_EQ(r.exit_code, 0) << p << "\n" << r.output;
    EXPECT_NE(r.output.find("freivalds PASSED"), std::string::npos) << r.output;
    for (const char* phase : {"h2d", "compute", "d2h", "gpu: rank   0"}) {
      EXPECT_NE(r.output.find(phase), std::string::npos) << phase << "\n" << r.output;
    }
  }
}

TEST(GemmCliGpu, WrongElementFailsTheRun) {
  SKIP_WITHOUT_A_GPU();
  const CliRun r = run_scalebench_mpi(1, "gemm --backend cublas --n 200 --reps 1 --inject-error-rank 0");
  EXPECT_EQ(r.exit_code, 4) << r.output;
  EXPECT_NE(r.output.find("verification failed"), std::string::npos) << r.output;
}

TEST(GemmCliGpu, MoreRanksThanGpusNeedShareGpu) {
  const int gpus = visible_gpu_count();
  if (gpus == 0) GTEST_SKIP() << "no GPU: " << gpu_absence_reason();
  const int ranks = gpus + 1;
  const CliRun refused = run_scalebench_mpi(ranks, "gemm --backend cublas --n 64 --reps 1");
  EXPECT_EQ(refused.exit_code, 3) << refused.output;
  EXPECT_EQ(count_of(refused.output, "scalebench: error"), 1) << refused.output;
  EXPECT_NE(refused.output.find("--share-gpu"), std::string::npos) << refused.output;
  const CliRun shared = run_scalebench_mpi(ranks, "gemm --backend cublas --n 64 --reps 1 --share-gpu");
  EXPECT_EQ(shared.exit_code, 0) << shared.output;
}

TEST(GemmCliGpu, NcclWithOneRankNotesThatNothingMoves) {
  SKIP_WITHOUT_A_GPU();
  const CliRun r = run_scalebench_mpi(1, "gemm --backend cublas --n 128 --reps 1 --transport nccl");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("nothing to move"), std::string::npos) << r.output;
}
