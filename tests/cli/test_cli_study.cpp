// `scalebench study` end to end under the real mpirun: a study runs, appends every run to
// runs.jsonl, summarises speed-up and efficiency; a second invocation skips what is done;
// --rerun appends beside the earlier runs, never replacing them; a failing run is marked and
// kept; bad study files and bad options fail before anything runs; a run the machine cannot hold
// is skipped with its reason; tools/report draws the plots.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"

using nlohmann::json;

namespace {

std::string write_study(const std::string& dir, const std::string& name, const std::string& body) {
  const std::string path = dir + "/" + name + ".yaml";
  std::ofstream(path) << body;
  return path;
}

std::vector<json> jsonl(const std::string& path) {
  std::vector<json> out;
  std::istringstream in(read_file(path));
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.push_back(json::parse(line));
  }
  return out;
}

// Two CPU ranks at most: the machines this runs on may have two cores.
const char* kGemmStudy = R"(study: tiny
description: test study
workload: gemm
args: {n: 96, backend: openblas, threads: 1, reps: 1, warmup: 0}
sweep:
  ranks: [1, 2]
mpirun_args: [--oversubscribe, --bind-to, none]
timeout_s: 120
)";

}  // namespace

TEST(StudyCli, RunsResumesAndNeverLosesARun) {
  const std::string dir = make_temp_dir();
  const std::string file = write_study(dir, "tiny", kGemmStudy);
  const std::string out = dir + "/results";
  const CliRun r = run_scalebench("study " + file + " --out-dir " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto lines = jsonl(out + "/runs.jsonl");
  ASSERT_EQ(lines.size(), 2u);
  for (const auto& l : lines) {
    EXPECT_EQ(l["status"], "ok") << l.dump();
    EXPECT_TRUE(l["record"]["ok"].get<bool>());
    EXPECT_EQ(l["record"]["ranks"].get<int>(), l["ranks"].get<int>());
    EXPECT_TRUE(file_exists(l["record_path"].get<std::string>()));
  }
  const json summary = json::parse(read_file(out + "/summary.json"));
  ASSERT_EQ(summary["runs"].size(), 2u);
  EXPECT_NEAR(summary["runs"][0]["speedup"].get<double>(), 1.0, 1e-12);
  EXPECT_EQ(summary["runs"][1]["baseline_index"].get<int>(), 1);
  const double t1 = summary["runs"][0]["time_s"], t2 = summary["runs"][1]["time_s"];
  EXPECT_NEAR(summary["runs"][1]["speedup"].get<double>(), t1 / t2, 1e-9);
  EXPECT_NEAR(summary["runs"][1]["efficiency"].get<double>(), t1 / t2 / 2, 1e-9);
  EXPECT_TRUE(file_exists(out + "/summary.csv"));
  EXPECT_TRUE(file_exists(out + "/summary.md"));
  EXPECT_NE(r.output.find("2 run now, 0 from earlier"), std::string::npos) << r.output;

  // Again: nothing to do, nothing lost.
  const CliRun again = run_scalebench("study " + file + " --out-dir " + out);
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("0 run now, 2 from earlier"), std::string::npos) << again.output;
  EXPECT_EQ(jsonl(out + "/runs.jsonl").size(), 2u);
  const CliRun dry = run_scalebench("study " + file + " --out-dir " + out + " --dry-run");
  EXPECT_EQ(dry.exit_code, 0) << dry.output;
  EXPECT_EQ(count_of(dry.output, " done "), 2) << dry.output;

  // --rerun: new lines beside the old ones.
  const CliRun rerun = run_scalebench("study " + file + " --out-dir " + out + " --rerun --quiet");
  ASSERT_EQ(rerun.exit_code, 0) << rerun.output;
  lines = jsonl(out + "/runs.jsonl");
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_NE(lines[0]["record_path"], lines[2]["record_path"]);
  EXPECT_TRUE(file_exists(lines[0]["record_path"].get<std::string>()));
}

TEST(StudyCli, AFailingRunIsMarkedKeptAndRetried) {
  const std::string dir = make_temp_dir();
  const std::string file = write_study(dir, "fails", R"(study: fails
workload: montecarlo
args: {problem: pi, samples: 1e6, backend: cpu, threads: 1, reps: 1, warmup: 0}
sweep:
  ranks: [1, 2]
  seed: [7]
mpirun_args: [--oversubscribe, --bind-to, none]
)");
  // Rank 1's C corrupted on purpose in the 2-rank run: verification fails there (exit 4).
  const std::string gemm_file = write_study(dir, "gemmfails", R"(study: gemmfails
workload: gemm
args: {n: 64, backend: openblas, threads: 1, reps: 1, warmup: 0, inject-error-rank: 1}
sweep:
  ranks: [1, 2]
mpirun_args: [--oversubscribe, --bind-to, none]
)");
  const CliRun mc = run_scalebench("study " + file + " --out-dir " + dir + "/mc");
  ASSERT_EQ(mc.exit_code, 0) << mc.output;
  // The estimate is the same to the bit on 1 and 2 ranks, as the records say.
  auto mc_lines = jsonl(dir + "/mc/runs.jsonl");
  ASSERT_EQ(mc_lines.size(), 2u);
  EXPECT_EQ(mc_lines[0]["record"]["result"]["estimate"].dump(), mc_lines[1]["record"]["result"]["estimate"].dump());

  const CliRun r = run_scalebench("study " + gemm_file + " --out-dir " + dir + "/g");
  EXPECT_EQ(r.exit_code, 8) << r.output;
  EXPECT_NE(r.output.find("1 of 2 study runs failed"), std::string::npos) << r.output;
  auto lines = jsonl(dir + "/g/runs.jsonl");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["status"], "ok");
  EXPECT_EQ(lines[1]["status"], "failed");
  EXPECT_EQ(lines[1]["exit_code"].get<int>(), 4);
  EXPECT_FALSE(lines[1]["record"]["ok"].get<bool>());
  // Next time only the failed run is tried again; the earlier lines stay.
  const CliRun again = run_scalebench("study " + gemm_file + " --out-dir " + dir + "/g --quiet");
  EXPECT_EQ(again.exit_code, 8) << again.output;
  lines = jsonl(dir + "/g/runs.jsonl");
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[2]["index"].get<int>(), 2);
}

