// Summa2D with the cuBLAS local multiply (panels summed on the device, blocks moved through the
// host by MPI) on 1 and 2 ranks: on small-integer matrices C equals the exact product and
// Row1D's C on the GPU bit for bit, at every precision, on every grid. Needs a visible GPU
// (ranks beyond the visible GPUs share them).
#include <gtest/gtest.h>

#include "gpu_skip.hpp"
#include "scalebench/workloads/gemm/distributed_gemm.hpp"
#include "test_gemm_gpu_util.hpp"

using namespace scalebench;
using namespace gpu_test;

TEST(GpuSumma2D, ExactAndIdenticalToRow1DAtEveryPrecisionAndGrid) {
  SKIP_WITHOUT_A_GPU();
  const auto comm = Communicator::world();
  const GemmShape shape{61, 43, 77};
  for (Precision p : {Precision::fp64, Precision::fp32, Precision::tf32, Precision::bf16}) {
    const GemmResult row = run_gemm_keeping_c(integer_config(shape, p, Transport::mpi), comm);
    const auto exact = comm.is_root() ? exact_integer_product(shape, 4321) : std::vector<double>();
    for (const ProcessGrid g : {ProcessGrid{1, comm.size()}, ProcessGrid{comm.size(), 1}}) {
      GemmConfig cfg = integer_config(shape, p, Transport::mpi);
      cfg.algorithm = GemmAlgorithm::summa2d;
      cfg.grid_rows = g.rows;
      cfg.grid_cols = g.cols;
      cfg.panel_width = 16;  // several panels, the last narrower
      const GemmResult r = run_gemm_keeping_c(cfg, comm);
      bool same = true;
      if (comm.is_root()) same = r.c == exact && r.c == row.c;
      EXPECT_TRUE(all_ranks(r.ok)) << to_string(p) << " grid " << to_string(g);
      EXPECT_TRUE(all_ranks(same)) << to_string(p) << " grid " << to_string(g);
    }
    EXPECT_TRUE(all_ranks(row.ok));
  }
}

TEST(GpuSumma2D, RecordHasDevicePhasesAndTheGpuOfEveryRank) {
  SKIP_WITHOUT_A_GPU();
  const auto comm = Communicator::world();
  GemmConfig cfg = integer_config({96, 80, 64}, Precision::fp32, Transport::mpi);
  cfg.algorithm = GemmAlgorithm::summa2d;
  cfg.panel_width = 32;
  const GemmResult r = run_gemm_keeping_c(cfg, comm);
  bool ok = r.ok;
  if (comm.is_root()) {
    for (const char* ph : {"scatter", "broadcast", "h2d", "compute", "d2h", "gather", "setup_device_alloc"}) {
      ok = ok && r.record.at("phases").contains(ph);
    }
    for (const auto& rank : r.record.at("rank_info")) ok = ok && rank.contains("gpu");
    ok = ok && r.record.at("distribution").at("algorithm").get<std::string>() == "summa2d";
    EXPECT_TRUE(ok) << r.record.dump(2);
  }
  EXPECT_TRUE(all_ranks(ok));
}
