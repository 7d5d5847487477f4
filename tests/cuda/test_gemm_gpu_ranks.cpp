// The distributed multiply on GPUs over the MPI transport: small-integer matrices give C equal
// to the exact product (so identical on 1 and 2 GPUs, and to the NCCL transport's, see
// test_gemm_gpu_nccl.cpp) at every precision, odd shapes and uneven blocks included. Ranks
// beyond the visible GPUs share them (--share-gpu).
#include <gtest/gtest.h>

#include "mpi_test_util.hpp"
#include "scalebench/gpu/gpu.hpp"
#include "scalebench/mpi/mpi.hpp"
#include "scalebench/workloads/gemm/distributed_gemm.hpp"
#include "scalebench/workloads/gemm/gemm_config.hpp"
#include "test_gemm_gpu_util.hpp"

using namespace scalebench;
using namespace gpu_test;

namespace {

const GemmShape kShapes[] = {{37, 23, 41}, {129, 67, 95}};

}  // namespace

TEST(GpuDistributedGemm, MpiTransportExactAtEveryPrecision) {
  SKIP_WITHOUT_A_GPU();
  for (const auto& s : kShapes) {
    for (Precision p : {Precision::fp64, Precision::fp32, Precision::tf32, Precision::bf16}) {
      expect_exact(s, p, Transport::mpi);
    }
  }
}

TEST(GpuDistributedGemm, RecordCarriesTheGpuMapTransfersAndPeers) {
  SKIP_WITHOUT_A_GPU();
  const auto comm = Communicator::world();
  GemmConfig cfg = integer_config({96, 80, 64}, Precision::fp32, Transport::mpi);
  cfg.peer = true;
  cfg.reps = 3;
  cfg.warmup = 1;
  const GemmResult r = run_gemm_keeping_c(cfg, comm);
  bool ok = r.ok;
  if (comm.is_root()) {
    const auto& rec = r.record;
    const auto& map = rec.at("gpu").at("map");
    ok = ok && map.size() == static_cast<std::size_t>(comm.size());
    for (const auto& g : map) {
      for (const char* key : {"host", "rank", "gpu_index", "name", "pci_bus_id", "uuid"}) ok = ok && g.contains(key);
    }
    for (const char* ph : {"scatter", "broadcast", "h2d", "compute", "d2h", "gather", "verify", "end_to_end",
                           "setup_gpu_context", "setup_cublas_handle", "setup_device_alloc"}) {
      ok = ok && rec.at("phases").contains(ph);
    }
    // MPI copies rank 0's own blocks even alone; a broadcast to nobody moves nothing.
    for (const char* t : {"h2d", "d2h", "scatter", "gather"}) {
      ok = ok && rec["gpu"]["transfers"].contains(t) && rec["gpu"]["transfers"][t]["bytes"].get<double>() > 0;
    }
    ok = ok && rec["gpu"]["transfers"].contains("broadcast") == (comm.size() > 1);
    ok = ok && rec.at("peer").at("ratio_backend_vs_bare").get<double>() > 0;
    ok = ok && rec.at("peer").at("ratio_h2d_vs_pinned_copy").get<double>() > 0;
    ok = ok && rec.at("rank_info").at(0).contains("gpu");
    EXPECT_TRUE(ok) << rec.dump(2);
  }
  EXPECT_TRUE(all_ranks(ok));
}

TEST(GpuDistributedGemm, CorruptedElementOnOneRankFailsEverywhere) {
  SKIP_WITHOUT_A_GPU();
  {
    const Transport t = Transport::mpi;
    const auto comm = Communicator::world();
    GemmConfig cfg = integer_config({40, 40, 40}, Precision::fp64, t);
    cfg.fill = Fill::uniform;
    GemmTestHooks hooks;
    hooks.inject_error_rank = comm.size() - 1;
    testing::internal::CaptureStderr();
    const GemmResult r = run_distributed_gemm(cfg, comm, hooks);
    testing::internal::GetCapturedStderr();
    EXPECT_TRUE(all_ranks(!r.ok)) << to_string(t);
    if (comm.is_root()) {
      EXPECT_EQ(r.record.at("verification").at("first_failed").at("rank").get<int>(), comm.size() - 1);
    }
  }
}

TEST(GpuDistributedGemm, ResidentRunVerifiesOnTheDevice) {
  SKIP_WITHOUT_A_GPU();
  const auto comm = Communicator::world();
  GemmConfig cfg = integer_config({130, 70, 90}, Precision::tf32, Transport::mpi);
  cfg.fill = Fill::uniform;
  cfg.resident = true;
  const GemmResult r = run_distributed_gemm(cfg, comm);
  bool ok = r.ok;
  if (comm.is_root()) {
    ok = ok && !r.record.at("phases").contains("h2d") && r.record.at("phases").contains("compute");
    EXPECT_TRUE(ok) << r.record.dump(2);
  }
  EXPECT_TRUE(all_ranks(ok));
}
