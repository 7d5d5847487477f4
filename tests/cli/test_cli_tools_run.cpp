// tools/run on a machine with no profile (HOME at an empty folder): its contrast calibrates once
// (quick), caches the profile at the default place, and the table shows predictions; a second
// tools/run times nothing. tools/run configures and builds through tools/build: this test runs
// it on the test's own build folder only where that would change nothing (a Release build with
// warnings as errors, as tools/build configures), and says so when it skips.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_runner.hpp"

namespace {

using nlohmann::json;

// The value of a CMakeCache.txt entry ("" when absent).
std::string cache_value(const std::string& cache, const std::string& key) {
  std::ifstream in(cache);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(key + ":", 0) == 0) return line.substr(line.find('=') + 1);
  }
  return "";
}

std::string host() {
  char buf[256] = {};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

TEST(ToolsRun, ANewcomerSeesPredictions) {
  const std::string bin = std::getenv("SCALEBENCH_BINARY");
  const std::string src = std::getenv("SCALEBENCH_SOURCE_DIR");
  const std::string build = std::filesystem::path(bin).parent_path().string();
  const std::string cache = build + "/CMakeCache.txt";
  if (cache_value(cache, "CMAKE_BUILD_TYPE") != "Release" || cache_value(cache, "SCALEBENCH_WERROR") != "ON") {
    GTEST_SKIP() << "tools/run reconfigures its build folder as Release with SCALEBENCH_WERROR=ON; this build ("
                 << cache << ") is not, and would be rebuilt";
  }
  // Other tests run this binary meanwhile: tools/run must find it current and leave it alone.
  const auto built = std::filesystem::last_write_time(bin);
  const std::string home = make_temp_dir();
  const std::string out = make_temp_dir() + "/contrast";
  const std::string env = "env -u SCALEBENCH_PROFILE -u XDG_CACHE_HOME HOME=" + home +
                          " SCALEBENCH_NO_INSTALL=1 SCALEBENCH_JOBS=1 SCALEBENCH_BUILD_DIR=" + build + " ";
  const std::string contrast = " --workload gemm --modes single-core,multi-thread --n 256 --reps 1 --warmup 0";
  const CliRun first = run_command(env + "timeout 240 " + src + "/tools/run" + contrast + " --out-dir " + out +
                                   " --json " + out + ".json 2>&1");
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_EQ(std::filesystem::last_write_time(bin), built)
      << "tools/run rebuilt " << bin << " while other tests were running it: the build was behind the checkout "
      << "(a source or tracked file changed after it was built)";
  const std::string profile = home + "/.cache/scalebench/profile-" + host() + ".json";
  EXPECT_NE(first.output.find("scalebench contrast: no current profile at " + profile), std::string::npos)
      << first.output;
  EXPECT_NE(read_file(out + "/calibrate.log").find("calibrate: profile written to " + profile), std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(profile)) << profile;
  EXPECT_EQ(json::parse(read_file(out + ".json"))["calibration"]["status"], "calibrated");
  EXPECT_NE(first.output.find("predicted s, miss"), std::string::npos) << first.output;
  const json rows = json::parse(read_file(out + ".json"))["runs"];
  ASSERT_FALSE(rows.empty());
  for (const auto& row : rows) {
    ASSERT_TRUE(row["predicted"].is_object()) << row.dump();
    EXPECT_GT(row["predicted"]["predicted_s"].get<double>(), 0.0) << row.dump();
  }

  // Once per host and build: the second run times nothing.
  const CliRun second = run_command(env + "timeout 240 " + src + "/tools/run" + contrast + " --out-dir " + out +
                                    "2 2>&1");
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_EQ(second.output.find("no current profile"), std::string::npos) << second.output;
  EXPECT_EQ(json::parse(read_file(out + "2/contrast.json"))["calibration"]["status"], "current");
}

}  // namespace
