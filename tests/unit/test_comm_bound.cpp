// The communication lower bounds against hand-worked cases (docs/model.md, "How far from the least
// traffic"), and the gemm record's section for a GPU run whose ranks copy their own rows.
#include <gtest/gtest.h>

#include <cmath>

#include "scalebench/problem/comm_bound.hpp"
#include "scalebench/workloads/gemm/gemm_config.hpp"
#include "workloads/gemm/gemm_bound.hpp"

using namespace scalebench;

namespace {

const GemmShape kSquare{1000, 1000, 1000};
constexpr double kN2 = 1e6;  // n² of kSquare

}  // namespace

TEST(CommBound, Row1dOnFourRanksMovesThreeQuartersOfN2AgainstTheBoundOf0441) {
  // Each rank touches n²/4 of A, all of B and n²/4 of C, 1.5 n², and owns 3 n²/4: it moves 0.75 n².
  EXPECT_NEAR(schedule_spread_words(kSquare, {250, 250, 250, 250}, {1000}), 0.75 * kN2, 1e-6);
  // p = 4 ≥ mn/k² = 1: D = 3 (n³/4)^⅔ = 1.1906 n²; less the share 0.75 n²: 0.4406 n².
  EXPECT_NEAR(accessed_words_bound(kSquare, 4), 3 * std::pow(0.25, 2.0 / 3) * kN2, 1e-3);
  EXPECT_NEAR(spread_bound_words(kSquare, 4) / kN2, 0.4406, 5e-5);
  EXPECT_NEAR(schedule_spread_words(kSquare, {250, 250, 250, 250}, {1000}) / spread_bound_words(kSquare, 4), 1.702,
              5e-4);
}

TEST(CommBound, Summa2dOnATwoByTwoGridMovesHalfOfN2) {
  // A 2×2 grid: n²/2 of A, n²/2 of B, n²/4 of C touched, 1.25 n², less 0.75 n²: 0.5 n², 1.135x.
  EXPECT_NEAR(schedule_spread_words(kSquare, {500, 500}, {500, 500}), 0.5 * kN2, 1e-6);
  EXPECT_NEAR(schedule_spread_words(kSquare, {500, 500}, {500, 500}) / spread_bound_words(kSquare, 4), 1.1349, 5e-4);
  // The grid's largest block decides: 3 rows of 1000 split 334, 333, 333.
  EXPECT_GT(schedule_spread_words(kSquare, {334, 333, 333}, {1000}),
            schedule_spread_words(kSquare, {333, 333, 334}, {1000}) - 1e-9);
}

TEST(CommBound, TheThreeCasesMeetAtTheirBorders) {
  // m = 8000, n = 1000, k = 250 (d1/d2 = 8, d1·d2/d3² = 128): one formula per range of p, and
  // the same value from both sides of each border.
  const GemmShape s{8000, 1000, 250};
  // p = 2 ≤ 8: d2·d3 + (d1·d2 + d1·d3)/p.
  EXPECT_NEAR(accessed_words_bound(s, 2), 1000.0 * 250 + (8000.0 * 1000 + 8000.0 * 250) / 2, 1e-6);
  // p = 8: both forms give 2·d2·d3 + d2² = 1.5e6.
  EXPECT_NEAR(accessed_words_bound(s, 8), 1.5e6, 1e-3);
  // p = 32: 2 (d1 d2 d3² / p)^½ + d1 d2 / p = 2·125000 + 250000.
  EXPECT_NEAR(accessed_words_bound(s, 32), 2 * std::sqrt(8000.0 * 1000 * 250 * 250 / 32) + 8000.0 * 1000 / 32, 1e-3);
  // p = 128: 3 d3² = 187500 from both sides.
  EXPECT_NEAR(accessed_words_bound(s, 128), 3 * 250.0 * 250, 1e-3);
  EXPECT_NEAR(accessed_words_bound(s, 512), 3 * std::cbrt(std::pow(8000.0 * 1000 * 250 / 512, 2)), 1e-3);
  // The order of m, n and k does not matter.
  EXPECT_DOUBLE_EQ(accessed_words_bound(GemmShape{250, 8000, 1000}, 32), accessed_words_bound(s, 32));
  // The bound never rises with p.
  for (int p = 1; p < 600; ++p) EXPECT_LE(accessed_words_bound(s, p + 1), accessed_words_bound(s, p) + 1e-6) << p;
}

