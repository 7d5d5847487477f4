// Summa2D's panel schedules against each other: with a lookahead (panels forwarded along rings, or
// sent by their owner directly, non-blocking) C is bit for bit the blocking broadcasts' C and the
// exact integer product on every grid 1×P, P×1 and the squares between; a rank slowed on purpose
// holds up its own row and column, not a rank of another row and column; the record splits each
// rank's broadcast phase.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "gemm_reference.hpp"
#include "mpi_test_util.hpp"
#include "scalebench/mpi/mpi.hpp"
#include "scalebench/workloads/gemm/distributed_gemm.hpp"
#include "scalebench/workloads/gemm/gemm_config.hpp"

using namespace scalebench;

namespace {

GemmConfig summa_config(const GemmShape& shape, ProcessGrid grid, std::int64_t panel, int lookahead) {
  GemmConfig cfg = exact_gemm_config(shape, Precision::fp64, 977);
  cfg.algorithm = GemmAlgorithm::summa2d;
  cfg.grid_rows = grid.rows;
  cfg.grid_cols = grid.cols;
  cfg.panel_width = panel;
  cfg.lookahead = lookahead;
  cfg.reps = 2;  // a second repeat reuses the panel buffers and the owners' blocks
  return cfg;
}

// 1×P, P×1 and the most square grid of the world's ranks (each once).
std::vector<ProcessGrid> grids_to_test(int ranks) {
  std::vector<ProcessGrid> out{{1, ranks}, {ranks, 1}};
  const ProcessGrid square = most_square_grid(ranks);
  if (square.rows != 1) out.push_back(square);
  if (square.rows != square.cols) out.push_back({square.cols, square.rows});
  return out;
}

std::string text(const GemmShape& s, ProcessGrid g, int lookahead) {
  return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) + " grid " + to_string(g) +
         " lookahead " + std::to_string(lookahead);
}

}  // namespace

// Uneven blocks, panels cut at both k partitions' edges, more panels than the lookahead and fewer
// (lookahead 16 with a handful of panels), fp64 and fp32.
TEST(SummaLookahead, GivesTheBitsOfBlockingBroadcastsOnEveryGrid) {
  const auto comm = Communicator::world();
  for (const Precision p : {Precision::fp64, Precision::fp32}) {
    const GemmShape shape{37, 43, 59};
    const std::vector<double> exact = comm.is_root() ? exact_integer_product(shape, 977) : std::vector<double>();
    for (const ProcessGrid g : grids_to_test(comm.size())) {
      GemmConfig blocking = summa_config(shape, g, 5, 0);
      blocking.precision = p;
      const GemmResult reference = run_gemm_keeping_c(blocking, comm);
      EXPECT_TRUE(all_ranks(reference.ok)) << text(shape, g, 0);
      for (const int d : {1, 2, 16}) {
        GemmConfig cfg = blocking;
        cfg.lookahead = d;
        const GemmResult r = run_gemm_keeping_c(cfg, comm);
        bool same = true;
        if (comm.is_root()) {
          const auto& s = r.record.at("distribution").at("panel_schedule");
          same = r.c == reference.c && r.c == exact && s.at("lookahead").get<int>() == d &&
                 r.record.at("config").at("lookahead").get<int>() == d;
        }
        EXPECT_TRUE(all_ranks(r.ok)) << "verification failed: " << to_string(p) << " " << text(shape, g, d);
        EXPECT_TRUE(all_ranks(same)) << "C differs from the blocking broadcasts' or the exact product: " << to_string(p)
                                     << " " << text(shape, g, d);
      }
    }
  }
}

// The record: per rank the broadcast phase split into waiting and transfer (the blocking
// broadcasts cannot tell: null), its route named; the transport's byte count the same as the
// blocking broadcasts' (every rank receives each panel part it does not own once).
TEST(SummaLookahead, RecordSplitsEachRanksBroadcastPhase) {
  const auto comm = Communicator::world();
  const GemmShape shape{48, 40, 64};
  const ProcessGrid g = most_square_grid(comm.size());
  const GemmResult blocking = run_gemm_keeping_c(summa_config(shape, g, 8, 0), comm);
  const GemmResult ring = run_gemm_keeping_c(summa_config(shape, g, 8, 2), comm);
  bool ok = blocking.ok && ring.ok;
  if (comm.is_root()) {
    const auto& b = blocking.record.at("distribution");
    const auto& r = ring.record.at("distribution");
    const auto& bs = b.at("panel_schedule");
    const auto& rs = r.at("panel_schedule");
    ok = ok && bs.at("schedule") == "blocking broadcasts" && bs.at("wait_s").at(0).is_null();
    const std::string route = g.cols > 4 || g.rows > 4 ? "ring" : "direct";
    ok = ok && rs.at("schedule").get<std::string>().find("lookahead 2") != std::string::npos;
    ok = ok && (comm.size() == 1 || rs.at("schedule").get<std::string>().find(route) == 0);
    for (int q = 0; q < comm.size(); ++q) {
      const double wait = rs.at("wait_s").at(q).get<double>(), transfer = rs.at("transfer_s").at(q).get<double>();
      const double broadcast = rs.at("broadcast_s").at(q).get<double>();
      ok = ok && wait >= 0 && transfer >= 0 && wait + transfer <= broadcast * 1.001 + 1e-6;
      ok = ok && rs.at("compute_s").at(q).get<double>() > 0 && rs.at("hidden_s").at(q).get<double>() >= 0;
      ok = ok && r.at("communication").at("bytes_received_per_rank").at(q) ==
                     b.at("communication").at("bytes_received_per_rank").at(q);
    }
    EXPECT_TRUE(ok) << r.dump(2);
  }
  EXPECT_TRUE(all_ranks(ok));
}

