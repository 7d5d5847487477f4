// `scalebench compare` on synthetic records with known shifts (none, 3% with noise, 20% in one
// phase, fewer repeats than the test needs): the verdict and the exit code of each; runs matched
// across results folders with extra and missing runs; the trend over folders; hostile inputs
// refused as every reader refuses them (one line, the documented exit code, nothing written); and
// the --report page: both runs side by side with the slower phase marked, the trend of a history,
// hostile strings escaped, its place checked before any work, a stop signal leaving nothing, and
// the page as headless Chromium renders it.
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "browser_check.hpp"
#include "cli_runner.hpp"

namespace {

using nlohmann::json;

constexpr int kSlower = 10;

// `count` repeats around `base` seconds: base × (1 + noise × u) with u a fixed sequence in [−1, 1]
// (a different one for each `draw`), so every run of the test sees the same times.
std::vector<double> repeats(double base, double noise, int count, int draw) {
  std::vector<double> out;
  for (int i = 0; i < count; ++i) {
    const double u = std::sin(1.7 * (i + 1) + 3.1 * draw);
    out.push_back(base * (1 + noise * u));
  }
  return out;
}

struct Shift {
  double compute = 1.0;  // factor on the compute phase
  double other = 1.0;    // factor on the other phases
  double noise = 0.01;
  int reps = 10;
  int draw = 0;
  std::string git = "aaaaaaaaaaaa";
  std::string host = "node1";
};

// A gemm record as the run writes it, with the phases' per-repeat times.
json record(int n, const Shift& s) {
  json phases = json::object();
  const std::map<std::string, double> base = {{"scatter", 0.002}, {"compute", 0.010}, {"gather", 0.002}};
  std::vector<double> total(s.reps, 0.0);
  int d = s.draw;
  for (const auto& [name, seconds] : base) {
    const double f = name == "compute" ? s.compute : s.other;
    const std::vector<double> t = repeats(seconds * f, s.noise, s.reps, d++);
    for (int i = 0; i < s.reps; ++i) total[i] += t[i];
    std::vector<double> sorted = t;
    std::sort(sorted.begin(), sorted.end());
    phases[name] = {{"median_s", sorted[sorted.size() / 2]},
                    {"min_s", sorted.front()},
                    {"max_s", sorted.back()},
                    {"per_repeat_max_s", t}};
  }
  std::vector<double> sorted = total;
  std::sort(sorted.begin(), sorted.end());
  phases["end_to_end"] = {{"median_s", sorted[sorted.size() / 2]}, {"per_repeat_max_s", total}};
  phases["setup_generate"] = {{"median_s", 0.5}};
  return {{"schema_version", 1},
          {"subcommand", "gemm"},
          {"command_line",
           {"scalebench", "gemm", "--n", std::to_string(n), "--reps", std::to_string(s.reps), "--json", "/tmp/x.json"}},
          {"versions", {{"scalebench", "0.1.0"}, {"git", s.git}}},
          {"hosts", {s.host}},
          {"ranks", 1},
          {"config", {{"backend", "openblas"}, {"threads_per_rank", 1}, {"n", n}}},
          {"phases", phases},
          {"ok", true},
          {"status", "ok"},
          {"exit_code", 0}};
}

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

std::string record_file(const std::string& dir, const std::string& name, const json& r) {
  const std::string path = dir + "/" + name;
  write(path, r.dump());
  return path;
}

// A study's line for a run of size n.
json line(int n, const Shift& s, const std::string& status = "ok") {
  return {{"key", "gemm ranks=1 n=" + std::to_string(n)},
          {"status", status},
          {"launch_failed", false},
          {"record", status == "ok" ? record(n, s) : json(nullptr)}};
}

std::string folder(const std::string& parent, const std::string& name, const std::vector<json>& lines) {
  const std::string dir = parent + "/" + name;
  ::mkdir(dir.c_str(), 0755);
  std::string text;
  for (const json& l : lines) text += l.dump() + "\n";
  write(dir + "/runs.jsonl", text);
  return dir;
}

// Two records of one run compared: its exit code and output.
CliRun compare_records(const Shift& a, const Shift& b, const std::string& options = "") {
  const std::string dir = make_temp_dir();
  return run_scalebench("compare " + record_file(dir, "a.json", record(64, a)) + " " +
                        record_file(dir, "b.json", record(64, b)) + " " + options);
}

TEST(CliCompare, NoShiftIsTheSame) {
  Shift b;
  b.draw = 7;
  const CliRun r = compare_records(Shift{}, b);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("gemm ranks=1 n=64 reps=10: same"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("0 slower, 0 faster, 1 same"), std::string::npos) << r.output;
}

TEST(CliCompare, ThreePercentWithNoiseIsTheSame) {
  Shift a;
  a.noise = 0.03;
  Shift b = a;
  b.compute = b.other = 1.03;
  b.draw = 5;
  const CliRun r = compare_records(a, b);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(count_of(r.output, " slower\n"), 0) << r.output;
}

TEST(CliCompare, TwentyPercentInOnePhaseIsSlower) {
  Shift b;
  b.compute = 1.2;
  b.draw = 3;
  const std::string dir = make_temp_dir();
  const CliRun r = compare_records(Shift{}, b, "--json " + dir + "/c.json");
  EXPECT_EQ(r.exit_code, kSlower) << r.output;
  EXPECT_NE(r.output.find("n=64 reps=10: slower (end_to_end ×1.14"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(", compute ×1.19"), std::string::npos) << r.output;
  const json j = json::parse(read_file(dir + "/c.json"));
  EXPECT_EQ(j["exit_code"], kSlower);
  ASSERT_EQ(j["runs"].size(), 1u);
  std::map<std::string, std::string> verdicts;
  for (const json& p : j["runs"][0]["phases"]) verdicts[p["phase"]] = p["verdict"];
  EXPECT_EQ(verdicts["compute"], "slower");
  EXPECT_EQ(verdicts["scatter"], "same");
  EXPECT_EQ(verdicts["gather"], "same");
  EXPECT_EQ(verdicts.count("setup_generate"), 0u);  // timed once: not compared
  for (const json& p : j["runs"][0]["phases"]) {
    if (p["phase"] != "compute") continue;
    EXPECT_EQ(p["p_method"], "exact");
    EXPECT_LT(p["p"].get<double>(), 0.01);
    ASSERT_TRUE(p["interval"].is_array());
    EXPECT_LT(p["interval"][0].get<double>(), 1.2);
    EXPECT_GT(p["interval"][1].get<double>(), 1.2);
  }
}

TEST(CliCompare, TwentyPercentFasterIsNotAFailure) {
  Shift b;
  b.compute = 1 / 1.2;
  const CliRun r = compare_records(Shift{}, b);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find(": faster (end_to_end ×0.88"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(", compute ×0.83"), std::string::npos) << r.output;
}

TEST(CliCompare, FewerRepeatsThanTheTestNeeds) {
  Shift a;
  a.reps = 4;  // the smallest p of 4 against 4 is 2/70 > 0.01
  Shift b = a;
  b.compute = 1.2;
  const CliRun r = compare_records(a, b);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find(": too few repeats"), std::string::npos) << r.output;
  // A looser p-value threshold the test can reach makes it slower.
  EXPECT_EQ(compare_records(a, b, "--p-max 0.05").exit_code, kSlower);
}

TEST(CliCompare, TheThresholdsAreOptions) {
  Shift b;
  b.compute = 1.2;
  EXPECT_EQ(compare_records(Shift{}, b, "--min-change 25").exit_code, 0);
  EXPECT_EQ(compare_records(Shift{}, b, "--phases scatter,gather").exit_code, 0);
  EXPECT_EQ(compare_records(Shift{}, b, "--phases end_to_end,compute").exit_code, kSlower);
}

TEST(CliCompare, TheContextThatDiffers) {
  Shift b;
  b.git = "bbbbbbbbbbbb";
  b.host = "node2";
  const CliRun r = compare_records(Shift{}, b);
  EXPECT_NE(r.output.find("differs: versions.git: aaaaaaaaaaaa -> bbbbbbbbbbbb"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("differs: hosts: node1 -> node2"), std::string::npos) << r.output;
}

// Folders of one study: A has n = 32, 64, 128; B has 64, 128, 256 and a failed 512. The matched
// runs are 64 and 128; 128 got 20% slower in compute.
TEST(CliCompare, FoldersMatchByKeyAndListTheRest) {
  const std::string dir = make_temp_dir();
  Shift slow;
  slow.compute = 1.2;
  slow.draw = 2;
  const std::string a = folder(dir, "a", {line(32, {}), line(64, {}), line(128, {})});
  const std::string b = folder(dir, "b",
                               {line(64, Shift{.draw = 9}), line(128, slow), line(256, {}), line(512, {}, "failed")});
  const CliRun r = run_scalebench("compare " + a + " " + b + " --json " + dir + "/c.json");
  EXPECT_EQ(r.exit_code, kSlower) << r.output;
  EXPECT_NE(r.output.find("gemm ranks=1 n=64: same"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("gemm ranks=1 n=128: slower"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("only in A (1):\n  gemm ranks=1 n=32"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("only in B (1):\n  gemm ranks=1 n=256"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("no ok run in B (1):\n  gemm ranks=1 n=512 (failed)"), std::string::npos) << r.output;
  const json j = json::parse(read_file(dir + "/c.json"));
  EXPECT_EQ(j["only_in_a"], json({"gemm ranks=1 n=32"}));
  EXPECT_EQ(j["only_in_b"], json({"gemm ranks=1 n=256"}));
  EXPECT_EQ(j["counts"]["slower"], 1);
  EXPECT_EQ(j["counts"]["same"], 1);
  // A runs.jsonl named directly is read the same way.
  EXPECT_EQ(run_scalebench("compare " + a + "/runs.jsonl " + b + "/runs.jsonl").exit_code, kSlower);
}

TEST(CliCompare, NoMatchedRunIsAnError) {
  const std::string dir = make_temp_dir();
  const std::string a = folder(dir, "a", {line(32, {}), line(64, {})});
  const std::string b = folder(dir, "b", {line(128, {}), line(256, {})});
  expect_refused("compare " + a + " " + b, 2, "no run of A");
}

TEST(CliCompare, ALineLeftOutIsNamedAndTheRestCompared) {
  const std::string dir = make_temp_dir();
  const std::string a = folder(dir, "a", {line(64, {})});
  const std::string b = folder(dir, "b", {line(64, Shift{.draw = 4})});
  std::ofstream(b + "/runs.jsonl", std::ios::app) << "{\"key\": \"gemm ranks=1 n=64\", \"status\": 7}\n{cut";
  const CliRun r = run_scalebench("compare " + a + " " + b);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(count_of(r.output, "scalebench compare: warning: "), 2) << r.output;
  EXPECT_NE(r.output.find("line 2 is cut or garbled"), std::string::npos) << r.output;
}

// Three nights of one study: n = 64 stays, n = 128 gets 20% slower in compute from the third.
TEST(CliCompare, HistoryFindsTheFirstFolderThatChanged) {
  const std::string dir = make_temp_dir();
  Shift slow;
  slow.compute = 1.2;
  std::vector<std::string> nights;
  for (int i = 0; i < 4; ++i) {
    Shift s = i >= 2 ? slow : Shift{};
    s.draw = i;
    nights.push_back(folder(dir, "night" + std::to_string(i + 1), {line(64, Shift{.draw = 10 + i}), line(128, s)}));
  }
  const CliRun r = run_scalebench("compare --history " + nights[0] + " " + nights[1] + " " + nights[2] + " " +
                                  nights[3] + " --json " + dir + "/h.json");
  EXPECT_EQ(r.exit_code, kSlower) << r.output;
  EXPECT_NE(r.output.find("#3: slower ×1.2"), std::string::npos) << r.output;
  const json j = json::parse(read_file(dir + "/h.json"));
  ASSERT_EQ(j["runs"].size(), 2u);
  for (const json& run : j["runs"]) {
    for (const json& p : run["phases"]) {
      const bool moved = run["key"] == "gemm ranks=1 n=128" && (p["phase"] == "compute" || p["phase"] == "end_to_end");
      EXPECT_EQ(p["first_change"], moved ? json(2) : json(nullptr)) << run["key"] << " " << p["phase"];
    }
  }
  // Without the slow nights nothing is slower.
  EXPECT_EQ(run_scalebench("compare --history " + nights[0] + " " + nights[1]).exit_code, 0);
  expect_refused("compare --history " + nights[0], 2, "at least two folders");
}

// Hostile inputs: one line, the documented exit code, no --json written.
void expect_refused_writing_nothing(const std::string& a, const std::string& b, int code, const std::string& names) {
  const std::string out = make_temp_dir() + "/c.json";
  expect_refused("compare " + a + " " + b + " --json " + out, code, names);
  EXPECT_FALSE(file_exists(out)) << a;
}

TEST(CliCompare, HostileInputsAreRefused) {
  const std::string dir = make_temp_dir();
  const std::string good = record_file(dir, "good.json", record(64, {}));
  expect_refused_writing_nothing(dir + "/missing.json", good, 3, "missing.json");
  ASSERT_EQ(run_command("mkfifo " + dir + "/fifo.json").exit_code, 0);
  expect_refused_writing_nothing(good, dir + "/fifo.json", 3, "fifo.json");
  ASSERT_EQ(run_command("mkfifo " + dir + "/fifo.jsonl").exit_code, 0);
  expect_refused_writing_nothing(good, dir + "/fifo.jsonl", 3, "fifo.jsonl");
  // A folder with no runs.jsonl, and one whose runs.jsonl is a folder.
  ::mkdir((dir + "/empty").c_str(), 0755);
  expect_refused_writing_nothing(good, dir + "/empty", 2, "not a study or contrast folder");
  ::mkdir((dir + "/odd").c_str(), 0755);
  ::mkdir((dir + "/odd/runs.jsonl").c_str(), 0755);
  expect_refused_writing_nothing(good, dir + "/odd", 3, "runs.jsonl");
  expect_refused_writing_nothing(good, "/dev/zero", 3, "/dev/zero");
  write(dir + "/cut.json", record(64, {}).dump().substr(0, 100));
  expect_refused_writing_nothing(good, dir + "/cut.json", 2, "not valid JSON");
  write(dir + "/nan.json", "{\"subcommand\": \"gemm\", \"phases\": {\"compute\": {\"median_s\": NaN}}}");
  expect_refused_writing_nothing(good, dir + "/nan.json", 2, "nan.json");
  write(dir + "/list.json", "[1, 2]");
  expect_refused_writing_nothing(good, dir + "/list.json", 2, "must be a run record");
  json bad = record(64, {});
  bad["phases"] = "fast";
  expect_refused_writing_nothing(good, record_file(dir, "phases.json", bad), 2, "phases must be an object");
  bad = record(64, {});
  bad["phases"]["compute"]["per_repeat_max_s"][3] = "slow";
  expect_refused_writing_nothing(good, record_file(dir, "repeat.json", bad), 2,
                                 "phases.compute.per_repeat_max_s[3] must be a number");
  bad = record(64, {});
  bad["phases"]["compute"]["per_repeat_max_s"][0] = -1;
  expect_refused_writing_nothing(good, record_file(dir, "negative.json", bad), 2, "per_repeat_max_s[0]");
  bad = record(64, {});
  bad["ranks"] = "two";
  expect_refused_writing_nothing(good, record_file(dir, "ranks.json", bad), 2, "ranks");
  // A runs.jsonl with no finished run.
  const std::string none = folder(dir, "none", {line(64, {}, "failed")});
  expect_refused_writing_nothing(good, none, 2, "no finished run");
}

// Every reader of a record applies one rule (docs/output.md, "Reading runs.jsonl"): what the
// drivers leave out of a runs.jsonl line, compare refuses in a record — a byte-order mark, a key
// twice, a command line that is not argv — with one line and exit 2.
TEST(CliCompare, ARecordIsReadByTheRuleOfEveryReader) {
  const std::string dir = make_temp_dir();
  const std::string good = record_file(dir, "good.json", record(64, {}));
  write(dir + "/bom.json", "\xEF\xBB\xBF" + record(64, {}).dump());
  expect_refused_writing_nothing(good, dir + "/bom.json", 2, "bom.json starts with a byte-order mark");
  std::string twice = record(64, {}).dump();
  twice.insert(1, "\"ranks\": 4, ");
  write(dir + "/twice.json", twice);
  expect_refused_writing_nothing(good, dir + "/twice.json", 2, "holds the key \"ranks\" twice in one object");
  for (const json& value : {json("scalebench gemm --n 64"), json({"scalebench", "gemm", "--n", 64}), json(7)}) {
    SCOPED_TRACE(value.dump());
    json bad = record(64, {});
    bad["command_line"] = value;
    expect_refused_writing_nothing(good, record_file(dir, "cmd.json", bad), 2, "command_line");
  }
  // A runs.jsonl line that starts with a byte-order mark is left out, as the drivers leave it out.
  const std::string a = folder(dir, "a", {line(64, {})});
  const std::string b = folder(dir, "b", {line(64, Shift{.draw = 4})});
  write(b + "/runs.jsonl", "\xEF\xBB\xBF" + line(64, Shift{.draw = 4}).dump() + "\n" + read_file(b + "/runs.jsonl"));
  const CliRun r = run_scalebench("compare " + a + " " + b);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("line 1 is cut or garbled, or not a driver's line: starts with a byte-order mark"),
            std::string::npos)
      << r.output;
  // The options of a record's command line key it: a whole rank count written 2.0 keeps its place.
  json two = record(64, {});
  two["ranks"] = 2.0;
  const CliRun k = run_scalebench("compare " + record_file(dir, "two.json", two) + " " +
                                  record_file(dir, "two-b.json", two));
  EXPECT_EQ(k.exit_code, 0) << k.output;
  EXPECT_NE(k.output.find("gemm ranks=2 n=64 reps=10: same"), std::string::npos) << k.output;
}

// A failed run (its check failed: "ok": false, exit 4) measured no correct result: a bare record of
// one is refused (exit 2), and in a folder it is listed with the runs that have no ok run.
TEST(CliCompare, AFailedRunIsNotAMeasurement) {
  const std::string dir = make_temp_dir();
  const std::string good = record_file(dir, "good.json", record(64, {}));
  json failed = record(64, Shift{.draw = 3});
  failed["ok"] = false;
  failed["status"] = "verification_failed";
  failed["exit_code"] = 4;
  expect_refused_writing_nothing(good, record_file(dir, "failed.json", failed), 2,
                                 "failed.json is the record of a run that failed its check (\"ok\": false)");
  expect_refused_writing_nothing(record_file(dir, "failed-a.json", failed), good, 2, "compare A: ");
  // As a study writes it (status failed, exit 4, the record kept) it is no ok run of its key; a
  // line that says "ok" with such a record is left out with a warning, as every reader does.
  json failed_line = line(128, {}, "failed");
  failed_line["record"] = failed;
  json lying_line = line(64, Shift{.draw = 2});
  lying_line["record"]["ok"] = false;
  const std::string a = folder(dir, "a", {line(32, {}), line(64, {}), line(128, {})});
  const std::string b = folder(dir, "b", {line(32, Shift{.draw = 5}), lying_line, failed_line});
  const CliRun r = run_scalebench("compare " + a + " " + b + " --json " + dir + "/c.json");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("line 2 is cut or garbled, or not a driver's line: record is of a run that failed its "
                          "check (\"ok\": false) while status is \"ok\""),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("no ok run in B (1):\n  gemm ranks=1 n=128 (failed)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("only in A (2):\n  gemm ranks=1 n=64\n  gemm ranks=1 n=128"), std::string::npos) << r.output;
  const json j = json::parse(read_file(dir + "/c.json"));
  ASSERT_EQ(j["runs"].size(), 1u);
  EXPECT_EQ(j["runs"][0]["key"], "gemm ranks=1 n=32");
}

// A record `r` whose every phase took `seconds` in each repeat (a little noise, so no ties).
json with_times(json r, double seconds) {
  for (auto& [name, p] : r["phases"].items()) {
    if (name.starts_with("setup_")) continue;
    std::vector<double> t;
    for (int i = 0; i < 10; ++i) t.push_back(seconds * (1 + 0.001 * i));
    p["per_repeat_max_s"] = t;
    p["median_s"] = t[5];
  }
  return r;
}

// No number the table prints is inf, nan or a row of digits.
void expect_legible(const std::string& text) {
  for (const char* word : {"inf", "nan", "NaN", "Inf"}) EXPECT_EQ(text.find(word), std::string::npos) << text;
  int run = 0;
  for (const char c : text) {
    run = std::isdigit(static_cast<unsigned char>(c)) ? run + 1 : 0;
    EXPECT_LT(run, 16) << text;
    if (run >= 16) break;
  }
}

// Times no clock measures or no run lasts are refused by the record rule; the extremes it accepts
// (a picosecond against a century) print as legible numbers, their ratio too, and --json holds no
// inf or nan (which JSON would write as null).
TEST(CliCompare, ExtremeTimesAreRefusedOrPrintedLegibly) {
  const std::string dir = make_temp_dir();
  const std::string good = record_file(dir, "good.json", record(64, {}));
  for (const double s : {5e-324, 1e-300, 1e308, 4e9}) {
    SCOPED_TRACE(s);
    expect_refused_writing_nothing(good, record_file(dir, "x.json", with_times(record(64, {}), s)), 2,
                                   "must be a measured time: 0 or seconds in [1e-12, 3.2e+09]");
  }
  json fast = with_times(record(64, {}), 1e-12);
  json slow = with_times(record(64, {}), 3.1e9);
  // A model that predicted almost nothing for A: no ratio of predictions to show.
  fast["prediction"] = {{"available", true}, {"end_to_end", {{"predicted_s", 5e-324}, {"measured_s", 1e-12}}}};
  slow["prediction"] = {{"available", true}, {"end_to_end", {{"predicted_s", 3.1e9}, {"measured_s", 3.1e9}}}};
  const CliRun r = run_scalebench("compare " + record_file(dir, "fast.json", fast) + " " +
                                  record_file(dir, "slow.json", slow) + " --json " + dir + "/c.json");
  EXPECT_EQ(r.exit_code, kSlower) << r.output;
  expect_legible(r.output);
  const auto row = r.output.find("\n  end_to_end ");
  ASSERT_NE(row, std::string::npos) << r.output;
  const std::string end_to_end = r.output.substr(row + 1, r.output.find('\n', row + 1) - row - 1);
  EXPECT_NE(end_to_end.find("e-12 "), std::string::npos) << end_to_end;
  EXPECT_NE(end_to_end.find("e+09 "), std::string::npos) << end_to_end;
  EXPECT_NE(end_to_end.find("e+21 "), std::string::npos) << end_to_end;
  EXPECT_EQ(r.output.find("model: predicted"), std::string::npos) << r.output;
  const json j = json::parse(read_file(dir + "/c.json"));
  for (const json& p : j["runs"][0]["phases"]) {
    ASSERT_TRUE(p["ratio"].is_number()) << p.dump();
    EXPECT_GT(p["ratio"].get<double>(), 1e21);
    ASSERT_TRUE(p["interval"].is_array()) << p.dump();
    EXPECT_TRUE(std::isfinite(p["interval"][1].get<double>()));
  }
  EXPECT_TRUE(j["runs"][0]["predicted_ratio"].is_null());
  // B against A the other way: a ratio of 3e-22 is printed as such, not as 0.000.
  const CliRun back = run_scalebench("compare " + dir + "/slow.json " + dir + "/fast.json");
  EXPECT_EQ(back.exit_code, 0) << back.output;
  expect_legible(back.output);
  EXPECT_NE(back.output.find("e-22 "), std::string::npos) << back.output;
}

TEST(CliCompare, BadOptionsAreRefused) {
  const std::string dir = make_temp_dir();
  const std::string good = record_file(dir, "good.json", record(64, {}));
  expect_refused("compare " + good + " " + good + " --p-max 0", 2, "--p-max");
  expect_refused("compare " + good + " " + good + " --p-max nan", 2, "--p-max");
  expect_refused("compare " + good + " " + good + " --confidence 1", 2, "--confidence");
  expect_refused("compare " + good + " " + good + " --min-change -5", 2, "--min-change");
  expect_refused("compare " + good + " " + good + " --phases compute,", 2, "--phases");
  // A phase no run times (a typo) would compare nothing and pass a CI gate.
  expect_refused("compare " + good + " " + good + " --phases nope", 2,
                 "--phases names nope, which no compared run times");
  expect_refused("compare " + good, 2, "two paths");
  expect_refused("compare " + good + " " + good + " --json " + dir, 3, dir);
}

// --report: the page of the comparison.

std::string binary() { return std::getenv("SCALEBENCH_BINARY"); }

std::string listing(const std::string& dir) { return run_command("ls -A '" + dir + "'").output; }

bool is_kind(const std::string& path, unsigned kind) {
  struct stat st {};
  return lstat(path.c_str(), &st) == 0 && (st.st_mode & S_IFMT) == kind;
}

// `scalebench compare <args>` with TMPDIR a fresh folder, which must be empty again when it ends.
CliRun compare_leaving_no_temporary(const std::string& args, const std::string& env = "") {
  const std::string tmp = make_temp_dir();
  const CliRun r = run_command("(TMPDIR='" + tmp + "' " + env + " timeout 120 '" + binary() + "' compare " + args +
                               ")");
  EXPECT_EQ(listing(tmp), "") << "temporary files left in TMPDIR";
  return r;
}

// The part of `page` from the run section `id` ("run-2") to its end; empty when there is none.
std::string run_part(const std::string& page, const std::string& id) {
  const auto at = page.find("id=\"" + id + "\"");
  if (at == std::string::npos) return "";
  const auto from = page.rfind("<section", at);
  return page.substr(from, page.find("</section>", at) - from);
}

// The table row of `phase` in a run's part: from its <tr to </tr>; empty when there is none.
std::string phase_row(const std::string& part, const std::string& phase) {
  const auto cell = part.find("data-label=\"phase\">" + phase + "</td>");
  if (cell == std::string::npos) return "";
  const auto from = part.rfind("<tr", cell);
  return part.substr(from, part.find("</tr>", cell) - from);
}

// The figure `id` of a page (from <figure to </figure>); empty when there is none.
std::string figure(const std::string& page, const std::string& id) {
  const auto from = page.find("<figure id=\"" + id + "\">");
  if (from == std::string::npos) return "";
  return page.substr(from, page.find("</figure>", from) - from);
}

std::string number_text(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string lower(std::string s) {
  for (auto& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

// Folders of one study as FoldersMatchByKeyAndListTheRest has them: n = 128 20% slower in compute,
// n = 32 only in A, n = 256 only in B; B built from another commit for n = 128.
std::pair<std::string, std::string> two_nights(const std::string& dir) {
  Shift slow;
  slow.compute = 1.2;
  slow.draw = 2;
  slow.git = "bbbbbbbbbbbb";
  return {folder(dir, "a", {line(32, {}), line(64, {}), line(128, {})}),
          folder(dir, "b", {line(64, Shift{.draw = 9}), line(128, slow), line(256, {})})};
}

// Renders a compare page and checks what a reader would see (browser_check.hpp): the figures, no
// sideways scrolling of the page or of the first run's table on a desktop and on a phone.
void check_compare_page_in_browser(const std::string& page, const std::vector<std::string>& figures) {
  if (!have_chromium()) {
    std::printf("[ SKIPPED  ] the Chromium check: chromium is not installed (tools/setup installs it)\n");
    return;
  }
  const std::string dir = make_temp_dir();
  const std::string dom = dom_in_browser(page, dir);
  ASSERT_FALSE(dom.empty());
  for (const auto& f : figures) {
    const auto at = dom.find("<figure id=\"" + f + "\">");
    ASSERT_NE(at, std::string::npos) << f << " missing";
    EXPECT_NE(dom.find("<svg", at), std::string::npos) << f;
  }
  check_widths(page, dir, "#run-1 .scroll");
  if (!python_with_matplotlib().empty()) check_screenshot(page, dir);
}

TEST(CliCompare, TheReportShowsEachPhaseSideBySideAndMarksTheSlowerOne) {
  const std::string dir = make_temp_dir();
  const auto [a, b] = two_nights(dir);
  const std::string out = make_temp_dir();
  const CliRun r = compare_leaving_no_temporary(a + " " + b + " --json " + out + "/c.json --report " + out + "/c.html");
  EXPECT_EQ(r.exit_code, kSlower) << "the exit code is the comparison's, page or not: " << r.output;
  EXPECT_NE(r.output.find("scalebench compare: report: " + out + "/c.html"), std::string::npos) << r.output;
  EXPECT_EQ(listing(out), "c.html\nc.json\n") << "no temporary page beside it";
  const std::string page = read_file(out + "/c.html");
  const json j = json::parse(read_file(out + "/c.json"));
  ASSERT_EQ(j["runs"].size(), 2u);
  ASSERT_EQ(j["runs"][1]["key"], "gemm ranks=1 n=128");

  // The slower run and its slower phase are named at the top, and the same run is not.
  const std::string alarm = page.substr(page.find("<p class=\"alarm\" id=\"slower\">"), 400);
  EXPECT_NE(alarm.find("<a href=\"#run-2\">gemm ranks=1 n=128</a>"), std::string::npos) << alarm;
  EXPECT_NE(alarm.find("compute ×1.2"), std::string::npos) << alarm;
  EXPECT_EQ(alarm.find("n=64"), std::string::npos) << alarm;

  // Each run: its verdict, and each phase side by side with the numbers of --json.
  for (std::size_t i = 0; i < 2; ++i) {
    const json& run = j["runs"][i];
    const std::string verdict = run["verdict"];
    const std::string part = run_part(page, "run-" + std::to_string(i + 1));
    SCOPED_TRACE(run["key"].get<std::string>());
    ASSERT_FALSE(part.empty());
    EXPECT_EQ(part.find("<section class=\"run " + verdict + "\" id=\"run-" + std::to_string(i + 1) + "\"><h3>" +
                        run["key"].get<std::string>() + " <span class=\"verdict " + verdict + "\">"),
              0u)
        << part.substr(0, 300);
    for (const json& p : run["phases"]) {
      const std::string phase = p["phase"];
      const std::string row = phase_row(part, phase);
      ASSERT_FALSE(row.empty()) << phase;
      const bool slower = p["verdict"] == "slower";
      EXPECT_EQ(row.rfind("<tr class=\"slower\">", 0) == 0, slower) << row;
      EXPECT_EQ(row.find("▲ slower") != std::string::npos, slower) << row;
      EXPECT_NE(row.find(">" + number_text("%.4g", p["a"]["median_s"]) + "</td>"), std::string::npos) << row;
      EXPECT_NE(row.find(">" + number_text("%.4g", p["b"]["median_s"]) + "</td>"), std::string::npos) << row;
      EXPECT_NE(row.find(">" + number_text("%.3f", p["ratio"]) + "</td>"), std::string::npos) << row;
      EXPECT_NE(row.find(">[" + number_text("%.3f", p["interval"][0]) + ", " + number_text("%.3f", p["interval"][1]) +
                         "]</td>"),
                std::string::npos)
          << row;
      EXPECT_NE(row.find(">10/10</td>"), std::string::npos) << row;
    }
    // Its figure: a bar for A and one for B per phase (and the legend's two swatches).
    const std::string fig = figure(page, "fig-run-" + std::to_string(i + 1));
    EXPECT_EQ(count_of(fig, "<rect "), 2 + 2 * static_cast<int>(run["phases"].size())) << fig;
  }
  EXPECT_EQ(j["runs"][1]["verdict"], "slower");
  EXPECT_FALSE(phase_row(run_part(page, "run-2"), "compute").empty());
  EXPECT_EQ(phase_row(run_part(page, "run-2"), "compute").rfind("<tr class=\"slower\">", 0), 0u);

  // What was compared: the inputs, and the git hash that differs marked.
  EXPECT_NE(page.find("<th class=\"l\">path</th><td>" + a + "</td><td>" + b + "</td>"), std::string::npos);
  EXPECT_NE(page.find("<tr class=differs><th class=\"l\">git</th><td>aaaaaaaaaaaa</td><td>aaaaaaaaaaaa, "
                      "bbbbbbbbbbbb</td></tr>"),
            std::string::npos);
  EXPECT_NE(page.find("<tr><th class=\"l\">hosts</th><td>node1</td><td>node1</td></tr>"), std::string::npos);
  EXPECT_NE(page.find("differs: <code>versions.git</code>: aaaaaaaaaaaa → bbbbbbbbbbbb"), std::string::npos);
  // The unmatched runs.
  EXPECT_NE(page.find("<h3>only in A (1)</h3><ul class=\"keys\"><li>gemm ranks=1 n=32</li></ul>"), std::string::npos);
  EXPECT_NE(page.find("<h3>only in B (1)</h3><ul class=\"keys\"><li>gemm ranks=1 n=256</li></ul>"), std::string::npos);
  // Self-contained: no script, nothing fetched.
  EXPECT_EQ(lower(page).find("<script"), std::string::npos);
  EXPECT_EQ(page.find("src="), std::string::npos);
  EXPECT_EQ(page.find("href=\"http"), std::string::npos);
  check_compare_page_in_browser(out + "/c.html", {"fig-run-1", "fig-run-2"});

  // Nothing slower: the page is written and the exit code stays 0.
  EXPECT_EQ(compare_leaving_no_temporary(a + " " + a + " --report " + out + "/same.html").exit_code, 0);
  EXPECT_EQ(read_file(out + "/same.html").find("class=\"alarm\""), std::string::npos);
}

TEST(CliCompare, TheReportOfAHistoryShowsEachRunsTrend) {
  const std::string dir = make_temp_dir();
  Shift slow;
  slow.compute = 1.2;
  std::string nights;
  for (int i = 0; i < 4; ++i) {
    Shift s = i >= 2 ? slow : Shift{};
    s.draw = i;
    nights += " " + folder(dir, "night" + std::to_string(i + 1), {line(64, Shift{.draw = 10 + i}), line(128, s)});
  }
  const std::string out = make_temp_dir();
  const CliRun r = compare_leaving_no_temporary("--history" + nights + " --report " + out + "/h.html");
  EXPECT_EQ(r.exit_code, kSlower) << r.output;
  EXPECT_EQ(listing(out), "h.html\n");
  const std::string page = read_file(out + "/h.html");
  EXPECT_NE(page.find("data-kind=\"compare-history\""), std::string::npos);
  for (int i = 1; i <= 4; ++i) {
    EXPECT_NE(page.find("<td class=\"l wide\" data-label=\"folder\">" + dir + "/night" + std::to_string(i) + "</td>"),
              std::string::npos);
  }
  const std::string same = run_part(page, "run-1");
  const std::string moved = run_part(page, "run-2");
  EXPECT_EQ(same.find("<section class=\"run same\" id=\"run-1\"><h3>gemm ranks=1 n=64 <span class=\"verdict same\">no "
                      "change</span>"),
            0u)
      << same.substr(0, 300);
  EXPECT_EQ(moved.find("<section class=\"run slower\" id=\"run-2\"><h3>gemm ranks=1 n=128 <span class=\"verdict "
                       "slower\">▲ slower in its last folder</span>"),
            0u)
      << moved.substr(0, 300);
  // compute: the same in folders 2, slower (+) in 3 and 4, its first change in folder 3.
  const std::string compute = phase_row(moved, "compute");
  EXPECT_EQ(count_of(compute, "<td class=\"slower\""), 2) << compute;
  EXPECT_NE(compute.find("data-label=\"#3\">0.012"), std::string::npos) << compute;
  EXPECT_NE(compute.find("#3: ▲ slower ×1.2"), std::string::npos) << compute;
  EXPECT_NE(phase_row(moved, "scatter").find(">no change</td>"), std::string::npos);
  EXPECT_EQ(count_of(same, "class=\"slower\""), 0) << same;
  // The trend figures: a line per phase; rings where slower (compute and end_to_end, folders 3, 4).
  const std::string fig_same = figure(page, "fig-trend-1");
  const std::string fig_moved = figure(page, "fig-trend-2");
  EXPECT_EQ(count_of(fig_same, "<polyline "), 4) << fig_same;
  EXPECT_EQ(count_of(fig_moved, "<polyline "), 4) << fig_moved;
  EXPECT_EQ(count_of(fig_same, "stroke=\"#c44e52\""), 0) << fig_same;
  EXPECT_EQ(count_of(fig_moved, "stroke=\"#c44e52\""), 4) << fig_moved;
  check_compare_page_in_browser(out + "/h.html", {"fig-trend-1", "fig-trend-2"});
}

TEST(CliCompare, HostileStringsAreEscapedInTheReport) {
  const std::string dir = make_temp_dir();
  const std::string hostile = R"(<script>alert(1)</script> "><img src=x onerror=alert(2)> $x^{ &amp;)";
  const auto hostile_record = [&](const Shift& s) {
    json r = record(64, s);
    r["cpu_model"] = hostile;
    r["hosts"] = {hostile};
    r["versions"]["mpi_library"] = hostile;
    r["phases"][hostile] = r["phases"]["gather"];
    r["command_line"].push_back("--label");
    r["command_line"].push_back(hostile);
    return r;
  };
  Shift changed;
  changed.git = hostile;
  changed.compute = 1.2;
  const auto key_line = [&](const std::string& key, const json& r, const std::string& status = "ok") {
    return json{{"key", key}, {"status", status}, {"launch_failed", false}, {"record", r}};
  };
  const std::string a = folder(dir, "a",
                               {key_line("gemm " + hostile, hostile_record({})),
                                key_line("only A " + hostile, hostile_record({}))});
  const std::string b = folder(dir, "b",
                               {key_line("gemm " + hostile, hostile_record(changed)),
                                key_line("failed " + hostile, nullptr, "failed")});
  const std::string page_path = dir + "/page.html";
  const CliRun r = compare_leaving_no_temporary(a + " " + b + " --report " + page_path);
  EXPECT_EQ(r.exit_code, kSlower) << r.output;
  const std::string page = read_file(page_path);
  EXPECT_EQ(lower(page).find("<script"), std::string::npos);
  EXPECT_EQ(lower(page).find("<img"), std::string::npos);
  const std::string escaped = "&lt;script&gt;alert(1)&lt;/script&gt; &quot;&gt;&lt;img src=x onerror=alert(2)&gt; "
                              "$x^{ &amp;amp;";
  // The run's key (title, alarm, figure's label), the phase (row, figure), the hosts, CPU, MPI and git
  // of each side, the context difference, the unmatched keys.
  EXPECT_GE(count_of(page, escaped), 10) << page;
  EXPECT_NE(page.find("<li>only A " + escaped + "</li>"), std::string::npos);
  EXPECT_NE(page.find("<li>failed " + escaped + " (failed)</li>"), std::string::npos);
  EXPECT_NE(page.find("data-label=\"phase\">" + escaped + "</td>"), std::string::npos);
  check_compare_page_in_browser(page_path, {"fig-run-1"});

  // A context value cut at its length limit inside a character, and an input path that is not
  // UTF-8: --json stays valid JSON and the page is written.
  Shift long_text;
  long_text.git = "x";  // then 2-byte characters: the 160-byte limit falls inside one
  for (int i = 0; i < 200; ++i) long_text.git += "é";
  const std::string odd = dir + "/odd-\xff";
  ::mkdir(odd.c_str(), 0755);
  const std::string odd_a = record_file(odd, "a.json", record(64, {}));
  const std::string odd_b = record_file(dir, "b.json", record(64, long_text));
  const CliRun cut = compare_leaving_no_temporary("'" + odd_a + "' " + odd_b + " --json " + dir +
                                                  "/cut.json --report " + dir + "/cut.html");
  EXPECT_EQ(cut.exit_code, 0) << cut.output;
  const json j = json::parse(read_file(dir + "/cut.json"), nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << read_file(dir + "/cut.json");
  const std::string git_b = j["runs"][0]["context"][0]["b"];
  EXPECT_EQ(git_b.substr(git_b.size() - 3), "…") << git_b;
  EXPECT_NE(j["a"]["path"].get<std::string>().find("\xef\xbf\xbd"), std::string::npos) << "U+FFFD for the byte";
  EXPECT_NE(read_file(dir + "/cut.html").find("</html>"), std::string::npos);
}

// The page drawn again from a saved --json by tools/report, whose comparison is an input as any:
// a field of the wrong kind is one line naming the file and the field, and no page.
TEST(CliCompare, ASavedComparisonIsDrawnAgainAndCheckedAsAnInput) {
  const std::string dir = make_temp_dir();
  const auto [a, b] = two_nights(dir);
  ASSERT_EQ(run_scalebench("compare " + a + " " + b + " --json " + dir + "/c.json").exit_code, kSlower);
  const std::string tool = "timeout 60 '" + std::string(std::getenv("SCALEBENCH_SOURCE_DIR")) + "/tools/report' ";
  CliRun r = run_command(tool + "--compare " + dir + "/c.json --out " + dir + "/again.html");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(read_file(dir + "/again.html").find("<section class=\"run slower\" id=\"run-2\">"), std::string::npos);
  const json good = json::parse(read_file(dir + "/c.json"));
  struct Case {
    std::string field;
    json value;
    std::string said;
  };
  for (const Case& k : std::vector<Case>{{"/runs/0/verdict", "<b>worse</b>", "\"verdict\" must be one of"},
                                         {"/runs/1/phases/0/p", -1, "\"p\" must be a finite number >= 0"},
                                         {"/runs/0/phases", "all", "\"phases\" must be a list"},
                                         {"/a/context/hosts", json::array({1}), "\"hosts\"[0] must be a string"},
                                         {"/subcommand", "report", "\"subcommand\" must be \"compare\""}}) {
    SCOPED_TRACE(k.field);
    json bad = good;
    bad[json::json_pointer(k.field)] = k.value;
    std::ofstream(dir + "/bad.json") << bad.dump();
    r = run_command(tool + "--compare " + dir + "/bad.json --out " + dir + "/bad.html");
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find(k.said), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(dir + "/bad.json"), std::string::npos) << r.output;
    EXPECT_EQ(count_of(r.output, "\n"), 1) << r.output;
    EXPECT_FALSE(file_exists(dir + "/bad.html"));
  }
  ASSERT_EQ(run_command("mkfifo " + dir + "/fifo.json").exit_code, 0);
  r = run_command(tool + "--compare " + dir + "/fifo.json --out " + dir + "/bad.html");
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("it is a FIFO"), std::string::npos) << r.output;
}

TEST(CliCompare, TheReportsPlaceIsCheckedBeforeAnyWork) {
  const std::string dir = make_temp_dir();
  const auto [a, b] = two_nights(dir);
  // A folder: refused before the inputs are read (they are missing here), and with inputs that
  // are there no table is printed: one line.
  CliRun r = run_scalebench("compare " + dir + "/missing-a.json " + dir + "/missing-b.json --report " + dir);
  EXPECT_TRUE(is_refusal(r, 3, "--report")) << r.output;
  EXPECT_NE(r.output.find("folder"), std::string::npos) << r.output;
  r = run_scalebench("compare " + a + " " + b + " --report " + dir);
  EXPECT_TRUE(is_refusal(r, 3, "--report " + dir)) << r.output;
  EXPECT_EQ(count_of(r.output, "\n"), 1) << r.output;
  expect_refused("compare " + a + " " + b + " --report " + dir + "/no-such-folder/c.html", 3, "--report");
  expect_refused("compare " + a + " " + b + " --json " + dir + "/c.html --report " + dir + "/c.html", 2,
                 "--json and --report");
  EXPECT_FALSE(file_exists(dir + "/c.html"));
  // /dev/null is written in place and stays a device; the exit code is the comparison's.
  r = compare_leaving_no_temporary(a + " " + b + " --report /dev/null");
  EXPECT_EQ(r.exit_code, kSlower) << r.output;
  EXPECT_TRUE(is_kind("/dev/null", S_IFCHR));
  // A FIFO nobody reads: the page cannot be written, exit 3 at once (no hang), the FIFO stays.
  ASSERT_EQ(run_command("mkfifo " + dir + "/fifo").exit_code, 0);
  r = compare_leaving_no_temporary(a + " " + b + " --json " + dir + "/c.json --report " + dir + "/fifo");
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("scalebench: error: cannot write --report " + dir + "/fifo: no process reads the pipe"),
            std::string::npos)
      << r.output;
  EXPECT_TRUE(is_kind(dir + "/fifo", S_IFIFO));
  EXPECT_TRUE(file_exists(dir + "/c.json")) << "the JSON, written before the page, is kept";
  // No Python to draw it: exit 3 naming what was tried.
  r = compare_leaving_no_temporary(a + " " + b + " --report " + dir + "/p.html",
                                   "SCALEBENCH_PYTHON=" + dir + "/no-such-python");
  EXPECT_TRUE(is_refusal(r, 3, "SCALEBENCH_PYTHON=" + dir + "/no-such-python: no such program")) << r.output;
  EXPECT_FALSE(file_exists(dir + "/p.html"));
}

TEST(CliCompare, AStopSignalWhileThePageIsDrawnLeavesNothingBehind) {
  const std::string dir = make_temp_dir();
  const auto [a, b] = two_nights(dir);
  const std::string out = make_temp_dir();
  const std::string tmp = make_temp_dir();
  // Its Python marks that it started, then waits, so the signal lands while the page is drawn
  // however fast or loaded the machine is.
  std::ofstream(dir + "/slow-python") << "#!/bin/sh\ntouch " << dir << "/drawing\nsleep 60\nexec python3 \"$@\"\n";
  ASSERT_EQ(run_command("chmod +x " + dir + "/slow-python").exit_code, 0);
  const CliRun r = run_command("(TMPDIR=" + tmp + " SCALEBENCH_PYTHON=" + dir + "/slow-python '" + binary() +
                               "' compare " + a + " " + b + " --json " + out + "/c.json --report " + out +
                               "/c.html & pid=$!; for i in $(seq 1200); do [ -e " + dir +
                               "/drawing ] && break; sleep 0.05; done; sleep 0.2; kill -TERM $pid; " +
                               "for i in $(seq 300); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done; " +
                               "kill -KILL $pid 2>/dev/null; wait $pid; echo rc=$?)");
  EXPECT_NE(r.output.find("rc=143"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("stopped by SIGTERM"), std::string::npos) << r.output;
  EXPECT_EQ(listing(tmp), "") << "temporary files left in TMPDIR";
  EXPECT_EQ(listing(out), "c.json\n") << "no page, no partial page; the JSON written before it kept";
}

}  // namespace
