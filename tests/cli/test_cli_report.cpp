// report.html, as a browser shows it: a real contrast and a study on made-up records with a known
// crossover, each page rendered by headless Chromium (it loads without console errors, the DOM
// holds the table and every figure, a screenshot is not blank); the study's summary against its
// baseline; a report that cannot be written loses no result.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"

using nlohmann::json;

namespace {

// A Python with matplotlib, as the report itself looks for one; empty when none.
std::string python_with_matplotlib() {
  for (const char* p : {"python3", "/usr/bin/python3"}) {
    if (run_command(std::string(p) + " -c 'import matplotlib' 2>/dev/null").exit_code == 0) return p;
  }
  return "";
}

bool have_chromium() { return run_command("command -v chromium >/dev/null 2>&1").exit_code == 0; }

constexpr const char* kChromium = "chromium --headless --disable-gpu --no-sandbox --hide-scrollbars "
                                  "--enable-logging=stderr --v=0 ";

// Renders `page` and checks what a reader would see: no console message, the table and each of
// `figures` in the DOM, a screenshot with more than a handful of colours.
void check_in_browser(const std::string& page, const std::vector<std::string>& figures, const std::string& dir) {
  const std::string log = dir + "/chromium.log";
  const CliRun dom = run_command(std::string(kChromium) + "--dump-dom 'file://" + page + "' 2>" + log);
  ASSERT_EQ(dom.exit_code, 0) << read_file(log);
  const std::string said = read_file(log);
  EXPECT_EQ(said.find("CONSOLE"), std::string::npos) << said;
  EXPECT_NE(dom.output.find("<table id=\"results\">"), std::string::npos);
  for (const auto& f : figures) {
    const auto at = dom.output.find("<figure id=\"" + f + "\">");
    ASSERT_NE(at, std::string::npos) << f << " missing";
    EXPECT_NE(dom.output.find("<svg", at), std::string::npos) << f;
  }
  // Nothing fetched from the network (namespaces like xmlns="http://www.w3.org/2000/svg" are names).
  for (const char* fetch : {"src=\"http", "href=\"http", "url(http", "@import", "<script"}) {
    EXPECT_EQ(dom.output.find(fetch), std::string::npos) << fetch;
  }
  const std::string png = dir + "/shot.png";
  const CliRun shot = run_command(std::string(kChromium) + "--window-size=390,2400 --screenshot='" + png +
                                  "' 'file://" + page + "' 2>>" + log);
  ASSERT_EQ(shot.exit_code, 0) << read_file(log);
  const CliRun colours = run_command(
      python_with_matplotlib() +
      " -c 'import sys, numpy as np, matplotlib.image as m; a = m.imread(sys.argv[1]); "
      "print(len(np.unique((a[..., :3] * 255).astype(int).reshape(-1, 3), axis=0)), a.shape[0], a.shape[1])' '" +
      png + "'");
  ASSERT_EQ(colours.exit_code, 0) << colours.output;
  std::istringstream in(colours.output);
  int distinct = 0, height = 0, width = 0;
  in >> distinct >> height >> width;
  EXPECT_GT(distinct, 50) << "a blank page? " << colours.output;
  EXPECT_EQ(width, 390) << colours.output;
}

// A made-up gemm record: `seconds` end to end (a repeat), `gflops`, the backend and optionally a prediction.
json record(const std::string& backend, double n, double seconds, double predicted) {
  const json phase = [](double s) { return json{{"median_s", s}, {"min_s", s}, {"max_s", s}}; }(seconds);
  json r = {
      {"subcommand", "gemm"},
      {"ranks", 1},
      {"ok", true},
      {"hosts", {"made-up-host"}},
      {"cpu_model", "Made-up CPU"},
      {"versions", {{"scalebench", "0.1.0"}, {"git", "0123456789ab"}, {"mpi_library", "Open MPI v4.1.4"}}},
      {"config", {{"backend", backend}, {"threads_per_rank", 1}, {"n", n}}},
      {"phases",
       {{"end_to_end", phase}, {"compute", {{"median_s", 0.8 * seconds}}}, {"scatter", {{"median_s", 0.1 * seconds}}}}},
      {"rates", {{"end_to_end_gflops", 2 * n * n * n / seconds / 1e9}}}};
  if (predicted > 0) {
    r["prediction"] = {{"available", true},
                       {"end_to_end",
                        {{"predicted_s", predicted}, {"measured_s", seconds}, {"ratio", seconds / predicted}}}};
  }
  return r;
}

// The key the study gives a run of kMadeUpStudy (workload, ranks, its options sorted).
std::string fmt_key(const std::string& backend, double n) {
  return "gemm ranks=1 backend=" + backend + " n=" + std::to_string(static_cast<int>(n)) + " reps=1 warmup=0";
}

const char* kMadeUpStudy = R"(study: madeup
description: made-up records, the GPU overtaking the CPU at n = 1448
workload: gemm
args: {reps: 1, warmup: 0}
sweep:
  backend: [openblas, cublas]
  n: [512, 1024, 2048, 4096]
baseline: {backend: openblas}
)";

}  // namespace

