// `auto` (choice.hpp) on synthetic profiles whose answer is known: a slow inter-node link takes
// the shared distribution (fewer bytes across nodes), a host-memory limit refuses replicated,
// GPUs with NCCL figures take NCCL and without them (or in a build without NCCL) staged MPI; the
// rules without a profile; never a refused alternative; the record's list of alternatives. The
// options not given (auto by default): the fastest predicted, lookaheads from what calibrate
// measured they hide, predictions within the model's margin taken as ties (the rules decide), a pinned option kept, the
// rules without a profile, and a run that nothing fits left to the run's own check.
#include <algorithm>
#include <cstdlib>

#include <gtest/gtest.h>

#include "scalebench/base/error.hpp"
#include "scalebench/base/phases.hpp"
#include "scalebench/workloads/gemm/choice.hpp"
#include "scalebench/workloads/model.hpp"
#include "synthetic_profile.hpp"

namespace scalebench {
namespace {

GemmConfig square(std::int64_t n, GemmBackendKind b = GemmBackendKind::openblas) {
  GemmConfig c;
  c.shape = {n, n, n};
  c.backend = b;
  c.threads = 1;
  return c;
}

ChoiceFacts facts(int nodes, int ranks_per_node, int gpus = 0) {
  ChoiceFacts f;
  f.layout = {nodes, ranks_per_node, gpus};
  return f;
}

const GemmAlternative* find(const GemmChoice& c, GemmDistribution d) {
  for (const auto& a : c.alternatives) {
    if (a.cfg.distribution == d) return &a;
  }
  return nullptr;
}

// The taken alternative is feasible and, by the model, no predicted one is faster.
void expect_consistent(const GemmChoice& c) {
  ASSERT_GE(c.taken, 0);
  const auto& taken = c.alternatives[static_cast<std::size_t>(c.taken)];
  EXPECT_TRUE(taken.feasible);
  if (!c.by_model) return;
  ASSERT_TRUE(taken.seconds.has_value());
  for (const auto& a : c.alternatives) {
    if (a.seconds) {
      EXPECT_LE(*taken.seconds, *a.seconds) << alternative_text(a.cfg, c.ranks);
    }
  }
}

TEST(GemmChoice, EnumeratesEveryCombinationOfTheAutoOptionsOnly) {
  GemmConfig c = square(1024, GemmBackendKind::cublas);
  c.autos.algorithm = c.autos.grid = c.autos.distribution = c.autos.transport = c.autos.overlap = true;
  // row1d: 2 distributions x 2 transports x 2 overlaps; summa2d on 4 ranks: 3 grids x 2 transports
  // (its overlap is its lookahead, not enumerated).
  EXPECT_EQ(gemm_alternatives(c, 4).size(), 8u + 6u);
  c.autos.lookahead = true;  // and its lookaheads 0, 1, 2; row1d has none
  EXPECT_EQ(gemm_alternatives(c, 4).size(), 8u + 18u);
  GemmConfig cpu = square(1024);
  cpu.autos.distribution = true;
  const auto alts = gemm_alternatives(cpu, 4);
  ASSERT_EQ(alts.size(), 2u);  // transport and overlap stay as given on a CPU backend
  EXPECT_EQ(alts[0].distribution, GemmDistribution::replicated);
  EXPECT_EQ(alts[1].distribution, GemmDistribution::shared);
  EXPECT_FALSE(alts[1].autos.any());
}

TEST(GemmChoice, SlowInterNodeLinkTakesTheSharedDistribution) {
  Profile slow = synthetic();
  slow.inter_node = Link{50e-6, 10e6};  // 10 MB/s between nodes
  GemmConfig c = square(2048);
  c.autos.distribution = true;
  const GemmChoice choice = choose_gemm(c, facts(4, 4), &slow);
  EXPECT_TRUE(choice.by_model);
  expect_consistent(choice);
  EXPECT_EQ(choice.chosen().distribution, GemmDistribution::shared);
  const GemmAlternative* rep = find(choice, GemmDistribution::replicated);
  ASSERT_NE(rep, nullptr);
  ASSERT_TRUE(rep->seconds.has_value());
  EXPECT_NE(rep->why.find("slower"), std::string::npos) << rep->why;
}

TEST(GemmChoice, HostMemoryLimitRefusesReplicated) {
  GemmConfig c = square(4096);                               // 128 MiB per matrix in fp64
  c.autos.distribution = c.autos.asked.distribution = true;  // --distribution auto
  ChoiceFacts f = facts(1, 8);
  f.host_bytes_per_node = 700.0 * (1 << 20);  // shared needs 3 x 128 + C_i peers 128; replicated about 1.4 GiB
  for (const Profile* p : {&synthetic(), static_cast<const Profile*>(nullptr)}) {
    const GemmChoice choice = choose_gemm(c, f, p);
    expect_consistent(choice);
    EXPECT_EQ(choice.chosen().distribution, GemmDistribution::shared);
    const GemmAlternative* rep = find(choice, GemmDistribution::replicated);
    ASSERT_NE(rep, nullptr);
    EXPECT_FALSE(rep->feasible);
    EXPECT_NE(rep->why.find("host memory"), std::string::npos) << rep->why;
  }
  f.host_bytes_per_node = 1 << 20;  // nothing fits: the machine cannot hold the run (exit 3, as pinned)
  EXPECT_THROW(choose_gemm(c, f, &synthetic()), ResourceError);
}

TEST(GemmChoice, MemoryRefusalsGiveRealFiguresNeverZeroGiB) {
  // Small sizes and a small free figure: each in a unit that keeps it non-zero, exit 3 when memory
  // alone refuses every alternative (docs/model.md).
  GemmConfig c = square(64);  // 32 KiB per matrix in fp64
  c.autos.distribution = c.autos.asked.distribution = true;
  ChoiceFacts f = facts(1, 2);
  f.host_bytes_per_node = 1000;
  try {
    choose_gemm(c, f, nullptr);
    ADD_FAILURE() << "expected a ResourceError";
  } catch (const ResourceError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.find("0.00 GiB"), std::string::npos) << what;
    EXPECT_NE(what.find("1000 bytes is free"), std::string::npos) << what;
    EXPECT_NE(what.find(" KiB of host memory"), std::string::npos) << what;
  }
}

TEST(GemmChoice, GpusWithNcclFiguresTakeNccl) {
  GemmConfig c = square(4000, GemmBackendKind::cublas);
  c.autos.transport = c.autos.overlap = true;
  const GemmChoice choice = choose_gemm(c, facts(1, 4, 4), &synthetic());
  expect_consistent(choice);
  EXPECT_EQ(choice.chosen().transport, Transport::nccl);
  // --overlap with staged MPI on several ranks is refused, as the run refuses it.
  for (const auto& a : choice.alternatives) {
    if (a.cfg.overlap && a.cfg.transport == Transport::mpi) {
      EXPECT_FALSE(a.feasible) << a.why;
    }
  }
}

TEST(GemmChoice, GpusWithoutNcclTakeStagedMpi) {
  Profile no_nccl = synthetic();
  no_nccl.gpu.nccl_intra.reset();
  GemmConfig c = square(4000, GemmBackendKind::cublas);
  c.autos.transport = c.autos.overlap = true;
  const GemmChoice choice = choose_gemm(c, facts(1, 4, 4), &no_nccl);
  expect_consistent(choice);
  EXPECT_EQ(choice.chosen().transport, Transport::mpi);
  EXPECT_FALSE(choice.chosen().overlap);
  // In a build without NCCL the NCCL alternatives are refused by name, whatever the profile says.
  ChoiceFacts f = facts(1, 4, 4);
  f.device_transport = false;
  const GemmChoice built = choose_gemm(c, f, &synthetic());
  EXPECT_EQ(built.chosen().transport, Transport::mpi);
  for (const auto& a : built.alternatives) {
    if (a.cfg.transport == Transport::nccl) {
      EXPECT_NE(a.why.find("NCCL is not in this scalebench"), std::string::npos);
    }
  }
}

// More ranks on a node than it has GPUs (--share-gpu): NCCL, which takes one GPU per rank, is
// refused by name with a profile and without one, and staged MPI runs.
TEST(GemmChoice, RanksSharingAGpuTakeStagedMpi) {
  GemmConfig c = square(4000, GemmBackendKind::cublas);
  c.autos.transport = c.autos.overlap = true;
  for (const Profile* p : {&synthetic(), static_cast<const Profile*>(nullptr)}) {
    const GemmChoice choice = choose_gemm(c, facts(1, 3, 2), p);
    expect_consistent(choice);
    EXPECT_EQ(choice.chosen().transport, Transport::mpi);
    EXPECT_FALSE(choice.chosen().overlap);
    for (const auto& a : choice.alternatives) {
      if (a.cfg.transport == Transport::nccl) {
        EXPECT_FALSE(a.feasible);
        EXPECT_NE(a.why.find("3 ranks share 2 GPU(s)"), std::string::npos) << a.why;
      }
    }
  }
}

TEST(GemmChoice, WithoutAProfileTheRulesDecideAndSaySo) {
  GemmConfig c = square(1024);
  c.autos.algorithm = c.autos.distribution = true;
  const GemmChoice one_node = choose_gemm(c, facts(1, 4), nullptr, "no profile at /nowhere");
  EXPECT_FALSE(one_node.by_model);
  EXPECT_NE(one_node.basis.find("rules: no profile at /nowhere"), std::string::npos);
  EXPECT_EQ(one_node.chosen().algorithm, GemmAlgorithm::row1d);
  EXPECT_EQ(one_node.chosen().distribution, GemmDistribution::shared);  // ranks share the node
  const GemmChoice spread = choose_gemm(c, facts(4, 1), nullptr);
  EXPECT_EQ(spread.chosen().distribution, GemmDistribution::replicated);  // one rank per node
  for (const auto& a : spread.alternatives) EXPECT_FALSE(a.seconds.has_value());
  // A GPU on several ranks: NCCL and the overlap pipeline.
  GemmConfig g = square(1024, GemmBackendKind::cublas);
  g.autos.transport = g.autos.overlap = true;
  const GemmChoice gpus = choose_gemm(g, facts(1, 2, 2), nullptr);
  EXPECT_EQ(gpus.chosen().transport, Transport::nccl);
  EXPECT_TRUE(gpus.chosen().overlap);
  // bf16 has no overlap schedule: refused, so the rules take the next.
  g.precision = Precision::bf16;
  const GemmChoice bf16 = choose_gemm(g, facts(1, 2, 2), nullptr);
  EXPECT_EQ(bf16.chosen().transport, Transport::nccl);
  EXPECT_FALSE(bf16.chosen().overlap);
}

TEST(GemmChoice, NeverTakesWhatTheRunRefuses) {
  // --panel-width is summa2d's: row1d is refused, summa2d taken.
  GemmConfig c = square(1024);
  c.autos.algorithm = true;
  c.panel_width = 256;
  for (const Profile* p : {&synthetic(), static_cast<const Profile*>(nullptr)}) {
    const GemmChoice choice = choose_gemm(c, facts(1, 4), p);
    EXPECT_EQ(choice.chosen().algorithm, GemmAlgorithm::summa2d);
    expect_consistent(choice);
  }
  // 8 ranks on a 2x2 C: row1d has too few rows, no grid of 8 fits; the message names each.
  GemmConfig tiny = square(2);
  tiny.autos.algorithm = tiny.autos.grid = true;
  tiny.autos.asked = {true, true, false, false, false, false};  // --algorithm auto --grid auto
  try {
    choose_gemm(tiny, facts(1, 8), &synthetic());
    ADD_FAILURE() << "expected a UsageError";
  } catch (const UsageError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("found no alternative this run accepts"), std::string::npos) << what;
    EXPECT_NE(what.find("8 ranks but only 2 rows"), std::string::npos) << what;
  }
  // Shared windows that cannot be made: shared is refused (the run would fall back).
  GemmConfig d = square(1024);
  d.autos.distribution = true;
  ChoiceFacts f = facts(1, 4);
  f.shared_refusal = "the backing folder is full";
  const GemmChoice no_windows = choose_gemm(d, f, nullptr);
  EXPECT_EQ(no_windows.chosen().distribution, GemmDistribution::replicated);
}

