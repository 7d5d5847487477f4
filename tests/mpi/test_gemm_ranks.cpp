// The distributed multiply gives bit-identical C for every rank count and both CPU backends on
// small-integer matrices, odd shapes included, and with chunked collectives.
#include <gtest/gtest.h>

#include <random>

#include "gemm_reference.hpp"
#include "mpi_test_util.hpp"
#include "scalebench/cpu/gemm.hpp"
#include "scalebench/mpi/mpi.hpp"

using namespace scalebench;

namespace {

void expect_exact(const GemmShape& shape, GemmBackendKind backend, Precision p, std::int64_t chunk) {
  const auto comm = Communicator::world();
  GemmConfig cfg = exact_gemm_config(shape, p, 1234);
  cfg.backend = backend;
  cfg.mpi_chunk = chunk;
  const GemmResult r = run_distributed_gemm(cfg, comm);
  bool same = true;
  if (comm.is_root()) same = r.c == exact_integer_product(shape, cfg.seed);
  EXPECT_TRUE(all_ranks(r.ok)) << "verification failed";
  EXPECT_TRUE(all_ranks(same)) << to_string(backend) << " " << to_string(p) << " " << shape.m << "x" << shape.n << "x"
                               << shape.k << " on " << comm.size() << " ranks";
}

}  // namespace

TEST(DistributedGemm, OpenBlasExactOnOddShapesAtAnyRankCount) {
  expect_exact({37, 23, 41}, GemmBackendKind::openblas, Precision::fp64, 0);
  expect_exact({64, 64, 64}, GemmBackendKind::openblas, Precision::fp64, 0);
  expect_exact({29, 31, 17}, GemmBackendKind::openblas, Precision::fp32, 0);
}

TEST(DistributedGemm, NaiveExactAndIdenticalToOpenBlas) {
  expect_exact({37, 23, 41}, GemmBackendKind::naive, Precision::fp64, 0);
  expect_exact({29, 31, 17}, GemmBackendKind::naive, Precision::fp32, 0);
}

TEST(DistributedGemm, ChunkedCollectivesGiveTheSameC) {
  expect_exact({37, 23, 41}, GemmBackendKind::openblas, Precision::fp64, 50);
}

TEST(DistributedGemm, RecordHasPhasesRatesAndVerdictOnRankZero) {
  const auto comm = Communicator::world();
  GemmConfig cfg;
  cfg.shape = {48, 40, 32};
  cfg.reps = 3;
  cfg.warmup = 1;
  cfg.threads = 1;
  cfg.quiet = true;
  const GemmResult r = run_distributed_gemm(cfg, comm);
  bool ok = r.ok;
  if (comm.is_root()) {
    const auto& rec = r.record;
    ok = ok && rec.at("ok").get<bool>() && rec.at("ranks").get<int>() == comm.size();
    for (const char* ph : {"scatter", "broadcast", "compute", "gather", "verify", "end_to_end"}) {
      ok = ok && rec.at("phases").contains(ph) && rec["phases"][ph]["per_repeat_max_s"].size() == 3;
    }
    ok = ok && rec.at("rates").at("compute_gflops").get<double>() > 0;
    ok = ok && rec.at("peer").at("ratio_backend_vs_bare").get<double>() > 0;
    ok = ok && rec.at("rank_info").size() == static_cast<std::size_t>(comm.size());
  }
  EXPECT_TRUE(all_ranks(ok));
}

TEST(DistributedGemm, CorruptedElementOnOneRankFailsEverywhere) {
  const auto comm = Communicator::world();
  GemmConfig cfg;
  cfg.shape = {40, 40, 40};
  cfg.reps = 1;
  cfg.warmup = 0;
  cfg.threads = 1;
  cfg.quiet = true;
  cfg.peer = false;
  cfg.inject_error_rank = comm.size() - 1;
  testing::internal::CaptureStderr();
  const GemmResult r = run_distributed_gemm(cfg, comm);
  testing::internal::GetCapturedStderr();
  EXPECT_TRUE(all_ranks(!r.ok));
  if (comm.is_root()) {
    EXPECT_FALSE(r.record.at("ok").get<bool>());
    EXPECT_EQ(r.record.at("verification").at("first_failed").at("rank").get<int>(), comm.size() - 1);
  }
}