TEST(StudyCli, BadStudiesFailBeforeAnythingRuns) {
  const std::string dir = make_temp_dir();
  struct Case {
    std::string body;
    const char* says;
  };
  const std::vector<Case> cases = {
      {"study: a\nworkload: gemm\nsweeps: {ranks: [1]}\n", "unknown key 'sweeps'"},
      {"study: a\nworkload: fft\n", "unknown workload 'fft'"},
      {"workload: gemm\n", "'study: <name>' is missing"},
      {"study: a/b\nworkload: gemm\n", "must be letters, digits"},
      {"study: a\nworkload: gemm\nsweep: {ranks: [0, 1]}\n", "ranks must be whole numbers >= 1"},
      {"study: a\nworkload: gemm\nsweep: {n: 64}\n", "sweep.n must be a list"},
      {"study: a\nworkload: gemm\nargs: {n: 64, json: x.json}\n", "'json' is set by the study itself"},
      {"study: a\nworkload: gemm\nargs: {n: [1, 2]}\n", "args.n must be a single value"},
      {"study: a\nworkload: gemm\nargs: {n: 64\n", "not valid YAML"},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const std::string file = write_study(dir, "bad" + std::to_string(i), cases[i].body);
    const CliRun r = run_scalebench("study " + file + " --out-dir " + dir + "/out" + std::to_string(i));
    EXPECT_EQ(r.exit_code, 2) << cases[i].body << r.output;
    EXPECT_EQ(count_of(r.output, "scalebench: error"), 1) << r.output;
    EXPECT_NE(r.output.find(cases[i].says), std::string::npos) << r.output;
    EXPECT_FALSE(file_exists(dir + "/out" + std::to_string(i) + "/runs.jsonl"));
  }
  const CliRun missing = run_scalebench("study " + dir + "/nosuch.yaml");
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_NE(missing.output.find("cannot read study file"), std::string::npos) << missing.output;

  // A bad option of the workload: caught by the runs' --dry-run, before any run.
  const std::string file = write_study(dir, "badopt", R"(study: badopt
workload: gemm
args: {n: 64, backend: nosuch, reps: 1}
sweep:
  ranks: [1]
mpirun_args: [--oversubscribe]
)");
  const CliRun r = run_scalebench("study " + file + " --out-dir " + dir + "/badopt");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("cannot start"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("nosuch"), std::string::npos) << r.output;
  EXPECT_FALSE(file_exists(dir + "/badopt/runs.jsonl"));
}

TEST(StudyCli, ReportDrawsThePlots) {
  const char* src = std::getenv("SCALEBENCH_SOURCE_DIR");
  ASSERT_NE(src, nullptr);
  const std::string report = std::string(src) + "/tools/report";
  if (run_command(report + " --check").exit_code != 0) {
    GTEST_SKIP() << "no python3 with matplotlib here (tools/setup installs python3-matplotlib)";
  }
  const std::string dir = make_temp_dir();
  const std::string file = write_study(dir, "tiny", kGemmStudy);
  ASSERT_EQ(run_scalebench("study " + file + " --out-dir " + dir + "/s --quiet").exit_code, 0);
  const CliRun r = run_command(report + " " + dir + "/s");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* png : {"speedup.png", "phases.png"}) {
    const std::string p = dir + "/s/" + png;
    ASSERT_TRUE(file_exists(p)) << r.output;
    EXPECT_EQ(read_file(p).substr(1, 3), "PNG");
  }
  const CliRun none = run_command(report + " " + dir);
  EXPECT_EQ(none.exit_code, 2) << none.output;
  EXPECT_NE(none.output.find("runs.jsonl not found"), std::string::npos) << none.output;
}

TEST(StudyCli, RunsThisMachineCannotHoldAreSkippedWithTheReason) {
  const std::string dir = make_temp_dir();
  const std::string file = write_study(dir, "holds", R"(study: holds
workload: gemm
args: {backend: openblas, threads: 1, reps: 1, warmup: 0}
sweep:
  n: [64, 3000000]
mpirun_args: [--oversubscribe, --bind-to, none]
)");
  const CliRun r = run_scalebench("study " + file + " --out-dir " + dir + "/h");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("1 cannot run here"), std::string::npos) << r.output;
  EXPECT_EQ(jsonl(dir + "/h/runs.jsonl").size(), 1u);
  const json summary = json::parse(read_file(dir + "/h/summary.json"));
  EXPECT_EQ(summary["runs"][0]["status"], "ok");
  EXPECT_EQ(summary["runs"][1]["status"], "skipped");
  EXPECT_NE(summary["runs"][1]["reason"].get<std::string>().find("of host memory"), std::string::npos)
      << summary.dump(2);
}