TEST(GemmChoice, GridAutoTakesTheFastestPredictedGrid) {
  GemmConfig c = square(2048);
  c.algorithm = GemmAlgorithm::summa2d;
  c.autos.grid = true;
  const GemmChoice choice = choose_gemm(c, facts(1, 6), &synthetic());
  EXPECT_EQ(choice.alternatives.size(), 4u);  // 2x3, 3x2, 1x6, 6x1
  expect_consistent(choice);
  EXPECT_EQ(choice.chosen().grid_rows * choice.chosen().grid_cols, 6);
}

TEST(GemmChoice, RecordListsEveryAlternativeWithItsPredictionAndVerdict) {
  GemmConfig c = square(2048);
  c.autos.algorithm = c.autos.distribution = true;
  const GemmChoice choice = choose_gemm(c, facts(2, 2), &synthetic());
  const nlohmann::json j = choice_json(choice, c.autos);
  EXPECT_EQ(j["options"], "algorithm,distribution");
  EXPECT_EQ(j["by"], "model");
  ASSERT_EQ(j["alternatives"].size(), choice.alternatives.size());
  int taken = 0;
  for (const auto& a : j["alternatives"]) {
    taken += a["verdict"] == "taken" ? 1 : 0;
    EXPECT_FALSE(a["why"].get<std::string>().empty());
    if (a["verdict"] != "refused") {
      EXPECT_TRUE(a["predicted_s"].is_number()) << a.dump();
    }
  }
  EXPECT_EQ(taken, 1);
  // row1d replicated and shared, summa2d (replicated: shared is row1d's scheme).
  EXPECT_EQ(j["alternatives"].size(), 3u);
  const std::string table = choice_table(choice, c.autos);
  EXPECT_NE(table.find("auto (algorithm,distribution) by model: profile"), std::string::npos) << table;
  EXPECT_NE(table.find("taken"), std::string::npos);
}

