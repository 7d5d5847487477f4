// `scalebench study` end to end under the real mpirun: a study runs, appends every run to
// runs.jsonl, summarises speed-up and efficiency; a second invocation skips what is done;
// --rerun appends beside the earlier runs, never replacing them; a failing run is marked and
// kept; bad study files and bad options fail before anything runs; a run the machine cannot hold
// is skipped with its reason (a named baseline too, with its reason under the table); report.html
// is written at the end. One driver a results folder (a lock, released when a killed driver's run
// is stopped); never a contrast's or a foreign folder; every path checked by kind before the first
// run; empty values and lists refused; unusable runs.jsonl lines left and not used.
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
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

// The line under the table that names the series' fastest run.
std::string fmt_fastest(int index) { return "  runs: fastest #" + std::to_string(index) + " ("; }

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
  // The series' fastest run is marked; its least-energy run where the counters counted (RAPL), else
  // "energy not counted" once and nothing more of energy.
  const int fastest = t1 <= t2 ? 1 : 2;
  ASSERT_EQ(summary["optima"].size(), 1u) << summary.dump();
  EXPECT_EQ(summary["optima"][0]["time_optimal"]["index"], fastest);
  EXPECT_TRUE(summary["runs"][fastest - 1].value("time_optimal", false));
  EXPECT_NE(r.output.find(fmt_fastest(fastest)), std::string::npos) << r.output;
  const json& e1 = summary["runs"][0]["energy"];
  if (e1.contains("j")) {
    // Joules against joules of the same interval only (the timed interval, or the whole repeat
    // where a run's is too short for the counters).
    const json& e2 = summary["runs"][1]["energy"];
    const double j1 = e1["j"], j2 = e2["j"];
    if (e1["interval"] == e2["interval"]) {
      EXPECT_EQ(summary["optima"][0]["energy_optimal"]["index"], j1 <= j2 ? 1 : 2);
    } else {
      EXPECT_NE(summary["optima"][0].value("energy_reason", std::string()).find("cover different intervals"),
                std::string::npos)
          << summary["optima"].dump();
    }
    EXPECT_EQ(r.output.find("energy not counted"), std::string::npos) << r.output;
  } else {
    EXPECT_EQ(count_of(r.output, "energy not counted ("), 1) << r.output;
    EXPECT_EQ(r.output.find("least energy"), std::string::npos) << r.output;
    EXPECT_FALSE(summary["optima"][0].contains("energy_optimal"));
  }

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
  // No report.html (--no-report): these studies are about runs.jsonl; ReportWritesThePage draws one.
  const CliRun mc = run_scalebench("study " + file + " --out-dir " + dir + "/mc --no-report");
  ASSERT_EQ(mc.exit_code, 0) << mc.output;
  // The estimate is the same to the bit on 1 and 2 ranks, as the records say.
  auto mc_lines = jsonl(dir + "/mc/runs.jsonl");
  ASSERT_EQ(mc_lines.size(), 2u);
  EXPECT_EQ(mc_lines[0]["record"]["result"]["estimate"].dump(), mc_lines[1]["record"]["result"]["estimate"].dump());

  const CliRun r = run_scalebench("study " + gemm_file + " --out-dir " + dir + "/g --no-report");
  EXPECT_EQ(r.exit_code, 8) << r.output;
  EXPECT_NE(r.output.find("1 of 2 study runs failed"), std::string::npos) << r.output;
  auto lines = jsonl(dir + "/g/runs.jsonl");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["status"], "ok");
  EXPECT_EQ(lines[1]["status"], "failed");
  EXPECT_EQ(lines[1]["exit_code"].get<int>(), 4);
  EXPECT_FALSE(lines[1]["record"]["ok"].get<bool>());
  // Next time only the failed run is tried again; the earlier lines stay.
  const CliRun again = run_scalebench("study " + gemm_file + " --out-dir " + dir + "/g --quiet --no-report");
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
      {"study: a\nstudy: b\nworkload: gemm\n", ".yaml:2: key 'study' is given twice"},
      {"study: a\nworkload: gemm\nargs:\n  n: 64\n  n: 96\n", ".yaml:5: key 'n' is given twice"},
      {"study: a\nworkload: gemm\nargs: {json=/x: true}\n", "args key 'json=/x' is not an option name"},
      {"study: a\nworkload: gemm\nargs:\n  --json: /x\n", "args key '--json' is not an option name"},
      {"study: a\nworkload: gemm\nsweep:\n  --json=/x: [a]\n", "sweep key '--json=/x' is not an option name"},
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
  // Nothing is left of it: not the folder the study made, its lock, runs/ or the check's log.
  EXPECT_FALSE(std::filesystem::exists(dir + "/badopt")) << r.output;
  // A folder that was there stays, as it was: empty.
  std::filesystem::create_directory(dir + "/there");
  const CliRun there = run_scalebench("study " + file + " --out-dir " + dir + "/there");
  EXPECT_EQ(there.exit_code, 2) << there.output;
  EXPECT_TRUE(std::filesystem::is_directory(dir + "/there"));
  EXPECT_TRUE(std::filesystem::is_empty(dir + "/there")) << there.output;
  // A value is a value, whatever it starts with: never read as an option of its own.
  const std::string dashes = write_study(dir, "dashes",
                                         "study: dashes\nworkload: gemm\n"
                                         "args: {n: 64, precision: --json=/x, reps: 1}\n");
  const CliRun d = run_scalebench("study " + dashes + " --out-dir " + dir + "/dashes");
  EXPECT_EQ(d.exit_code, 2) << d.output;
  EXPECT_NE(d.output.find("--json=/x"), std::string::npos) << d.output;
  EXPECT_FALSE(file_exists("/x"));
}

