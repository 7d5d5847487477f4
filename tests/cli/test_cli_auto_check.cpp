// tools/auto-check as a user runs it: a small gemm study with its schedule left to auto, every
// alternative auto weighed run pinned beside it, and the table of auto's pick against the fastest
// measured; its refusals (not gemm, no such file, a folder it did not make) are one line, exit 2.
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"

namespace {

std::string tool() {
  return std::string(std::getenv("SCALEBENCH_SOURCE_DIR")) + "/tools/auto-check --binary " +
         std::getenv("SCALEBENCH_BINARY");
}

std::string write_study(const std::string& dir, const std::string& text) {
  const std::string path = dir + "/s.yaml";
  std::ofstream(path) << text;
  return path;
}

}  // namespace

TEST(AutoCheck, RunsEveryAlternativePinnedAndComparesAutosPick) {
  const std::string dir = make_temp_dir();
  // The schedule pinned in the file (algorithm swept, distribution in args) is what auto takes over.
  const std::string study = write_study(dir, R"(study: s
workload: gemm
args: {n: 192, backend: openblas, threads: 1, reps: 2, warmup: 0, distribution: replicated}
sweep:
  algorithm: [row1d, summa2d]
  ranks: [1, 2]
mpirun_args: [--oversubscribe, --bind-to, none]
)");
  const CliRun r = run_command("cd " + dir + " && timeout 300 " + tool() + " " + study + " 2>&1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("of 2 points"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("auto took"), std::string::npos) << r.output;
  const std::string auto_yaml = read_file(dir + "/auto-check-s/auto.yaml");
  EXPECT_EQ(auto_yaml.find("algorithm"), std::string::npos) << "the schedule is left to auto:\n" << auto_yaml;
  EXPECT_EQ(auto_yaml.find("distribution"), std::string::npos) << auto_yaml;
  // Two ranks weigh several alternatives (row1d replicated and shared, summa2d 1x2 and 2x1): the
  // ones not taken ran pinned, each with its record.
  const CliRun pinned = run_command("ls " + dir + "/auto-check-s/pinned/*.json | wc -l");
  EXPECT_GE(std::atoi(pinned.output.c_str()), 2) << r.output;
  const nlohmann::json rec = nlohmann::json::parse(
      read_file(run_command("ls " + dir + "/auto-check-s/pinned/*.json | head -1 | tr -d '\\n'").output));
  EXPECT_NE(rec["config"]["algorithm"], "auto") << rec["config"];
  EXPECT_TRUE(rec["ok"].get<bool>());
  // Run again into the folder it made: allowed (the study resumes, the pinned runs are redone).
  EXPECT_EQ(run_command("cd " + dir + " && timeout 300 " + tool() + " " + study + " > /dev/null 2>&1").exit_code, 0);
}

TEST(AutoCheck, RefusesWhatItCannotCheckWithOneLine) {
  const std::string dir = make_temp_dir();
  const std::string mc = write_study(dir, "study: m\nworkload: montecarlo\nargs: {samples: 1000}\n");
  CliRun r = run_command(tool() + " " + mc + " 2>&1");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("auto decides gemm's schedule"), std::string::npos) << r.output;
  r = run_command(tool() + " " + dir + "/none.yaml 2>&1");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("cannot read study file " + dir + "/none.yaml"), std::string::npos) << r.output;
  ASSERT_EQ(mkdir((dir + "/mine").c_str(), 0755), 0);
  const std::string gemm = write_study(dir, "study: g\nworkload: gemm\nargs: {n: 64}\n");
  r = run_command(tool() + " --out-dir " + dir + "/mine " + gemm + " 2>&1");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("was not made by tools/auto-check"), std::string::npos) << r.output;
  for (const CliRun& x : {r}) EXPECT_EQ(count_of(x.output, "\n"), 1) << x.output;
}
