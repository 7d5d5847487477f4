// Summa2D against Row1D and against the exact integer product: every grid of the rank count
// (1×P, P×1 and the squares between), uneven blocks, k-panels cut at block edges, fp64 and fp32,
// both CPU backends. On integer fill every product is exact, so C must agree bit for bit.
#include <gtest/gtest.h>

#include <string>

#include "gemm_checks.hpp"
#include "gemm_reference.hpp"
#include "mpi_test_util.hpp"
#include "scalebench/base/partition.hpp"
#include "scalebench/mpi/mpi.hpp"
#include "scalebench/workloads/gemm/distributed_gemm.hpp"
#include "scalebench/workloads/gemm/gemm_config.hpp"

using namespace scalebench;

namespace {

GemmConfig exact_config(const GemmShape& shape, Precision p, GemmAlgorithm alg, ProcessGrid grid, std::int64_t panel) {
  GemmConfig cfg = exact_gemm_config(shape, p, 4321);
  cfg.algorithm = alg;
  if (alg == GemmAlgorithm::summa2d) {
    cfg.grid_rows = grid.rows;
    cfg.grid_cols = grid.cols;
    cfg.panel_width = panel;
  }
  return cfg;
}

// Every grid PR × PC of the world's ranks.
std::vector<ProcessGrid> grids_of(int ranks) {
  std::vector<ProcessGrid> out;
  for (int r = 1; r <= ranks; ++r) {
    if (ranks % r == 0) out.push_back({r, ranks / r});
  }
  return out;
}

void expect_summa_exact(const GemmShape& shape, Precision p, GemmBackendKind backend, std::int64_t panel) {
  const auto comm = Communicator::world();
  GemmConfig row = exact_config(shape, p, GemmAlgorithm::row1d, {}, panel);
  row.backend = backend;
  const GemmResult reference = run_gemm_keeping_c(row, comm);
  const auto exact = comm.is_root() ? exact_integer_product(shape, row.seed) : std::vector<double>();
  for (const ProcessGrid g : grids_of(comm.size())) {
    GemmConfig cfg = exact_config(shape, p, GemmAlgorithm::summa2d, g, panel);
    cfg.backend = backend;
    const GemmResult r = run_gemm_keeping_c(cfg, comm);
    bool same = true;
    if (comm.is_root()) {
      same = r.c == exact && r.c == reference.c &&
             r.record.at("distribution").at("grid") == nlohmann::json({g.rows, g.cols});
    }
    const std::string what = to_string(backend) + " " + to_string(p) + " " + shape_on_ranks(shape, comm.size()) +
                             " grid " + to_string(g) + " panel " + std::to_string(panel);
    EXPECT_TRUE(all_ranks(r.ok)) << "verification failed: " << what;
    EXPECT_TRUE(all_ranks(same)) << "C differs from Row1D's or the exact product: " << what;
  }
  EXPECT_TRUE(all_ranks(reference.ok));
}

}  // namespace

TEST(Summa2D, ExactAndIdenticalToRow1DOnEveryGridFp64) {
  expect_summa_exact({37, 41, 53}, Precision::fp64, GemmBackendKind::openblas, 5);
  expect_summa_exact({61, 47, 97}, Precision::fp64, GemmBackendKind::openblas, kDefaultPanelWidth);
}

TEST(Summa2D, ExactAndIdenticalToRow1DOnEveryGridFp32) {
  expect_summa_exact({43, 39, 59}, Precision::fp32, GemmBackendKind::openblas, 7);
}

TEST(Summa2D, NaiveBackendSumsPanelsExactly) {
  expect_summa_exact({29, 31, 17}, Precision::fp64, GemmBackendKind::naive, 3);
}

TEST(Summa2D, ChunkedTransportGivesTheSameC) {
  const auto comm = Communicator::world();
  const GemmShape shape{37, 23, 41};
  GemmConfig cfg = exact_config(shape, Precision::fp64, GemmAlgorithm::summa2d, most_square_grid(comm.size()), 6);
  GemmTestHooks hooks;
  hooks.mpi_chunk = 50;
  const GemmResult r = run_gemm_keeping_c(cfg, comm, hooks);
  bool same = true;
  if (comm.is_root()) same = r.c == exact_integer_product(shape, cfg.seed);
  EXPECT_TRUE(all_ranks(r.ok && same));
}

