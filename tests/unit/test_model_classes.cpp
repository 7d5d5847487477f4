// The model evaluates ranks by class (model/rank_classes.hpp): the classes against every rank
// enumerated one by one; predictions at medium counts against the same sums and extremes taken
// rank by rank (each rank a class of its own, through the same building blocks); and the largest
// layout the model takes, every `auto` alternative ranked, in seconds.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "scalebench/base/partition.hpp"
#include "scalebench/gpu/gpu.hpp"
#include "scalebench/mpi/mpi.hpp"
#include "scalebench/workloads/gemm/choice.hpp"
#include "scalebench/workloads/model.hpp"
#include "synthetic_profile.hpp"
#include "workloads/model/rank_classes.hpp"

namespace scalebench {
namespace {

// The synthetic profile with a spread on every BLAS point: each prediction is made three times
// (its band), as on a calibrated profile.
const Profile& with_spread() {
  static const Profile p = [] {
    Profile q = synthetic();
    for (auto& [prec, points] : q.blas) {
      for (auto& pt : points) pt.spread = {0.05, 0.03};
    }
    q.inter_node->spread = {0.2, 0.1};
    return q;
  }();
  return p;
}

// Equal within what adding the same terms in another order can change.
void expect_same(double got, double want, const std::string& what) {
  EXPECT_LE(std::fabs(got - want), 1e-12 * std::max(std::fabs(got), std::fabs(want)))
      << what << ": " << got << " vs " << want;
}

GemmConfig gemm(std::int64_t m, std::int64_t n, std::int64_t k, GemmBackendKind b = GemmBackendKind::openblas) {
  GemmConfig c;
  c.shape = {m, n, k};
  c.threads = 1;
  c.backend = b;
  return c;
}

// What each rank moves, rank by rank: one class per rank.
std::vector<RankBytes> per_rank(const RowPartition& rows, double bytes_per_row) {
  std::vector<RankBytes> out;
  for (int r = 0; r < rows.parts(); ++r) {
    out.push_back({r, 1, static_cast<double>(rows.counts()[static_cast<std::size_t>(r)]) * bytes_per_row});
  }
  return out;
}

const MachineLayout kLayouts[] = {{1, 1, 0}, {1, 4, 0}, {2, 3, 0}, {3, 5, 0}, {7, 3, 0}, {64, 16, 0}, {37, 29, 0}};

TEST(RankClasses, EvenSplitIsRowPartitionsSplit) {
  for (const std::int64_t total : {0, 1, 5, 7, 100, 1001, 65536, 10007}) {
    for (const int parts : {1, 2, 3, 7, 64, 1000, 1073}) {
      const RowPartition rows(total, parts);
      const EvenSplit split(total, parts);
      for (int p = 0; p < parts; ++p) {
        ASSERT_EQ(split.count(p), rows.counts()[static_cast<std::size_t>(p)])
            << total << " over " << parts << ": " << p;
      }
    }
  }
}

TEST(RankClasses, RangesCoverEveryRankOnceCutAtEachCutInside) {
  const std::vector<RankRange> r = ranges_cut_at(1, 20, {7, 0, 20, 7, 3, 25});
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].first, 1);
  EXPECT_EQ(r[0].count, 2);
  EXPECT_EQ(r[1].first, 3);
  EXPECT_EQ(r[1].count, 4);
  EXPECT_EQ(r[2].first, 7);
  EXPECT_EQ(r[2].end(), 20);
  EXPECT_TRUE(ranges_cut_at(5, 5, {3}).empty());
  EXPECT_EQ(ranges_cut_at(0, 4, {}).size(), 1u);
}