// Every schedule option left open as when none is given (gemm_command.cpp): not asked.
GemmConfig defaulted(GemmConfig c) {
  c.autos.algorithm = c.autos.grid = c.autos.distribution = c.autos.lookahead = true;
  if (c.backend == GemmBackendKind::cublas) c.autos.transport = c.autos.overlap = true;
  return c;
}

Profile with_lookahead(double hidden1, double hidden2) {
  Profile p = synthetic();
  p.lookahead = {{4, 1, 1, hidden1}, {4, 1, 2, hidden2}};
  return p;
}

TEST(GemmChoice, NoOptionGivenTakesTheFastestPredicted) {
  const Profile p = with_lookahead(0.5, 0.25);
  const GemmChoice choice = choose_gemm(defaulted(square(2048)), facts(1, 4), &p);
  EXPECT_TRUE(choice.by_model);
  expect_consistent(choice);
  // Every feasible alternative was predicted, and the taken one says what it beat.
  for (const auto& a : choice.alternatives) EXPECT_EQ(a.feasible, a.seconds.has_value()) << a.why;
  EXPECT_NE(choice.alternatives[static_cast<std::size_t>(choice.taken)].why.find("ahead of the next"),
            std::string::npos);
  const nlohmann::json j = choice_json(choice, defaulted(square(2048)).autos);
  EXPECT_EQ(j["options"], "algorithm,grid,distribution,lookahead");
  EXPECT_EQ(j["defaulted"], "algorithm,grid,distribution,lookahead");
  EXPECT_EQ(j["asked"], "");
}

