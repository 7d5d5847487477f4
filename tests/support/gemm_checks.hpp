#pragma once
// Checks the distributed GEMM tests share, CPU and GPU alike: a wrong element caught and its rank
// named, and the node-shared scheme's C against the replicated scheme's and the exact product.
#include <gtest/gtest.h>

#include <string>

#include "gemm_reference.hpp"
#include "mpi_test_util.hpp"
#include "scalebench/mpi/mpi.hpp"
#include "scalebench/workloads/gemm/distributed_gemm.hpp"
#include "scalebench/workloads/gemm/gemm_config.hpp"

// "37x23x41 on 4 ranks", for the failure messages.
inline std::string shape_on_ranks(const scalebench::GemmShape& s, int ranks) {
  return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) + " on " + std::to_string(ranks) +
         " ranks";
}

// Runs `cfg` (uniform fill) with one element of the last rank's C made wrong: every rank must
// fail, and rank 0's record must say "ok": false and name that rank as the first that failed.
inline void expect_corruption_named(scalebench::GemmConfig cfg, const scalebench::Communicator& comm,
                                    const std::string& what = {}) {
  using namespace scalebench;
  cfg.fill = Fill::uniform;
  GemmTestHooks hooks;
  hooks.inject_error_rank = comm.size() - 1;
  testing::internal::CaptureStderr();
  const GemmResult r = run_distributed_gemm(cfg, comm, hooks);
  testing::internal::GetCapturedStderr();
  EXPECT_TRUE(all_ranks(!r.ok)) << "a wrong element passed: " << what;
  if (comm.is_root()) {
    EXPECT_FALSE(r.record.at("ok").get<bool>()) << what;
    EXPECT_EQ(r.record.at("verification").at("first_failed").at("rank").get<int>(), comm.size() - 1) << what;
  }
}

// Runs `rep` (an integer-fill configuration that keeps C) replicated, then node-shared: both must
// pass, each record must name its scheme, and shared C must be replicated C and the exact product,
// bit for bit. `what` describes the configuration in the failure messages.
inline void expect_shared_same_as_replicated(const scalebench::GemmConfig& rep, const std::string& what) {
  using namespace scalebench;
  const auto comm = Communicator::world();
  GemmConfig sh = rep;
  sh.distribution = GemmDistribution::shared;
  const GemmResult a = run_gemm_keeping_c(rep, comm);
  const GemmResult b = run_gemm_keeping_c(sh, comm);
  bool same = true;
  if (comm.is_root()) {
    same = !b.c.empty() && b.c == a.c && b.c == exact_integer_product(rep.shape, rep.seed) &&
           b.record.at("distribution").at("scheme") == "shared" &&
           a.record.at("distribution").at("scheme") == "replicated";
  }
  const std::string where = what + " " + shape_on_ranks(rep.shape, comm.size());
  EXPECT_TRUE(all_ranks(a.ok && b.ok)) << "verification failed: " << where;
  EXPECT_TRUE(all_ranks(same)) << "shared C differs from replicated or the exact product: " << where;
}
