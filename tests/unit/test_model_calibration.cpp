// Calibration that holds and predictions with a band: a collapsed BLAS point (injected through
// the series' timer) is found and re-timed, and named when it stays; spreads round-trip through
// the profile file and old profiles still load with a zero-width band; a prediction's band comes
// from the figures' spreads and the miss flag uses it; a profile names what it is valid for and
// a stale one is told apart by host, build, BLAS kernel, GPU model and driver.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "scalebench/base/error.hpp"
#include "scalebench/workloads/model.hpp"
#include "workloads/model/calibrate_steps.hpp"

namespace scalebench {
namespace {

using nlohmann::json;

std::string data_path() {
  const char* src = std::getenv("SCALEBENCH_SOURCE_DIR");
  return std::string(src ? src : ".") + "/tests/data/profile-synthetic.json";
}

json synthetic_json() {
  std::ifstream in(data_path());
  return json::parse(in);
}

// A BLAS rate that rises with size, as a machine's does: 10, 20, 30, ... GFLOP/s.
double rising(std::int64_t n) { return 10.0 * static_cast<double>(n) / 256.0; }

TEST(CalibrationSeries, CollapsedPointsAreThoseFarBelowTheirNeighbours) {
  EXPECT_TRUE(collapsed_points({10, 20, 30, 40}).empty());
  EXPECT_TRUE(collapsed_points({5, 20, 30}).empty()) << "the first point may be low: rates rise with size";
  EXPECT_EQ(collapsed_points({100, 300, 60, 320}), std::vector<std::size_t>{2});
  EXPECT_EQ(collapsed_points({100, 300, 400, 90}), std::vector<std::size_t>{3}) << "the last against the one before";
  EXPECT_TRUE(collapsed_points({100, 300, 200, 320}).empty()) << "a dip above half is a spread, not a collapse";
}

TEST(CalibrationSeries, AnInjectedCollapseIsRetimedAndKeptWhenItRecovers) {
  std::vector<std::pair<std::int64_t, int>> calls;
  const BlasSeries s = time_blas_series("BLAS fp64 64 thread(s)", 64, {256, 512, 1024, 2048}, 2048, 1.0,
                                        [&](std::int64_t n, int attempt) {
                                          calls.emplace_back(n, attempt);
                                          // The case: 1024 read 61 GFLOP/s once, next to 595 at 512.
                                          const double gf = n == 1024 && attempt == 0 ? rising(n) / 10 : rising(n);
                                          return TimedRate{gf, {0.02, 0.01}};
                                        });
  const std::vector<std::pair<std::int64_t, int>> expected = {{256, 0}, {512, 0}, {1024, 0}, {2048, 0}, {1024, 1}};
  EXPECT_EQ(calls, expected);
  EXPECT_EQ(s.retimed, std::vector<std::int64_t>{1024});
  ASSERT_EQ(s.points.size(), 4U);
  EXPECT_DOUBLE_EQ(s.points[2].gflops, rising(1024)) << "the re-timed figure is kept";
  EXPECT_EQ(s.points[2].threads, 64);
  EXPECT_DOUBLE_EQ(s.points[2].spread.below, 0.02);
  EXPECT_TRUE(s.warnings.empty());
}

TEST(CalibrationSeries, ACollapseThatStaysIsNamedInAWarning) {
  const BlasSeries s = time_blas_series("BLAS fp64 2 thread(s)", 2, {256, 512, 1024}, 1024, 1.0,
                                        [&](std::int64_t n, int) {
                                          return TimedRate{n == 512 ? 1.0 : rising(n), {}};
                                        });
  EXPECT_EQ(s.retimed, std::vector<std::int64_t>{512});
  ASSERT_EQ(s.warnings.size(), 1U);
  EXPECT_NE(s.warnings[0].find("BLAS fp64 2 thread(s) at 512^3: 1.0 GFLOP/s, far below 10.0 at 256^3"),
            std::string::npos)
      << s.warnings[0];
  EXPECT_NE(s.warnings[0].find("also when re-timed"), std::string::npos) << s.warnings[0];
}

TEST(CalibrationSeries, LargerSidesAreTimedWhileOneMultiplyStaysUnderTheLimit) {
  std::vector<std::int64_t> timed;
  // 10 GFLOP/s flat: 1024^3 takes 0.21 s, 2048^3 would take 1.7 s.
  const BlasSeries s = time_blas_series("BLAS", 1, {512, 1024, 2048, 4096}, 512, 1.0, [&](std::int64_t n, int) {
    timed.push_back(n);
    return TimedRate{10.0, {}};
  });
  EXPECT_EQ(timed, (std::vector<std::int64_t>{512, 1024}));
  EXPECT_EQ(s.points.size(), 2U);
}

TEST(CalibrationSpread, OfTimesIsTheRateRange) {
  const Spread s = spread_of_times(0.8, 1.0, 1.25);
  EXPECT_DOUBLE_EQ(s.below, 0.2);   // slowest rate = 1/1.25 of the median
  EXPECT_DOUBLE_EQ(s.above, 0.25);  // fastest = 1/0.8
  EXPECT_TRUE(spread_of_times(0, 1, 1).empty());
}

TEST(ProfileSpread, OldProfilesLoadWithAZeroWidthBand) {
  const Profile p = load_profile(data_path());
  EXPECT_FALSE(profile_has_spread(p));
  GemmConfig cfg;
  cfg.shape = {1024, 1024, 1024};
  cfg.threads = 4;
  const Prediction pred = predict_gemm(p, cfg, {1, 2, 0});
  EXPECT_DOUBLE_EQ(pred.low, pred.end_to_end);
  EXPECT_DOUBLE_EQ(pred.high, pred.end_to_end);
}

TEST(ProfileSpread, RoundTripsAndWidensThePrediction) {
  json j = synthetic_json();
  for (auto& b : j["blas"]["fp64"]) b["spread"] = {{"below", 0.2}, {"above", 0.1}};
  const Profile p = profile_from_json(j, "spread.json");
  ASSERT_TRUE(profile_has_spread(p));
  EXPECT_DOUBLE_EQ(p.blas.at("fp64").front().spread.below, 0.2);
  const Profile again = profile_from_json(to_json(p), "again.json");
  EXPECT_DOUBLE_EQ(again.blas.at("fp64").front().spread.above, 0.1);
  EXPECT_TRUE(again.blas.at("fp32").front().spread.empty());

  GemmConfig cfg;
  cfg.shape = {2048, 2048, 2048};
  cfg.threads = 1;
  const MachineLayout one{1, 1, 0};
  const Prediction pred = predict_gemm(p, cfg, one);
  const double compute = pred.phase("compute");
  ASSERT_GT(compute, 0);
  // One rank moves nothing: the band is the compute's, at 0.8x and 1.1x the rate.
  EXPECT_NEAR(pred.high - pred.end_to_end, compute / 0.8 - compute, 1e-9 * compute);
  EXPECT_NEAR(pred.end_to_end - pred.low, compute - compute / 1.1, 1e-9 * compute);
  EXPECT_EQ(pred.band(), std::make_pair(pred.low, pred.high));

  // The flag uses the band: inside it nothing is flagged however far from the median; past it by
  // more than the tolerance it is.
  EXPECT_FALSE(prediction_flagged(pred, pred.high));
  EXPECT_DOUBLE_EQ(miss_outside_band(pred, pred.low), 0.0);
  EXPECT_FALSE(prediction_flagged(pred, pred.high + 0.1 * pred.end_to_end));
  EXPECT_TRUE(prediction_flagged(pred, pred.high + 0.2 * pred.end_to_end));
  EXPECT_TRUE(prediction_flagged(pred, pred.low - 0.2 * pred.end_to_end));
}

TEST(ProfileSpread, BadSpreadsAreNamed) {
  const std::vector<std::pair<json, std::string>> cases = {
      {{{"below", -0.1}, {"above", 0}}, "blas.fp64[0].spread.below must be a fraction"},
      {{{"below", 1.0}, {"above", 0}}, "blas.fp64[0].spread.below must be below 1"},
      {{{"below", 0}, {"above", 1e9}}, "blas.fp64[0].spread.above must be a fraction"},
      {{{"below", 0}}, "blas.fp64[0].spread.above is missing"},
      {json("wide"), "blas.fp64[0].spread must be an object"},
  };
  for (const auto& [spread, message] : cases) {
    json j = synthetic_json();
    j["blas"]["fp64"][0]["spread"] = spread;
    try {
      (void)profile_from_json(j, "bad.json");
      ADD_FAILURE() << spread.dump() << " was accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  }
}

TEST(ProfileValidity, NamesWhatItIsValidForAndTellsStaleOnesApart) {
  const json versions = {{"scalebench", "1.0"},
                         {"git", "abc"},
                         {"compiler", "GNU 12"},
                         {"build_type", "Release"},
                         {"cuda_built", true},
                         {"mpi_library", "Open MPI v4.1.4"},
                         {"openblas", {{"config", "OpenBLAS 0.3.21"}, {"core", "Haswell"}}}};
  const json h100 = {{"name", "NVIDIA H100 80GB HBM3"}, {"driver_version", "12.4"}};
  Profile p;
  p.host = "node1";
  p.versions = versions;
  p.valid_for = profile_valid_for("node1", versions, h100);
  EXPECT_EQ(p.valid_for["openblas"]["core"], "Haswell");
  EXPECT_EQ(p.valid_for["gpu"]["name"], "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(profile_mismatch(p, p.valid_for), "");

  auto why = [&](const std::string& host, json v, const json& gpu) {
    return profile_mismatch(p, profile_valid_for(host, v, gpu));
  };
  EXPECT_NE(why("node2", versions, h100).find("calibrated on node1, not node2"), std::string::npos);
  json other_build = versions;
  other_build["build_type"] = "Debug";
  EXPECT_NE(why("node1", other_build, h100).find("build_type"), std::string::npos);
  json other_kernel = versions;
  other_kernel["openblas"]["core"] = "SkylakeX";
  EXPECT_NE(why("node1", other_kernel, h100).find("BLAS kernel \"Haswell\" differs from this run's \"SkylakeX\""),
            std::string::npos);
  EXPECT_NE(why("node1", versions, {{"name", "NVIDIA H200"}, {"driver_version", "12.4"}})
                .find("GPU model NVIDIA H100 80GB HBM3, this machine's is NVIDIA H200"),
            std::string::npos);
  EXPECT_NE(why("node1", versions, {{"name", "NVIDIA H100 80GB HBM3"}, {"driver_version", "12.8"}})
                .find("GPU driver 12.4, this machine's is 12.8"),
            std::string::npos);
  EXPECT_NE(why("node1", versions, nullptr).find("no GPU is visible here"), std::string::npos);

  // Staleness is judged from valid_for, what the profile says it is valid for: one edited there
  // (or copied from another machine's profile) is stale here even when host and versions agree.
  Profile edited = p;
  edited.valid_for["host"] = "node7";
  EXPECT_NE(profile_mismatch(edited, p.valid_for).find("calibrated on node7, not node1"), std::string::npos);
  edited = p;
  edited.valid_for["openblas"]["core"] = "Zen";
  EXPECT_NE(profile_mismatch(edited, p.valid_for).find("BLAS kernel \"Zen\""), std::string::npos);
  edited = p;
  edited.valid_for["mpi_library"] = "MPICH 4";
  EXPECT_NE(profile_mismatch(edited, p.valid_for).find("mpi_library"), std::string::npos);
  // A profile from before valid_for was kept: its host and versions; one whose valid_for names
  // only some keys: the others from its host and versions.
  Profile old = p;
  old.valid_for = json::object();
  EXPECT_EQ(profile_mismatch(old, "node1", versions), "");
  EXPECT_NE(profile_mismatch(old, "node2", versions).find("calibrated on node1, not node2"), std::string::npos);
  old.valid_for = {{"host", "node1"}, {"gpu", nullptr}};
  EXPECT_EQ(profile_mismatch(old, "node1", versions), "");
  EXPECT_NE(profile_mismatch(old, "node1", other_build).find("build_type"), std::string::npos);

  // valid_for, launch, warnings and checks survive the file.
  p.launch = {{"launcher", "mpirun"}, {"ranks", 2}, {"binding", "none"}};
  p.warnings = {"a point stayed collapsed"};
  p.triad_Bps = {{1, 1e10}};
  p.intra_node = {1e-6, 1e9};
  const Profile back = profile_from_json(to_json(p), "back.json");
  EXPECT_EQ(back.valid_for, p.valid_for);
  EXPECT_EQ(back.launch["launcher"], "mpirun");
  EXPECT_EQ(back.warnings, p.warnings);
}

// The default place holds this host's profile: a stale one there is refused with the reason.
TEST(ProfileValidity, AStaleProfileAtTheDefaultPlaceIsRefused) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("sb-stale-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "p.json").string();
  std::ofstream(path) << synthetic_json().dump();
  try {
    (void)load_current_profile({path, std::string(kDefaultProfileOrigin)});
    ADD_FAILURE() << "a profile of synthetic-node was taken as this host's";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("is stale: it was calibrated on synthetic-node"), std::string::npos)
        << e.what();
    EXPECT_EQ(e.code(), ExitCode::usage);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace scalebench