// Every rank of a grid lies in exactly one cell, every rank of a cell holds blocks of the same
// sizes (Summa2D's four partitions), and a cell's ranks below a bound are counted right.
TEST(RankClasses, GridCellsHoldRanksOfOneBlockSize) {
  struct Case {
    int rows, cols;
    GemmShape s;
  };
  for (const Case& c : {Case{3, 5, {10, 12, 7}}, Case{4, 4, {16, 16, 16}}, Case{7, 2, {23, 9, 100}},
                        Case{1, 9, {5, 31, 4}}, Case{9, 1, {31, 5, 20}}, Case{16, 12, {1000, 999, 37}}}) {
    const RowPartition rows(c.s.m, c.rows), cols(c.s.n, c.cols), k_of_a(c.s.k, c.cols), k_of_b(c.s.k, c.rows);
    const auto cells = grid_cells(c.rows, c.cols, {EvenSplit(c.s.m, c.rows).extra, EvenSplit(c.s.k, c.rows).extra},
                                  {EvenSplit(c.s.n, c.cols).extra, EvenSplit(c.s.k, c.cols).extra});
    ASSERT_FALSE(cells.empty());
    EXPECT_EQ(cells.front().first_rank(c.cols), 0);
    std::vector<int> seen(static_cast<std::size_t>(c.rows * c.cols), 0);
    for (const GridCell& cell : cells) {
      const auto at = [](const RowPartition& p, std::int64_t i) { return p.counts()[static_cast<std::size_t>(i)]; };
      const std::int64_t i0 = cell.rows.first, j0 = cell.cols.first;
      for (std::int64_t i = cell.rows.first; i < cell.rows.end(); ++i) {
        for (std::int64_t j = cell.cols.first; j < cell.cols.end(); ++j) {
          ++seen[static_cast<std::size_t>(i * c.cols + j)];
          EXPECT_EQ(at(rows, i), at(rows, i0));
          EXPECT_EQ(at(k_of_b, i), at(k_of_b, i0));
          EXPECT_EQ(at(cols, j), at(cols, j0));
          EXPECT_EQ(at(k_of_a, j), at(k_of_a, j0));
        }
      }
      for (const std::int64_t limit :
           {0, 1, c.cols - 1, c.cols, c.cols + 1, c.rows * c.cols / 2 + 1, c.rows * c.cols, c.rows * c.cols + 5}) {
        std::int64_t below = 0;
        for (std::int64_t i = cell.rows.first; i < cell.rows.end(); ++i) {
          for (std::int64_t j = cell.cols.first; j < cell.cols.end(); ++j) below += i * c.cols + j < limit ? 1 : 0;
        }
        EXPECT_EQ(cell.ranks_below(c.cols, limit), below) << c.rows << "x" << c.cols << " below " << limit;
      }
    }
    for (const int n : seen) EXPECT_EQ(n, 1);
  }
}

// Row1D on the host: the scatter, the gather and B's wait along the relay chain, replicated and
// shared, as sums over every rank in order.
TEST(ModelByClass, Row1dSumsOverRanksAreTheRankByRankSums) {
  const Profile& p = synthetic();
  const double e = 8;
  for (const MachineLayout& m : kLayouts) {
    for (const GemmShape s : {GemmShape{10007, 3001, 5003}, GemmShape{4096 * 3, 512, 1024}}) {
      const int ranks = m.ranks();
      const RowPartition rows(s.m, ranks);
      const double sk = static_cast<double>(s.k), sn = static_cast<double>(s.n);
      const std::string what = std::to_string(m.nodes) + "x" + std::to_string(m.ranks_per_node) +
                               " m=" + std::to_string(s.m);
      GemmConfig cfg = gemm(s.m, s.n, s.k);
      const Prediction rep = predict_gemm(p, cfg, m);
      const double scatter = scatterv_seconds(p, m, per_rank(rows, sk * e));
      expect_same(rep.phase("scatter"), scatter, what + " scatter");
      // The gather's slowest rank waits for the largest block: the compute of the smaller
      // blocks is the same layout's prediction with every block of that size.
      const std::int64_t base = s.m / ranks;
      const double fastest = predict_gemm(p, gemm(base * ranks, s.n, s.k), m).phase("compute");
      const double gather = gatherv_seconds(p, m, per_rank(rows, sn * e));
      expect_same(rep.phase("gather"), gather + rep.phase("compute") - fastest, what + " gather");
      const double b = sk * sn * e;
      double wait = 0;
      if (relay_goes_along_chain(ranks, static_cast<std::int64_t>(b))) {
        wait = std::max(0.0, scatter - link_to(p, m, 1).seconds(static_cast<double>(rows.counts()[1]) * sk * e));
      }
      expect_same(rep.phase("broadcast"), relay_seconds(p, m, b) + wait, what + " broadcast");

      cfg.distribution = GemmDistribution::shared;
      const Prediction shared = predict_gemm(p, cfg, m);
      double to = 0, from = 0, first_node = 0;
      for (int r = m.ranks_per_node; r < ranks; ++r) {
        const Link l = link_to(p, m, r);
        to += l.seconds(static_cast<double>(rows.counts()[static_cast<std::size_t>(r)]) * sk * e);
        from += l.seconds(static_cast<double>(rows.counts()[static_cast<std::size_t>(r)]) * sn * e);
        if (m.node_of(r) == 1) first_node = to;
      }
      expect_same(shared.phase("scatter"), to, what + " shared scatter");
      expect_same(shared.phase("gather"), from + shared.phase("compute") - fastest, what + " shared gather");
      const double leaders = m.nodes > 1 ? relay_seconds(p, {m.nodes, 1, 0}, b) : 0.0;
      expect_same(shared.phase("broadcast"), leaders + to - first_node, what + " shared broadcast");
    }
  }
}