TEST(ReportCli, ContrastReportRendersInChromium) {
  if (python_with_matplotlib().empty())
    GTEST_SKIP() << "no python3 with matplotlib (tools/setup installs python3-matplotlib)";
  const std::string dir = make_temp_dir();
  const CliRun r = run_scalebench("contrast --n 128 --naive-n 64 --samples 1e6 --naive-samples 1e5 --reps 1 --warmup 0 "
                                  "--modes naive,single-core,multi-thread --out-dir " +
                                  dir + "/c");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_TRUE(file_exists(dir + "/c/report.html")) << r.output;
  const std::string page = read_file(dir + "/c/report.html");
  EXPECT_NE(page.find("gemm --n 128"), std::string::npos) << "every command line is on the page";
  EXPECT_EQ(page.find("fig-prediction"), std::string::npos) << "no record carries a prediction";
  if (!have_chromium())
    GTEST_SKIP() << "chromium is not installed (tools/setup installs it in CI, or with SCALEBENCH_SETUP_BROWSER=1)";
  std::vector<std::string> figures;
  for (const char* w : {"gemm", "montecarlo"}) {
    for (const char* f : {"fig-speedup-", "fig-efficiency-", "fig-phases-", "fig-rate-"})
      figures.push_back(f + std::string(w));
  }
  check_in_browser(dir + "/c/report.html", figures, dir);
}

TEST(ReportCli, AReportThatCannotBeWrittenLosesNoResult) {
  const std::string dir = make_temp_dir();
  const std::string contrast =
      "contrast --workload montecarlo --modes single-core --samples 1e5 --reps 1 --warmup 0 --quiet ";
  // A "Python" that fails: the contrast's results stay, its exit code too, and a warning says why.
  const CliRun r = run_command("SCALEBENCH_PYTHON=/bin/false '" + std::string(std::getenv("SCALEBENCH_BINARY")) + "' " +
                               contrast + "--out-dir " + dir + "/c 2>&1");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(file_exists(dir + "/c/contrast.json"));
  EXPECT_NE(r.output.find("scalebench: warning: report.html not written"), std::string::npos) << r.output;
  EXPECT_FALSE(file_exists(dir + "/c/report.html"));
  // --no-report: none, and nothing said.
  const CliRun q = run_scalebench(contrast + "--no-report --out-dir " + dir + "/d");
  EXPECT_EQ(q.exit_code, 0) << q.output;
  EXPECT_FALSE(file_exists(dir + "/d/report.html"));
  EXPECT_EQ(q.output.find("report"), std::string::npos) << q.output;
  // Not a results folder: exit 2, one line.
  const CliRun bad = run_scalebench("report " + dir);
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_EQ(count_of(bad.output, "\n"), 1) << bad.output;
  EXPECT_NE(bad.output.find("neither contrast.json nor summary.json"), std::string::npos) << bad.output;
}