TEST(StudyCli, ReportWritesThePage) {
  const char* src = std::getenv("SCALEBENCH_SOURCE_DIR");
  ASSERT_NE(src, nullptr);
  const std::string report = std::string(src) + "/tools/report";
  if (run_command(report + " --check").exit_code != 0) {
    GTEST_SKIP() << "no python3 with matplotlib here (tools/setup installs python3-matplotlib)";
  }
  const std::string dir = make_temp_dir();
  const std::string file = write_study(dir, "tiny", kGemmStudy);
  // The study writes report.html at its end; tools/report writes it again from the same files.
  ASSERT_EQ(run_scalebench("study " + file + " --out-dir " + dir + "/s --quiet").exit_code, 0);
  ASSERT_TRUE(file_exists(dir + "/s/report.html"));
  const CliRun r = run_command(report + " " + dir + "/s --out " + dir + "/again.html");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string page = read_file(dir + "/again.html");
  for (const char* id :
       {"<table id=\"results\">", "id=\"fig-speedup\"", "id=\"fig-efficiency\"", "id=\"fig-phases\""}) {
    EXPECT_NE(page.find(id), std::string::npos) << id;
  }
  const CliRun none = run_command(report + " " + dir);
  EXPECT_EQ(none.exit_code, 2) << none.output;
  EXPECT_NE(none.output.find("neither contrast.json nor summary.json"), std::string::npos) << none.output;
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
  const CliRun r = run_scalebench("study " + file + " --out-dir " + dir + "/h --no-report");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("1 cannot run here"), std::string::npos) << r.output;
  EXPECT_EQ(jsonl(dir + "/h/runs.jsonl").size(), 1u);
  const json summary = json::parse(read_file(dir + "/h/summary.json"));
  EXPECT_EQ(summary["runs"][0]["status"], "ok");
  EXPECT_EQ(summary["runs"][1]["status"], "skipped");
  EXPECT_NE(summary["runs"][1]["reason"].get<std::string>().find("of host memory"), std::string::npos)
      << summary.dump(2);
}

namespace {

// A run that takes tens of seconds, marked by its seed so that pgrep finds its processes.
const char* kSlowStudy = R"(study: slow
workload: gemm
args: {n: 1200, backend: openblas, threads: 1, reps: 200, warmup: 0, seed: 918273}
sweep:
  ranks: [2]
mpirun_args: [--oversubscribe, --bind-to, none]
)";
const char* kSlowRun = "seed=91827[3].* --json";  // the run (with --json), not its --dry-run check

// "1, 2, …, n"
std::string number_list(int n) {
  std::ostringstream out;
  for (int i = 1; i <= n; ++i) out << (i > 1 ? ", " : "") << i;
  return out.str();
}

bool only_complete_lines(const std::string& path) {
  const std::string text = read_file(path);
  if (!text.empty() && text.back() != '\n') return false;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!json::accept(line)) return false;
  }
  return true;
}

}  // namespace

TEST(StudyCli, StoppingTheStudyStopsItsRunAndRecordsNothingHalfDone) {
  const std::string dir = make_temp_dir();
  const std::string file = write_study(dir, "slow", kSlowStudy);
  for (const auto& [sig, code] : {std::pair{SIGTERM, 143}, std::pair{SIGINT, 130}}) {
    const std::string out = dir + "/out" + std::to_string(sig);
    const int pid = start_scalebench("study " + file + " --out-dir " + out, dir + "/log");
    ASSERT_TRUE(wait_for_process(kSlowRun, true, 60)) << read_file(dir + "/log");
    kill(pid, sig);
    const int rc = wait_exit(pid, 20);
    if (rc < 0) kill(pid, SIGKILL);
    ASSERT_EQ(rc, code) << read_file(dir + "/log");
    EXPECT_TRUE(wait_for_process(kSlowRun, false, 1)) << "the run outlived the study";
    const std::string said = read_file(dir + "/log");
    EXPECT_EQ(count_of(said, "scalebench: error: stopped by"), 1) << said;
    EXPECT_FALSE(file_exists(out + "/runs.jsonl"));
    EXPECT_FALSE(file_exists(out + "/summary.json"));
    EXPECT_EQ(run_command("ls " + out + "/runs/*.json").exit_code, 2) << "a record was left of the stopped run";
  }
}