TEST(CommBound, OneRankMovesNothingAndLittleMemoryRaisesTheBound) {
  EXPECT_DOUBLE_EQ(spread_bound_words(kSquare, 1), 0.0);
  EXPECT_DOUBLE_EQ(schedule_spread_words(kSquare, {1000}, {1000}), 0.0);
  // A rank with nothing to start with: D with memory to spare or unknown.
  EXPECT_DOUBLE_EQ(from_nothing_bound_words(kSquare, 4, 1e12), accessed_words_bound(kSquare, 4));
  EXPECT_DOUBLE_EQ(from_nothing_bound_words(kSquare, 4, 0), accessed_words_bound(kSquare, 4));
  // S = 10⁴ words, V = n³/4: 2V/√S + S = 5e6 + 1e4, above D.
  EXPECT_NEAR(from_nothing_bound_words(kSquare, 4, 1e4), 2 * 2.5e8 / 100 + 1e4, 1e-3);
}

// row1d --distribution shared on 2 GPUs over NCCL, n = 1024 fp64: no transport or layout count
// moves a block; the busiest GPU copied its 512 rows of A and half of B in, its 512 rows of C out,
// and got the other half of B from the other GPU: 4 x 512 x 1024 words.
TEST(CommBound, GpusCopyingTheirOwnRowsCountTheirCopies) {
  GemmConfig cfg;
  cfg.shape = {1024, 1024, 1024};
  cfg.transport = Transport::nccl;
  cfg.distribution = GemmDistribution::shared;
  const double rows = 512 * 1024, e = 8;
  nlohmann::json record = {{"distribution",
                            {{"scheme", "shared"},
                             {"bytes_per_rank", {{"scatter", {0, 0}}, {"broadcast", {0, 0}}, {"gather", {0, 0}}}}}},
                           {"partition", {{"rows_per_rank", {512, 512}}}},
                           {"gpu",
                            {{"transfers",
                              {{"h2d", {{"bytes", 2 * rows * e}}},
                               {"d2h", {{"bytes", rows * e}}},
                               {"allgather", {{"bytes", 2 * rows * e}}}}}}}};
  const nlohmann::json b = comm_bound_section(cfg, 2, record);
  EXPECT_EQ(b["moved_source"], "gpu copies") << b.dump();
  EXPECT_DOUBLE_EQ(b["moved_words"].get<double>(), 4 * rows) << b.dump();
  EXPECT_TRUE(b["moved_rank"].is_null());
  EXPECT_GE(b["moved_to_bound"].get<double>(), 1.0) << "copied less than the least any algorithm must move";
  EXPECT_NE(comm_bound_lines(b).find("the busiest GPU copied 2.097e+06 words per repeat (gpu copies)"),
            std::string::npos)
      << comm_bound_lines(b);
  // A host run of the same layout keeps the layout's count (0 words on one node).
  record.erase("gpu");
  const nlohmann::json host = comm_bound_section(cfg, 2, record);
  EXPECT_EQ(host["moved_source"], "layout");
  EXPECT_DOUBLE_EQ(host["moved_words"].get<double>(), 0.0);
  EXPECT_NE(comm_bound_lines(host).find("no rank moved a word to another (the node's shared windows"),
            std::string::npos)
      << comm_bound_lines(host);
  // A replicated GPU run's copies are not the count: its transport's or layout's is.
  record["gpu"] = {{"transfers", {{"h2d", {{"bytes", 2 * rows * e}}}, {"d2h", {{"bytes", rows * e}}}}}};
  record["distribution"]["scheme"] = "replicated";
  EXPECT_EQ(comm_bound_section(cfg, 2, record)["moved_source"], "layout");
}
