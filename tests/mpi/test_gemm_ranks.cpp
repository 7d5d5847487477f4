// The distributed multiply gives bit-identical C for every rank count and both CPU backends on
// small-integer matrices, odd shapes included, and with chunked collectives.
#include <gtest/gtest.h>

#include <random>

#include "gemm_checks.hpp"
#include "gemm_reference.hpp"
#include "mpi_test_util.hpp"
#include "scalebench/mpi/mpi.hpp"
#include "scalebench/workloads/gemm/distributed_gemm.hpp"
#include "scalebench/workloads/gemm/gemm_config.hpp"

using namespace scalebench;

namespace {

// The driver's defaults (uniform fill, the peer timed) on a small shape, one thread, quiet.
GemmConfig small_config(const GemmShape& shape, int reps, int warmup) {
  GemmConfig cfg;
  cfg.shape = shape;
  cfg.reps = reps;
  cfg.warmup = warmup;
  cfg.threads = 1;
  cfg.quiet = true;
  return cfg;
}

void expect_exact(const GemmShape& shape, GemmBackendKind backend, Precision p, std::int64_t chunk) {
  const auto comm = Communicator::world();
  GemmConfig cfg = exact_gemm_config(shape, p, 1234);
  cfg.backend = backend;
  GemmTestHooks hooks;
  hooks.mpi_chunk = chunk;
  const GemmResult r = run_gemm_keeping_c(cfg, comm, hooks);
  bool same = true;
  if (comm.is_root()) same = r.c == exact_integer_product(shape, cfg.seed);
  EXPECT_TRUE(all_ranks(r.ok)) << "verification failed";
  EXPECT_TRUE(all_ranks(same)) << to_string(backend) << " " << to_string(p) << " "
                               << shape_on_ranks(shape, comm.size());
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
  const GemmResult r = run_gemm_keeping_c(small_config({48, 40, 32}, 3, 1), comm);
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
  GemmConfig cfg = small_config({40, 40, 40}, 1, 0);
  cfg.peer = false;
  expect_corruption_named(cfg, comm);
}
