// Summa2D's lookahead with the cuBLAS multiply on 1 and 2 ranks, against the blocking broadcasts:
// over NCCL (the next panels broadcast on a stream of their own while one multiplies on the
// backend's) and over MPI through the host (the host panel schedule feeding the GPU's multiply),
// C is bit for bit the blocking broadcasts' C and the exact product on grids 1xP and Px1; the
// record says which schedule ran and how much broadcast time was hidden. Needs one visible GPU
// per rank for NCCL, a GPU for the rest (skips, with the reason, otherwise).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gemm_checks.hpp"
#include "gpu_skip.hpp"
#include "mpi_test_util.hpp"
#include "scalebench/workloads/gemm/distributed_gemm.hpp"
#include "test_gemm_gpu_util.hpp"

using namespace scalebench;
using namespace gpu_test;

namespace {

GemmConfig summa(const GemmShape& shape, Precision p, Transport t, const ProcessGrid& g, int lookahead) {
  GemmConfig cfg = integer_config(shape, p, t);
  cfg.algorithm = GemmAlgorithm::summa2d;
  cfg.grid_rows = g.rows;
  cfg.grid_cols = g.cols;
  cfg.panel_width = 16;  // several panels, the last of each block narrower
  cfg.lookahead = lookahead;
  return cfg;
}

std::vector<ProcessGrid> grids(int ranks) {
  if (ranks == 1) return {ProcessGrid{1, 1}};
  return {ProcessGrid{1, ranks}, ProcessGrid{ranks, 1}};
}

// Every grid and precision: lookahead 1, 2 and more than the panels against lookahead 0.
void expect_lookahead_same_as_blocking(Transport t) {
  const auto comm = Communicator::world();
  const GemmShape shape{61, 43, 77};
  const auto exact = comm.is_root() ? exact_integer_product(shape, 4321) : std::vector<double>();
  for (Precision p : {Precision::fp64, Precision::fp32, Precision::bf16}) {
    for (const ProcessGrid& g : grids(comm.size())) {
      const GemmResult blocking = run_gemm_keeping_c(summa(shape, p, t, g, 0), comm);
      EXPECT_TRUE(all_ranks(blocking.ok)) << to_string(p) << " grid " << to_string(g);
      for (const int d : {1, 2, 16}) {
        const GemmResult r = run_gemm_keeping_c(summa(shape, p, t, g, d), comm);
        bool same = true;
        if (comm.is_root()) {
          const auto& s = r.record.at("distribution").at("panel_schedule");
          same = r.c == exact && r.c == blocking.c && s.at("lookahead").get<int>() == d &&
                 s.at("hidden_s").at(0).get<double>() >= 0;
        }
        const std::string what = to_string(p) + " " + to_string(t) + " grid " + to_string(g) + " lookahead " +
                                 std::to_string(d);
        EXPECT_TRUE(all_ranks(r.ok)) << what;
        EXPECT_TRUE(all_ranks(same)) << "C differs from the blocking broadcasts' or the exact product: " << what;
      }
    }
  }
}

}  // namespace

TEST(GpuSummaLookahead, NcclStreamGivesTheBitsOfBlockingBroadcasts) {
  SKIP_WITHOUT_A_GPU_PER_RANK();
  expect_lookahead_same_as_blocking(Transport::nccl);
}

TEST(GpuSummaLookahead, HostPanelsFeedingTheGpuGiveTheBitsOfBlockingBroadcasts) {
  SKIP_WITHOUT_A_GPU();
  expect_lookahead_same_as_blocking(Transport::mpi);
}

// The schedule named in the record: the device stream over NCCL, the host ones over MPI.
TEST(GpuSummaLookahead, RecordNamesTheSchedule) {
  SKIP_WITHOUT_A_GPU_PER_RANK();
  const auto comm = Communicator::world();
  const ProcessGrid g{1, comm.size()};
  const GemmResult nccl = run_gemm_keeping_c(summa({64, 64, 96}, Precision::fp32, Transport::nccl, g, 2), comm);
  const GemmResult mpi = run_gemm_keeping_c(summa({64, 64, 96}, Precision::fp32, Transport::mpi, g, 2), comm);
  bool ok = nccl.ok && mpi.ok;
  if (comm.is_root()) {
    const auto& n = nccl.record.at("distribution").at("panel_schedule");
    const auto& m = mpi.record.at("distribution").at("panel_schedule");
    ok = ok && n.at("schedule") == "device stream, lookahead 2" && n.at("wait_s").at(0).is_null();
    ok = ok && m.at("schedule").get<std::string>().find("lookahead 2") != std::string::npos &&
         m.at("wait_s").at(0).is_number();
    EXPECT_TRUE(ok) << n.dump(2) << m.dump(2);
  }
  EXPECT_TRUE(all_ranks(ok));
}