// On the host ring a panel's multiply runs in pieces of rows with the ring driven between them:
// uneven pieces (7 rows, the last shorter) give the exact product and the blocking broadcasts'
// bits; the record names the piece; by the rule a block this small multiplies whole (null).
TEST(SummaLookahead, PanelsMultipliedInPiecesGiveTheExactProduct) {
  const auto comm = Communicator::world();
  const GemmShape shape{150, 40, 48};
  const ProcessGrid g = most_square_grid(comm.size());
  const std::vector<double> exact = comm.is_root() ? exact_integer_product(shape, 977) : std::vector<double>();
  const GemmResult blocking = run_gemm_keeping_c(summa_config(shape, g, 8, 0), comm);
  GemmTestHooks hooks;
  hooks.piece_rows = 7;
  for (const int d : {1, 2}) {
    const GemmResult r = run_gemm_keeping_c(summa_config(shape, g, 8, d), comm, hooks);
    const GemmResult whole = run_gemm_keeping_c(summa_config(shape, g, 8, d), comm);
    bool ok = r.ok && whole.ok;
    if (comm.is_root()) {
      const auto& s = r.record.at("distribution").at("panel_schedule");
      ok = ok && r.c == exact && r.c == blocking.c && whole.c == exact;
      ok = ok && s.at("multiply_piece_rows") == 7;
      ok = ok && whole.record.at("distribution").at("panel_schedule").at("multiply_piece_rows").is_null();
      ok = ok && blocking.record.at("distribution").at("panel_schedule").at("multiply_piece_rows").is_null();
      EXPECT_TRUE(ok) << "lookahead " << d << ": " << s.dump(2);
    }
    EXPECT_TRUE(all_ranks(ok)) << "lookahead " << d;
  }
}

// Counts above --mpi-chunk: the ring sends each panel part whole, so the run falls back to the
// blocking broadcasts (chunked) and says so; C is the same.
TEST(SummaLookahead, PanelsOverTheChunkFallBackToBlockingBroadcasts) {
  const auto comm = Communicator::world();
  const GemmShape shape{40, 40, 40};
  GemmTestHooks hooks;
  hooks.mpi_chunk = 7;
  const GemmConfig cfg = summa_config(shape, most_square_grid(comm.size()), 8, 1);
  const GemmResult r = run_gemm_keeping_c(cfg, comm, hooks);
  bool ok = r.ok;
  if (comm.is_root()) {
    const auto& s = r.record.at("distribution").at("panel_schedule");
    ok = ok && r.c == exact_integer_product(shape, 977);
    ok = ok && (comm.size() == 1 || (s.at("schedule") == "blocking broadcasts" && s.contains("note")));
  }
  EXPECT_TRUE(all_ranks(ok));
}

// A 3×3 grid whose centre rank (1,1) sleeps before each panel's multiply: C is unchanged; the
// ranks of its row and column are held up in the panel schedule (they need the panels it owns and
// forwards), the corner ranks (another row and column) much less — their idle time goes to the
// gather, where every rank meets rank 0 anyway.
TEST(SummaLookahead, SlowRankHoldsUpOnlyItsRowAndColumn) {
  const auto comm = Communicator::world();
  if (comm.size() != 9) GTEST_SKIP() << "needs a 3x3 grid: run on 9 ranks";
  const GemmShape shape{96, 96, 144};
  GemmTestHooks hooks;
  hooks.delay_rank = 4;
  hooks.delay_seconds = 0.04;
  GemmConfig cfg = summa_config(shape, {3, 3}, 16, 2);
  cfg.reps = 1;
  cfg.warmup = 0;
  const GemmResult r = run_gemm_keeping_c(cfg, comm, hooks);
  bool ok = r.ok;
  if (comm.is_root()) {
    ok = ok && r.c == exact_integer_product(shape, 977);
    const auto& s = r.record.at("distribution").at("panel_schedule");
    const auto held = [&](int q) { return s.at("broadcast_s").at(q).get<double>(); };
    // Means over the four ranks of each kind: on an oversubscribed machine one rank of either
    // may be descheduled for a while.
    double related = 0, unrelated = 0;
    for (const int q : {1, 3, 5, 7}) related += held(q) / 4;
    for (const int q : {0, 2, 6, 8}) unrelated += held(q) / 4;
    // 9 panels, 3 owned by the slow rank in its row and 3 in its column, each 0.04 s late.
    ok = ok && s.at("compute_s").at(4).get<double>() >= 9 * 0.04;
    // No rank outside its row and column is held up: the corners wait less than one delay in all,
    // or half what the row and column wait. Where a panel moves only while its sender is inside
    // MPI (the tests' shared memory without single-copy), the row and column wait for it; where the
    // receiver can pull it alone (CMA), nobody does.
    ok = ok && (unrelated < 0.04 || (related >= 0.04 && unrelated * 2 < related));
    EXPECT_TRUE(ok) << s.dump(2);
  }
  EXPECT_TRUE(all_ranks(ok));
}
