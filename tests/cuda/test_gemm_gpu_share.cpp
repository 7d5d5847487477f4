// Two ranks on one GPU (the test runs with CUDA_VISIBLE_DEVICES=0): without --share-gpu the
// run is refused; with it the MPI transport gives the exact C; NCCL refuses, saying why.
#include <gtest/gtest.h>

#include "gpu_skip.hpp"
#include "mpi_test_util.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/gpu/gpu.hpp"
#include "scalebench/mpi/mpi.hpp"
#include "scalebench/workloads/gemm/gemm_config.hpp"
#include "test_gemm_gpu_util.hpp"

using namespace scalebench;
using namespace gpu_test;

namespace {

// The exit code every rank saw (0: none), and whether the message said `fragment`.
std::pair<int, bool> outcome(const GemmConfig& cfg, const std::string& fragment) {
  const auto comm = Communicator::world();
  try {
    run_gemm_keeping_c(cfg, comm);
  } catch (const Error& e) {
    return {static_cast<int>(e.code()), std::string(e.what()).find(fragment) != std::string::npos};
  }
  return {0, false};
}

}  // namespace

TEST(SharedGpu, RefusedWithoutShareGpuExactWithIt) {
  SKIP_WITHOUT_A_GPU();
  ASSERT_EQ(visible_gpu_count(), 1) << "this test runs with CUDA_VISIBLE_DEVICES=0";
  ASSERT_GE(world_size(), 2);
  GemmConfig cfg = integer_config({33, 21, 17}, Precision::fp64, Transport::mpi);
  cfg.share_gpu = false;
  const auto [code, says] = outcome(cfg, "--share-gpu");
  EXPECT_TRUE(all_ranks(code == static_cast<int>(ExitCode::resource)));
  EXPECT_TRUE(all_ranks(says));
  expect_exact({33, 21, 17}, Precision::fp64, Transport::mpi);  // integer_config shares
}

TEST(SharedGpu, NcclRefusesRanksSharingAGpu) {
  SKIP_WITHOUT_A_GPU();
  ASSERT_EQ(visible_gpu_count(), 1) << "this test runs with CUDA_VISIBLE_DEVICES=0";
  const GemmConfig cfg = integer_config({16, 16, 16}, Precision::fp64, Transport::nccl);
  const auto [code, says] = outcome(cfg, "one GPU per rank");
  EXPECT_TRUE(all_ranks(code == static_cast<int>(ExitCode::resource)));
  EXPECT_TRUE(all_ranks(says));
}