TEST(StudyCli, KillingTheStudyKillsItsRunToo) {
  const std::string dir = make_temp_dir();
  const std::string file = write_study(dir, "slow", kSlowStudy);
  const int pid = start_scalebench("study " + file + " --out-dir " + dir + "/out", dir + "/log");
  ASSERT_TRUE(wait_for_process(kSlowRun, true, 60)) << read_file(dir + "/log");
  kill(pid, SIGKILL);
  EXPECT_EQ(wait_exit(pid, 10), 128 + SIGKILL);
  // mpirun puts each rank in a process group of its own: the watchdog ends the whole session.
  EXPECT_TRUE(wait_for_process(kSlowRun, false, 8)) << "the run outlived the killed study";
  EXPECT_TRUE(wait_for_process("slow[.]yaml --out-dir", false, 2)) << "the watchdog is still there";
}

TEST(StudyCli, AFullDiskNeverGluesOrLosesARun) {
  if (run_command("unshare -m sh -c 'mount -t tmpfs -o size=64k tmpfs /mnt'").exit_code != 0) {
    GTEST_SKIP() << "cannot mount a tmpfs in a private mount namespace here (needs root and unshare -m)";
  }
  const std::string dir = make_temp_dir();
  const std::string file = write_study(dir, "tiny", kGemmStudy);
  // The space each file of a 2-run study takes, in 4 KiB pages, measured on a normal disk.
  ASSERT_EQ(run_scalebench("study " + file + " --out-dir " + dir + "/ref --quiet --no-report").exit_code, 0);
  const auto ref = jsonl(dir + "/ref/runs.jsonl");
  ASSERT_EQ(ref.size(), 2u);
  auto pages = [](std::size_t bytes) { return static_cast<long>((bytes + 4095) / 4096); };
  long used = 0;
  for (const auto& l : ref) {
    used += pages(read_file(l["log_path"]).size()) + pages(read_file(l["record_path"]).size());
  }
  const std::size_t l1 = ref[0].dump().size() + 1, l2 = ref[1].dump().size() + 1;
  const long first_line = pages(l1);
  const long tight = used + first_line + (pages(l1 + l2) - first_line) - 1;  // run 2's line does not fit
  bool append_failed = false;
  for (long free_pages = tight - 1; free_pages <= tight + 1; ++free_pages) {
    const std::string t = dir + "/t" + std::to_string(free_pages), mnt = t + "/mnt";
    ASSERT_EQ(run_command("mkdir -p " + mnt).exit_code, 0);
    const std::string bin = std::getenv("SCALEBENCH_BINARY") ? std::getenv("SCALEBENCH_BINARY") : "scalebench";
    // No report.html: what the full disk may cut is runs.jsonl, the records and the logs.
    const std::string study = "timeout 120 " + bin + " study " + file + " --out-dir " + mnt + "/s --quiet --no-report";
    const std::string script = "mount -t tmpfs -o size=4m tmpfs " + mnt + " && (dd if=/dev/zero of=" + mnt +
                               "/fill bs=4096 2>/dev/null; " + "truncate -s -" + std::to_string(free_pages * 4096) +
                               " " + mnt + "/fill) && { " + study + " > " + t + "/out1 2>&1; echo $? > " + t +
                               "/rc1; cp " + mnt + "/s/runs.jsonl " + t + "/after1; rm " + mnt + "/fill; " + study +
                               " > " + t + "/out2 2>&1; echo $? > " + t + "/rc2; cp " + mnt + "/s/runs.jsonl " + mnt +
                               "/s/summary.json " + t + "/; }";
    const CliRun r = run_command("unshare -m --propagation private sh -c '" + script + "'");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const std::string out1 = read_file(t + "/out1");
    EXPECT_NE(read_file(t + "/rc1"), "0\n") << out1;
    append_failed = append_failed || out1.find("cannot append to") != std::string::npos;
    // Whatever the full disk cut, runs.jsonl holds whole lines only, and the resumed study counts
    // every run once.
    EXPECT_TRUE(only_complete_lines(t + "/after1")) << read_file(t + "/after1");
    EXPECT_EQ(read_file(t + "/rc2"), "0\n") << read_file(t + "/out2");
    EXPECT_TRUE(only_complete_lines(t + "/runs.jsonl"));
    std::map<std::string, int> ok_runs;
    for (const auto& l : jsonl(t + "/runs.jsonl")) ok_runs[l["key"]] += l["status"] == "ok" ? 1 : 0;
    EXPECT_EQ(ok_runs.size(), 2u);
    for (const auto& [key, n] : ok_runs) EXPECT_EQ(n, 1) << key;
    const json summary = json::parse(read_file(t + "/summary.json"));
    for (const auto& run : summary["runs"]) EXPECT_EQ(run["status"], "ok") << run.dump();
  }
  EXPECT_TRUE(append_failed) << "no trial filled the disk during an append; the page estimate is off";
}