// Row1D on GPUs: NCCL's bytes of every rank but the root, and under the shared distribution the
// slowest rank's copy in (its rows and its slice of B's rows, which differ by rank and by place
// on its node).
TEST(ModelByClass, Row1dGpuSumsAndSlowestRankAreTheRankByRankOnes) {
  const Profile& p = synthetic();
  const GpuProfile& g = p.gpu;
  for (MachineLayout m : kLayouts) {
    m.gpus_per_node = m.ranks_per_node;
    const GemmShape s{10007, 3001, 5003};
    const int ranks = m.ranks();
    const RowPartition rows(s.m, ranks);
    const double sk = static_cast<double>(s.k), sn = static_cast<double>(s.n);
    const std::string what = std::to_string(m.nodes) + "x" + std::to_string(m.ranks_per_node);
    GemmConfig cfg = gemm(s.m, s.n, s.k, GemmBackendKind::cublas);
    cfg.transport = Transport::nccl;
    const Prediction nccl = predict_gemm(p, cfg, m);
    double a = 0, c = 0;
    for (int r = 1; r < ranks; ++r) {
      a += static_cast<double>(rows.counts()[static_cast<std::size_t>(r)]) * sk * 8;
      c += static_cast<double>(rows.counts()[static_cast<std::size_t>(r)]) * sn * 8;
    }
    if (ranks > 1) {
      const Link l = m.nodes > 1 ? *p.inter_node : *g.nccl_intra;
      expect_same(nccl.phase("scatter"), l.seconds(a), what + " nccl scatter");
      expect_same(nccl.phase("gather"), l.seconds(c), what + " nccl gather");
    }
    cfg.distribution = GemmDistribution::shared;
    const Prediction shared = predict_gemm(p, cfg, m);
    const RowPartition slices(s.k, m.ranks_per_node);
    double h2d = 0;
    for (int r = 0; r < ranks; ++r) {
      const double held = static_cast<double>(rows.counts()[static_cast<std::size_t>(r)]);
      const double b_rows = m.ranks_per_node > 1
                                ? static_cast<double>(slices.counts()[static_cast<std::size_t>(r % m.ranks_per_node)])
                                : sk;
      h2d = std::max(h2d, g.h2d_pinned.seconds((held * sk + b_rows * sn) * 8));
    }
    EXPECT_EQ(shared.phase("h2d"), h2d) << what;
  }
}

// Summa2D: rank 0's packing and every other rank's blocks A_ij and B_ij out and C_ij back, each
// over its own link, on grids whose k blocks differ in size along both ways.
TEST(ModelByClass, Summa2dSumsOverRanksAreTheRankByRankSums) {
  const Profile& p = synthetic();
  const double e = 8;
  struct Case {
    MachineLayout m;
    int rows, cols;
  };
  for (const Case& c : {Case{{3, 5, 0}, 3, 5}, Case{{7, 3, 0}, 3, 7}, Case{{64, 16, 0}, 32, 32},
                        Case{{37, 29, 0}, 29, 37}, Case{{6, 4, 0}, 8, 3}, Case{{1, 12, 0}, 4, 3}}) {
    // m and n split evenly (every block multiplies alike); k does not.
    const GemmShape s{c.rows * 40, c.cols * 30, 1009};
    GemmConfig cfg = gemm(s.m, s.n, s.k);
    cfg.algorithm = GemmAlgorithm::summa2d;
    cfg.grid_rows = c.rows;
    cfg.grid_cols = c.cols;
    cfg.lookahead = 0;
    cfg.panel_width = 64;
    const Prediction pred = predict_gemm(p, cfg, c.m);
    const RowPartition k_of_a(s.k, c.cols), k_of_b(s.k, c.rows);
    const double copy = rate_at_threads(p.triad_Bps, 1, p.cores) * 2.0 / 3.0;
    const double sm = static_cast<double>(s.m), sn = static_cast<double>(s.n), sk = static_cast<double>(s.k);
    double scatter = 2 * (sm * sk + sk * sn) * e / copy, gather = 2 * sm * sn * e / copy;
    const double mi = sm / c.rows, nj = sn / c.cols;
    for (int r = 1; r < c.m.ranks(); ++r) {
      const Link l = link_to(p, c.m, r);
      const double ka = static_cast<double>(k_of_a.counts()[static_cast<std::size_t>(r % c.cols)]);
      const double kb = static_cast<double>(k_of_b.counts()[static_cast<std::size_t>(r / c.cols)]);
      scatter += l.seconds(mi * ka * e) + l.seconds(kb * nj * e);
      gather += l.seconds(mi * nj * e);
    }
    const std::string what = std::to_string(c.rows) + "x" + std::to_string(c.cols);
    expect_same(pred.phase("scatter"), scatter, what + " scatter");
    expect_same(pred.phase("gather"), gather, what + " gather");
  }
}

