// The NCCL transport (one GPU per rank): small-integer matrices give C equal to the exact
// product at every precision, so identical to the MPI transport's and to one GPU's; a wrong
// element on the last rank fails the run everywhere. Every test here needs as many visible GPUs
// as ranks and skips, with the reason, otherwise.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "mpi_test_util.hpp"
#include "scalebench/gemm.hpp"
#include "scalebench/gpu.hpp"
#include "scalebench/mpi.hpp"
#include "test_gemm_gpu_util.hpp"

using namespace scalebench;
using namespace gpu_test;

#define SKIP_WITHOUT_A_GPU_PER_RANK()                                                                         \
  do {                                                                                                        \
    if (visible_gpu_count() < world_size()) {                                                                 \
      GTEST_SKIP() << "NCCL needs one GPU per rank: " << world_size() << " rank(s), " << visible_gpu_count() \
                   << " GPU(s) visible";                                                                      \
    }                                                                                                         \
  } while (0)

TEST(NcclGemm, ExactAtEveryPrecisionSameAsMpiTransport) {
  SKIP_WITHOUT_A_GPU_PER_RANK();
  for (const GemmShape& s : {GemmShape{37, 23, 41}, GemmShape{129, 67, 95}}) {
    for (Precision p : {Precision::fp64, Precision::fp32, Precision::tf32, Precision::bf16}) {
      expect_exact(s, p, Transport::nccl);
      expect_exact(s, p, Transport::mpi);
    }
  }
}

TEST(NcclGemm, RecordCarriesBusBandwidthPerPhase) {
  SKIP_WITHOUT_A_GPU_PER_RANK();
  const auto comm = Communicator::world();
  GemmConfig cfg = integer_config({256, 192, 160}, Precision::fp64, Transport::nccl);
  cfg.reps = 3;
  const GemmResult r = run_distributed_gemm(cfg, comm);
  bool ok = r.ok;
  if (comm.is_root() && comm.size() == 1) {
    // Alone, NCCL moves nothing: only the host copies are listed, and a note says why.
    const auto& t = r.record.at("gpu").at("transfers");
    ok = ok && t.contains("h2d") && t.contains("d2h") && !t.contains("scatter") && !t.contains("broadcast") &&
         !t.contains("gather") && r.record["gpu"]["notes"].dump().find("nothing to move") != std::string::npos;
    EXPECT_TRUE(ok) << r.record.dump(2);
  } else if (comm.is_root()) {
    const auto& t = r.record.at("gpu").at("transfers");
    // nccl-tests: scatter and gather count the whole matrix, busbw = algbw·(n-1)/n.
    const double factor = static_cast<double>(comm.size() - 1) / comm.size();
    ok = ok && t.at("scatter").at("bytes").get<double>() == 256.0 * 160 * 8;
    ok = ok && t.at("broadcast").at("bytes").get<double>() == 160.0 * 192 * 8;
    ok = ok && t.at("gather").at("bytes").get<double>() == 256.0 * 192 * 8;
    ok = ok && std::abs(t["scatter"]["busbw_GBps"].get<double>() - factor * t["scatter"]["algbw_GBps"].get<double>()) <=
                   1e-12 * t["scatter"]["algbw_GBps"].get<double>() + 1e-300;
    ok = ok && r.record.at("gpu").contains("nccl");
    EXPECT_TRUE(ok) << r.record.dump(2);
  }
  EXPECT_TRUE(all_ranks(ok));
}

TEST(NcclGemm, CorruptedElementOnOneRankFailsEverywhere) {
  SKIP_WITHOUT_A_GPU_PER_RANK();
  const auto comm = Communicator::world();
  GemmConfig cfg = integer_config({40, 40, 40}, Precision::fp64, Transport::nccl);
  cfg.fill = Fill::uniform;
  cfg.inject_error_rank = comm.size() - 1;
  testing::internal::CaptureStderr();
  const GemmResult r = run_distributed_gemm(cfg, comm);
  testing::internal::GetCapturedStderr();
  EXPECT_TRUE(all_ranks(!r.ok));
  if (comm.is_root()) {
    EXPECT_EQ(r.record.at("verification").at("first_failed").at("rank").get<int>(), comm.size() - 1);
  }
}
