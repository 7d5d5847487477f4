// The record's energy section from real runs: without counters it says why (nothing estimated);
// with a powercap tree whose counter a writer advances during the run, the joules, watts and
// efficiency follow from that counter, the timed interval's apart from the whole repeat's with its
// check, and the record says what they cover; a counter that steps back, rises past what a package can
// draw, turns to garbage or into a FIFO during the run is not counted, with a warning, never a
// number (energy.hpp), and the run ends as it would without counters.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"

using nlohmann::json;

TEST(EnergyCli, WithoutCountersTheRecordSaysWhy) {
  const std::string dir = make_temp_dir();
  const CliRun r = run_command("SCALEBENCH_POWERCAP_ROOT=" + dir + "/none " +
                               std::string(std::getenv("SCALEBENCH_BINARY")) + " gemm --n 64 --reps 2 --json " + dir +
                               "/r.json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("energy: not counted (CPU: no powercap tree at " + dir + "/none"), std::string::npos)
      << r.output;
  const json e = json::parse(read_file(dir + "/r.json"))["energy"];
  EXPECT_FALSE(e["available"].get<bool>()) << e.dump();
  EXPECT_FALSE(e["cpu"]["counted"].get<bool>());
  EXPECT_EQ(e["gpu"]["reason"], "no GPU used by this run");
  EXPECT_FALSE(e.contains("run_j")) << "no joules without a counter";
}

TEST(EnergyCli, AnAdvancingCounterGivesJoulesPerResult) {
  const std::string dir = make_temp_dir();
  // The writer adds 1 J (1e6 µJ) every 10 ms: about 100 W while the run lasts.
  const CliRun r = run_with_fake_rapl(dir, 1000000,
                                      std::string(std::getenv("SCALEBENCH_BINARY")) +
                                          " montecarlo --samples 2000000000 --reps 3 --warmup 1 --json " + dir +
                                          "/r.json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json e = json::parse(read_file(dir + "/r.json"))["energy"];
  ASSERT_TRUE(e["available"].get<bool>()) << e.dump();
  EXPECT_TRUE(e["cpu"]["counted"].get<bool>());
  EXPECT_EQ(e["repeats"], 3);
  const double run_j = e["run_j"], per = e["per_result_j"], seconds = e["seconds"];
  EXPECT_GT(run_j, 0) << e.dump();
  EXPECT_NEAR(per, run_j / 3, 1e-9 * run_j);
  EXPECT_NEAR(e["mean_w"].get<double>(), run_j / seconds, 1e-9 * run_j / seconds);
  // The efficiency comes from the timed interval (the kernels' repeat, its check apart).
  ASSERT_TRUE(e["timed_j"].is_object()) << e.dump(1);
  const double timed = e["timed_j"]["median"];
  EXPECT_LE(timed, e["repeat_j"]["median"].get<double>()) << e.dump(1);
  EXPECT_NEAR(e["j_per_1e9_samples"].get<double>(), timed / 2.0, 1e-9 * timed);
  EXPECT_EQ(e["covers"], "CPU packages (RAPL), not the node at the wall");
  // The writer aims at 100 W; a busy box slows its loop, so only the order of magnitude is asked.
  EXPECT_GT(e["mean_w"].get<double>(), 5) << e.dump();
  EXPECT_LT(e["mean_w"].get<double>(), 300) << e.dump();
  EXPECT_FALSE(e.contains("warnings")) << e.dump();
  EXPECT_NE(r.output.find("energy: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("J per 1e9 samples"), std::string::npos) << r.output;
  // Per phase: the sampling kernels (2e9 samples: at least 0.1 s on a box of a few cores) last
  // long enough for their own joules (at the writer's power); the short reduce folds into its
  // repeat and says why. Phases in turn add to at most the repeat.
  ASSERT_GE(json::parse(read_file(dir + "/r.json"))["phases"]["compute"]["median_s"].get<double>(), 0.1)
      << "the kernels ran too fast for a phase of their own: raise --samples";
  ASSERT_TRUE(e["phases"].contains("compute")) << e.dump(1);
  const json& compute = e["phases"]["compute"];
  EXPECT_GT(compute["median_j"].get<double>(), 0) << e.dump(1);
  EXPECT_LE(compute["median_j"].get<double>(), e["repeat_j"]["max"].get<double>() * 1.001) << e.dump(1);
  EXPECT_GT(compute["mean_w"].get<double>(), 5) << e.dump(1);
  EXPECT_LT(compute["mean_w"].get<double>(), 300) << e.dump(1);
  ASSERT_TRUE(e["phases_folded"].contains("reduce")) << e.dump(1);
  EXPECT_NE(e["phases_folded"]["reduce"].get<std::string>().find("fold into its repeat"), std::string::npos);
  EXPECT_FALSE(e["phases"].contains("end_to_end")) << "the repeat is not a phase of itself";
  EXPECT_NE(r.output.find("per repeat: compute "), std::string::npos) << r.output;
}

// Each repeat's check made slow on purpose (0.6 s more): the joules of the timed interval (the
// time column's) leave the check out, the whole repeat's keep it, and GFLOP/J comes from the
// timed interval, so that GFLOP/J times its watts is the GFLOP/s of the time column.
TEST(EnergyCli, ASlowCheckStaysOutOfTheTimedIntervalsJoules) {
  const std::string dir = make_temp_dir();
  const CliRun r = run_with_fake_rapl(dir, 1000000,
                                      std::string(std::getenv("SCALEBENCH_BINARY")) +
                                          " gemm --n 2048 --threads 1 --reps 2 --warmup 1 --check-delay-seconds 0.6 "
                                          "--json " +
                                          dir + "/r.json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json record = json::parse(read_file(dir + "/r.json"));
  const json& e = record["energy"];
  ASSERT_TRUE(e["cpu"]["counted"].get<bool>()) << e.dump(1);
  const double time_s = record["phases"]["end_to_end"]["median_s"];
  ASSERT_GE(time_s, 0.1) << "the multiply ran too fast for joules of its own: raise --n";
  EXPECT_NEAR(e["timed_s"]["median"].get<double>(), time_s, 1e-12) << "the time column's interval";
  ASSERT_TRUE(e["timed_j"].is_object()) << e.dump(1);
  const double timed = e["timed_j"]["median"], whole = e["repeat_j"]["median"], watts = e["timed_mean_w"];
  EXPECT_LT(timed, whole) << e.dump(1);
  EXPECT_GT(whole - timed, 0.5 * 0.6 * e["mean_w"].get<double>()) << "the check's joules: " << e.dump(1);
  EXPECT_NEAR(e["per_result_j"].get<double>(), whole, 1e-9 * whole) << "two repeats: the median is the mean";
  // Two repeats: the mean power over the timed intervals is the median joules over the median time.
  EXPECT_NEAR(watts, timed / time_s, 1e-9 * watts);
  const double gflop = 2.0 * 2048 * 2048 * 2048 / 1e9;
  EXPECT_NEAR(e["gflop_per_j"].get<double>(), gflop / timed, 1e-9 * gflop / timed);
  EXPECT_NEAR(e["gflop_per_j"].get<double>() * watts, gflop / time_s, 1e-6 * gflop / time_s);
  // The whole repeat's joules over the timed seconds would claim more power than was drawn.
  EXPECT_GT(e["per_result_j"].get<double>() / time_s, 1.1 * watts) << e.dump(1);
  EXPECT_EQ(e["covers"], "CPU packages (RAPL), not the node at the wall");
  EXPECT_NE(r.output.find("energy: timed interval "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(" GFLOP/J; whole repeat with its check "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("energy covers: CPU packages (RAPL), not the node at the wall"), std::string::npos)
      << r.output;
}

namespace {

// `command` with SCALEBENCH_POWERCAP_ROOT at a fake tree under `dir` (one package domain, RAPL's
// 262 kJ range) whose energy_uj starts at `first` µJ; a background writer runs `step` (shell code
// that sets $next from $n, the step count, and may replace the file itself) every 10 ms and writes
// $next when it is set. The writer is stopped by its pid and waited for before the tree goes.
CliRun run_with_counter(const std::string& dir, const std::string& first, const std::string& step,
                        const std::string& command) {
  const std::string zone = dir + "/pc/intel-rapl:0";
  const std::string writer = "( n=0; while :; do n=$((n+1)); next=; " + step +
                             "; if [ -n \"$next\" ]; then echo $next > " + zone + "/e.new && mv " + zone + "/e.new " +
                             zone + "/energy_uj; fi; sleep 0.01; done ) & w=$!; ";
  return run_command("mkdir -p " + zone + " && echo package-0 > " + zone + "/name && echo " + first + " > " + zone +
                     "/energy_uj && echo 262143328850 > " + zone + "/max_energy_range_uj && " + writer +
                     "SCALEBENCH_POWERCAP_ROOT=" + dir + "/pc timeout 120 " + command +
                     "; rc=$?; kill $w; wait $w 2>/dev/null; rm -rf " + dir + "/pc; exit $rc");
}

std::string montecarlo_run(const std::string& dir) {
  return std::string(std::getenv("SCALEBENCH_BINARY")) + " montecarlo --samples 30000000 --reps 3 --json " + dir +
         "/r.json";
}

// The run ends as without counters (exit 0, its result verified) and its energy is not counted:
// no joules, no watts, the reason and a warning naming the counter.
void expect_not_counted(const CliRun& r, const std::string& dir, const std::string& why) {
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json e = json::parse(read_file(dir + "/r.json"))["energy"];
  EXPECT_FALSE(e["available"].get<bool>()) << e.dump(1);
  EXPECT_FALSE(e["cpu"]["counted"].get<bool>()) << e.dump(1);
  EXPECT_NE(e["cpu"]["reason"].get<std::string>().find(why), std::string::npos) << e.dump(1);
  for (const char* figure :
       {"run_j", "cpu_j", "per_result_j", "mean_w", "idle_w", "j_per_1e9_samples", "timed_j", "timed_mean_w"}) {
    EXPECT_FALSE(e.contains(figure)) << figure << " without a counted counter: " << e.dump(1);
  }
  EXPECT_NE(r.output.find("energy: not counted (CPU: "), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("J per verified result"), std::string::npos) << r.output;
}

}  // namespace

// Down 1 J every 10 ms from 100 kJ: each decrease would be a wrap of 262 kJ in milliseconds.
TEST(EnergyCli, ACounterSteppingBackIsNotCountedAndWarned) {
  const std::string dir = make_temp_dir();
  const CliRun r = run_with_counter(dir, "100000000000", "next=$((100000000000-n*1000000))", montecarlo_run(dir));
  expect_not_counted(r, dir, "went down by");
  const json e = json::parse(read_file(dir + "/r.json"))["energy"];
  ASSERT_TRUE(e.contains("warnings")) << e.dump(1);
  EXPECT_NE(e["warnings"][0].get<std::string>().find("a wrap through its range (262143 J)"), std::string::npos)
      << e.dump(1);
  EXPECT_NE(r.output.find("warning: energy: "), std::string::npos) << r.output;
}

// Up 100 kJ every 10 ms: 10 MW from one package.
TEST(EnergyCli, ACounterRisingPastWhatAPackageCanDrawIsNotCounted) {
  const std::string dir = make_temp_dir();
  const CliRun r = run_with_counter(dir, "0", "next=$((n*100000000000 % 262143328850))", montecarlo_run(dir));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json e = json::parse(read_file(dir + "/r.json"))["energy"];
  EXPECT_FALSE(e["cpu"]["counted"].get<bool>()) << e.dump(1);
  EXPECT_FALSE(e.contains("run_j")) << e.dump(1);
  EXPECT_NE(e["cpu"]["reason"].get<std::string>().find("can draw at most: not counted"), std::string::npos)
      << e.dump(1);
}

// A counter that turns to garbage, a negative number or an empty file after a few steps: however
// soon the run reads it (when opening the counters or between two readings), no joules. The empty
// file takes the counter's place at once (mv), so the run never sees the file missing.
TEST(EnergyCli, ACounterThatTurnsToGarbageIsNotCounted) {
  const std::string file = "/pc/intel-rapl:0/energy_uj";
  for (const std::string& bad :
       std::vector<std::string>{"next=12abc", "next=-5",
                                ": > D" + file + ".empty && mv D" + file + ".empty D" + file}) {
    const std::string dir = make_temp_dir();
    const CliRun r =
        run_with_counter(dir, "1000000",
                         with_folder("if [ $n -lt 30 ]; then next=$((1000000+n*100000)); else " + bad + "; fi", dir),
                         montecarlo_run(dir));
    expect_not_counted(r, dir, "does not hold a whole number of microjoules");
  }
}

// The counter file replaced by a FIFO (no writer) or removed during the run: read at once, not
// counted; the run does not hang. The FIFO takes the counter's place by rename, so a reading never
// falls between a removal and the FIFO's creation and sees the file missing instead.
TEST(EnergyCli, ACounterReplacedByAFifoOrRemovedIsNotCountedWithoutHanging) {
  for (const std::string how : {"mkfifo", "gone"}) {
    const std::string dir = make_temp_dir();
    const std::string file = dir + "/pc/intel-rapl:0/energy_uj";
    const std::string replace = how == "mkfifo" ? "mkfifo " + file + ".fifo && mv " + file + ".fifo " + file
                                                : "rm -f " + file;
    const CliRun r = run_with_counter(dir, "1000000",
                                      "if [ $n -lt 30 ]; then next=$((1000000+n*100000)); elif [ $n -eq 30 ]; then " +
                                          replace + "; fi",
                                      montecarlo_run(dir));
    expect_not_counted(r, dir, how == "mkfifo" ? "it is a FIFO, not a regular file" : "no such file");
  }
}
