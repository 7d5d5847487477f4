// The crossover of a study against its named baseline, on made-up ratios with known answers; the
// contrast's sizes scaled from a probe; the estimate of the time left.
#include <gtest/gtest.h>

#include <cmath>

#include "drivers/contrast/contrast_sizing.hpp"
#include "drivers/launch/time_left.hpp"
#include "drivers/study/baseline.hpp"
#include "scalebench/workloads/workload.hpp"

using scalebench::study::ComparedRun;
using scalebench::study::Crossover;
using scalebench::study::find_crossover;
using scalebench::study::RatioPoint;

TEST(StudyCrossover, InterpolatesInLogSpaceBetweenTheSizesAroundTheSignChange) {
  // ratio = n / 1448: a power law, which log-log interpolation reproduces exactly.
  std::vector<RatioPoint> pts;
  for (double n : {4096.0, 512.0, 2048.0, 1024.0}) pts.push_back({n, n / 1448.0});  // unsorted on purpose
  const Crossover c = find_crossover(pts);
  ASSERT_EQ(c.kind, Crossover::Kind::at);
  EXPECT_NEAR(c.size, 1448.0, 1e-6);
  EXPECT_EQ(c.below, 1024.0);
  EXPECT_EQ(c.above, 2048.0);
  EXPECT_EQ(c.text("n"), "n ≈ 1448 (between 1024 and 2048)");
  // Not a power law: still between the two sizes, where log(ratio) crosses 0 on the chord.
  const Crossover d = find_crossover({{1000, 0.5}, {4000, 2.0}});
  EXPECT_NEAR(d.size, 2000.0, 1e-9);
}

TEST(StudyCrossover, SaysWhenItIsBelowTheSmallestOrNotReached) {
  const Crossover below = find_crossover({{512, 1.3}, {1024, 2.0}});
  EXPECT_EQ(below.kind, Crossover::Kind::below_smallest);
  EXPECT_EQ(below.text("n"), "below the smallest n tried (512)");
  const Crossover never = find_crossover({{512, 0.1}, {1024, 0.2}, {2048, 0.9}});
  EXPECT_EQ(never.kind, Crossover::Kind::not_reached);
  EXPECT_EQ(never.text("samples"), "not reached up to the largest samples tried (2048)");
  EXPECT_EQ(find_crossover({}).kind, Crossover::Kind::none);
  // Exactly 1 at a size tried: that size.
  const Crossover at = find_crossover({{512, 0.5}, {1024, 1.0}});
  ASSERT_EQ(at.kind, Crossover::Kind::at);
  EXPECT_NEAR(at.size, 1024.0, 1e-9);
}

TEST(StudyCrossover, GroupsKeepTheirOrderAndEachGetsItsCrossover) {
  const std::vector<ComparedRun> runs = {{"backend=cublas precision=fp64", 1024, 0.5, 2},
                                         {"backend=cublas precision=fp32", 1024, 1.5, 4},
                                         {"backend=cublas precision=fp64", 2048, 2.0, 6}};
  const auto groups = scalebench::study::summarize_groups(runs, "n", true);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0]["group"], "backend=cublas precision=fp64");
  EXPECT_EQ(groups[0]["points"].size(), 2u);
  EXPECT_EQ(groups[0]["crossover"]["kind"], "at");
  EXPECT_NEAR(groups[0]["crossover"]["size"].get<double>(), std::sqrt(1024.0 * 2048.0), 1e-6);
  EXPECT_EQ(groups[1]["crossover"]["kind"], "below_smallest");
  EXPECT_FALSE(scalebench::study::summarize_groups(runs, "n", false)[0].contains("crossover"));
}

TEST(StudyCrossover, BaselineCoordinatesReplaceOnlyTheNamedKeys) {
  const auto c = scalebench::study::baseline_coordinates({{"backend", "cublas"}, {"n", "512"}, {"ranks", "1"}},
                                                         {{"backend", "openblas"}});
  EXPECT_EQ(c.at("backend"), "openblas");
  EXPECT_EQ(c.at("n"), "512");
  EXPECT_EQ(scalebench::study::size_value("1_000_000"), 1e6);
  EXPECT_EQ(scalebench::study::size_value("1e9"), 1e9);
  EXPECT_EQ(scalebench::study::size_value("x"), 0.0);
}

TEST(ContrastSizing, ScalesTheProbeToTheTargetTime) {
  // n=512 in 0.01 s: 6 s is 600 times the work, n grows by 600^(1/3) = 8.43 -> 4317 -> 4096.
  EXPECT_EQ(scalebench::workload("gemm").scaled_size(512, 0.01, 6.0), "4096");
  EXPECT_EQ(scalebench::workload("gemm").scaled_size(512, 100.0, 6.0), "512");      // never below the floor
  EXPECT_EQ(scalebench::workload("gemm").scaled_size(512, 1e-9, 6.0), "32768");     // nor above the ceiling
  EXPECT_EQ(scalebench::workload("montecarlo").scaled_size(1e7, 0.1, 6.0), "6e8");  // 60 times, two digits at most
  EXPECT_EQ(scalebench::workload("montecarlo").scaled_size(1e7, 0.07, 6.0), "85e7");
  EXPECT_EQ(scalebench::workload("montecarlo").scaled_size(1e7, 1e-9, 6.0), "1e12");
}

TEST(TimeLeft, ScalesTheFinishedRunsByTheirWork) {
  scalebench::study::TimeLeft left;
  EXPECT_EQ(left.text(10), "");
  const double w512 = scalebench::study::run_work("gemm", "512", 2, 1);
  EXPECT_DOUBLE_EQ(w512, 2.0 * 512 * 512 * 512);
  left.finished(w512, 4.0);
  // Twice n is 8 times the work; on 2 workers, 4 times: 16 s.
  EXPECT_EQ(left.text(scalebench::study::run_work("gemm", "1024", 2, 2)), "about 16 s left");
  EXPECT_EQ(left.text(w512 * 40), "about 2 min 40 s left");
}
