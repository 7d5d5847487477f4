// --distribution shared on GPUs (one GPU per rank): every rank copies its own rows of A in and
// of C out of the node's shared windows over its own link; B comes whole (transport mpi) or as
// 1/P slices all-gathered over NCCL (transport nccl), or in panels (--overlap). On small-integer
// matrices C must be bit for bit the replicated scheme's and the exact product, at every
// precision --overlap supports, on shapes that make every piece odd; the peer must time every
// GPU copying at once. Every test here needs as many visible GPUs as ranks and skips, with the
// reason, otherwise.
#include <gtest/gtest.h>

#include <string>

#include "gemm_checks.hpp"
#include "mpi_test_util.hpp"
#include "scalebench/gpu/gpu.hpp"
#include "scalebench/mpi/mpi.hpp"
#include "scalebench/workloads/gemm/distributed_gemm.hpp"
#include "scalebench/workloads/gemm/gemm_config.hpp"
#include "test_gemm_gpu_util.hpp"

using namespace scalebench;
using namespace gpu_test;

namespace {

void expect_shared_on_gpus(const GemmShape& shape, Precision p, Transport t, bool overlap) {
  expect_shared_same_as_replicated(integer_config(shape, p, t, overlap),
                                   to_string(p) + " " + to_string(t) + (overlap ? " --overlap" : ""));
}

}  // namespace

TEST(SharedGpuGemm, EachGpuOverItsOwnLinkGivesTheReplicatedBits) {
  SKIP_WITHOUT_A_GPU_PER_RANK();
  // Every precision on one shape; the other at the widest and the narrowest element (B's slices
  // travel as device inputs: 2 bytes in bf16). What moves depends on the element's size, not its
  // arithmetic, and each run makes its own windows and communicators.
  for (Precision p : {Precision::fp64, Precision::fp32, Precision::tf32, Precision::bf16}) {
    expect_shared_on_gpus({37, 23, 41}, p, Transport::mpi, false);
    expect_shared_on_gpus({37, 23, 41}, p, Transport::nccl, false);
  }
  for (Precision p : {Precision::fp64, Precision::bf16}) {
    expect_shared_on_gpus({129, 67, 95}, p, Transport::mpi, false);
    expect_shared_on_gpus({129, 67, 95}, p, Transport::nccl, false);
  }
}

TEST(SharedGpuGemm, OverlapInPanelsGivesTheReplicatedBits) {
  SKIP_WITHOUT_A_GPU_PER_RANK();
  const auto comm = Communicator::world();
  // k < ranks in a panel (some ranks copy no piece of B), one row per rank, uneven everything.
  for (const GemmShape& s :
       {GemmShape{37, 23, 41}, GemmShape{comm.size(), 50, 70}, GemmShape{61, 33, 3}, GemmShape{300, 17, 257}}) {
    expect_shared_on_gpus(s, Precision::fp64, Transport::nccl, true);
  }
  // fp32 and tf32 (4-byte elements) on the first shape; every shape at fp64 above.
  for (Precision p : {Precision::fp32, Precision::tf32}) expect_shared_on_gpus({37, 23, 41}, p, Transport::nccl, true);
}

TEST(SharedGpuGemm, RecordTimesEveryGpuCopyingAtOnce) {
  SKIP_WITHOUT_A_GPU_PER_RANK();
  const auto comm = Communicator::world();
  GemmConfig cfg = integer_config({256, 192, 160}, Precision::fp64, Transport::nccl, true);
  cfg.distribution = GemmDistribution::shared;
  cfg.peer = true;
  cfg.reps = 3;
  const GemmResult r = run_gemm_keeping_c(cfg, comm);
  bool ok = r.ok;
  if (comm.is_root()) {
    const auto& peer = r.record.at("peer");
    ok = ok && peer.at("pinned_copy").at("aggregate_GBps").get<double>() > 0 &&
         peer.at("aggregate_h2d_GBps").get<double>() > 0 &&
         peer.at("ratio_aggregate_h2d_vs_pinned_copy").get<double>() > 0;
    ok = ok && r.record.at("distribution").at("host_memory_per_node").at(0).at("b_copies").get<int>() == 1;
    ok = ok && r.record.at("gpu").at("transfers").contains("h2d");
    if (comm.size() > 1) ok = ok && r.record.at("gpu").at("transfers").contains("allgather");
    // The communication bound counts the busiest GPU's copies (no transport or layout count moves a block).
    if (comm.size() > 1) {
      const auto& b = r.record.at("comm_bound");
      ok = ok && b.at("moved_source") == "gpu copies" && b.at("moved_words").get<double>() > 0 &&
           b.at("moved_to_bound").get<double>() > 0;
    }
    EXPECT_TRUE(ok) << r.record.dump(2);
  }
  EXPECT_TRUE(all_ranks(ok));
}

TEST(SharedGpuGemm, CorruptedElementOnOneRankFailsEverywhere) {
  SKIP_WITHOUT_A_GPU_PER_RANK();
  const auto comm = Communicator::world();
  for (const bool overlap : {false, true}) {
    GemmConfig cfg = integer_config({80, 40, 40}, Precision::fp64, Transport::nccl, overlap);
    cfg.distribution = GemmDistribution::shared;
    expect_corruption_named(cfg, comm, overlap ? "--overlap" : "phased");
  }
}
