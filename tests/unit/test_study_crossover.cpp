// The crossover of a study against its named baseline, on made-up ratios with known answers (in
// time and in energy, joules of one interval against joules of the same); the optima of a series;
// the energy column's cell and the interval it covers; the contrast's sizes scaled from a probe;
// the estimate of the time left.
#include <gtest/gtest.h>

#include <cmath>

#include "drivers/contrast/contrast_sizing.hpp"
#include "drivers/launch/time_left.hpp"
#include "drivers/report/energy_columns.hpp"
#include "drivers/study/baseline.hpp"
#include "drivers/study/optima.hpp"
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

TEST(StudyCrossover, TheCrossoverInEnergyIsGivenAndComparedWithTheOneInTime) {
  // Time: the GPU overtakes at n = 1448; energy (joules per verified result): only at n = 2896.
  std::vector<ComparedRun> runs;
  for (double n : {512.0, 1024.0, 2048.0, 4096.0}) {
    runs.push_back({"backend=cublas", n, n / 1448, 0, n / 2896, "timed"});
  }
  auto g = scalebench::study::summarize_groups(runs, "n", true)[0];
  EXPECT_EQ(g["crossover"]["below"], 1024.0);
  ASSERT_TRUE(g.contains("energy_crossover")) << g.dump();
  EXPECT_NEAR(g["energy_crossover"]["size"].get<double>(), 2896.0, 1e-6);
  EXPECT_EQ(g["energy_crossover"]["text"], "n ≈ 2896 (between 2048 and 4096)");
  EXPECT_FALSE(g["energy_crossover"]["same_as_time"].get<bool>());
  EXPECT_NEAR(g["points"][3]["energy_ratio"].get<double>(), 4096 / 2896.0, 1e-12);
  EXPECT_EQ(g["energy_crossover"]["interval"], "timed") << "which joules the crossover compares";
  // Joules of different intervals (one point's the whole repeat's): no crossover in energy.
  runs[1].energy_interval = "repeat";
  g = scalebench::study::summarize_groups(runs, "n", true)[0];
  EXPECT_FALSE(g.contains("energy_crossover")) << g.dump();
  EXPECT_EQ(g["points"][1]["energy_interval"], "repeat");
  runs[1].energy_interval = "timed";
  // Between the same two sizes: the same crossover, whatever the interpolated size.
  for (auto& r : runs) r.energy_ratio = r.size / 1600;
  g = scalebench::study::summarize_groups(runs, "n", true)[0];
  EXPECT_TRUE(g["energy_crossover"]["same_as_time"].get<bool>()) << g.dump();
  // A point without its energy (a run or its baseline not counted): no crossover in energy, the
  // other points keep their ratios.
  runs[2].energy_ratio = 0;
  g = scalebench::study::summarize_groups(runs, "n", true)[0];
  EXPECT_FALSE(g.contains("energy_crossover")) << g.dump();
  EXPECT_FALSE(g["points"][2].contains("energy_ratio"));
  EXPECT_TRUE(g["points"][3].contains("energy_ratio"));
  // None counted: nothing about energy at all.
  for (auto& r : runs) r.energy_ratio = 0;
  g = scalebench::study::summarize_groups(runs, "n", true)[0];
  EXPECT_EQ(g.dump().find("energy"), std::string::npos) << g.dump();
}

