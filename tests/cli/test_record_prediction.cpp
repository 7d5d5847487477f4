// A run record's prediction is the model's answer for the configuration that ran, the same one
// `scalebench predict` gives with the same options and profile: for every algorithm, grid and
// distribution the CPU runs accept, and for Monte Carlo. The synthetic profile is made current
// for this host and build (its host and versions from a probe run's record), so every run is
// predicted; nothing is rebuilt from the record (a summa2d record once carried Row1D's figures).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"

using nlohmann::json;

namespace {

json read_json(const std::string& path) { return json::parse(read_file(path)); }

std::string binary() { return std::getenv("SCALEBENCH_BINARY"); }

// The synthetic profile, current for this host and build.
std::string current_profile(const std::string& dir) {
  const CliRun probe = run_scalebench("gemm --n 16 --threads 1 --reps 1 --warmup 0 --quiet --json " + dir +
                                      "/probe.json");
  EXPECT_EQ(probe.exit_code, 0) << probe.output;
  const json rec = read_json(dir + "/probe.json");
  json p = read_json(std::string(std::getenv("SCALEBENCH_SOURCE_DIR")) + "/tests/data/profile-synthetic.json");
  p["host"] = rec["rank_info"][0]["host"];
  p["versions"] = rec["versions"];
  const std::string path = dir + "/profile.json";
  std::ofstream(path) << p.dump();
  return path;
}

struct Case {
  const char* name;
  int ranks;
  std::string workload;  // "gemm" or "montecarlo"
  std::string options;   // the same for the run and for predict
  std::string env;       // the run's environment
};

const std::vector<Case> kCases = {
    {"row1d_1", 1, "gemm", "--n 48", ""},
    {"row1d_2", 2, "gemm", "--n 48 --algorithm row1d --distribution replicated", ""},
    {"row1d_3_fp32_uneven", 3, "gemm", "--m 50 --n 40 --k 30 --precision fp32 --algorithm row1d", ""},
    {"row1d_naive_2", 2, "gemm", "--n 32 --backend naive --algorithm row1d", ""},
    {"row1d_shared_2", 2, "gemm", "--n 48 --algorithm row1d --distribution shared", ""},
    {"row1d_shared_3", 3, "gemm", "--m 50 --n 40 --k 30 --algorithm row1d --distribution shared", ""},
    // No windows: shared runs as replicated, and is predicted as it ran.
    {"row1d_shared_fallback_2", 2, "gemm", "--n 48 --algorithm row1d --distribution shared",
     "SCALEBENCH_NO_SHARED_WINDOWS=1"},
    {"summa2d_2x2", 4, "gemm", "--n 48 --algorithm summa2d --grid 2x2", ""},
    {"summa2d_1x4", 4, "gemm", "--n 48 --algorithm summa2d --grid 1x4 --panel-width 8", ""},
    {"summa2d_4x1", 4, "gemm", "--n 48 --algorithm summa2d --grid 4x1", ""},
    {"summa2d_1x3_uneven", 3, "gemm", "--m 50 --n 40 --k 30 --algorithm summa2d --grid 1x3 --panel-width 7", ""},
    {"summa2d_2x1_naive", 2, "gemm", "--n 32 --algorithm summa2d --grid 2x1 --backend naive", ""},
    // Summa2D's lookahead from the profile's measured figures (pinned, and left to the model).
    {"summa2d_2x2_lookahead_2", 4, "gemm", "--n 48 --algorithm summa2d --grid 2x2 --lookahead 2", ""},
    // Nothing given: the schedule the model takes, the same in the run and in predict.
    {"defaulted_4", 4, "gemm", "--n 48", ""},
    {"montecarlo_pi_2", 2, "montecarlo", "--samples 100000", ""},
    {"montecarlo_european_naive_3", 3, "montecarlo", "--problem european --backend naive --samples 100000", ""},
    {"montecarlo_asian_1", 1, "montecarlo", "--problem asian --samples 10000", ""},
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class RecordPrediction : public ::testing::TestWithParam<Case> {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(make_temp_dir());
    profile_ = new std::string(current_profile(*dir_));
  }
  static std::string* dir_;
  static std::string* profile_;
};
std::string* RecordPrediction::dir_ = nullptr;
std::string* RecordPrediction::profile_ = nullptr;

TEST_P(RecordPrediction, EqualsPredictWithTheSameOptions) {
  const Case& c = GetParam();
  const std::string rec_path = *dir_ + "/" + c.name + ".json", pred_path = *dir_ + "/" + c.name + "-predict.json";
  const std::string options = c.workload + " " + c.options + " --threads 1 --reps 1 --warmup 0";
  const CliRun run = run_command(c.env + " SCALEBENCH_PROFILE=" + *profile_ + " " + std::getenv("SCALEBENCH_MPIEXEC") +
                                 " -np " + std::to_string(c.ranks) + " --oversubscribe " + binary() + " " + options +
                                 " --quiet --json " + rec_path + " 2>&1");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const json rec = read_json(rec_path);
  const json& got = rec["prediction"];
  ASSERT_TRUE(got["available"].get<bool>()) << got.dump();

  // The scheme that ran: --distribution shared runs as replicated where the node cannot hold its
  // windows, and is predicted as it ran.
  std::string predict_options = options;
  const json dist = rec.value("distribution", json::object());
  if (dist.value("scheme", "") == "replicated" && dist.value("requested_scheme", "") == "shared") {
    predict_options.replace(predict_options.find("--distribution shared"), 21, "--distribution replicated");
    EXPECT_FALSE(c.env.empty()) << "shared windows refused here: " << rec["warnings"].dump();
  }
  const CliRun pred = run_scalebench("predict " + predict_options + " --ranks-per-node " + std::to_string(c.ranks) +
                                     " --profile " + *profile_ + " --json " + pred_path);
  ASSERT_EQ(pred.exit_code, 0) << pred.output;
  const json want = read_json(pred_path);

  EXPECT_DOUBLE_EQ(got["end_to_end"]["predicted_s"].get<double>(), want["end_to_end_s"].get<double>())
      << got.dump() << "\n"
      << want.dump();
  int compared = 0;
  for (const auto& [phase, seconds] : want["phases"].items()) {
    if (!rec["phases"].contains(phase)) continue;  // compared only where the run measured it
    ASSERT_TRUE(got["phases"].contains(phase)) << phase << ": " << got.dump();
    EXPECT_DOUBLE_EQ(got["phases"][phase]["predicted_s"].get<double>(), seconds.get<double>()) << phase;
    ++compared;
  }
  EXPECT_GE(compared, 2) << got.dump();
  EXPECT_EQ(got["notes"], want["notes"]);
}

INSTANTIATE_TEST_SUITE_P(Runs, RecordPrediction, ::testing::ValuesIn(kCases),
                         [](const testing::TestParamInfo<Case>& i) { return std::string(i.param.name); });

}  // namespace
