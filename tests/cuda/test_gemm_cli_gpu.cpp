// `scalebench gemm --backend cublas` under the real mpirun, where a GPU is visible: every
// precision runs and verifies, the rank -> GPU map is printed, a wrong element fails the run,
// ranks beyond the GPUs need --share-gpu, NCCL with one rank says that nothing moves.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

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
  const CliRun r = run_scalebench_mpi(1, "gemm --backend cublas --n 128 --reps 1 --algorithm row1d --distribution "
                                         "replicated --transport nccl --overlap off");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("nothing to move"), std::string::npos) << r.output;
}

// The GPU's energy from NVML in the record: positive, its mean power between a tenth of the idle
// reading and the card's power limit, over the whole repeats and over the timed interval where it
// is long enough for the counter; ranks sharing a GPU count it once (one domain per GPU).
TEST(GemmCliGpu, TheRecordCountsTheGpusEnergy) {
  SKIP_WITHOUT_A_GPU();
  const std::string dir = make_temp_dir();
  const CliRun r = run_scalebench_mpi(1, "gemm --backend cublas --n 8192 --reps 5 --json " + dir + "/r.json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json e = nlohmann::json::parse(read_file(dir + "/r.json"))["energy"];
  ASSERT_TRUE(e["gpu"]["counted"].get<bool>()) << e.dump(1);
  const double gpu_j = e["gpu_j"], mean_w = e["mean_w"], limit = e["gpu"]["power_limit_w_rank0_node"];
  const double idle = e["idle_w"]["gpu"];
  EXPECT_GT(gpu_j, 0) << e.dump(1);
  EXPECT_GT(idle, 10) << e.dump(1);
  EXPECT_GT(mean_w, 0.1 * idle) << e.dump(1);
  EXPECT_LT(e["gpu_j"].get<double>() / e["seconds"].get<double>(), 1.05 * limit) << e.dump(1);
  EXPECT_NE(e["covers"].get<std::string>().find("GPU boards (NVML)"), std::string::npos) << e.dump(1);
  // The timed interval's joules where its median lasts 5 of NVML's 100 ms steps, GFLOP/J from
  // them and their mean power under the card's limit; a shorter one has none of its own (null, and
  // no GFLOP/J), never the whole repeat's joules over the timed seconds.
  if (e["timed_s"]["median"].get<double>() >= 0.5) {
    ASSERT_TRUE(e["timed_j"].is_object()) << e.dump(1);
    EXPECT_LT(e["timed_mean_w"].get<double>(), 1.05 * limit) << e.dump(1);
    EXPECT_GT(e["gflop_per_j"].get<double>(), 0) << e.dump(1);
    EXPECT_NE(r.output.find("GFLOP/J"), std::string::npos) << r.output;
  } else {
    EXPECT_TRUE(e["timed_j"].is_null()) << e.dump(1);
    EXPECT_FALSE(e.contains("gflop_per_j")) << e.dump(1);
    EXPECT_NE(r.output.find("timed interval not counted apart"), std::string::npos) << r.output;
  }

  // One rank more than GPUs: two ranks share one GPU, and every GPU is counted once.
  const int gpus_visible = visible_gpu_count();
  const CliRun shared = run_scalebench_mpi(gpus_visible + 1, "gemm --backend cublas --n 2048 --reps 2 --share-gpu "
                                                             "--json " +
                                                                 dir + "/s.json");
  ASSERT_EQ(shared.exit_code, 0) << shared.output;
  const nlohmann::json s = nlohmann::json::parse(read_file(dir + "/s.json"))["energy"];
  int gpus = 0;
  for (const auto& d : s["domains_rank0_node"]) gpus += d.get<std::string>().rfind("gpu ", 0) == 0 ? 1 : 0;
  EXPECT_EQ(gpus, gpus_visible) << s.dump(1);
}