TEST(GemmChoice, TheLookaheadIsRankedFromWhatCalibrateMeasured) {
  GemmConfig c = square(2048);
  c.algorithm = GemmAlgorithm::summa2d;
  c.autos.lookahead = true;
  // Lookahead 1 hid half the broadcasts here, 2 a quarter: 1 is taken (4 nodes: the broadcasts
  // are a good part of the run, and half of them more than the model's margin).
  const Profile helps = with_lookahead(0.5, 0.25);
  const GemmChoice one = choose_gemm(c, facts(4, 1), &helps);
  ASSERT_EQ(one.alternatives.size(), 3u);
  const double blocking = *one.alternatives[0].seconds, with_one = *one.alternatives[1].seconds;
  EXPECT_EQ(one.chosen().lookahead, 1);
  const Prediction bare = predict_gemm(helps, one.alternatives[0].cfg, facts(4, 1).layout);
  EXPECT_NEAR(blocking - with_one, 0.5 * bare.phase(phase::broadcast), 1e-12);
  // On one node the broadcasts are a small part: half of them hidden is under the model's margin,
  // a tie, and the rules' lookahead on the host (0) is taken, saying so.
  const GemmChoice tie = choose_gemm(c, facts(1, 4), &helps);
  EXPECT_LT(*tie.alternatives[0].seconds / *tie.alternatives[1].seconds - 1, kChoiceTieMargin);
  EXPECT_EQ(tie.chosen().lookahead, 0);
  EXPECT_NE(tie.alternatives[static_cast<std::size_t>(tie.taken)].why.find("ties for the model"), std::string::npos)
      << tie.alternatives[static_cast<std::size_t>(tie.taken)].why;
  // Both cost time (the host ring waits for the ranks' own MPI calls): the blocking broadcasts.
  const Profile costs = with_lookahead(-0.3, -0.1);
  EXPECT_EQ(choose_gemm(c, facts(4, 1), &costs).chosen().lookahead, 0);
  // Hid nothing measurable: the same prediction, and of equals the blocking one is taken.
  const Profile nothing = with_lookahead(0, 0);
  EXPECT_EQ(choose_gemm(c, facts(4, 1), &nothing).chosen().lookahead, 0);
  // A profile without the figures predicts only the blocking broadcasts.
  Profile old = synthetic();
  old.lookahead.clear();
  const GemmChoice unmeasured = choose_gemm(c, facts(4, 1), &old);
  EXPECT_EQ(unmeasured.chosen().lookahead, 0);
  for (const auto& a : unmeasured.alternatives) {
    if (a.cfg.lookahead > 0) {
      EXPECT_NE(a.why.find("not predicted"), std::string::npos) << a.why;
    }
  }
}

