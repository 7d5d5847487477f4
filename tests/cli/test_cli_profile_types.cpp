// A machine profile with a field of the wrong JSON kind or an absurd value (a number where the GPU's
// name goes, a string where a rate goes, a list for an object, null, 1e308, a negative rate), read
// by predict, contrast --dry-run and calibrate --if-stale (docs/model.md, "A profile that cannot be
// used"): predict refuses it with one line naming the file and the field, exit 2; the contrast and
// calibrate --if-stale take it for a stale one, say so in one line naming the file and the field,
// and calibrate replaces it. Never "internal error".
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_runner.hpp"

namespace {

using nlohmann::json;

json read_json(const std::string& path) { return json::parse(read_file(path)); }

// The synthetic profile made current for this host and build (host and versions from a record of
// a run here, no GPU), so that every check calibrate --if-stale makes is reached.
json current_profile() {
  static const json profile = [] {
    const std::string dir = make_temp_dir();
    const CliRun r = run_scalebench("gemm --n 8 --reps 1 --warmup 0 --json " + dir + "/r.json");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    const json rec = read_json(dir + "/r.json");
    json p = read_json(std::string(std::getenv("SCALEBENCH_SOURCE_DIR")) + "/tests/data/profile-synthetic.json");
    p["host"] = rec["hosts"][0];
    p["versions"] = rec["versions"];
    p["valid_for"] = {{"host", rec["hosts"][0]}, {"gpu", nullptr}};
    p["gpu"] = {{"present", false}, {"reason", "no GPU"}};
    return p;
  }();
  return profile;
}

struct Mutation {
  const char* name;
  std::function<void(json&)> apply;
  const char* field;  // what the line says
};

json synthetic_gpu() {
  return read_json(std::string(std::getenv("SCALEBENCH_SOURCE_DIR")) + "/tests/data/profile-synthetic.json")["gpu"];
}

const Mutation kMutations[] = {
    {"gpu_name_number",
     [](json& p) {
       p["gpu"] = synthetic_gpu();
       p["gpu"]["name"] = 42;
     },
     "gpu.name must be a string (got a number)"},
    {"valid_for_gpu_name_number",
     [](json& p) {
       p["valid_for"]["gpu"] = {{"name", 42}};
     },
     "valid_for.gpu.name must be a string (got a number)"},
    {"valid_for_gpu_driver_list",
     [](json& p) {
       p["valid_for"]["gpu"] = {{"name", "A"}, {"driver_version", {1}}};
     },
     "valid_for.gpu.driver_version must be a string (got a list)"},
    {"valid_for_string", [](json& p) { p["valid_for"] = "here"; }, "valid_for must be an object (got a string)"},
    {"rate_string", [](json& p) { p["blas"]["fp64"][0]["gflops"] = "fast"; },
     "blas.fp64[0].gflops must be a number (got a string)"},
    {"mpi_list", [](json& p) { p["mpi"] = json::array(); }, "mpi must be an object (got a list)"},
    {"host_null", [](json& p) { p["host"] = nullptr; }, "host must be a string (got null)"},
    {"cores_huge", [](json& p) { p["cores"] = 1e308; }, "cores must be a whole number in [1, 1048576]"},
    {"cores_string", [](json& p) { p["cores"] = "4"; }, "cores must be a number (got a string)"},
    {"rate_negative", [](json& p) { p["memory"]["triad"][0]["GBps"] = -5; },
     "memory.triad[0].GBps must be a rate > 0 (got -5)"},
    {"latency_huge", [](json& p) { p["mpi"]["intra_node"]["latency_us"] = 1e300; },
     "mpi.intra_node.latency_us must be a time in [0, 1e+09] microseconds"},
    {"threads_fraction", [](json& p) { p["blas"]["fp64"][0]["threads"] = 1.5; },
     "blas.fp64[0].threads must be a whole number (got 1.5)"},
    {"versions_number", [](json& p) { p["versions"] = 5; }, "versions must be an object (got a number)"},
    {"warnings_number", [](json& p) { p["warnings"] = {1}; }, "warnings[0] must be a string (got a number)"},
    {"rates_object", [](json& p) { p["montecarlo"]["pi"]["cpu"] = json::object(); },
     "montecarlo.pi.cpu must be a list (got an object)"},
};

std::string write_profile(const std::string& dir, const Mutation& m) {
  json p = current_profile();
  m.apply(p);
  const std::string path = dir + "/" + m.name + ".json";
  std::ofstream(path) << p.dump();
  return path;
}

class BadProfile : public testing::TestWithParam<Mutation> {};

// predict, the profile named by --profile, by SCALEBENCH_PROFILE and found at the default place.
TEST_P(BadProfile, PredictRefusesItInOneLine) {
  const Mutation& m = GetParam();
  const std::string dir = make_temp_dir();
  const std::string path = write_profile(dir, m);
  const std::string bin = std::getenv("SCALEBENCH_BINARY");
  const std::string host = current_profile()["host"].get<std::string>();
  run_command("mkdir -p " + dir + "/cache/scalebench && cp " + path + " " + dir + "/cache/scalebench/profile-" + host +
              ".json");
  for (const std::string& how : {bin + " predict gemm --n 64 --profile " + path,
                                 "SCALEBENCH_PROFILE=" + path + " " + bin + " predict gemm --n 64",
                                 "XDG_CACHE_HOME=" + dir + "/cache " + bin + " predict gemm --n 64"}) {
    const CliRun r = run_command("timeout 60 env " + how);
    EXPECT_TRUE(is_refusal(r, 2, m.field)) << how;
    EXPECT_NE(r.output.find(".json: " + std::string(m.field)), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("internal error"), std::string::npos) << r.output;
  }
}

// contrast --dry-run: the profile is stale, one line says which field; the plan is printed.
TEST_P(BadProfile, ContrastDryRunTakesItForStale) {
  const Mutation& m = GetParam();
  const std::string dir = make_temp_dir();
  const std::string path = write_profile(dir, m);
  const CliRun r = run_command("SCALEBENCH_PROFILE=" + path + " timeout 120 " + std::getenv("SCALEBENCH_BINARY") +
                               " contrast --dry-run --workload gemm --out-dir " + dir + "/c 2>&1");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("no current profile at " + path + " (it cannot be used: " + m.field), std::string::npos)
      << r.output;
  EXPECT_EQ(count_of(r.output, "no current profile"), 1) << r.output;
  EXPECT_EQ(r.output.find("internal error"), std::string::npos) << r.output;
}