TEST(StudyCli, ATornLastLineIsKeptApartAndReported) {
  const std::string dir = make_temp_dir();
  const std::string file = write_study(dir, "tiny", kGemmStudy);
  const std::string out = dir + "/s";
  ASSERT_EQ(run_scalebench("study " + file + " --out-dir " + out + " --quiet --no-report").exit_code, 0);
  // Cut the last line in half, as a crash mid-write would.
  std::string text = read_file(out + "/runs.jsonl");
  const std::size_t second = text.find('\n') + 1;
  text.resize(second + (text.size() - second) / 2);
  std::ofstream(out + "/runs.jsonl", std::ios::trunc) << text;
  const CliRun r = run_scalebench("study " + file + " --out-dir " + out + " --no-report");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("runs.jsonl line 2 is cut or garbled"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("1 run now, 1 from earlier"), std::string::npos) << r.output;
  // The fragment stays a line of its own; the new run's line is whole.
  const std::string after = read_file(out + "/runs.jsonl");
  EXPECT_EQ(after.substr(0, text.size()), text);
  EXPECT_EQ(after[text.size()], '\n');
  EXPECT_TRUE(json::accept(after.substr(text.size() + 1, after.size() - text.size() - 2)));
}

TEST(StudyCli, OddStudyFilesAndOutputsGetOneLine) {
  const std::string dir = make_temp_dir();
  struct Case {
    std::string args;
    int code;
    const char* says;
  };
  const std::string file = write_study(dir, "tiny", kGemmStudy);
  std::ofstream(dir + "/plain") << "x";
  const std::vector<Case> cases = {
      {"study /tmp", 2, "cannot read study file /tmp: it is a folder"},
      {"study /dev/null", 2, "cannot read study file /dev/null: it is a character device, not a regular file"},
      {"study " + dir + "/nosuch.yaml", 2, "/nosuch.yaml: no such file"},
      {"study " + file + " --out-dir " + dir + "/plain/s", 3, "is a file, not a folder"},
      {"study " + file + " --out-dir " + dir + "/" + std::string(300, 'x'), 3, "more than the 255"},
  };
  for (const auto& c : cases) {
    const CliRun r = run_scalebench(c.args);
    EXPECT_EQ(r.exit_code, c.code) << c.args << "\n" << r.output;
    EXPECT_EQ(count_of(r.output, "\n"), 1) << r.output;
    EXPECT_NE(r.output.find(c.says), std::string::npos) << r.output;
  }
}

TEST(StudyCli, LargeStudyFilesAreRejectedEarlyAndCheaply) {
  const std::string dir = make_temp_dir();
  // 8 MiB of unknown keys, a 1 MiB one, a sweep of a million runs: each refused at once, within
  // One OpenBLAS thread: its pool reserves a stack per core at start, which alone would pass the
  // bound on a many-core machine.
  const std::string bounded_memory = "ulimit -v 1500000; export OPENBLAS_NUM_THREADS=1; ";
  // 1.5 GB of address space (the binary maps about half of that at start: MPI, OpenBLAS).
  std::ostringstream key_lines;
  for (int i = 0; key_lines.tellp() < (1 << 20) - 64; ++i) key_lines << 'k' << i << ": v\n";
  const std::string keys = key_lines.str();
  std::ofstream(dir + "/big.yaml") << "study: a\n" << keys << keys << keys << keys << keys << keys << keys << keys;
  std::ofstream(dir + "/unknown.yaml") << "study: a\nworkload: gemm\n" << keys.substr(0, (1 << 20) - 200);
  const std::string values = number_list(1000);
  std::ofstream(dir + "/million.yaml") << "study: a\nworkload: gemm\nsweep:\n  seed: [" << values << "]\n  reps: ["
                                       << values << "]\n";
  const std::string bin = std::getenv("SCALEBENCH_BINARY") ? std::getenv("SCALEBENCH_BINARY") : "scalebench";
  const struct {
    const char* file;
    const char* says;
  } cases[] = {{"big", "bytes, more than the 1048576 bytes such a file may hold"},
               {"unknown", "unknown key 'k0'"},
               {"million", "the sweep expands to 1000000 runs; a study may have at most 10000"}};
  for (const auto& c : cases) {
    const CliRun r = run_command(bounded_memory + "timeout 10 " + bin + " study " + dir + "/" + c.file +
                                 ".yaml --dry-run");
    EXPECT_EQ(r.exit_code, 2) << c.file << ": " << r.output;
    EXPECT_NE(r.output.find(c.says), std::string::npos) << r.output;
  }
  // 9,600 runs (the cap is 10,000): planned and listed by --dry-run in seconds and bounded memory.
  const std::string v80 = number_list(80), v120 = number_list(120);
  std::ofstream(dir + "/many.yaml") << "study: many\nworkload: gemm\nargs: {n: 64}\nsweep:\n  seed: [" << v80
                                    << "]\n  reps: [" << v120 << "]\n";
  const CliRun many = run_command(bounded_memory + "timeout 20 " + bin + " study " + dir +
                                  "/many.yaml --dry-run --out-dir " + dir + "/m | tail -1");
  EXPECT_EQ(many.exit_code, 0) << many.output;
  EXPECT_NE(many.output.find("[9600] to run"), std::string::npos) << many.output;
}