TEST(ReportCli, StudyAgainstItsBaselineGivesTheCrossoverAndItsReport) {
  const std::string dir = make_temp_dir();
  const std::string file = dir + "/madeup.yaml";
  std::ofstream(file) << kMadeUpStudy;
  // Every run already finished (made up): the study runs nothing and summarises them. The GPU's
  // speed-up over OpenBLAS is n / 1448: below 1 up to 1024, above from 2048.
  const std::string out = dir + "/s";
  ASSERT_EQ(run_command("mkdir -p " + out + "/runs").exit_code, 0);
  std::ofstream jsonl(out + "/runs.jsonl");
  int index = 0;
  for (const char* backend : {"openblas", "cublas"}) {
    for (double n : {512.0, 1024.0, 2048.0, 4096.0}) {
      const double cpu = 0.02 * std::pow(n / 512, 3);
      const double t = std::string(backend) == "openblas" ? cpu : cpu / (n / 1448);
      const std::string path = out + "/runs/" + std::to_string(++index) + ".json";
      json line = {{"study", "madeup"},
                   {"index", index},
                   {"ranks", 1},
                   {"nodes", 1},
                   {"status", "ok"},
                   {"exit_code", 0},
                   {"reason", ""},
                   {"record_path", path},
                   {"launch_failed", false},
                   {"command", "mpirun -np 1 scalebench gemm --backend=" + std::string(backend)},
                   {"key", fmt_key(backend, n)},
                   {"record", record(backend, n, t, t * 1.1)}};
      jsonl << line.dump() << "\n";
    }
  }
  jsonl.close();
  const CliRun r = run_scalebench("study " + file + " --out-dir " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("backend=cublas against backend=openblas"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("crossover n ≈ 1448 (between 1024 and 2048)"), std::string::npos) << r.output;
  const json summary = json::parse(read_file(out + "/summary.json"));
  const json& groups = summary["baseline"]["groups"];
  ASSERT_EQ(groups.size(), 1u) << summary["baseline"].dump();
  EXPECT_EQ(groups[0]["group"], "backend=cublas");
  EXPECT_NEAR(groups[0]["crossover"]["size"].get<double>(), 1448.0, 0.5);
  ASSERT_EQ(groups[0]["points"].size(), 4u);
  for (const auto& p : groups[0]["points"]) {
    EXPECT_NEAR(p["ratio"].get<double>(), p["size"].get<double>() / 1448, 1e-9) << p.dump();
  }
  // Each row's speed-up is against its baseline run (same n), not against itself.
  for (const auto& row : summary["runs"]) {
    const bool gpu = row["options"]["backend"] == "cublas";
    const double n = std::stod(row["options"]["n"].get<std::string>());
    EXPECT_NEAR(row["speedup"].get<double>(), gpu ? n / 1448 : 1.0, 1e-9) << row.dump();
  }
  EXPECT_NE(read_file(out + "/summary.md").find("crossover n ≈ 1448"), std::string::npos);
  if (python_with_matplotlib().empty())
    GTEST_SKIP() << "no python3 with matplotlib (tools/setup installs python3-matplotlib)";
  ASSERT_TRUE(file_exists(out + "/report.html")) << r.output;
  const std::string page = read_file(out + "/report.html");
  EXPECT_NE(page.find("n ≈ 1448"), std::string::npos);
  EXPECT_NE(page.find("0123456789ab"), std::string::npos) << "the git hash of the records";
  if (!have_chromium())
    GTEST_SKIP() << "chromium is not installed (tools/setup installs it in CI, or with SCALEBENCH_SETUP_BROWSER=1)";
  check_in_browser(out + "/report.html", {"fig-speedup", "fig-phases", "fig-rate", "fig-prediction"}, dir);
}