INSTANTIATE_TEST_SUITE_P(Cases, BadProfile, testing::ValuesIn(kMutations),
                         [](const testing::TestParamInfo<Mutation>& i) { return std::string(i.param.name); });

// The profile the cases start from is current here: the contrast says nothing of it and
// calibrate --if-stale times nothing.
TEST(BadProfile, TheStartingProfileIsCurrent) {
  if (run_scalebench("--version").output.find("CUDA on") != std::string::npos) {
    GTEST_SKIP() << "needs a build without CUDA: the starting profile has no GPU";
  }
  const std::string dir = make_temp_dir();
  const std::string path = dir + "/good.json";
  std::ofstream(path) << current_profile().dump();
  const std::string env = "SCALEBENCH_PROFILE=" + path + " timeout 120 " + std::getenv("SCALEBENCH_BINARY");
  CliRun r = run_command(env + " calibrate --quick --if-stale 2>&1");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("is current for this host and build; nothing timed"), std::string::npos) << r.output;
  r = run_command(env + " contrast --dry-run --workload gemm --out-dir " + dir + "/c 2>&1");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("no current profile"), std::string::npos) << r.output;
}

// calibrate --if-stale: a profile that cannot be used is replaced, after one line naming the field;
// the new one is current and predict reads it (tools/run is not left broken).
TEST(BadProfile, CalibrateIfStaleReplacesIt) {
  const std::string dir = make_temp_dir();
  const std::string path = write_profile(dir, kMutations[1]);
  const std::string env = "SCALEBENCH_PROFILE=" + path + " timeout 400 " + std::getenv("SCALEBENCH_BINARY");
  CliRun r = run_command(env + " calibrate --quick --if-stale --no-check 2>&1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("calibrate: profile " + path + ": it cannot be used: " + kMutations[1].field +
                          "; calibrating"),
            std::string::npos)
      << r.output;
  r = run_command(env + " calibrate --quick --if-stale 2>&1");
  EXPECT_NE(r.output.find("nothing timed"), std::string::npos) << r.output;
  r = run_command(env + " predict gemm --n 64 2>&1");
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

}  // namespace

// A profile with a byte that is not UTF-8 is a bad profile like any other: the run goes on, says
// why there is no prediction, and writes its record (the reason quotes the byte as U+FFFD).
TEST(BadProfile, ABytePastUtf8IsNoPredictionAndTheRecordIsWritten) {
  const std::string dir = make_temp_dir();
  std::ofstream(dir + "/p.json") << "{\"x\": \"\xff\"}";
  const CliRun r = run_command("SCALEBENCH_PROFILE=" + dir + "/p.json timeout 120 " + std::getenv("SCALEBENCH_BINARY") +
                               " gemm --n 32 --reps 1 --warmup 0 --no-peer --json " + dir + "/r.json 2>&1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json rec = nlohmann::json::parse(read_file(dir + "/r.json"));
  EXPECT_FALSE(rec.at("prediction").at("available").get<bool>());
  EXPECT_NE(rec.at("prediction").at("reason").get<std::string>().find("\xEF\xBF\xBD"), std::string::npos) << rec.dump();
}