TEST(StudyCli, ALargeStudyShowsProgressAndChecksACoveringSet) {
  const std::string dir = make_temp_dir();
  // 9 seeds on 1 and 2 ranks: 18 runs, just over the 16 a study checks all of.
  const std::string seeds = number_list(9);
  const std::string file = write_study(dir, "many",
                                       "study: many\nworkload: montecarlo\n"
                                       "args: {problem: pi, samples: 1e4, backend: cpu, threads: 1, "
                                       "reps: 1, warmup: 0}\nsweep:\n  seed: [" +
                                           seeds + "]\n  ranks: [1, 2]\nmpirun_args: [--oversubscribe]\n");
  const CliRun r = run_scalebench("study " + file + " --out-dir " + dir + "/s --no-report");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // Every seed and both rank counts checked at least once, and the last run: 11 runs, not all 18.
  EXPECT_NE(r.output.find("checking 11 of 18 runs first"), std::string::npos) << r.output;
  EXPECT_EQ(count_of(r.output, "] checking run "), 11) << r.output;
  // From the second run on, each progress line says about how long is left.
  EXPECT_NE(r.output.find("[1/18] run 1 "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("[18/18] (about "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(" left) run 18 "), std::string::npos) << r.output;
  EXPECT_EQ(jsonl(dir + "/s/runs.jsonl").size(), 18u);
  // --quiet prints nothing, progress included (a study of two runs: the lines are the same kind).
  const std::string two = write_study(dir, "two",
                                      "study: two\nworkload: montecarlo\n"
                                      "args: {problem: pi, samples: 1e4, backend: cpu, threads: 1, "
                                      "reps: 1, warmup: 0}\nsweep:\n  seed: [1, 2]\n");
  const CliRun quiet = run_scalebench("study " + two + " --out-dir " + dir + "/q --quiet");
  EXPECT_EQ(quiet.exit_code, 0) << quiet.output;
  EXPECT_EQ(quiet.output, "");
  EXPECT_EQ(jsonl(dir + "/q/runs.jsonl").size(), 2u);
}

namespace {

// How many files a folder holds (recursively), to show that a refused driver wrote nothing.
int files_in(const std::string& dir) {
  const CliRun r = run_command("find " + dir + " -mindepth 1 | wc -l");
  return std::atoi(r.output.c_str());
}

// The study's runs.jsonl, empty when there is none.
std::size_t jsonl_lines(const std::string& path) { return file_exists(path) ? jsonl(path).size() : 0; }

}  // namespace

TEST(StudyCli, OneDriverAFolderAndAKilledDriverReleasesIt) {
  const std::string dir = make_temp_dir();
  // One slow run (a few seconds of the naive kernel), so that a second driver comes while it runs.
  const std::string slow = write_study(dir, "slow", R"(study: slow
workload: gemm
args: {n: 700, backend: naive, threads: 1, reps: 4, warmup: 0, seed: 4242}
mpirun_args: [--oversubscribe, --bind-to, none]
timeout_s: 120
)");
  const std::string out = dir + "/res";
  const int pid = start_scalebench("study " + slow + " --out-dir " + out + " --quiet --no-report", dir + "/first.log");
  ASSERT_TRUE(wait_for_process("seed=424[2]", true, 60)) << read_file(dir + "/first.log");
  const std::string lock = read_file(out + "/.scalebench.lock");
  EXPECT_NE(lock.find("\"pid\":" + std::to_string(pid)), std::string::npos) << lock;

  // A second study on the folder: refused at once, naming the holder; nothing of it runs.
  const std::string tiny = write_study(dir, "tiny", kGemmStudy);
  const CliRun second = run_scalebench("study " + tiny + " --out-dir " + out);
  EXPECT_EQ(second.exit_code, 3) << second.output;
  EXPECT_EQ(count_of(second.output, "\n"), 1) << second.output;
  EXPECT_NE(second.output.find("--out-dir " + out + " is in use by another scalebench study (pid " +
                               std::to_string(pid) + " on host "),
            std::string::npos)
      << second.output;
  // A contrast is refused too (the folder is a study's).
  const CliRun contrast = run_scalebench("contrast --workload gemm --modes single-core --n 64 --out-dir " + out);
  EXPECT_EQ(contrast.exit_code, 3) << contrast.output;
  EXPECT_EQ(count_of(contrast.output, "\n"), 1) << contrast.output;

  // SIGKILL: no handler runs, yet the lock goes when the killed driver's run is stopped (its
  // watchdog holds it till then, so no second driver times on cores the run still uses); the next
  // driver takes the folder.
  kill(pid, SIGKILL);
  EXPECT_EQ(wait_exit(pid, 30), 128 + SIGKILL);
  bool free = false;
  for (int i = 0; i < 300 && !free; ++i) {
    free = run_command("flock -n " + out + "/.scalebench.lock true").exit_code == 0;
    if (!free) usleep(100'000);
  }
  ASSERT_TRUE(free) << "the lock outlived the killed study by 30 s";
  EXPECT_FALSE(wait_for_process("seed=424[2]", true, 0.5)) << "the lock went before the killed study's run";
  const CliRun after = run_scalebench("study " + tiny + " --out-dir " + out + " --no-report");
  EXPECT_EQ(after.exit_code, 0) << after.output;
  EXPECT_EQ(jsonl_lines(out + "/runs.jsonl"), 2u);  // the killed run was never recorded
}

TEST(StudyCli, NeverWritesIntoAContrastsOrAForeignFolder) {
  const std::string dir = make_temp_dir();
  const std::string file = write_study(dir, "tiny", kGemmStudy);
  const struct {
    std::string name, says;
    std::function<void(const std::string&)> fill;
  } cases[] = {
      {"contrast", "holds a contrast's results (contrast.json); a study never writes into another driver's folder",
       [](const std::string& d) { std::ofstream(d + "/contrast.json") << "{}\n"; }},
      {"stopped-contrast", "holds a contrast's results (.scalebench.lock)",
       [](const std::string& d) {
         std::ofstream(d + "/.scalebench.lock") << R"({"driver":"contrast","pid":1,"host":"h"})"
                                                << "\n";
         std::ofstream(d + "/gemm-single-core.log") << "x\n";
       }},
      {"other-study", "holds the runs of study 'other' (runs.jsonl), not of 'tiny'",
       [](const std::string& d) {
         std::ofstream(d + "/runs.jsonl") << R"({"study":"other","key":"k","status":"failed"})"
                                          << "\n";
       }},
      {"foreign", "is not empty and holds no study results (it holds notes.txt, photos)",
       [](const std::string& d) {
         std::ofstream(d + "/notes.txt") << "mine\n";
         run_command("mkdir " + d + "/photos");
       }},
  };
  for (const auto& c : cases) {
    const std::string out = dir + "/" + c.name;
    run_command("mkdir -p " + out);
    c.fill(out);
    const int before = files_in(out);
    for (const std::string extra : {"", " --dry-run"}) {
      const CliRun r = run_scalebench("study " + file + " --out-dir " + out + extra);
      EXPECT_EQ(r.exit_code, 3) << c.name << extra << "\n" << r.output;
      EXPECT_EQ(count_of(r.output, "\n"), 1) << r.output;
      EXPECT_NE(r.output.find("--out-dir " + out + " " + c.says), std::string::npos) << r.output;
      EXPECT_EQ(files_in(out), before) << c.name << ": the refused study wrote into the folder";
    }
  }
}

TEST(StudyCli, EveryPathIsCheckedByKindBeforeTheFirstRun) {
  const std::string dir = make_temp_dir();
  const std::string file = write_study(dir, "tiny", kGemmStudy);
  // A study's folder with one path of the wrong kind: refused before any run, in a second at most
  // (a FIFO is never opened for reading or writing), the folder left as it was.
  const struct {
    std::string make, says;
  } cases[] = {
      {"mkdir -p D/runs.jsonl", "the study's runs.jsonl D/runs.jsonl: it is a folder"},
      {"mkfifo D/runs.jsonl", "the study's runs.jsonl D/runs.jsonl: it is a FIFO"},
      {"mkdir -p D/summary.json", "summary.json D/summary.json: it is a folder"},
      {"touch D/runs.jsonl && mkfifo D/summary.csv", "summary.csv D/summary.csv: it is a FIFO"},
      {"touch D/runs.jsonl && mkdir D/summary.md", "summary.md D/summary.md: it is a folder"},
      {"mkdir D/report.html", "report.html D/report.html: it is a folder"},
      {"touch D/runs.jsonl D/runs", "runs folder D/runs: it is a regular file, not a folder"},
      {"touch D/runs.jsonl && mkdir D/runs && mkfifo D/runs/check-2.log", "check log D/runs/check-2.log: it is a FIFO"},
      {"touch D/runs.jsonl && mkfifo D/.scalebench.lock", "lock file D/.scalebench.lock: it is a FIFO"},
  };
  int i = 0;
  for (const auto& c : cases) {
    const std::string out = dir + "/o" + std::to_string(i++);
    const std::string make = with_folder(c.make, out), says = with_folder(c.says, out);
    ASSERT_EQ(run_command("mkdir -p " + out + " && " + make).exit_code, 0) << make;
    const int before = files_in(out);
    const CliRun r = run_scalebench("study " + file + " --out-dir " + out);
    EXPECT_EQ(r.exit_code, 3) << make << "\n" << r.output;
    EXPECT_EQ(count_of(r.output, "\n"), 1) << r.output;
    EXPECT_NE(r.output.find(says), std::string::npos) << make << "\n" << r.output;
    EXPECT_EQ(files_in(out), before) << make << ": something was run or written";
  }
}

TEST(StudyCli, EmptyValuesAndListsAreRefused) {
  const std::string dir = make_temp_dir();
  const std::string file = write_study(dir, "tiny", kGemmStudy);
  const std::string out = " --out-dir " + dir + "/out";
  const struct {
    std::string args, says;
  } options[] = {
      {"--out-dir ''", "--out-dir is empty"},
      {"--hosts ''" + out, "--hosts is empty"},
      {"--hosts ," + out, "--hosts ',' has an empty item"},
      {"--hosts a,,b" + out, "--hosts 'a,,b' has an empty item"},
      {"--hosts a," + out, "--hosts 'a,' has an empty item"},
      {"--hostfile ''" + out, "--hostfile is empty"},
  };
  for (const auto& c : options) {
    const CliRun r = run_scalebench("study " + file + " " + c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.output;
    EXPECT_EQ(count_of(r.output, "\n"), 1) << r.output;
    EXPECT_NE(r.output.find(c.says), std::string::npos) << c.args << "\n" << r.output;
  }
  const std::string head = "study: e\nworkload: gemm\n";
  const struct {
    std::string body, says;
  } files[] = {
      {head + "sweep: {backend: ['', openblas]}\n", "a value of sweep.backend is empty"},
      {head + "args: {backend: ''}\n", "args.backend is empty"},
      {head + "sweep: {ranks: [1]}\nhosts: []\n", "hosts is empty"},
      {head + "hosts: 'a,'\n", "'a,' has an empty item"},
      {head + "hosts: ''\n", "hosts is empty"},
      {head + "hostfile: ''\n", "hostfile is empty"},
      {head + "mpirun_args: [--oversubscribe, '']\n", "a value of mpirun_args is empty"},
      {head + "sweep: {n: []}\n", "sweep.n is empty"},
      {head + "sweep: {ranks: [1, 2, 1]}\n", "sweep.ranks lists 1 twice"},
      // The same run spelled twice: the run reads 01 and 1_0 as 1 and 10.
      {head + "sweep: {ranks: [1, 01]}\n", "sweep.ranks lists 1 and 01, the same value"},
      {head + "sweep: {n: [10, 1_0]}\n", "sweep.n lists 10 and 1_0, the same value"},
      // YAML is UTF-8 text: a stray byte is refused where it stands, before anything runs.
      {head + "sweep: {ranks: [1]}\ndescription: a\xff"
              "b\n",
       ":4: byte 58 is not UTF-8 text"},
      {head + "sweep: {backend: [openblas]}\nbaseline: {backend: ''}\n", "baseline.backend is empty"},
  };
  int i = 0;
  for (const auto& c : files) {
    const std::string path = write_study(dir, std::to_string(100 + i++), c.body);
    const CliRun r = run_scalebench("study " + path + out);
    EXPECT_EQ(r.exit_code, 2) << c.body << "\n" << r.output;
    EXPECT_EQ(count_of(r.output, "\n"), 1) << r.output;
    EXPECT_NE(r.output.find(c.says), std::string::npos) << c.body << "\n" << r.output;
  }
  EXPECT_FALSE(file_exists(dir + "/out"));
}

TEST(StudyCli, UnusableLinesOfRunsJsonlAreLeftAndNotUsed) {
  const std::string dir = make_temp_dir();
  const std::string file = write_study(dir, "tiny", kGemmStudy);
  const std::string out = dir + "/res";
  run_command("mkdir -p " + out);
  // JSON, but not a study's line: an array, a number, a string, an object whose key is a number, an
  // ok line whose record is a string.
  const std::string key = "gemm ranks=1 backend=openblas n=96 reps=1 threads=1 warmup=0";
  std::ofstream(out + "/runs.jsonl") << "[1,2]\n42\n\"ok\"\n{\"key\":1,\"status\":\"ok\"}\n"
                                     << R"({"key":")" << key << R"(","status":"ok","record":"x"})"
                                     << "\n";
  const CliRun r = run_scalebench("study " + file + " --out-dir " + out + " --no-report");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(count_of(r.output, "is cut or garbled, or not a study's line"), 5) << r.output;
  EXPECT_NE(r.output.find("2 run now, 0 from earlier"), std::string::npos) << r.output;
  // The unusable lines stay where they were; the two runs are appended after them.
  EXPECT_EQ(count_of(read_file(out + "/runs.jsonl"), "\n"), 7) << read_file(out + "/runs.jsonl");
}

// A line that says "ok" but holds no record with its phases is no finished run: the study runs it
// again (a run that exits 0 without a record it can read back is written as failed).
TEST(StudyCli, AnOkLineWithoutItsRecordIsRunAgain) {
  const std::string dir = make_temp_dir();
  const std::string file = write_study(dir, "tiny", kGemmStudy);
  const std::string out = dir + "/res";
  run_command("mkdir -p " + out);
  const std::string key = "gemm ranks=1 backend=openblas n=96 reps=1 threads=1 warmup=0";
  std::ofstream(out + "/runs.jsonl") << R"({"key":")" << key << R"(","status":"ok"})"
                                     << "\n"
                                     << R"({"key":")" << key << R"(","status":"ok","record":{"ranks":1}})"
                                     << "\n";
  const CliRun r = run_scalebench("study " + file + " --out-dir " + out + " --no-report");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(count_of(r.output, "record must be the run's record with its phases"), 2) << r.output;
  EXPECT_NE(r.output.find("2 run now, 0 from earlier"), std::string::npos) << r.output;
  const auto lines = jsonl(out + "/runs.jsonl");
  ASSERT_EQ(lines.size(), 4U);
  for (std::size_t i = 2; i < 4; ++i) EXPECT_TRUE(lines[i]["record"].contains("phases")) << lines[i].dump();
}

TEST(StudyCli, ABaselineThatCannotRunHereIsSkippedWithItsReason) {
  if (run_scalebench("--version").output.find("CUDA on") != std::string::npos) {
    GTEST_SKIP() << "needs a build without CUDA: its cublas runs are the runs this machine cannot do";
  }
  const std::string dir = make_temp_dir();
  // 18 runs: more than are checked before the first starts, so that most cublas runs (the
  // baseline) find out only when they run that this build cannot do them.
  const std::string file = write_study(dir, "base", R"(study: base
workload: gemm
args: {threads: 1, reps: 1, warmup: 0}
sweep:
  n: [16, 24, 32, 40, 48, 56, 64, 72, 80]
  backend: [openblas, cublas]
baseline: {backend: cublas}
mpirun_args: [--oversubscribe, --bind-to, none]
timeout_s: 60
)");
  const std::string out = dir + "/res";
  const CliRun r = run_scalebench("study " + file + " --out-dir " + out + " --no-report");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("0 failed, 9 cannot run here"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("baseline run 2 (gemm ranks=1 backend=cublas n=16"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("is skipped: cannot run here: scalebench: error: --backend cublas needs CUDA"),
            std::string::npos)
      << r.output;
  const json summary = json::parse(read_file(out + "/summary.json"));
  for (const auto& run : summary["runs"]) {
    const bool cublas = run["options"]["backend"] == "cublas";
    EXPECT_EQ(run["status"], cublas ? "skipped" : "ok") << run.dump();
    if (cublas) {
      EXPECT_NE(run["reason"].get<std::string>().find("needs CUDA"), std::string::npos) << run.dump();
    }
  }
  ASSERT_EQ(summary["baseline"]["baseline_runs_missing"].size(), 9u);
  for (const auto& m : summary["baseline"]["baseline_runs_missing"]) {
    EXPECT_EQ(m["reason"].get<std::string>().rfind("skipped: cannot run here: ", 0), 0u) << m.dump();
  }
}

// What a study file does not pin is left to the model: its gemm runs are given no schedule option
// (each is `auto` by default), and their records say what was chosen among what, as not given;
// an option the file sets stays as set.
TEST(StudyCli, UnpinnedOptionsAreLeftToTheModelAndPinnedOnesKept) {
  const std::string dir = make_temp_dir();
  const std::string body = R"(description: test study
workload: gemm
args: {n: 96, backend: openblas, threads: 1, reps: 1, warmup: 0}
sweep:
  ranks: [2]
mpirun_args: [--oversubscribe, --bind-to, none]
timeout_s: 120
)";
  // The study `name` of `text` run to its end; its one runs.jsonl line.
  auto only_line = [&](const std::string& name, const std::string& text) {
    const std::string file = write_study(dir, name, "study: " + name + "\n" + text);
    const CliRun run = run_scalebench("study " + file + " --out-dir " + dir + "/" + name + " --no-report");
    EXPECT_EQ(run.exit_code, 0) << run.output;
    const auto lines = jsonl(dir + "/" + name + "/runs.jsonl");
    EXPECT_EQ(lines.size(), 1u);
    return lines.empty() ? json::object() : lines[0];
  };
  const json free_line = only_line("free", body);
  const json& free_rec = free_line["record"];
  ASSERT_TRUE(free_rec.contains("choice") && free_rec["choice"].is_object()) << free_rec.dump();
  EXPECT_EQ(free_rec["choice"]["options"], "algorithm,grid,distribution,lookahead") << free_rec["choice"];
  EXPECT_EQ(free_rec["choice"]["defaulted"], "algorithm,grid,distribution,lookahead") << free_rec["choice"];
  EXPECT_EQ(free_rec["choice"]["asked"], "") << free_rec["choice"];
  EXPECT_EQ(free_rec["command_line"].dump().find("=auto"), std::string::npos) << free_rec["command_line"];
  EXPECT_FALSE(free_rec["choice"]["alternatives"].empty());
  // The key names what the file asked for: the defaults are not in it.
  EXPECT_EQ(free_line["key"].get<std::string>().find("auto"), std::string::npos) << free_line.dump();

  std::string pinned_body = body;
  pinned_body.replace(pinned_body.find("warmup: 0}"), 10, "warmup: 0, algorithm: summa2d}");
  const json pinned_line = only_line("pinned", pinned_body);
  const json& rec = pinned_line["record"];
  EXPECT_EQ(rec["config"]["algorithm"], "summa2d") << rec["config"];
  ASSERT_TRUE(rec.contains("choice") && rec["choice"].is_object()) << rec.dump();
  EXPECT_EQ(rec["choice"]["options"].get<std::string>().find("algorithm"), std::string::npos) << rec["choice"];
  for (const auto& a : rec["choice"]["alternatives"]) EXPECT_EQ(a["algorithm"], "summa2d") << a;
}
