// --distribution shared on GPUs (one GPU per rank): every rank copies its own rows of A in and
// of C out of the node's shared windows over its own link; B comes whole (transport mpi) or as
// 1/P slices all-gathered over NCCL (transport nccl), or in panels (--overlap). On small-integer
// matrices C must be bit for bit the replicated scheme's and the exact product, at every
// precision --overlap supports, on shapes that make every piece odd; the peer must time every
// GPU copying at once. Every test here needs as many visible GPUs as ranks and skips, with the
// reason, otherwise.
#include <gtest/gtest.h>

#include <string>

#include "mpi_test_util.hpp"
#include "scalebench/cpu/gemm.hpp"
#include "scalebench/gpu/gpu.hpp"
#include "scalebench/mpi/mpi.hpp"
#include "test_gemm_gpu_util.hpp"

using namespace scalebench;
using namespace gpu_test;

namespace {

void expect_shared_same_as_replicated(const GemmShape& shape, Precision p, Transport t, bool overlap) {
  const auto comm = Communicator::world();
  GemmConfig rep = integer_config(shape, p, t, overlap);
  GemmConfig sh = rep;
  sh.distribution = GemmDistribution::shared;
  const GemmResult a = run_distributed_gemm(rep, comm);
  const GemmResult b = run_distributed_gemm(sh, comm);
  bool same = true;
  if (comm.is_root()) {
    same = b.c == a.c && b.c == exact_integer_product(shape, rep.seed) &&
           b.record.at("distribution").at("scheme") == "shared";
  }
  const std::string what = to_string(p) + " " + to_string(t) + (overlap ? " --overlap " : " ") +
                           std::to_string(shape.m) + "x" + std::to_string(shape.n) + "x" + std::to_string(shape.k) +
                           " on " + std::to_string(comm.size()) + " ranks";
  EXPECT_TRUE(all_ranks(a.ok && b.ok)) << "verification failed: " << what;
  EXPECT_TRUE(all_ranks(same)) << "shared C differs from replicated or the exact product: " << what;
}

}  // namespace

TEST(SharedGpuGemm, EachGpuOverItsOwnLinkGivesTheReplicatedBits) {
  SKIP_WITHOUT_A_GPU_PER_RANK();
  for (const GemmShape& s : {GemmShape{37, 23, 41}, GemmShape{129, 67, 95}}) {
    for (Precision p : {Precision::fp64, Precision::fp32, Precision::tf32, Precision::bf16}) {
      expect_shared_same_as_replicated(s, p, Transport::mpi, false);
      expect_shared_same_as_replicated(s, p, Transport::nccl, false);
    }
  }
}

TEST(SharedGpuGemm, OverlapInPanelsGivesTheReplicatedBits) {
  SKIP_WITHOUT_A_GPU_PER_RANK();
  const auto comm = Communicator::world();
  // k < ranks in a panel (some ranks copy no piece of B), one row per rank, uneven everything.
  for (const GemmShape& s :
       {GemmShape{37, 23, 41}, GemmShape{comm.size(), 50, 70}, GemmShape{61, 33, 3}, GemmShape{300, 17, 257}}) {
    for (Precision p : {Precision::fp64, Precision::fp32, Precision::tf32}) {
      expect_shared_same_as_replicated(s, p, Transport::nccl, true);
    }
  }
}

TEST(SharedGpuGemm, RecordTimesEveryGpuCopyingAtOnce) {
  SKIP_WITHOUT_A_GPU_PER_RANK();
  const auto comm = Communicator::world();
  GemmConfig cfg = integer_config({256, 192, 160}, Precision::fp64, Transport::nccl, true);
  cfg.distribution = GemmDistribution::shared;
  cfg.peer = true;
  cfg.reps = 3;
  const GemmResult r = run_distributed_gemm(cfg, comm);
  bool ok = r.ok;
  if (comm.is_root()) {
    const auto& peer = r.record.at("peer");
    ok = ok && peer.at("pinned_copy").at("aggregate_GBps").get<double>() > 0 &&
         peer.at("aggregate_h2d_GBps").get<double>() > 0 &&
         peer.at("ratio_aggregate_h2d_vs_pinned_copy").get<double>() > 0;
    ok = ok && r.record.at("distribution").at("host_memory_per_node").at(0).at("b_copies").get<int>() == 1;
    ok = ok && r.record.at("gpu").at("transfers").contains("h2d");
    if (comm.size() > 1) ok = ok && r.record.at("gpu").at("transfers").contains("allgather");
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
    cfg.fill = Fill::uniform;
    cfg.inject_error_rank = comm.size() - 1;
    testing::internal::CaptureStderr();
    const GemmResult r = run_distributed_gemm(cfg, comm);
    testing::internal::GetCapturedStderr();
    EXPECT_TRUE(all_ranks(!r.ok)) << (overlap ? "--overlap" : "phased");
  }
}