// Monte Carlo: the slowest and the fastest rank by every rank's chunks (some ranks with none, the
// last chunk short), against a run of whole chunks on every rank on the same layout.
TEST(ModelByClass, MonteCarloSlowestAndFastestRankAreTheRankByRankOnes) {
  const Profile& p = synthetic();
  for (const MachineLayout& m : kLayouts) {
    for (const McBackendKind backend : {McBackendKind::cpu, McBackendKind::naive}) {
      for (const std::int64_t samples : {std::int64_t{1000003}, std::int64_t{123456789}, std::int64_t{10000000007}}) {
        MonteCarloConfig cfg;
        cfg.backend = backend;
        cfg.threads = 1;
        cfg.samples = samples;
        resolve_defaults(cfg);
        const int ranks = m.ranks();
        const std::int64_t chunks = chunk_count(cfg);
        std::int64_t most = 0, fewest = samples;
        for (int r = 0; r < ranks; ++r) {
          std::int64_t n = 0;
          if (backend == McBackendKind::naive) {
            n = samples / ranks + (r < samples % ranks ? 1 : 0);
          } else {
            const ChunkRange c = rank_chunks(chunks, r, ranks);
            n = std::max<std::int64_t>(std::min(c.last * cfg.chunk_size, samples) - c.first * cfg.chunk_size, 0);
          }
          most = std::max(most, n);
          fewest = std::min(fewest, n);
        }
        MonteCarloConfig whole = cfg;
        whole.samples = cfg.chunk_size * ranks;  // one whole chunk on each rank: the time of a sample
        const Prediction ref = predict_montecarlo(p, whole, m);
        const double per_sample = ref.phase("compute") / static_cast<double>(cfg.chunk_size);
        const Prediction pred = predict_montecarlo(p, cfg, m);
        const std::string what = std::to_string(m.nodes) + "x" + std::to_string(m.ranks_per_node) + " " +
                                 to_string(backend) + " " + std::to_string(samples);
        expect_same(pred.phase("compute"), static_cast<double>(most) * per_sample, what + " compute");
        // The slowest rank's wait for the others, beside the reduction's own microseconds.
        expect_same(pred.phase("reduce") - ref.phase("reduce") + pred.phase("compute"),
                    static_cast<double>(most - fewest) * per_sample + pred.phase("compute"), what + " reduce");
      }
    }
  }
}

// The largest layout the model takes (2^22 ranks) with every schedule option left to `auto`: the
// alternatives ranked (each predicted with its band: three evaluations) in seconds, where the model
// once evaluated every rank of every alternative (over a minute). Also Monte Carlo and GPUs there.
TEST(ModelByClass, FourMillionRanksAreRankedInSeconds) {
  const auto t0 = std::chrono::steady_clock::now();
  const MachineLayout m{static_cast<int>(kModelMaxRanks / 4), 4, 0};
  GemmConfig cfg = gemm(65536, 65536, 65536);
  cfg.autos.algorithm = cfg.autos.grid = cfg.autos.distribution = cfg.autos.lookahead = true;
  ChoiceFacts facts;
  facts.layout = m;
  facts.host_bytes_per_node = 1e18;  // the memory of rank 0's node counted for every alternative
  const GemmChoice c = choose_gemm(cfg, facts, &with_spread());
  EXPECT_TRUE(c.by_model);
  EXPECT_EQ(c.chosen().algorithm, GemmAlgorithm::summa2d);  // row1d needs a row per rank
  int predicted = 0;
  for (const auto& a : c.alternatives) predicted += a.seconds ? 1 : 0;
  EXPECT_GE(predicted, 3);
  GemmConfig gpu = gemm(std::int64_t{1} << 24, 4096, 4096, GemmBackendKind::cublas);
  gpu.autos.distribution = gpu.autos.transport = gpu.autos.overlap = true;
  ChoiceFacts gpus = facts;
  gpus.layout = {static_cast<int>(kModelMaxRanks / 8), 8, 8};
  gpus.device_transport = true;
  EXPECT_TRUE(choose_gemm(gpu, gpus, &with_spread()).by_model);
  MonteCarloConfig mc;
  mc.threads = 1;
  EXPECT_GT(predict_montecarlo(with_spread(), mc, m).end_to_end, 0);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(seconds, 10.0) << "2^22 ranks took " << seconds << " s";
}

}  // namespace
}  // namespace scalebench
