// The record's energy section from real runs: without counters it says why (nothing estimated);
// with a powercap tree whose counter a writer advances during the run, the joules, watts and
// efficiency follow from that counter.
#include <string>

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
  // The writer adds 10 J (1e7 µJ) every 10 ms: about 1000 W while the run lasts.
  const CliRun r = run_with_fake_rapl(dir, 10000000,
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
  EXPECT_NEAR(e["j_per_1e9_samples"].get<double>(), per / 2.0, 1e-9 * per);
  // The writer aims at 1000 W; a busy box slows its loop, so only the order of magnitude is asked.
  EXPECT_GT(e["mean_w"].get<double>(), 50) << e.dump();
  EXPECT_LT(e["mean_w"].get<double>(), 3000) << e.dump();
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
  EXPECT_GT(compute["mean_w"].get<double>(), 50) << e.dump(1);
  EXPECT_LT(compute["mean_w"].get<double>(), 3000) << e.dump(1);
  ASSERT_TRUE(e["phases_folded"].contains("reduce")) << e.dump(1);
  EXPECT_NE(e["phases_folded"]["reduce"].get<std::string>().find("fold into its repeat"), std::string::npos);
  EXPECT_FALSE(e["phases"].contains("end_to_end")) << "the repeat is not a phase of itself";
  EXPECT_NE(r.output.find("per repeat: compute "), std::string::npos) << r.output;
}
