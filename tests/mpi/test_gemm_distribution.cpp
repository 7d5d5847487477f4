// --distribution shared against replicated: on integer fill every product is exact, so the node-
// shared scheme (A, B and C once per node in MPI-3 shared windows) must give C bit for bit —
// uneven rows, fp64 and fp32, both CPU backends; the record must say B is held once per node and
// that nothing was copied inside the node; the fallback (no shared windows) must run the
// replicated scheme and say why. Every rank count from 1 to 4 runs on one node.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "gemm_reference.hpp"
#include "mpi_test_util.hpp"
#include "scalebench/gemm.hpp"
#include "scalebench/mpi.hpp"

using namespace scalebench;

namespace {

GemmConfig distribution_config(const GemmShape& shape, Precision p, GemmDistribution d) {
  GemmConfig cfg = exact_gemm_config(shape, p, 977);
  cfg.distribution = d;
  cfg.reps = 2;  // the second repeat reuses the windows: every sync is exercised twice
  return cfg;
}

void expect_shared_identical(const GemmShape& shape, Precision p, GemmBackendKind backend) {
  const auto comm = Communicator::world();
  GemmConfig rep = distribution_config(shape, p, GemmDistribution::replicated);
  rep.backend = backend;
  GemmConfig sh = rep;
  sh.distribution = GemmDistribution::shared;
  const GemmResult a = run_distributed_gemm(rep, comm);
  const GemmResult b = run_distributed_gemm(sh, comm);
  bool same = true;
  if (comm.is_root()) {
    same = !b.c.empty() && b.c == a.c && b.c == exact_integer_product(shape, rep.seed) &&
           b.record.at("distribution").at("scheme") == "shared" &&
           a.record.at("distribution").at("scheme") == "replicated";
  }
  const std::string what = to_string(backend) + " " + to_string(p) + " " + std::to_string(shape.m) + "x" +
                           std::to_string(shape.n) + "x" + std::to_string(shape.k) + " on " +
                           std::to_string(comm.size()) + " ranks";
  EXPECT_TRUE(all_ranks(a.ok && b.ok)) << "verification failed: " << what;
  EXPECT_TRUE(all_ranks(same)) << "shared C differs from replicated or the exact product: " << what;
}

}  // namespace

TEST(SharedDistribution, BitIdenticalToReplicatedFp64UnevenRows) {
  expect_shared_identical({37, 41, 53}, Precision::fp64, GemmBackendKind::openblas);
  expect_shared_identical({7, 64, 5}, Precision::fp64, GemmBackendKind::openblas);
}

TEST(SharedDistribution, BitIdenticalToReplicatedFp32UnevenRows) {
  expect_shared_identical({43, 39, 59}, Precision::fp32, GemmBackendKind::openblas);
}

TEST(SharedDistribution, NaiveBackendReadsAndWritesInPlace) {
  expect_shared_identical({29, 31, 17}, Precision::fp64, GemmBackendKind::naive);
}

TEST(SharedDistribution, RecordHoldsBOncePerNodeAndMovesNothingInsideIt) {
  const auto comm = Communicator::world();
  const GemmShape shape{33, 24, 40};
  GemmConfig cfg = distribution_config(shape, Precision::fp64, GemmDistribution::shared);
  cfg.peer = true;
  const GemmResult r = run_distributed_gemm(cfg, comm);
  GemmConfig rep_cfg = cfg;
  rep_cfg.distribution = GemmDistribution::replicated;
  const GemmResult rep = run_distributed_gemm(rep_cfg, comm);
  bool ok = r.ok && rep.ok;
  if (comm.is_root()) {
    const auto& d = r.record.at("distribution");
    const auto& nodes = d.at("host_memory_per_node");
    ok = ok && nodes.size() == 1 && nodes[0].at("b_copies").get<int>() == 1 &&
         nodes[0].at("b_bytes").get<double>() == 24.0 * 40 * 8 && nodes[0].at("ranks").get<int>() == comm.size();
    // One node: nothing crosses nodes, nothing is copied inside the node.
    for (const char* phase : {"scatter", "broadcast", "gather"}) {
      ok = ok && d.at("bytes_moved").at(phase).at("inter_node_bytes").get<double>() == 0.0 &&
           d.at("bytes_moved").at(phase).at("intra_node_bytes").get<double>() == 0.0;
      ok = ok && r.record.at("phases").contains(phase);
    }
    ok = ok && r.record.at("config").at("distribution") == "shared" && r.record.at("warnings").empty();
    // The replicated scheme holds one B per rank and copies B to every other rank of the node.
    const auto& rd = rep.record.at("distribution");
    ok = ok && rd.at("host_memory_per_node")[0].at("b_copies").get<int>() == comm.size() &&
         rd.at("bytes_moved").at("broadcast").at("intra_node_bytes").get<double>() == (comm.size() - 1) * 24.0 * 40 * 8;
  }
  EXPECT_TRUE(all_ranks(ok));
}

TEST(SharedDistribution, CorruptedRowsAreFoundAndTheirRankNamed) {
  const auto comm = Communicator::world();
  GemmConfig cfg = distribution_config({40, 40, 40}, Precision::fp64, GemmDistribution::shared);
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

TEST(SharedDistribution, WithoutSharedWindowsFallsBackToReplicatedAndSaysWhy) {
  const auto comm = Communicator::world();
  const GemmShape shape{21, 19, 23};
  GemmConfig cfg = distribution_config(shape, Precision::fp64, GemmDistribution::shared);
  setenv("SCALEBENCH_NO_SHARED_WINDOWS", "1", 1);
  const GemmResult r = run_distributed_gemm(cfg, comm);
  unsetenv("SCALEBENCH_NO_SHARED_WINDOWS");
  bool ok = r.ok;
  if (comm.is_root()) {
    const auto& d = r.record.at("distribution");
    ok = ok && d.at("scheme") == "replicated" && d.at("requested_scheme") == "shared" &&
         r.c == exact_integer_product(shape, cfg.seed);
    bool warned = false;
    for (const auto& w : r.record.at("warnings")) {
      warned = warned || w.get<std::string>().find("SCALEBENCH_NO_SHARED_WINDOWS") != std::string::npos;
    }
    ok = ok && warned;
  }
  EXPECT_TRUE(all_ranks(ok));
}
