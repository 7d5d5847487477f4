// `scalebench compare` on synthetic records with known shifts (none, 3% with noise, 20% in one
// phase, fewer repeats than the test needs): the verdict and the exit code of each; runs matched
// across results folders with extra and missing runs; the trend over folders; and hostile inputs
// refused as every reader refuses them (one line, the documented exit code, nothing written).
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

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

TEST(CliCompare, BadOptionsAreRefused) {
  const std::string dir = make_temp_dir();
  const std::string good = record_file(dir, "good.json", record(64, {}));
  expect_refused("compare " + good + " " + good + " --p-max 0", 2, "--p-max");
  expect_refused("compare " + good + " " + good + " --p-max nan", 2, "--p-max");
  expect_refused("compare " + good + " " + good + " --confidence 1", 2, "--confidence");
  expect_refused("compare " + good + " " + good + " --min-change -5", 2, "--min-change");
  expect_refused("compare " + good + " " + good + " --phases compute,", 2, "--phases");
  expect_refused("compare " + good, 2, "two paths");
  expect_refused("compare " + good + " " + good + " --json " + dir, 3, dir);
}

}  // namespace