TEST(Summa2D, RecordCountsTheBytesEachRankMoves) {
  const auto comm = Communicator::world();
  const GemmShape shape{64, 64, 64};
  const ProcessGrid g = most_square_grid(comm.size());
  GemmConfig cfg = exact_config(shape, Precision::fp64, GemmAlgorithm::summa2d, g, 16);
  cfg.reps = 2;
  cfg.peer = true;
  const GemmResult r = run_gemm_keeping_c(cfg, comm);
  bool ok = r.ok;
  if (comm.is_root()) {
    const auto& d = r.record.at("distribution");
    const auto& bytes = d.at("bytes_per_rank");
    // Rank (i, j) receives the panels of A and B it does not own: (n/PR)·(n - n/PC) + (n - n/PR)·(n/PC).
    for (int rank = 0; rank < comm.size(); ++rank) {
      const std::int64_t mi = RowPartition(64, g.rows).block(rank / g.cols).count;
      const std::int64_t nj = RowPartition(64, g.cols).block(rank % g.cols).count;
      const std::int64_t ka = RowPartition(64, g.cols).block(rank % g.cols).count;
      const std::int64_t kb = RowPartition(64, g.rows).block(rank / g.cols).count;
      ok = ok && bytes.at("broadcast").at(rank).get<std::int64_t>() == 8 * (mi * (64 - ka) + (64 - kb) * nj);
      ok = ok && bytes.at("scatter").at(rank).get<std::int64_t>() == (rank == 0 ? 0 : 8 * (mi * ka + kb * nj));
      ok = ok && bytes.at("gather").at(rank).get<std::int64_t>() == (rank == 0 ? 0 : 8 * mi * nj);
    }
    ok = ok && r.record.at("config").at("algorithm").get<std::string>() == "summa2d";
    for (const char* ph : {"scatter", "broadcast", "compute", "gather", "verify", "end_to_end"}) {
      ok = ok && r.record.at("phases").contains(ph);
    }
    ok = ok && r.record.at("peer").at("ratio_backend_vs_bare").get<double>() > 0;
  }
  EXPECT_TRUE(all_ranks(ok));
}

// The transport's own count (distribution.communication) against the layout's: every rank but 0
// receives its blocks and what it is broadcast, and sends its block of C; rank 0 receives every
// other block of C. Both algorithms, the same C (c_digest), seconds in transport calls measured.
TEST(Summa2D, TransportMeasuresWhatTheLayoutSaysForBothAlgorithms) {
  const auto comm = Communicator::world();
  const GemmShape shape{53, 47, 61};
  std::string digest[2];
  for (const GemmAlgorithm alg : {GemmAlgorithm::row1d, GemmAlgorithm::summa2d}) {
    GemmConfig cfg = exact_config(shape, Precision::fp64, alg, most_square_grid(comm.size()), 16);
    const GemmResult r = run_gemm_keeping_c(cfg, comm);
    bool ok = r.ok;
    if (comm.is_root()) {
      const auto& d = r.record.at("distribution");
      const auto& c = d.at("communication");
      const auto& bytes = d.at("bytes_per_rank");
      std::int64_t gathered = 0;
      for (int q = 1; q < comm.size(); ++q) {
        const auto in = bytes["scatter"][q].get<std::int64_t>() + bytes["broadcast"][q].get<std::int64_t>();
        EXPECT_EQ(c["bytes_received_per_rank"][q].get<std::int64_t>(), in) << to_string(alg) << " rank " << q;
        ok = ok && c["bytes_received_per_rank"][q].get<std::int64_t>() == in;
        ok = ok && c["bytes_sent_per_rank"][q].get<std::int64_t>() >= bytes["gather"][q].get<std::int64_t>();
        gathered += bytes["gather"][q].get<std::int64_t>();
      }
      ok = ok &&
           c["bytes_received_per_rank"][0].get<std::int64_t>() == gathered + bytes["broadcast"][0].get<std::int64_t>();
      ok = ok && d.at("transport") == "mpi" && c.at("transport") == "mpi";
      ok = ok && (comm.size() == 1 || c.at("seconds").at("median_s").get<double>() > 0);
      digest[alg == GemmAlgorithm::row1d ? 0 : 1] = r.record.at("verification").at("c_digest").get<std::string>();
      EXPECT_TRUE(ok) << r.record.at("distribution").dump(2);
    }
    EXPECT_TRUE(all_ranks(ok)) << to_string(alg);
  }
  if (comm.is_root()) {
    EXPECT_EQ(digest[0], digest[1]);
  }
}

TEST(Summa2D, CorruptedBlockIsFoundAndItsRankNamed) {
  const auto comm = Communicator::world();
  expect_corruption_named(exact_config({40, 40, 40}, Precision::fp64, GemmAlgorithm::summa2d,
                                       most_square_grid(comm.size()), 8),
                          comm);
}