TEST(StudyOptima, TheFastestRunAndTheOneWithTheLeastEnergyOfEachSeries) {
  using scalebench::study::SeriesRun;
  // Four GPUs finish first; one GPU spends the fewest joules on the same result.
  const std::vector<SeriesRun> runs = {{"n=32768", 1, "1 GPU", 4.0, 900.0, "gpu", "timed"},
                                       {"n=32768", 2, "2 GPUs", 2.1, 950.0, "gpu", "timed"},
                                       {"n=32768", 3, "4 GPUs", 1.2, 1100.0, "gpu", "timed"},
                                       {"n=4096", 4, "1 GPU", 0.01, 2.0, "gpu", "timed"},
                                       {"n=4096", 5, "2 GPUs", 0.008, 1.5, "gpu", "timed"},
                                       {"n=1024", 6, "1 GPU", 0.001, 0.1, "gpu", "timed"}};
  const auto optima = scalebench::study::series_optima(runs);
  ASSERT_EQ(optima.size(), 2u) << "a series of one run has no optimum: " << optima.dump();
  EXPECT_EQ(optima[0]["series"], "n=32768");
  EXPECT_EQ(optima[0]["time_optimal"]["index"], 3);
  EXPECT_EQ(optima[0]["energy_optimal"]["index"], 1);
  EXPECT_EQ(optima[0]["energy_optimal"]["per_result_j"], 900.0);
  EXPECT_EQ(optima[0]["energy_optimal"]["interval"], "timed");
  EXPECT_FALSE(optima[0]["same_run"].get<bool>());
  EXPECT_TRUE(optima[1]["same_run"].get<bool>());
  EXPECT_EQ(scalebench::study::optima_lines(optima),
            "  n=32768: fastest #3 (4 GPUs, 1.2000 s); least energy #1 (1 GPU, 900 J of the timed interval)\n"
            "  n=4096: fastest #5 (2 GPUs, 0.0080 s); also the least energy (J of the timed interval)\n");
  // Older records (their interval not stated): said so.
  const auto older = scalebench::study::series_optima(
      {{"s", 1, "1 core", 2.0, 10.0, "cpu"}, {"s", 2, "2 cores", 1.0, 12.0, "cpu"}});
  EXPECT_EQ(scalebench::study::optima_lines(older),
            "  s: fastest #2 (2 cores, 1.0000 s); least energy #1 (1 core, 10 J per verified result, interval not "
            "stated)\n");
}

TEST(StudyOptima, NoEnergyOptimumFromRunsNotCountedAlike) {
  using scalebench::study::SeriesRun;
  // One run not counted: no optimum in energy, and the reason.
  auto optima = scalebench::study::series_optima(
      {{"s", 1, "1 core", 2.0, 10.0, "cpu"}, {"s", 2, "2 cores", 1.0, std::nullopt, ""}});
  EXPECT_FALSE(optima[0].contains("energy_optimal"));
  EXPECT_EQ(optima[0]["energy_reason"], "energy counted for 1 of its 2 runs");
  EXPECT_NE(scalebench::study::optima_lines(optima).find("no energy optimum: energy counted for 1 of its 2"),
            std::string::npos);
  // Different counters (CPU alone against CPU and GPU) are not comparable.
  optima = scalebench::study::series_optima(
      {{"s", 1, "1 core", 2.0, 10.0, "cpu"}, {"s", 2, "1 GPU", 1.0, 20.0, "cpu+gpu"}});
  EXPECT_EQ(optima[0]["energy_reason"], "its runs were counted by different counters (cpu, cpu+gpu)");
  // Joules of different intervals (a timed interval against a whole repeat) are not comparable.
  optima = scalebench::study::series_optima(
      {{"s", 1, "1 core", 2.0, 10.0, "cpu", "timed"}, {"s", 2, "2 cores", 1.0, 20.0, "cpu", "repeat"}});
  EXPECT_EQ(optima[0]["energy_reason"], "its runs' joules cover different intervals (repeat, timed)");
  // None counted: the series says nothing about energy (the summary says "energy not counted" once).
  optima = scalebench::study::series_optima(
      {{"s", 1, "1 core", 2.0, std::nullopt, ""}, {"s", 2, "2 cores", 1.0, std::nullopt, ""}});
  EXPECT_EQ(optima[0].dump().find("energy"), std::string::npos) << optima[0].dump();
  EXPECT_EQ(scalebench::study::optima_lines(optima), "  s: fastest #2 (2 cores, 1.0000 s)\n");
}

