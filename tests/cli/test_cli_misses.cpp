// tools/misses: the miss distribution over records, run as a user runs it. The records here are
// fixtures written by the test with known predicted and measured seconds (the figures the model
// and the runs would put there), so every number the tool prints is known beforehand.
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"

using nlohmann::json;

namespace {

std::string tool() { return std::string(std::getenv("SCALEBENCH_SOURCE_DIR")) + "/tools/misses"; }

// A record as a run writes it, reduced to what the tool reads.
json record(int id, double predicted, double measured) {
  return {{"subcommand", "gemm"},
          {"started_at", "2026-11-27T00:00:" + std::to_string(10 + id) + "Z"},
          // A list, as every record has it (the tool once failed on one: its key must be hashable).
          {"command_line", json::array({"scalebench", "gemm", "--n=" + std::to_string(1000 + id), "--json", "r.json"})},
          {"hosts", json::array({"h"})},
          {"phases", {{"end_to_end", {{"median_s", measured}}}}},
          {"prediction",
           {{"available", true},
            {"end_to_end", {{"predicted_s", predicted}, {"measured_s", measured}}},
            {"miss_outside_band", 0.0},
            {"worst_phase", "compute"}}}};
}

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

}  // namespace

TEST(Misses, SummarizesAFolderCountingEachRecordOnce) {
  const std::string dir = make_temp_dir();
  ASSERT_EQ(mkdir((dir + "/runs").c_str(), 0755), 0);
  // Misses of 0, 5, 10, 20 and 40 %: median 10 %, 90th percentile 32 % (between 20 and 40).
  const double measured[] = {1.0, 1.05, 1.1, 1.2, 1.4};
  std::string jsonl;
  for (int i = 0; i < 5; ++i) {
    write(dir + "/runs/" + std::to_string(i) + ".json", record(i, 1.0, measured[i]).dump());
    jsonl += json{{"key", std::to_string(i)}, {"status", "ok"}, {"record", record(i, 1.0, measured[i])}}.dump() + "\n";
  }
  write(dir + "/runs.jsonl", jsonl + "{\"torn");
  json none = record(9, 1.0, 1.0);
  none["prediction"] = {{"available", false}, {"reason", "no profile at p; run `scalebench calibrate`"}};
  write(dir + "/runs/none.json", none.dump());
  write(dir + "/summary.json", "{\"runs\": []}");  // not a record: left alone

  const CliRun r = run_command(tool() + " " + dir + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json s = json::parse(r.output);
  EXPECT_EQ(s["records"], 5);
  EXPECT_EQ(s["without_prediction"]["no profile at p"], 1) << s.dump();
  EXPECT_NEAR(s["median_abs_miss"].get<double>(), 0.10, 1e-9);
  EXPECT_NEAR(s["p90_abs_miss"].get<double>(), 0.32, 1e-9);
  EXPECT_EQ(s["long_runs"], 5);
  EXPECT_EQ(s["long_runs_within_15pct"], 3);
  EXPECT_FALSE(s["contract_holds"]);
  EXPECT_NEAR(s["worst"][0]["miss"].get<double>(), 0.4, 1e-9);

  const CliRun text = run_command(tool() + " " + dir + "/runs/0.json " + dir + "/runs/1.json");
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_NE(text.output.find("records with a prediction: 2"), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("contract (median <= 10%, 90th percentile <= 25%, every run >= 1 s within +-15%): holds"),
            std::string::npos)
      << text.output;
}

TEST(Misses, BadInputGetsOneLineAndItsCode) {
  const std::string dir = make_temp_dir();
  write(dir + "/note.json", "{\"a\": 1}");
  write(dir + "/broken.json", "{\"a\":");
  ASSERT_EQ(mkfifo((dir + "/fifo.json").c_str(), 0600), 0);
  ASSERT_EQ(mkdir((dir + "/empty").c_str(), 0755), 0);
  const struct {
    std::string args;
    int code;
    std::string names;
  } cases[] = {
      {dir + "/missing.json", 2, "missing.json does not exist"},
      {dir + "/note.json", 2, "is not a scalebench run record"},
      {dir + "/broken.json", 2, "is not JSON"},
      {dir + "/fifo.json", 2, "is a FIFO, not a regular file"},
      {"", 2, "name at least one"},
      {dir + " --worst x", 2, "--worst 'x' is not a number"},
      {dir + " --min-seconds nan", 2, "must be a finite number"},
      {dir + " --frobnicate", 2, "unknown option"},
      {dir + "/empty", 3, "no record with a prediction"},
  };
  for (const auto& c : cases) {
    const CliRun r = run_command("timeout 20 " + tool() + " " + c.args);
    EXPECT_EQ(r.exit_code, c.code) << c.args << "\n" << r.output;
    EXPECT_EQ(count_of(r.output, "tools/misses: "), 1) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find(c.names), std::string::npos) << c.args << "\n" << r.output;
    EXPECT_EQ(r.output.find("Traceback"), std::string::npos) << r.output;
  }
  // A folder that holds a FIFO among its files is read without blocking on it.
  const CliRun folder = run_command("timeout 20 " + tool() + " " + dir);
  EXPECT_EQ(folder.exit_code, 3) << folder.output;
}
