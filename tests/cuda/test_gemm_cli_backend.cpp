// `scalebench gemm --backend cublas` says what is there, on every machine (none of these tests
// skips): a GPU -> the run passes; CUDA built but no GPU visible (CI) -> exit 3 and one line
// naming what was found; built without CUDA -> exit 6 and its own message. GPU-only options
// with a CPU backend are usage errors (exit 2).
#include <gtest/gtest.h>

#include "../cli/cli_runner.hpp"
#include "scalebench/base/build_info.hpp"
#include "scalebench/gpu/gpu.hpp"

TEST(GemmCliBackend, CublasExitCodeSaysWhatIsThere) {
  const CliRun r = run_scalebench_mpi(2, "gemm --backend cublas --n 64 --reps 1 --share-gpu");
  if (!scalebench::build_with_cuda()) {
    EXPECT_EQ(r.exit_code, 6) << r.output;
    EXPECT_EQ(count_of(r.output, "scalebench: error"), 1) << r.output;
    EXPECT_NE(r.output.find("built without CUDA"), std::string::npos) << r.output;
  } else if (scalebench::visible_gpu_count() == 0) {
    EXPECT_EQ(r.exit_code, 3) << r.output;
    EXPECT_EQ(count_of(r.output, "scalebench: error"), 1) << r.output;
    EXPECT_NE(r.output.find("--backend cublas needs a GPU"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("CUDA_VISIBLE_DEVICES="), std::string::npos) << r.output;
  } else {
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("freivalds PASSED"), std::string::npos) << r.output;
  }
}

TEST(GemmCliBackend, GpuOnlyOptionsWithACpuBackendAreUsageErrors) {
  for (const char* args :
       {"--precision bf16", "--precision tf32 --backend naive", "--transport nccl", "--resident", "--overlap"}) {
    const CliRun r = run_scalebench_mpi(2, std::string("gemm --n 64 ") + args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.output;
    EXPECT_EQ(count_of(r.output, "scalebench: error"), 1) << r.output;
    EXPECT_NE(r.output.find("--backend cublas"), std::string::npos) << r.output;
  }
}

// --overlap's own limits are usage errors before any GPU is looked for (so the same in CI).
TEST(GemmCliBackend, OverlapLimitsAreUsageErrors) {
  struct Case {
    const char* args;
    const char* says;
  };
  for (const Case& c : {Case{"--overlap --resident", "--resident has none"},
                        Case{"--overlap --precision bf16", "supports fp64, fp32 and tf32"},
                        Case{"--overlap --transport mpi", "add --transport nccl"}}) {
    const CliRun r = run_scalebench_mpi(2, std::string("gemm --n 64 --backend cublas --share-gpu ") + c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.output;
    EXPECT_EQ(count_of(r.output, "scalebench: error"), 1) << r.output;
    EXPECT_NE(r.output.find(c.says), std::string::npos) << r.output;
  }
}
