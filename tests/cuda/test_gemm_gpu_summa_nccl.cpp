// Summa2D over the NCCL transport (A_ij, B_ij and C_ij on the device, panels broadcast device to
// device along the process rows and columns) on 1 and 2 ranks: grids 1x1, 1x2 and 2x1 on
// small-integer matrices with uneven blocks give C equal to the exact product and to Row1D's C
// bit for bit, at every precision (rank 0's blocks copied straight from page-locked A, B and C,
// packed only for bf16); the record names the transport and counts the bytes each rank
// received as the layout says; a wrong element on the last rank fails the run everywhere.
// Every test here needs one visible GPU per rank (NCCL runs one rank per GPU) and skips, with
// the reason, otherwise.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gemm_checks.hpp"
#include "mpi_test_util.hpp"
#include "scalebench/workloads/gemm/distributed_gemm.hpp"
#include "test_gemm_gpu_util.hpp"

using namespace scalebench;
using namespace gpu_test;

namespace {

GemmConfig summa_nccl(const GemmShape& shape, Precision p, const ProcessGrid& g) {
  GemmConfig cfg = integer_config(shape, p, Transport::nccl);
  cfg.algorithm = GemmAlgorithm::summa2d;
  cfg.grid_rows = g.rows;
  cfg.grid_cols = g.cols;
  cfg.panel_width = 16;  // several panels, the last of each block narrower
  return cfg;
}

std::vector<ProcessGrid> grids(int ranks) {
  if (ranks == 1) return {ProcessGrid{1, 1}};
  return {ProcessGrid{1, ranks}, ProcessGrid{ranks, 1}};
}

}  // namespace

TEST(GpuSummaNccl, ExactAndIdenticalToRow1DOnEveryGridAndPrecision) {
  SKIP_WITHOUT_A_GPU_PER_RANK();
  const auto comm = Communicator::world();
  const GemmShape shape{61, 43, 77};
  const auto exact = comm.is_root() ? exact_integer_product(shape, 4321) : std::vector<double>();
  for (Precision p : {Precision::fp64, Precision::fp32, Precision::tf32, Precision::bf16}) {
    const GemmResult row = run_gemm_keeping_c(integer_config(shape, p, Transport::mpi), comm);
    EXPECT_TRUE(all_ranks(row.ok)) << "row1d " << to_string(p);
    for (const ProcessGrid& g : grids(comm.size())) {
      const GemmResult r = run_gemm_keeping_c(summa_nccl(shape, p, g), comm);
      bool same = true;
      // Rank 0 copies the blocks straight from and to A, B and C, page-locked, in the host's
      // format; bf16 inputs are packed and converted on the way.
      if (comm.is_root()) {
        const auto& copies = r.record.at("distribution").at("root_copies");
        same = r.c == exact && r.c == row.c && copies.at("direct") == (p != Precision::bf16) &&
               copies.at("page_locked") == (p != Precision::bf16);
      }
      EXPECT_TRUE(all_ranks(r.ok)) << to_string(p) << " grid " << to_string(g);
      EXPECT_TRUE(all_ranks(same)) << to_string(p) << " grid " << to_string(g);
    }
  }
}

TEST(GpuSummaNccl, RecordNamesTheTransportAndTheBytesEachRankReceived) {
  SKIP_WITHOUT_A_GPU_PER_RANK();
  const auto comm = Communicator::world();
  for (const ProcessGrid& g : grids(comm.size())) {
    const GemmResult r = run_gemm_keeping_c(summa_nccl({96, 80, 64}, Precision::fp32, g), comm);
    bool ok = r.ok;
    if (comm.is_root()) {
      const auto& rec = r.record;
      for (const char* ph : {"scatter", "broadcast", "compute", "gather", "h2d", "d2h", "setup_nccl_comm"}) {
        EXPECT_TRUE(rec.at("phases").contains(ph)) << ph;
        ok = ok && rec["phases"].contains(ph);
      }
      const auto& d = rec.at("distribution");
      ok = ok && d.at("transport") == "nccl" && d.at("communication").at("transport") == "nccl";
      // Every rank but 0 receives its blocks and the panels it does not own, nothing else.
      const auto& got = d["communication"]["bytes_received_per_rank"];
      for (int q = 1; q < comm.size(); ++q) {
        const auto want = d["bytes_per_rank"]["scatter"][q].get<std::int64_t>() +
                          d["bytes_per_rank"]["broadcast"][q].get<std::int64_t>();
        EXPECT_EQ(got[q].get<std::int64_t>(), want) << "rank " << q << " grid " << to_string(g);
        ok = ok && got[q].get<std::int64_t>() == want;
      }
      EXPECT_TRUE(ok) << rec.dump(2);
    }
    EXPECT_TRUE(all_ranks(ok)) << to_string(g);
  }
}

TEST(GpuSummaNccl, AWrongElementOnTheLastRankFailsEveryRank) {
  SKIP_WITHOUT_A_GPU_PER_RANK();
  const auto comm = Communicator::world();
  expect_corruption_named(summa_nccl({64, 48, 40}, Precision::fp64, most_square_grid(comm.size())), comm);
}