TEST(GemmChoice, APinnedOptionIsKept) {
  const Profile p = with_lookahead(0.5, 0.25);
  GemmConfig row = defaulted(square(2048));
  row.autos.algorithm = false;  // --algorithm row1d
  row.algorithm = GemmAlgorithm::row1d;
  const GemmChoice rows = choose_gemm(row, facts(1, 4), &p);
  for (const auto& a : rows.alternatives) EXPECT_EQ(a.cfg.algorithm, GemmAlgorithm::row1d);
  GemmConfig deep = defaulted(square(2048));
  deep.autos.algorithm = deep.autos.lookahead = false;  // --algorithm summa2d --lookahead 2
  deep.algorithm = GemmAlgorithm::summa2d;
  deep.lookahead = 2;
  deep.lookahead_given = true;
  const GemmChoice pinned = choose_gemm(deep, facts(1, 4), &p);
  for (const auto& a : pinned.alternatives) EXPECT_EQ(a.cfg.lookahead, 2);
  EXPECT_EQ(pinned.chosen().lookahead, 2);
  // A distribution pinned shared: summa2d has none, row1d shared runs.
  GemmConfig shared = defaulted(square(2048));
  shared.autos.distribution = false;
  shared.distribution = GemmDistribution::shared;
  EXPECT_EQ(choose_gemm(shared, facts(1, 4), &p).chosen().algorithm, GemmAlgorithm::row1d);
}

TEST(GemmChoice, WithoutAProfileTheRulesDecideTheDefaultedOptionsAndSaySo) {
  const GemmConfig c = defaulted(square(1024));
  const GemmChoice choice = choose_gemm(c, facts(1, 2), nullptr, "no profile at /nowhere");
  EXPECT_FALSE(choice.by_model);
  EXPECT_EQ(choice.chosen().algorithm, GemmAlgorithm::row1d);
  EXPECT_EQ(choice.chosen().distribution, GemmDistribution::shared);
  const nlohmann::json j = choice_json(choice, c.autos);
  EXPECT_EQ(j["by"], "rules");
  EXPECT_NE(j["basis"].get<std::string>().find("no profile at /nowhere"), std::string::npos);
  EXPECT_EQ(j["defaulted"], "algorithm,grid,distribution,lookahead");
  EXPECT_NE(choice_line(choice, c.autos).find("not given: auto by default"), std::string::npos);
  // Summa2D's lookahead by the rules: 0 on the host, 1 over NCCL.
  GemmConfig summa = c;
  summa.autos.algorithm = false;
  summa.algorithm = GemmAlgorithm::summa2d;
  EXPECT_EQ(choose_gemm(summa, facts(1, 4), nullptr).chosen().lookahead, 0);
  GemmConfig nccl = defaulted(square(1024, GemmBackendKind::cublas));
  nccl.autos.algorithm = nccl.autos.transport = false;
  nccl.algorithm = GemmAlgorithm::summa2d;
  nccl.transport = Transport::nccl;
  EXPECT_EQ(choose_gemm(nccl, facts(1, 4, 4), nullptr).chosen().lookahead, 1);
}

TEST(GemmChoice, DefaultedOptionsLeaveARunNothingFitsToItsOwnCheck) {
  // 8 ranks on a 2x2 C: nothing fits. Asked as auto, the choice refuses; only defaulted, the
  // rules' first alternative is taken and the run refuses it with its own message.
  GemmConfig tiny = defaulted(square(2));
  const GemmChoice left = choose_gemm(tiny, facts(1, 8), &synthetic());
  EXPECT_FALSE(left.by_model);
  EXPECT_EQ(left.chosen().algorithm, GemmAlgorithm::row1d);
  EXPECT_FALSE(left.alternatives[static_cast<std::size_t>(left.taken)].feasible);
  tiny.autos.asked.algorithm = true;
  EXPECT_THROW(choose_gemm(tiny, facts(1, 8), &synthetic()), UsageError);
  // --overlap given with the algorithm left open is row1d's pipeline (on a CPU backend: refused by
  // the run, never read as summa2d's lookahead).
  GemmConfig overlap = defaulted(square(256));
  overlap.overlap = true;
  for (const auto& a : gemm_alternatives(overlap, 4)) EXPECT_EQ(a.algorithm, GemmAlgorithm::row1d);
}

}  // namespace
}  // namespace scalebench
