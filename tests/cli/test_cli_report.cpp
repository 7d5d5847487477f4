// report.html, as a browser shows it: a real contrast and a study on made-up records with a known
// crossover, each page rendered by headless Chromium (it loads without console errors, the DOM
// holds the table and every figure, a screenshot is not blank); the study's summary against its
// baseline; a report that cannot be written loses no result. Hostile input, through both ways to
// run the report (`scalebench report` and tools/report): --out by the output-file rule, every
// input a regular file, malformed inputs one line naming file and field, strings drawn as text
// and escaped, a Python that fails, a stop signal while drawing. Every command runs under a time
// limit: a hang fails the test.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "browser_check.hpp"
#include "cli_runner.hpp"

using nlohmann::json;

namespace {

std::string binary() { return std::getenv("SCALEBENCH_BINARY"); }

// Renders `page` and checks what a reader would see: no console message, nothing fetched, the
// table and each of `figures` in the DOM, a screenshot with more than a handful of colours, and no
// sideways scrolling of the page or its results table at 1300 and 390 px.
void check_in_browser(const std::string& page, const std::vector<std::string>& figures, const std::string& dir) {
  const std::string dom = dom_in_browser(page, dir);
  ASSERT_FALSE(dom.empty());
  EXPECT_NE(dom.find("<table id=\"results\">"), std::string::npos);
  for (const auto& f : figures) {
    const auto at = dom.find("<figure id=\"" + f + "\">");
    ASSERT_NE(at, std::string::npos) << f << " missing";
    EXPECT_NE(dom.find("<svg", at), std::string::npos) << f;
  }
  check_screenshot(page, dir);
  check_widths(page, dir, "#table .scroll");
}

// A test fixture's energy section: made-up joules per verified result, as a record whose counters
// counted them would carry (`gpu`: the GPU's counter counted too). Not a measurement. `timed`: a
// record that gives the timed interval's joules (`joules`; the whole repeat's 1.25 times more);
// else an older record, whose per_result_j does not say which interval it covers.
json fixture_energy(double joules, bool gpu, bool timed) {
  json e = {{"available", true},
            {"cpu", {{"counted", true}}},
            {"gpu", gpu ? json{{"counted", true}} : json{{"counted", false}, {"reason", "no GPU used by this run"}}},
            {"run_j", joules},
            {"per_result_j", joules},
            {"mean_w", 100.0}};
  if (timed) {
    e["per_result_j"] = e["run_j"] = 1.25 * joules;
    e["timed_j"] = {{"median", joules}, {"min", joules}, {"max", joules}};
    e["timed_mean_w"] = 110.0;
    e["covers"] = gpu ? "CPU packages (RAPL) + GPU boards (NVML), not the node at the wall"
                      : "CPU packages (RAPL), not the node at the wall";
  }
  return e;
}

// A made-up gemm record: `seconds` end to end (a repeat), `gflops`, the backend, optionally a
// prediction and made-up joules per result (`joules` > 0: a fixture energy section, of the timed
// interval where `timed`, else an older record's).
json record(const std::string& backend, double n, double seconds, double predicted, double joules = 0, int ranks = 1,
            bool timed = false) {
  const json phase = [](double s) { return json{{"median_s", s}, {"min_s", s}, {"max_s", s}}; }(seconds);
  json r = {
      {"subcommand", "gemm"},
      {"ranks", ranks},
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
  if (joules > 0) r["energy"] = fixture_energy(joules, backend == "cublas", timed);
  return r;
}

// `r` with a made-up comm_bound section (moved words 1.25 x ranks the bound) when it ran on ranks.
json with_bound(json r, int ranks) {
  if (ranks > 1) r["comm_bound"] = {{"moved_to_bound", 1.25 * ranks}};
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
  // No powercap tree (and no GPU in these modes): no run counts energy, whatever the machine has;
  // no profile (an empty cache, no calibration): no run carries a prediction.
  const CliRun r = run_command(
      "env -u SCALEBENCH_PROFILE XDG_CACHE_HOME=" + dir + "/cache SCALEBENCH_POWERCAP_ROOT=" + dir + "/no-powercap '" +
      binary() +
      "' contrast --no-calibrate --n 128 --naive-n 64 --samples 1e6 --naive-samples 1e5 --reps 1 --warmup 0 "
      "--modes naive,single-core,multi-thread --out-dir " +
      dir + "/c 2>&1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_TRUE(file_exists(dir + "/c/report.html")) << r.output;
  EXPECT_NE(r.output.find("J timed"), std::string::npos) << r.output;
  EXPECT_EQ(count_of(r.output, "energy not counted (CPU: no powercap tree"), 1) << "said once: " << r.output;
  const std::string page = read_file(dir + "/c/report.html");
  EXPECT_NE(page.find("gemm --n 128"), std::string::npos) << "every command line is on the page";
  EXPECT_EQ(page.find("fig-prediction"), std::string::npos) << "no record carries a prediction";
  EXPECT_EQ(page.find("fig-energy"), std::string::npos) << "no record carries joules";
  EXPECT_NE(page.find("No energy figure: no run's energy counters were read (CPU: no powercap tree"),
            std::string::npos);
  // No mode here uses a GPU: the page says so, and why (this build has no CUDA, or no run used one).
  EXPECT_NE(page.find("<dt>GPUs</dt><dd>none used ("), std::string::npos) << "the GPU line";
  EXPECT_NE(page.find("<dt>CPU</dt><dd>"), std::string::npos);
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
  // speed-up over OpenBLAS is n / 1448: below 1 up to 1024, above from 2048. Its joules per
  // verified result (fixture values, not measured) fall below OpenBLAS's only later: the ratio is
  // n / 2896, the crossover in energy between 2048 and 4096.
  const std::string out = dir + "/s";
  ASSERT_EQ(run_command("mkdir -p " + out + "/runs").exit_code, 0);
  std::ofstream jsonl(out + "/runs.jsonl");
  int index = 0;
  for (const char* backend : {"openblas", "cublas"}) {
    for (double n : {512.0, 1024.0, 2048.0, 4096.0}) {
      const double cpu = 0.02 * std::pow(n / 512, 3);
      const double t = std::string(backend) == "openblas" ? cpu : cpu / (n / 1448);
      const double joules = std::string(backend) == "openblas" ? 100 * cpu : 100 * cpu / (n / 2896);
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
                   {"record", record(backend, n, t, t * 1.1, joules, 1, true)}};
      jsonl << line.dump() << "\n";
    }
  }
  jsonl.close();
  const CliRun r = run_scalebench("study " + file + " --out-dir " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("backend=cublas against backend=openblas"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("crossover n ≈ 1448 (between 1024 and 2048); in energy (J of the timed interval) n ≈ "
                          "2896 (between 2048 and 4096)"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("J timed"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("marked rep"), std::string::npos) << "every joule figure is the timed interval's";
  EXPECT_EQ(r.output.find("energy not counted"), std::string::npos) << r.output;
  const json summary = json::parse(read_file(out + "/summary.json"));
  const json& groups = summary["baseline"]["groups"];
  ASSERT_EQ(groups.size(), 1u) << summary["baseline"].dump();
  EXPECT_EQ(groups[0]["group"], "backend=cublas");
  EXPECT_NEAR(groups[0]["crossover"]["size"].get<double>(), 1448.0, 0.5);
  EXPECT_NEAR(groups[0]["energy_crossover"]["size"].get<double>(), 2896.0, 0.5);
  EXPECT_EQ(groups[0]["energy_crossover"]["interval"], "timed");
  // The summary's rows: the timed interval's joules, the whole repeat's kept apart.
  const json& first = summary["runs"][0]["energy"];
  EXPECT_EQ(first["interval"], "timed") << first.dump();
  EXPECT_NEAR(first["per_result_j"].get<double>(), 1.25 * first["j"].get<double>(), 1e-9) << first.dump();
  EXPECT_FALSE(groups[0]["energy_crossover"]["same_as_time"].get<bool>());
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
  EXPECT_NE(page.find("n ≈ 2896"), std::string::npos) << "the crossover in energy";
  EXPECT_NE(page.find("in energy (J of the timed interval)"), std::string::npos) << "which joules it compares";
  EXPECT_EQ(page.find("id=\"energy-intervals\""), std::string::npos) << "no joule figure of another interval";
  EXPECT_NE(page.find("0123456789ab"), std::string::npos) << "the git hash of the records";
  if (!have_chromium())
    GTEST_SKIP() << "chromium is not installed (tools/setup installs it in CI, or with SCALEBENCH_SETUP_BROWSER=1)";
  check_in_browser(out + "/report.html", {"fig-speedup", "fig-phases", "fig-rate", "fig-energy", "fig-prediction"},
                   dir);
}

// Whether `text` holds `word` as a word of its own (not inside "information").
bool has_word(const std::string& text, const std::string& word) {
  const auto letter = [](char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; };
  for (auto at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
    if ((at == 0 || !letter(text[at - 1])) && (at + word.size() >= text.size() || !letter(text[at + word.size()])))
      return true;
  }
  return false;
}

// No figure `text` prints is inf, nan, or a row of more than 15 digits.
void expect_legible(const std::string& what, const std::string& text) {
  SCOPED_TRACE(what);
  for (const char* word : {"inf", "nan", "Infinity", "NaN", "-nan"}) EXPECT_FALSE(has_word(text, word)) << text;
  int run = 0;
  for (const char c : text) {
    run = std::isdigit(static_cast<unsigned char>(c)) ? run + 1 : 0;
    if (run > 15) break;
  }
  EXPECT_LE(run, 15) << text;
}

// The figures the record rule accepts at its ends (docs/output.md, "Reading runs.jsonl"): a century
// against 20 picoseconds, rates of 1e18 and 5e-324, joules of 1e18 against 5e-324, a prediction of
// 5e-324 s. The study's table, summary.md, .csv and .json and the report print every one of them
// legibly: four significant digits where fixed decimals would be a row of digits or 0.0000, "-"
// where a derived figure would leave a double's range (never inf or nan).
TEST(ReportCli, FiguresAtTheEndsOfTheRecordRuleArePrintedLegibly) {
  const std::string dir = make_temp_dir();
  const std::string file = dir + "/madeup.yaml";
  std::ofstream(file) << kMadeUpStudy;
  const std::string out = dir + "/s";
  ASSERT_EQ(run_command("mkdir -p " + out + "/runs").exit_code, 0);
  std::ofstream jsonl(out + "/runs.jsonl");
  int index = 0;
  for (const char* backend : {"openblas", "cublas"}) {
    const bool cpu = std::string(backend) == "openblas";
    for (double n : {512.0, 1024.0, 2048.0, 4096.0}) {
      const double t = cpu ? 3.1e9 : 2e-11;
      json r = record(backend, n, t, n == 512 ? 5e-324 : 3.2e9, 1, 1, true);
      r["rates"]["end_to_end_gflops"] = cpu ? 5e-324 : 1e18;
      r["energy"]["timed_j"] = {{"median", cpu ? 1e18 : 5e-324}, {"min", 5e-324}, {"max", 1e18}};
      r["energy"]["per_result_j"] = cpu ? 1e18 : 5e-324;
      const std::string path = out + "/runs/" + std::to_string(++index) + ".json";
      std::ofstream(path) << r.dump();
      jsonl << json{{"study", "madeup"},
                    {"index", index},
                    {"ranks", 1},
                    {"nodes", 1},
                    {"status", "ok"},
                    {"exit_code", 0},
                    {"reason", ""},
                    {"record_path", path},
                    {"launch_failed", false},
                    {"command", "made up"},
                    {"key", fmt_key(backend, n)},
                    {"record", r}}
                   .dump()
            << "\n";
    }
  }
  jsonl.close();
  const CliRun r = run_scalebench("study " + file + " --out-dir " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("3.1e+09"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("1.55e+20x"), std::string::npos) << "the GPU's speed-up: " << r.output;
  expect_legible("the study's table", r.output);
  expect_legible("summary.md", read_file(out + "/summary.md"));
  expect_legible("summary.csv", read_file(out + "/summary.csv"));
  const json summary = json::parse(read_file(out + "/summary.json"));
  for (const json& row : summary["runs"]) {
    ASSERT_TRUE(row["speedup"].is_number()) << row.dump();
    EXPECT_TRUE(std::isfinite(row["speedup"].get<double>())) << row.dump();
  }
  if (python_with_matplotlib().empty())
    GTEST_SKIP() << "no python3 with matplotlib (tools/setup installs python3-matplotlib)";
  std::string pages[2] = {read_file(out + "/report.html"), ""};
  const CliRun again = run_command("timeout 120 '" + std::string(std::getenv("SCALEBENCH_SOURCE_DIR")) +
                                   "/tools/report' " + out + " --out " + dir + "/again.html");
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(count_of(again.output, "\n"), 1) << "the page's path alone, no warning: " << again.output;
  pages[1] = read_file(dir + "/again.html");
  for (const std::string& page : pages) {
    const auto from = page.find("<table id=\"results\">");
    ASSERT_NE(from, std::string::npos);
    const std::string table = page.substr(from, page.find("</table>", from) - from);
    expect_legible("the page's table", table);
    EXPECT_NE(table.find(">3.1e+09</td>"), std::string::npos) << table;
    EXPECT_NE(table.find(">1.55e+20×</td>"), std::string::npos) << table;
    const auto base = page.find("<section id=\"baseline\">");
    ASSERT_NE(base, std::string::npos);
    expect_legible("the page's baseline", page.substr(base, page.find("</section>", base) - base));
  }
}

TEST(ReportCli, AStudyMarksItsFastestAndItsLeastEnergyRunAndDrawsThem) {
  // A made-up series on 1, 2 and 4 ranks: four finish first (time 4 / ranks^0.9 s), one spends the
  // fewest joules on the same result (fixture values 100 x ranks^0.3 J, not measured).
  const std::string dir = make_temp_dir();
  const std::string file = dir + "/series.yaml";
  std::ofstream(file) << "study: series\ndescription: made-up records\nworkload: gemm\n"
                         "args: {backend: openblas, n: 1024, reps: 1, warmup: 0}\nsweep:\n  ranks: [1, 2, 4]\n";
  const std::string out = dir + "/s";
  ASSERT_EQ(run_command("mkdir -p " + out + "/runs").exit_code, 0);
  std::ofstream jsonl(out + "/runs.jsonl");
  int index = 0;
  for (int ranks : {1, 2, 4}) {
    const double t = 4 / std::pow(ranks, 0.9), joules = 100 * std::pow(ranks, 0.3);
    const std::string path = out + "/runs/" + std::to_string(++index) + ".json";
    jsonl << json{{"study", "series"},
                  {"index", index},
                  {"ranks", ranks},
                  {"nodes", 1},
                  {"status", "ok"},
                  {"exit_code", 0},
                  {"reason", ""},
                  {"record_path", path},
                  {"launch_failed", false},
                  {"command", "mpirun -np " + std::to_string(ranks) + " scalebench gemm"},
                  {"key", "gemm ranks=" + std::to_string(ranks) + " backend=openblas n=1024 reps=1 warmup=0"},
                  {"record", with_bound(record("openblas", 1024, t, 0, joules, ranks), ranks)}}
                 .dump()
          << "\n";
  }
  jsonl.close();
  const CliRun r = run_scalebench("study " + file + " --out-dir " + out);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("0 run now, 3 from earlier"), std::string::npos) << r.output;
  // Older records (made-up fixtures without the timed interval): their joules shown, marked as not
  // saying which interval they cover.
  EXPECT_NE(r.output.find("runs: fastest #3 (4 cores, 1.1487 s); least energy #1 (1 core, 100 J per verified result, "
                          "interval not stated)"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("J timed: joules of each repeat's timed interval, the time column's; marked ?: an older "
                          "record's joules per verified result"),
            std::string::npos)
      << r.output;
  const json summary = json::parse(read_file(out + "/summary.json"));
  ASSERT_EQ(summary["optima"].size(), 1u) << summary.dump();
  EXPECT_EQ(summary["optima"][0]["time_optimal"]["index"], 3);
  EXPECT_EQ(summary["optima"][0]["energy_optimal"]["index"], 1);
  EXPECT_TRUE(summary["runs"][2].value("time_optimal", false));
  EXPECT_TRUE(summary["runs"][0].value("energy_optimal", false));
  EXPECT_FALSE(summary["runs"][1].contains("time_optimal"));
  // The optimal column, then the energy's timed interval (none in an older record) and its interval.
  EXPECT_NE(read_file(out + "/summary.csv").find(",time,,unstated\n"), std::string::npos) << "the optimal column";
  EXPECT_NE(read_file(out + "/summary.md").find("| 100 ? * |"), std::string::npos) << read_file(out + "/summary.md");
  EXPECT_NE(read_file(out + "/summary.csv").find(",energy_timed_j,energy_interval\n"), std::string::npos);
  EXPECT_EQ(summary["runs"][0]["energy"]["interval"], "unstated");
  if (python_with_matplotlib().empty())
    GTEST_SKIP() << "no python3 with matplotlib (tools/setup installs python3-matplotlib)";
  const std::string page = read_file(out + "/report.html");
  EXPECT_NE(page.find("id=\"optima\""), std::string::npos);
  EXPECT_EQ(page.find("id=\"no-energy\""), std::string::npos);
  EXPECT_NE(page.find("<td data-label=\"J timed\">100 ? *</td>"), std::string::npos) << "an older record's joules";
  EXPECT_NE(page.find("?: J per verified result, interval not stated"), std::string::npos) << "the mark said";
  // The records' words moved against the least (made-up: 1.25 x ranks; none on one rank).
  EXPECT_NE(page.find("<th>× bound</th>"), std::string::npos) << "the communication-bound column";
  EXPECT_NE(page.find("<td data-label=\"× bound\">5.00×</td>"), std::string::npos) << "4 ranks' x bound";
  if (!have_chromium())
    GTEST_SKIP() << "chromium is not installed (tools/setup installs it in CI, or with SCALEBENCH_SETUP_BROWSER=1)";
  check_in_browser(out + "/report.html", {"fig-speedup", "fig-energy"}, dir);
}

// --- Hostile input. Made-up folders (no run): a contrast and a study, each row with its record.

namespace {

// The two ways to run the report: the binary's subcommand and the checkout's script.
std::vector<std::string> runners() {
  std::string script = "'";
  script.append(std::getenv("SCALEBENCH_SOURCE_DIR")).append("/tools/report'");
  std::string subcommand = "'";
  subcommand.append(binary()).append("' report");
  return {subcommand, script};
}

// `runner args`, its stdout apart (in `stdout_of` when given), under a time limit.
CliRun report_with(const std::string& runner, const std::string& args, std::string* stdout_of = nullptr,
                   const std::string& env = "") {
  const std::string dir = make_temp_dir();
  const CliRun r = run_command("(" + env + " timeout 60 " + runner + " " + args + " >" + dir + "/stdout)");
  if (stdout_of != nullptr) *stdout_of = read_file(dir + "/stdout");
  return {r.exit_code, r.output + read_file(dir + "/stdout")};
}

bool is_kind(const std::string& path, unsigned kind) {
  struct stat st {};
  return lstat(path.c_str(), &st) == 0 && (st.st_mode & S_IFMT) == kind;
}

std::string listing(const std::string& dir) { return run_command("ls -A '" + dir + "'").output; }

json made_up_record(const std::string& host) {
  return {{"hosts", {host}},
          {"cpu_model", "Made-up CPU"},
          {"versions", {{"scalebench", "0.1.0"}, {"git", "0123456789ab"}, {"mpi_library", "Open MPI"}}},
          {"prediction", {{"available", true}, {"end_to_end", {{"predicted_s", 0.11}, {"measured_s", 0.1}}}}}};
}

// A contrast folder of `rows` gemm rows; `mode` names the last row; each row's record in runs/.
std::string made_up_contrast(const std::string& dir, int rows, const std::string& mode = "multi-thread",
                             const std::string& text = "made-up") {
  run_command("mkdir -p '" + dir + "/runs'");
  json runs = json::array();
  for (int i = 1; i <= rows; ++i) {
    const std::string record = dir + "/runs/" + std::to_string(i) + ".json";
    std::ofstream(record) << made_up_record(text).dump();
    runs.push_back({{"workload", "gemm"},
                    {"mode", i == rows ? mode : "mode-" + std::to_string(i)},
                    {"size", "n=128"},
                    {"ranks", 1},
                    {"threads_per_rank", i},
                    {"gpus", 0},
                    {"nodes", 1},
                    {"time_s", 0.1},
                    {"rate", 1.0 + i},
                    {"rate_unit", "GFLOP/s"},
                    {"share", {{"compute", 0.8}, {"communication", 0.1}, {"transfer", 0.1}}},
                    {"speedup_vs_single_core", 1.0 + i},
                    {"parallel_efficiency", 0.9},
                    {"status", "ok"},
                    {"command", "scalebench gemm --n 128 " + text},
                    {"record", record}});
  }
  runs.push_back({{"workload", "gemm"}, {"mode", "failed-" + text}, {"status", "failed"}, {"reason", text}});
  std::ofstream(dir + "/contrast.json") << json{{"host", text}, {"launcher", "mpirun"}, {"runs", runs}}.dump();
  return dir;
}

// A study folder: summary.json, runs.jsonl (the commands) and the records in runs/.
std::string made_up_study(const std::string& dir, const std::string& text = "made-up") {
  run_command("mkdir -p '" + dir + "/runs'");
  json runs = json::array();
  std::ofstream jsonl(dir + "/runs.jsonl");
  for (int i = 1; i <= 4; ++i) {
    const std::string record = dir + "/runs/" + std::to_string(i) + ".json";
    std::ofstream(record) << made_up_record(text).dump();
    const double n = 256.0 * i;
    runs.push_back({{"index", i},
                    {"ranks", 1},
                    {"nodes", 1},
                    {"status", "ok"},
                    {"options", {{"n", std::to_string(256 * i)}, {"label", text}}},
                    {"time_s", 0.01 * i},
                    {"rate", 2 * n * n * n / (0.01 * i) / 1e9},
                    {"rate_unit", "GFLOP/s"},
                    {"resources", 1},
                    {"gpu", false},
                    {"phases_s", {{"compute", 0.008 * i}, {"communication", 0.0}, {"transfer", 0.001}}},
                    {"record_path", record}});
    jsonl << json{{"key", "run " + std::to_string(i)},
                  {"status", "ok"},
                  {"record",
                   [&] {  // a finished run's line holds its record with its phases
                     json r = made_up_record(text);
                     r["phases"] = {{"end_to_end", {{"median_s", 0.01 * i}}}};
                     return r;
                   }()},
                  {"record_path", record},
                  {"command", "mpirun scalebench gemm " + text}}
                 .dump()
          << "\n";
  }
  std::ofstream(dir + "/summary.json")
      << json{{"study", text}, {"description", text}, {"workload", "gemm"}, {"runs", runs}}.dump();
  return dir;
}

#define NEED_MATPLOTLIB()               \
  if (python_with_matplotlib().empty()) \
  GTEST_SKIP() << "no python3 with matplotlib (tools/setup installs python3-matplotlib)"

}  // namespace

TEST(ReportCli, OutFollowsTheOutputFileRule) {
  NEED_MATPLOTLIB();
  const std::string dir = make_temp_dir();
  const std::string c = made_up_contrast(dir + "/c", 3);
  for (const auto& runner : runners()) {
    SCOPED_TRACE(runner);
    // A character device is written in place: /dev/null stays a device; the path is all on stdout.
    std::string out;
    CliRun r = report_with(runner, c + " --out /dev/null", &out);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(out, "/dev/null\n");
    EXPECT_TRUE(is_kind("/dev/null", S_IFCHR));
    // A FIFO nobody reads: exit 3 at once, no hang, the FIFO stays.
    const std::string fifo = dir + "/fifo";
    ASSERT_EQ(run_command("rm -f " + fifo + " && mkfifo " + fifo).exit_code, 0);
    r = report_with(runner, c + " --out " + fifo);
    EXPECT_EQ(r.exit_code, 3) << r.output;
    EXPECT_NE(r.output.find("no process reads the pipe"), std::string::npos) << r.output;
    EXPECT_TRUE(is_kind(fifo, S_IFIFO));
    // A FIFO someone reads gets the whole page, and stays a FIFO.
    r = run_command("(timeout 60 cat " + fifo + " > " + dir + "/got &) ; timeout 60 " + runner + " " + c + " --out " +
                    fifo + "; rc=$?; sleep 0.3; exit $rc");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(read_file(dir + "/got").find("</html>"), std::string::npos);
    EXPECT_TRUE(is_kind(fifo, S_IFIFO));
    // A link is followed: the file it names is replaced, the link stays a link.
    std::ofstream(dir + "/target.html") << "old";
    ASSERT_EQ(run_command("ln -sfn " + dir + "/target.html " + dir + "/link.html").exit_code, 0);
    r = report_with(runner, c + " --out " + dir + "/link.html");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_TRUE(is_kind(dir + "/link.html", S_IFLNK));
    EXPECT_NE(read_file(dir + "/target.html").find("</html>"), std::string::npos);
    // Refused before any work (the folder is not even a results folder): a folder, a socket; an
    // empty name is a usage error.
    ASSERT_EQ(run_command("rm -f " + dir + "/sock; " + python_with_matplotlib() +
                          " -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' " + dir + "/sock")
                  .exit_code,
              0);
    for (const auto& [target, said] :
         std::vector<std::pair<std::string, std::string>>{{dir, "it is a folder"}, {dir + "/sock", "it is a socket"}}) {
      r = report_with(runner, dir + "/nothing-here --out " + target);
      EXPECT_EQ(r.exit_code, 3) << r.output;
      EXPECT_NE(r.output.find(said), std::string::npos) << r.output;
      EXPECT_EQ(count_of(r.output, "\n"), 1) << r.output;
    }
    r = report_with(runner, c + " --out ''");
    EXPECT_EQ(r.exit_code, 2) << r.output;
    // the binary: as every option given empty; tools/report: its own words
    EXPECT_TRUE(r.output.find("--out is empty") != std::string::npos ||
                r.output.find("--out needs a file name") != std::string::npos)
        << r.output;
    EXPECT_EQ(listing(dir + "/c"), "contrast.json\nruns\n") << "no page, no temporary file";
  }
}

TEST(ReportCli, EveryInputMustBeARegularFile) {
  NEED_MATPLOTLIB();
  const std::string dir = make_temp_dir();
  const std::vector<std::pair<std::string, std::string>> inputs = {
      // A study's records are read from its runs.jsonl lines, which hold them; a contrast's from runs/.
      {"c", "contrast.json"},
      {"c", "runs/2.json"},
      {"s", "summary.json"},
      {"s", "runs.jsonl"}};
  // How to put each kind of thing in a file's place, and what the message calls it.
  const std::vector<std::pair<std::string, std::string>> kinds = {
      {"mkfifo P", "a FIFO"},
      {"ln -s /dev/zero P", "a character device"},
      {"mkdir P", "a folder"},
      {python_with_matplotlib() + " -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' P",
       "a socket"}};
  for (const auto& runner : runners()) {
    for (const auto& [folder, name] : inputs) {
      for (const auto& [make, kind] : kinds) {
        SCOPED_TRACE(runner + " " + name + " as " + kind);
        const std::string base = make_temp_dir();
        const std::string f = folder == "c" ? made_up_contrast(base + "/f", 3) : made_up_study(base + "/f");
        std::string place = make;
        place.replace(place.find('P'), 1, f + "/" + name);
        ASSERT_EQ(run_command("rm -f " + f + "/" + name + " && " + place).exit_code, 0);
        const CliRun r = report_with(runner, f);
        EXPECT_EQ(r.exit_code, 3) << r.output;
        EXPECT_NE(r.output.find(f + "/" + name), std::string::npos) << r.output;
        EXPECT_NE(r.output.find("it is " + kind), std::string::npos) << r.output;
        EXPECT_EQ(count_of(r.output, "\n"), 1) << r.output;
        EXPECT_FALSE(file_exists(f + "/report.html"));
      }
    }
  }
  // A record path outside the folder is not followed (here: /dev/zero).
  const std::string c = made_up_contrast(dir + "/out", 2);
  json doc = json::parse(read_file(c + "/contrast.json"));
  doc["runs"][0]["record"] = "/dev/zero";
  std::ofstream(c + "/contrast.json") << doc.dump();
  const CliRun r = report_with(runners()[0], c);
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST(ReportCli, MalformedInputIsOneLineNamingTheFileAndTheField) {
  NEED_MATPLOTLIB();
  struct Case {
    std::string folder, file, content, said;
  };
  const std::string dir = make_temp_dir();
  made_up_contrast(dir + "/c", 2);
  made_up_study(dir + "/s");
  const std::string contrast = read_file(dir + "/c/contrast.json"), summary = read_file(dir + "/s/summary.json");
  const std::string jsonl = read_file(dir + "/s/runs.jsonl");
  json wrong = json::parse(contrast);
  wrong["runs"][1]["time_s"] = "fast";
  json options = json::parse(summary);
  options["runs"][2]["options"]["n"] = json::array({1});
  json negative = json::parse(contrast);
  negative["runs"][0]["rate"] = -5;
  json energy_string = json::parse(contrast);
  energy_string["runs"][1]["energy"] = {{"per_result_j", "lots"}, {"counted", "cpu"}};
  const std::vector<Case> cases = {
      {"c", "contrast.json", contrast.substr(0, contrast.size() / 2), "is not valid JSON (line 1 column"},
      {"s", "summary.json", summary.substr(0, summary.size() - 7), "is not valid JSON (line 1 column"},
      {"c", "contrast.json", wrong.dump(), "runs[1]: \"time_s\" must be a finite number >= 0, found a string"},
      {"c", "contrast.json", negative.dump(), "runs[0]: \"rate\" must be a finite number >= 0, found -5"},
      {"c", "contrast.json", "[1, 2]", "expected a JSON object, found a list"},
      {"c", "contrast.json", R"({"runs": [{"status": "ok", "time_s": NaN}]})", "NaN is not a number JSON allows"},
      {"c", "contrast.json", "{\"host\": \"\xff\xfe\"}", "is not valid UTF-8 (byte 10, line 1)"},
      {"c", "runs/1.json", R"({"versions": "3"})", "\"versions\" must be an object"},
      {"s", "summary.json", options.dump(), "runs[2] options: \"n\" must be a string, found a list"},
      {"c", "runs/2.json", R"({"prediction": {"end_to_end": {"predicted_s": "soon"}}})", "\"predicted_s\" must be"},
      {"s", "summary.json", std::string(200000, '['), "nested too deeply"},
      // Energy: a string, a negative number, NaN — in a summary's row or in a record.
      {"c", "contrast.json", energy_string.dump(),
       "runs[1] energy: \"per_result_j\" must be a finite number >= 0, found a string"},
      {"c", "runs/1.json", R"({"energy": {"per_result_j": -2.5}})",
       "energy: \"per_result_j\" must be a finite number >= 0, found -2.5"},
      {"c", "runs/2.json", R"({"energy": {"cpu": {"counted": true}, "per_result_j": NaN}})",
       "NaN is not a number JSON allows, at energy.per_result_j"},
      // The JSON rule and the record rule every reader applies (docs/output.md, "Reading
      // runs.jsonl"): compare and the drivers refuse these too.
      {"c", "runs/1.json", R"({"hosts": ["a"], "hosts": ["b"]})", "holds the key \"hosts\" twice in one object"},
      {"s", "summary.json", R"({"study": "a", "runs": [], "study": "b"})", "holds the key \"study\" twice"},
      {"c", "contrast.json", R"({"runs": [], "host": "a", "runs": []})", "holds the key \"runs\" twice"},
      {"c", "runs/2.json", "\xEF\xBB\xBF{}", "starts with a byte-order mark"},
      {"c", "runs/1.json", R"({"x": [1e400]})", "a number beyond a double's range"},
      {"c", "runs/1.json", std::string(70, '[') + std::string(70, ']'), "nested too deeply: 70 levels, more than 64"},
      {"c", "runs/1.json", R"({"command_line": "scalebench gemm --n 64"})",
       "command_line must be a list (got a string)"},
      {"c", "runs/2.json", R"({"phases": {"end_to_end": {"median_s": 5e-324}}})",
       "phases.end_to_end.median_s must be a measured time: 0 or seconds in [1e-12, 3.2e+09] (got 5e-324)"},
      {"c", "runs/2.json", R"({"rates": {"end_to_end_gflops": 1e300}})",
       "rates.end_to_end_gflops must be a number in [0, 1e+18]"},
      {"c", "contrast.json", R"({"runs": [{"status": "ok", "time_s": 1e308}]})",
       "runs[0]: \"time_s\" must be a measured time: 0 or seconds in [1e-12, 3.2e+09], found 1e+308"},
  };
  for (const auto& runner : runners()) {
    for (const auto& k : cases) {
      SCOPED_TRACE(runner + " " + k.file + ": " + k.content.substr(0, 80));
      const std::string f = make_temp_dir() + "/f";
      k.folder == "c" ? made_up_contrast(f, 2) : made_up_study(f);
      std::ofstream(f + "/" + k.file, std::ios::binary) << k.content;
      const CliRun r = report_with(runner, f);
      EXPECT_EQ(r.exit_code, 2) << r.output;
      EXPECT_NE(r.output.find(f + "/" + k.file), std::string::npos) << r.output;
      EXPECT_NE(r.output.find(k.said), std::string::npos) << r.output;
      EXPECT_EQ(count_of(r.output, "\n"), 1) << r.output;
      EXPECT_FALSE(file_exists(f + "/report.html"));
    }
  }
}

// A runs.jsonl line the drivers leave out (docs/output.md, "Reading runs.jsonl": not an object, not
// JSON, not UTF-8, a field of the wrong kind, cut by a crash) is left out by the report too, named
// in a warning; the page is drawn from the other lines.
TEST(ReportCli, RunsJsonlLinesTheDriversLeaveOutAreLeftOutWithAWarning) {
  NEED_MATPLOTLIB();
  struct Case {
    std::string added, said;
  };
  const std::vector<Case> cases = {
      {"[1]\n", "line 5 is cut or garbled, or not a driver's line: is a list, not a JSON object"},
      {"17\n{}\n", "line 6 is cut or garbled, or not a driver's line: key is missing"},
      {"not json\n", "line 5 is cut or garbled, or not a driver's line: is not valid JSON"},
      {"{\"key\": \"k\", \"status\": \"ok\", \"command\": \"\xc3\x28\"}\n",
       "line 5 is cut or garbled, or not a driver's "
       "line: is not valid JSON (not UTF-8)"},
      {"{\"key\": \"k\", \"status\": 3}\n",
       "line 5 is cut or garbled, or not a driver's line: status must be a string"},
      {R"({"record_path": "x", "comm)", "line 5 is cut or garbled, or not a driver's line: is not valid JSON"},
  };
  for (const auto& runner : runners()) {
    for (const auto& k : cases) {
      SCOPED_TRACE(runner + ": " + k.added);
      const std::string f = make_temp_dir() + "/f";
      made_up_study(f);
      std::ofstream(f + "/runs.jsonl", std::ios::app | std::ios::binary) << k.added;
      const CliRun r = report_with(runner, f);
      EXPECT_EQ(r.exit_code, 0) << r.output;
      EXPECT_NE(r.output.find(f + "/runs.jsonl " + k.said), std::string::npos) << r.output;
      EXPECT_TRUE(file_exists(f + "/report.html"));
    }
  }
}

TEST(ReportCli, HostileStringsAreDrawnAsTextAndEscaped) {
  NEED_MATPLOTLIB();
  const std::string dir = make_temp_dir();
  const std::string hostile = R"($\frac{1}{0}$ <script>alert(1)</script> $x^{)";
  const std::string c = made_up_contrast(dir + "/c", 3, hostile, hostile);
  const std::string s = made_up_study(dir + "/s", hostile);
  for (const auto& runner : runners()) {
    for (const auto& f : {c, s}) {
      SCOPED_TRACE(runner + " " + f);
      const CliRun r = report_with(runner, f);
      ASSERT_EQ(r.exit_code, 0) << r.output;
      std::string page = read_file(f + "/report.html");
      std::string lower = page;
      for (auto& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      EXPECT_EQ(lower.find("<script"), std::string::npos);
      EXPECT_NE(page.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
      EXPECT_NE(page.find("$\\frac{1}{0}$"), std::string::npos) << "drawn as text, not as TeX";
    }
  }
  // A huge label (1 MB) and numbers at the edges the record rule gives a time (0, a century) are
  // drawn, clipped on the page; a time no run takes (1e300 s) is refused as the record rule refuses
  // it, one line naming the field.
  json doc = json::parse(read_file(c + "/contrast.json"));
  doc["runs"][0]["mode"] = std::string(1 << 20, 'm');
  doc["runs"][1]["rate"] = 0;
  doc["runs"][1]["time_s"] = 3.2e9;
  std::ofstream(c + "/contrast.json") << doc.dump();
  CliRun r = report_with(runners()[0], c);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_LT(read_file(c + "/report.html").size(), 1u << 20);
  doc["runs"][1]["time_s"] = 1e300;
  std::ofstream(c + "/contrast.json") << doc.dump();
  r = report_with(runners()[0], c);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("runs[1]: \"time_s\" must be a measured time"), std::string::npos) << r.output;
  EXPECT_EQ(count_of(r.output, "\n"), 1) << r.output;
  if (!have_chromium())
    GTEST_SKIP() << "chromium is not installed (tools/setup installs it in CI, or with SCALEBENCH_SETUP_BROWSER=1)";
  ASSERT_EQ(report_with(runners()[0], s).exit_code, 0);
  check_in_browser(s + "/report.html", {"fig-phases", "fig-rate", "fig-prediction"}, dir);
}

TEST(ReportCli, APythonThatFailsOrSaysNothingIsAnError) {
  const std::string dir = make_temp_dir();
  const std::string c = made_up_contrast(dir + "/c", 2);
  const std::string report = "'" + binary() + "' report ";
  for (const auto& [python, said] : std::vector<std::pair<std::string, std::string>>{
           {"/bin/true", "SCALEBENCH_PYTHON=/bin/true exited 0 but printed no page path"},
           {"/bin/false", "SCALEBENCH_PYTHON=/bin/false ended with exit status 1 and printed nothing"},
           {dir + "/no-such-python", "no such program, or not executable"}}) {
    SCOPED_TRACE(python);
    std::string out;
    const CliRun r = report_with(report, c, &out, "SCALEBENCH_PYTHON=" + python);
    EXPECT_EQ(r.exit_code, 3) << r.output;
    EXPECT_NE(r.output.find(said), std::string::npos) << r.output;
    EXPECT_EQ(out, "") << "nothing but a page path goes to stdout";
    EXPECT_FALSE(file_exists(c + "/report.html"));
  }
  // tools/report says the same of a SCALEBENCH_PYTHON it cannot run.
  const CliRun missing = report_with(runners()[1], c, nullptr, "SCALEBENCH_PYTHON=" + dir + "/no-such-python");
  EXPECT_EQ(missing.exit_code, 3) << missing.output;
  EXPECT_NE(missing.output.find("no such program, or not executable"), std::string::npos) << missing.output;
  // ... and of one that is no Python: it runs no script, so it would end with no page.
  for (const std::string python : {"/bin/true", "/bin/false"}) {
    SCOPED_TRACE("tools/report, " + python);
    std::string out;
    const CliRun r = report_with(runners()[1], c, &out, "SCALEBENCH_PYTHON=" + python);
    EXPECT_EQ(r.exit_code, 3) << r.output;
    EXPECT_NE(r.output.find("SCALEBENCH_PYTHON=" + python + " did not run a one-line Python script"), std::string::npos)
        << r.output;
    EXPECT_EQ(out, "");
    EXPECT_FALSE(file_exists(c + "/report.html"));
  }
  // A "Python" that prints a path of its own and exits 0 has written no page.
  std::ofstream(dir + "/liar") << "#!/bin/sh\necho " << c << "/contrast.json\n";
  ASSERT_EQ(run_command("chmod +x " + dir + "/liar").exit_code, 0);
  CliRun r = report_with(report, c, nullptr, "SCALEBENCH_PYTHON=" + dir + "/liar");
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("printed no page path"), std::string::npos) << r.output;
  NEED_MATPLOTLIB();
  // Warnings on the Python's stdout do not take the page path's place.
  std::ofstream(dir + "/chatty") << "#!/bin/sh\necho 'UserWarning: something'\nexec " << python_with_matplotlib()
                                 << " \"$@\"\n";
  ASSERT_EQ(run_command("chmod +x " + dir + "/chatty").exit_code, 0);
  std::string out;
  r = report_with(report, c, &out, "SCALEBENCH_PYTHON=" + dir + "/chatty");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(out, c + "/report.html\n");
}

TEST(ReportCli, AStopSignalWhileDrawingLeavesNothingBehind) {
  NEED_MATPLOTLIB();
  const std::string dir = make_temp_dir();
  // Enough rows that drawing takes seconds; matplotlib's cache made in TMPDIR (its config folder
  // cannot be made), so that TMPDIR shows what the script and the binary leave.
  const std::string c = made_up_contrast(dir + "/c", 800);
  struct Case {
    std::string runner, signal;
    int code;
  };
  for (const auto& k :
       std::vector<Case>{{runners()[0], "TERM", 143}, {runners()[0], "HUP", 129}, {runners()[1], "TERM", 143}}) {
    SCOPED_TRACE(k.runner + " SIG" + k.signal);
    const std::string tmp = make_temp_dir();
    const std::string page = dir + "/page.html";
    // Started, then signalled once matplotlib is loading (its folder in TMPDIR) and a moment more.
    // SCALEBENCH_PYTHON named: tools/report then runs no matplotlib check of its own first.
    const CliRun r = run_command(
        "(TMPDIR=" + tmp + " MPLCONFIGDIR=/dev/null/none SCALEBENCH_PYTHON=" + python_with_matplotlib() + " " +
        k.runner + " " + c + " --out " + page + " & pid=$!; " + "for i in $(seq 300); do ls " + tmp +
        " | grep -q matplotlib && break; sleep 0.05; done; sleep 1.5; " + "kill -" + k.signal +
        " $pid; for i in $(seq 300); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done; " +
        "kill -KILL $pid 2>/dev/null; wait $pid; echo rc=$?)");
    EXPECT_NE(r.output.find("rc=" + std::to_string(k.code)), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("stopped by SIG" + k.signal), std::string::npos) << r.output;
    EXPECT_EQ(listing(tmp), "") << "temporary files left in TMPDIR";
    EXPECT_FALSE(file_exists(page)) << "a partial page";
    EXPECT_EQ(listing(dir), "c\n") << "a temporary page beside it";
  }
  // A contrast stopped while it draws its report: 143, its results kept, no page, nothing left.
  // Its Python marks that it started and then draws slowly, so the signal lands while it draws
  // however fast or loaded the machine is.
  const std::string tmp = make_temp_dir();
  std::ofstream(dir + "/slow-python") << "#!/bin/sh\ntouch " << dir << "/drawing\nsleep 60\nexec "
                                      << python_with_matplotlib() << " \"$@\"\n";
  ASSERT_EQ(run_command("chmod +x " + dir + "/slow-python").exit_code, 0);
  const CliRun r = run_command(
      "(TMPDIR=" + tmp + " MPLCONFIGDIR=/dev/null/none SCALEBENCH_PYTHON=" + dir + "/slow-python '" + binary() +
      "' contrast --workload montecarlo --modes single-core --samples 1e5 --reps 1 --warmup 0 --quiet --out-dir " +
      dir + "/k & pid=$!; for i in $(seq 1200); do [ -e " + dir +
      "/drawing ] && break; sleep 0.05; done; sleep 0.2; kill -TERM $pid; " +
      "for i in $(seq 300); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done; kill -KILL $pid 2>/dev/null; " +
      "wait $pid; echo rc=$?)");
  EXPECT_NE(r.output.find("rc=143"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("the report was stopped"), std::string::npos) << r.output;
  EXPECT_TRUE(file_exists(dir + "/k/contrast.json"));
  EXPECT_FALSE(file_exists(dir + "/k/report.html"));
  EXPECT_EQ(listing(tmp), "") << "temporary files left in TMPDIR";
  EXPECT_EQ(run_command("ls -A " + dir + "/k | grep -c scalebench-report").output, "0\n");
}

TEST(ReportCli, AnErrorNoCheckForesawIsOneLineNotATraceback) {
  NEED_MATPLOTLIB();
  const std::string dir = make_temp_dir();
  const std::string c = made_up_contrast(dir + "/c", 2);
  // The script with its drawing made to fail as a bug would: one line, exit 3, nothing written.
  const CliRun r = run_command(
      "cd '" + std::string(std::getenv("SCALEBENCH_SOURCE_DIR")) + "/tools' && timeout 60 " + python_with_matplotlib() +
      " -B -c 'import sys, report; report.contrast_figures = lambda *a: 1 / 0; sys.argv = [\"report\", sys.argv[1]]; "
      "sys.exit(report.main())' " +
      c);
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("scalebench report: error: internal error in the report script: ZeroDivisionError"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("Traceback"), std::string::npos) << r.output;
  EXPECT_EQ(count_of(r.output, "\n"), 1) << r.output;
  EXPECT_EQ(listing(c), "contrast.json\nruns\n");
}

TEST(ReportCli, AContrastWithJoulesDrawsEnergyPerResultByMode) {
  NEED_MATPLOTLIB();
  const std::string dir = make_temp_dir();
  const std::string c = made_up_contrast(dir + "/c", 3);
  // Test fixture: made-up joules per verified result on each finished row (not measured): the
  // timed interval's, the whole repeat's (a timed interval too short for the counters), and an
  // older contrast's row that does not say which interval.
  json doc = json::parse(read_file(c + "/contrast.json"));
  doc["runs"][0]["energy"] = {{"j", 40.0}, {"interval", "timed"}, {"per_result_j", 50.0}, {"counted", "cpu"}};
  doc["runs"][1]["energy"] = {{"j", 20.0}, {"interval", "repeat"}, {"per_result_j", 20.0}, {"counted", "cpu"}};
  doc["runs"][2]["energy"] = {{"per_result_j", 40.0 / 3}, {"counted", "cpu"}};
  std::ofstream(c + "/contrast.json") << doc.dump();
  const CliRun r = report_with(runners()[0], c);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string page = read_file(c + "/report.html");
  EXPECT_NE(page.find("<td data-label=\"J timed\">40</td>"), std::string::npos) << "the timed interval's";
  EXPECT_NE(page.find("<td data-label=\"J timed\">20 rep</td>"), std::string::npos) << "the whole repeat's";
  EXPECT_NE(page.find("<td data-label=\"J timed\">13.3 ?</td>"), std::string::npos) << "an older row's";
  EXPECT_NE(page.find("rep: J of the whole repeat with its check; ?: J per verified result, interval not stated"),
            std::string::npos)
      << "the marks said under the table";
  EXPECT_NE(page.find("per row: joules per verified result (J of the timed interval, J of the whole repeat with its "
                      "check, J per verified result, interval not stated) (counted by cpu"),
            std::string::npos)
      << "the figure says the intervals it mixes";
  EXPECT_EQ(page.find("id=\"no-energy\""), std::string::npos);
  if (!have_chromium())
    GTEST_SKIP() << "chromium is not installed (tools/setup installs it in CI, or with SCALEBENCH_SETUP_BROWSER=1)";
  check_in_browser(c + "/report.html", {"fig-speedup-gemm", "fig-energy-gemm"}, dir);
}

namespace {

// A contrast on a 2-GPU machine, every mode a row, as its contrast.json and records would be: the
// GPU rows' record is tests/data/record-gemm-cublas-2gpu.json (tests/data/README.md says where its
// values come from), the CPU rows' the same machine's with no GPU used. Made-up times, rates and
// joules; the widest cells a contrast writes (sizes, ranks with GPUs, predictions, bounds, a long
// failure reason).
std::string gpu_machine_contrast(const std::string& dir) {
  run_command("mkdir -p '" + dir + "/runs'");
  json gpu_record = json::parse(
      read_file(std::string(std::getenv("SCALEBENCH_SOURCE_DIR")) + "/tests/data/record-gemm-cublas-2gpu.json"));
  json cpu_record = gpu_record;
  cpu_record["gpus"] = {{"used", false}, {"count", 0}, {"reason", "no rank of this run used a GPU"}};
  cpu_record.erase("rank_info");
  cpu_record["config"]["backend"] = "openblas";
  cpu_record["prediction"] = {{"available", true}, {"end_to_end", {{"predicted_s", 11.5}, {"measured_s", 12.25}}}};
  cpu_record["comm_bound"] = {{"moved_to_bound", 1.25}};
  std::ofstream(dir + "/runs/gpu.json") << gpu_record.dump();
  std::ofstream(dir + "/runs/cpu.json") << cpu_record.dump();
  struct Row {
    const char *workload, *mode, *size;
    int ranks, threads, gpus;
    const char* status;
    const char* reason;
  };
  const std::vector<Row> rows = {
      {"gemm", "naive", "n=1536", 1, 1, 0, "ok", ""},
      {"gemm", "single-core", "n=8192", 1, 1, 0, "ok", ""},
      {"gemm", "multi-thread", "n=8192", 1, 32, 0, "ok", ""},
      {"gemm", "numa", "n=8192", 0, 0, 0, "skipped", "one NUMA domain: same as multi-thread"},
      {"gemm", "gpu", "n=29440", 1, 1, 1, "ok", ""},
      {"gemm", "multi-gpu", "n=29440", 2, 1, 2, "ok", ""},
      {"gemm", "gpu-staged", "n=29440", 2, 1, 2, "failed",
       "exit 3: rank 1 on gpu-host: not enough device memory for n=29440 (needs 20.8 GiB, 18.2 GiB free on GPU "
       "0000:00:07.0); a smaller --n or --share-gpu off"},
      {"gemm", "multinode", "n=8192", 0, 0, 0, "skipped", "one node"},
      {"montecarlo", "naive", "samples=5e7", 1, 1, 0, "ok", ""},
      {"montecarlo", "single-core", "samples=1e9", 1, 1, 0, "ok", ""},
      {"montecarlo", "multi-thread", "samples=1e9", 1, 32, 0, "ok", ""},
      {"montecarlo", "gpu", "samples=1e11", 1, 1, 1, "ok", ""},
      {"montecarlo", "gpu-naive", "samples=1e11", 1, 1, 1, "ok", ""},
      {"montecarlo", "multi-gpu", "samples=1e11", 2, 1, 2, "ok", ""},
      {"montecarlo", "multinode", "samples=1e9", 0, 0, 0, "skipped", "one node"},
  };
  json runs = json::array();
  double t = 1000.0;
  for (const Row& r : rows) {
    json row = {{"workload", r.workload}, {"mode", r.mode},     {"size", r.size},
                {"status", r.status},     {"reason", r.reason}, {"nodes", 1}};
    if (std::string(r.status) == "ok") {
      t /= 3.7;
      row.update({{"ranks", r.ranks},
                  {"threads_per_rank", r.threads},
                  {"gpus", r.gpus},
                  {"time_s", t},
                  {"rate", 123456.7 / t},
                  {"rate_unit", std::string(r.workload) == "gemm" ? "GFLOP/s" : "samples/s"},
                  {"share", {{"compute", 0.85}, {"communication", 0.1}, {"transfer", 0.05}}},
                  {"speedup_vs_single_core", 1000.0 / t},
                  {"parallel_efficiency", 0.93},
                  {"energy", {{"per_result_j", 1234.5}, {"counted", r.gpus > 0 ? "cpu+gpu" : "cpu"}}},
                  {"command", std::string("mpirun -np 2 scalebench ") + r.workload + " --" + r.size},
                  {"record", dir + (r.gpus > 0 ? "/runs/gpu.json" : "/runs/cpu.json")}});
    }
    runs.push_back(row);
  }
  std::ofstream(dir + "/contrast.json") << json{{"host", "gpu-host"}, {"launcher", "mpirun"}, {"runs", runs}}.dump();
  return dir;
}

}  // namespace

TEST(ReportCli, APageNamesTheGpusOfARecordedGpuRunAndFitsA1300PxWindow) {
  NEED_MATPLOTLIB();
  const std::string dir = make_temp_dir();
  const std::string c = gpu_machine_contrast(dir + "/c");
  const CliRun r = report_with(runners()[0], c);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string page = read_file(c + "/report.html");
  // The machine: every GPU the runs used once (the gpu row's and the multi-gpu row's are the same
  // two), the driver, CUDA and NCCL beside the CPU, MPI and BLAS.
  for (const char* line :
       {"<dt>GPUs</dt><dd>2 × NVIDIA H100 80GB HBM3</dd>", "<dt>GPU driver</dt><dd>580.159.04</dd>",
        "<dt>CUDA</dt><dd>runtime 13.0, driver supports 13.0, cuBLAS 13.1.0</dd>", "<dt>NCCL</dt><dd>2.28.3</dd>",
        "<dt>CPU</dt><dd>Intel(R) Xeon(R) Processor</dd>", "<dt>MPI</dt><dd>Open MPI v4.1.4",
        "<dt>OpenBLAS</dt><dd>OpenBLAS 0.3.21", "<dt>git</dt><dd>6a65d3d891de</dd>"}) {
    EXPECT_NE(page.find(line), std::string::npos) << line;
  }
  EXPECT_NE(page.find("data-label=\"status\">failed: exit 3"), std::string::npos) << "the reason, in the table";
  if (!have_chromium())
    GTEST_SKIP() << "chromium is not installed (tools/setup installs it in CI, or with SCALEBENCH_SETUP_BROWSER=1)";
  check_in_browser(c + "/report.html", {"fig-speedup-gemm", "fig-speedup-montecarlo"}, dir);
}

TEST(ReportCli, AnExportedTreeSaysSoBesideItsRevision) {
  NEED_MATPLOTLIB();
  const std::string dir = make_temp_dir();
  const std::string c = made_up_contrast(dir + "/c", 1);
  json rec = json::parse(read_file(c + "/runs/1.json"));
  rec["versions"]["git_source"] = "export";
  std::ofstream(c + "/runs/1.json") << rec.dump();
  const CliRun r = report_with(runners()[1], c);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(read_file(c + "/report.html").find("<dt>git</dt><dd>0123456789ab (exported tree)</dd>"), std::string::npos);
}