TEST(EnergyColumn, TheTimedIntervalsJoulesEachOtherIntervalMarkedOrADash) {
  using scalebench::report::energy_cell;
  // A summary from a record that gives the timed interval's joules: bare; the whole repeat's
  // (the timed interval too short for the counters): "rep"; a summary or record from before the
  // interval was said: "?".
  EXPECT_EQ(energy_cell({{"j", 0.012345}, {"interval", "timed"}, {"counted", "cpu"}}), "0.0123");
  EXPECT_EQ(energy_cell({{"j", 41.72}, {"interval", "repeat"}}), "41.7 rep");
  EXPECT_EQ(energy_cell({{"per_result_j", 1234.4}}), "1234 ?");
  EXPECT_EQ(energy_cell({{"j", 7.0}, {"interval", "made-up"}}), "7 ?") << "an interval not known is not stated";
  EXPECT_EQ(scalebench::report::energy_field({{"per_result_j", 41.72}}), "41.72");
  EXPECT_EQ(scalebench::report::energy_timed_field({{"j", 3.5}, {"timed_j", 3.5}, {"per_result_j", 4.0}}), "3.5");
  EXPECT_EQ(scalebench::report::energy_interval_field({{"per_result_j", 41.72}}), "unstated");
  // Not counted, no energy section, or a value no counter gives: a dash, never a number.
  for (const nlohmann::json& e :
       {nlohmann::json{{"reason", "CPU: no powercap tree; GPU: no GPU used"}}, nlohmann::json(),
        nlohmann::json{{"per_result_j", "lots"}}, nlohmann::json{{"per_result_j", -3.0}},
        nlohmann::json{{"per_result_j", 0.0}}, nlohmann::json{{"j", nullptr}, {"per_result_j", 4.0}}}) {
    EXPECT_EQ(energy_cell(e), "-") << e.dump();
    EXPECT_EQ(scalebench::report::energy_timed_field(e), "") << e.dump();
  }
  EXPECT_EQ(scalebench::report::energy_reason({{"reason", "no counter"}}), "no counter");
  EXPECT_EQ(scalebench::report::energy_not_counted_line("no counter"), "energy not counted (no counter)\n");
  EXPECT_EQ(scalebench::report::energy_marks_line(false, false), "");
  EXPECT_NE(scalebench::report::energy_marks_line(true, true).find("?: an older record's"), std::string::npos);
}

TEST(EnergyColumn, ASummaryTakesTheTimedIntervalWhereTheRecordGivesIt) {
  using nlohmann::json;
  const json head = {{"cpu", {{"counted", true}}}, {"gpu", {{"counted", true}}}};
  // A record with the timed interval: its median is the figure shown; the efficiency is its.
  json e = head;
  e.update({{"per_result_j", 5.0},
            {"timed_j", {{"median", 3.0}, {"min", 2.5}, {"max", 3.5}}},
            {"timed_mean_w", 300.0},
            {"gflop_per_j", 2.0},
            {"covers", "CPU packages (RAPL) + GPU boards (NVML), not the node at the wall"}});
  json s = scalebench::report::energy_json({{"energy", e}});
  EXPECT_EQ(s["counted"], "cpu+gpu");
  EXPECT_EQ(s["j"], 3.0);
  EXPECT_EQ(s["interval"], "timed");
  EXPECT_EQ(s["per_result_j"], 5.0) << "the whole repeat's, kept apart";
  EXPECT_EQ(s["timed_mean_w"], 300.0);
  EXPECT_EQ(s["gflop_per_j"], 2.0);
  EXPECT_EQ(s["covers"], e["covers"]);
  // Its timed interval too short for the counters (null): the whole repeat's, said so.
  e["timed_j"] = nullptr;
  e.erase("gflop_per_j");
  s = scalebench::report::energy_json({{"energy", e}});
  EXPECT_EQ(s["j"], 5.0);
  EXPECT_EQ(s["interval"], "repeat");
  EXPECT_FALSE(s.contains("timed_j"));
  // An older record (no timed_j): its per_result_j, the interval not stated.
  json old = head;
  old.update({{"per_result_j", 5.0}, {"gflop_per_j", 2.0}});
  s = scalebench::report::energy_json({{"energy", old}});
  EXPECT_EQ(s["j"], 5.0);
  EXPECT_EQ(s["interval"], "unstated");
  EXPECT_EQ(scalebench::report::interval_words(s["interval"]), "J per verified result, interval not stated");
  const auto absent = scalebench::report::energy_json({{"energy",
                                                        {{"cpu", {{"counted", false}, {"reason", "no powercap tree"}}},
                                                         {"gpu", {{"counted", false}, {"reason", "no GPU used"}}}}}});
  EXPECT_EQ(absent["reason"], "CPU: no powercap tree; GPU: no GPU used");
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
  scalebench::launch::TimeLeft left;
  EXPECT_EQ(left.text(10), "");
  const double w512 = scalebench::launch::run_work("gemm", "512", 2, 1);
  EXPECT_DOUBLE_EQ(w512, 2.0 * 512 * 512 * 512);
  left.finished(w512, 4.0);
  // Twice n is 8 times the work; on 2 workers, 4 times: 16 s.
  EXPECT_EQ(left.text(scalebench::launch::run_work("gemm", "1024", 2, 2)), "about 16 s left");
  EXPECT_EQ(left.text(w512 * 40), "about 2 min 40 s left");
}
