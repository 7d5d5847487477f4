// The energy part of the model (docs/model.md, "Energy") against answers worked out by hand: a
// profile's power section read and written, a bad watt figure refused by its JSON path, a profile
// without the section still read, and the joules of CPU and GPU jobs from hand-made predictions.
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "scalebench/base/error.hpp"
#include "scalebench/workloads/model.hpp"
#include "synthetic_profile.hpp"

namespace scalebench {
namespace {

using nlohmann::json;

// The synthetic profile (4 cores, 8 GPUs) with watts chosen for round answers.
json power_section() {
  return {{"cpu",
           {{"present", true},
            {"source", "RAPL: package-0, package-0/dram"},
            {"idle_w", 50},
            {"blas_w", {{"fp64", 250}, {"fp32", 210}}},
            {"montecarlo_w", {{"pi", 130}}}}},
          {"gpu",
           {{"present", true}, {"source", "NVML: gpu 0000:65:00.0"}, {"idle_w", 60}, {"gemm_w", {{"fp64", 400}}}}}};
}

Profile with_power(const json& power = power_section()) {
  json j = to_json(synthetic());
  j["power"] = power;
  return profile_from_json(j, "powered.json");
}

// A prediction of 3 s end to end, 2 of them computing.
Prediction three_seconds_two_computing() {
  Prediction p;
  p.phases = {{"scatter", 0.5}, {"compute", 2.0}, {"gather", 0.5}};
  p.end_to_end = 3.0;
  return p;
}

const EnergyKernel kBlasFp64{PowerDevice::cpu, "blas", "fp64"};
const EnergyKernel kGpuGemmFp64{PowerDevice::gpu, "gemm", "fp64"};
constexpr double kTol = 1e-9;

TEST(PowerProfile, RoundTripsThroughTheFile) {
  const Profile p = with_power();
  ASSERT_TRUE(p.power.recorded);
  EXPECT_TRUE(p.power.cpu.present);
  EXPECT_EQ(p.power.cpu.source, "RAPL: package-0, package-0/dram");
  EXPECT_EQ(p.power.cpu.idle_w, 50);
  EXPECT_EQ(p.power.cpu.blas_w.at("fp32"), 210);
  EXPECT_EQ(p.power.cpu.montecarlo_w.at("pi"), 130);
  EXPECT_EQ(p.power.gpu.gemm_w.at("fp64"), 400);
  const Profile again = profile_from_json(to_json(p), "again.json");
  EXPECT_EQ(to_json(again)["power"], to_json(p)["power"]);
}

TEST(PowerProfile, AbsentCountersKeepTheirReasons) {
  const Profile p = with_power(
      {{"cpu", {{"present", false}, {"reason", "no powercap tree at /x"}}},
       {"gpu", {{"present", false}, {"reason", "NVML (libnvidia-ml.so.1) cannot be loaded"}}}});
  EXPECT_FALSE(p.power.cpu.present);
  EXPECT_EQ(p.power.cpu.reason, "no powercap tree at /x");
  EXPECT_EQ(to_json(p)["power"]["gpu"]["reason"], "NVML (libnvidia-ml.so.1) cannot be loaded");
  const EnergyPrediction e = predict_energy(p, three_seconds_two_computing(), kBlasFp64, {1, 1, 0}, 1, 1);
  EXPECT_FALSE(e.available);
  EXPECT_EQ(e.reason, "no power data in the profile (CPU: no powercap tree at /x)");
}

TEST(PowerProfile, AProfileWithoutTheSectionLoadsAndSaysSo) {
  const Profile& p = synthetic();  // written before power was recorded
  EXPECT_FALSE(p.power.recorded);
  EXPECT_FALSE(to_json(p).contains("power"));
  const EnergyPrediction e = predict_energy(p, three_seconds_two_computing(), kBlasFp64, {1, 1, 0}, 1, 1);
  EXPECT_FALSE(e.available);
  EXPECT_EQ(e.reason.rfind("no power data in the profile (it was calibrated before", 0), 0u) << e.reason;
}

struct BadPower {
  const char* name;
  const char* pointer;  // into the power section
  json value;
  const char* path;  // the dotted path the message names
};

class HostilePower : public testing::TestWithParam<BadPower> {};

TEST_P(HostilePower, RefusedNamingTheFieldAndTheFile) {
  const BadPower& c = GetParam();
  json j = to_json(synthetic());
  j["power"] = power_section();
  j["power"][json::json_pointer(c.pointer)] = c.value;
  try {
    (void)profile_from_json(j, "bad.json");
    FAIL() << "expected a refusal of " << c.pointer << " = " << c.value.dump();
  } catch (const UsageError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("profile bad.json: "), std::string::npos) << what;
    EXPECT_NE(what.find(c.path), std::string::npos) << "expected '" << c.path << "' in: " << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

const BadPower kBadPower[] = {
    {"negative_idle", "/cpu/idle_w", -1, "power.cpu.idle_w"},
    {"nan_idle", "/cpu/idle_w", std::numeric_limits<double>::quiet_NaN(), "power.cpu.idle_w"},
    {"infinite_blas", "/cpu/blas_w/fp64", std::numeric_limits<double>::infinity(), "power.cpu.blas_w.fp64"},
    {"string_blas", "/cpu/blas_w/fp64", "250 W", "power.cpu.blas_w.fp64"},
    {"absurd_blas", "/cpu/blas_w/fp32", 1e9, "power.cpu.blas_w.fp32"},
    {"negative_montecarlo", "/cpu/montecarlo_w/pi", -3, "power.cpu.montecarlo_w.pi"},
    {"blas_a_list", "/cpu/blas_w", json::array({250}), "power.cpu.blas_w"},
    {"present_text", "/cpu/present", "yes", "power.cpu.present"},
    {"absent_without_reason", "/gpu", json{{"present", false}}, "power.gpu.reason"},
    {"negative_gpu_idle", "/gpu/idle_w", -60, "power.gpu.idle_w"},
    {"string_gpu_gemm", "/gpu/gemm_w/fp64", "400", "power.gpu.gemm_w.fp64"},
    {"null_gpu_gemm", "/gpu/gemm_w/fp64", nullptr, "power.gpu.gemm_w.fp64"},
    // Past what the counters can draw (energy.hpp): 2 packages and their DRAM at 1500 W each, a
    // GPU at 2000 W. 524 kW of idle is a counter stepping back read as a wrap, not a machine.
    {"megawatt_idle", "/cpu/idle_w", 524000, "power.cpu.idle_w = 524000 W is more than the 3000 W 2 CPU package(s)"},
    {"past_two_packages", "/cpu/blas_w/fp64", 3001, "power.cpu.blas_w.fp64 = 3001 W"},
    {"past_two_packages_mc", "/cpu/montecarlo_w/pi", 4000, "power.cpu.montecarlo_w.pi = 4000 W"},
    {"past_one_gpu_idle", "/gpu/idle_w", 2001, "power.gpu.idle_w = 2001 W is more than the 2000 W one GPU"},
    {"past_one_gpu_gemm", "/gpu/gemm_w/fp64", 1e6, "power.gpu.gemm_w.fp64 = 1e+06 W"},
};
INSTANTIATE_TEST_SUITE_P(Figures, HostilePower, testing::ValuesIn(kBadPower),
                         [](const testing::TestParamInfo<BadPower>& i) { return std::string(i.param.name); });

// The CPU ceiling follows the node's packages (hwloc's count, else one per core, never more than
// its cores): what one box cannot draw is refused on it, and allowed on a larger one.
TEST(HostilePower, TheCpuCeilingIsTheNodesPackagesAtTheirMost) {
  const auto reads = [](int cores, const json& packages, double idle_w) {
    json j = to_json(synthetic());
    j["cores"] = cores;
    if (packages.is_null()) {
      j["hwloc"].erase("packages");
    } else {
      j["hwloc"]["packages"] = packages;
    }
    j["power"] = power_section();
    j["power"]["cpu"]["idle_w"] = idle_w;
    j["power"]["cpu"]["blas_w"] = json::object();
    j["power"]["cpu"]["montecarlo_w"] = json::object();
    try {
      (void)profile_from_json(j, "p.json");
      return std::string();
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
  };
  EXPECT_EQ(reads(2, 1, 1500), "");
  EXPECT_NE(reads(2, 1, 1501).find("more than the 1500 W 1 CPU package(s) and their DRAM can draw"), std::string::npos);
  EXPECT_EQ(reads(2, nullptr, 3000), "") << "no package count: one per core";
  EXPECT_NE(reads(2, nullptr, 524000).find("power.cpu.idle_w = 524000 W"), std::string::npos);
  EXPECT_NE(reads(2, 1000000, 3001).find("the 3000 W 2 CPU package(s)"), std::string::npos)
      << "never more packages than cores";
  EXPECT_NE(reads(2, "many", 3001).find("the 3000 W 2 CPU package(s)"), std::string::npos);
  EXPECT_EQ(reads(256, 8, 12000), "");
}

TEST(HostilePower, ASectionOfTheWrongKindIsRefused) {
  json j = to_json(synthetic());
  j["power"] = 42;
  EXPECT_THROW((void)profile_from_json(j, "bad.json"), UsageError);
}

// ---- Joules by hand ---------------------------------------------------------------------------

TEST(EnergyModel, CpuJobIsIdleForEndToEndPlusTheKernelsShareWhileComputing) {
  // 2 nodes x 1 rank x 2 threads: 2 of the 4 cores busy, so the node draws 50 + (250 − 50)·2/4 =
  // 150 W computing. A node: 50 W × 1 s + 150 W × 2 s = 350 J; two nodes 700 J; 5 repeats 3500 J.
  const EnergyPrediction e = predict_energy(with_power(), three_seconds_two_computing(), kBlasFp64, {2, 1, 0}, 2, 5);
  ASSERT_TRUE(e.available) << e.reason;
  EXPECT_NEAR(e.cpu_compute_w, 150, kTol);
  EXPECT_NEAR(e.cpu_idle_w, 50, kTol);
  EXPECT_NEAR(e.run_j, 700, kTol);
  EXPECT_NEAR(e.job_j, 3500, kTol);
  EXPECT_EQ(e.repeats, 5);
  EXPECT_NEAR(e.kwh, 3500 / 3.6e6, 1e-15);
  EXPECT_TRUE(e.cpu_counted);
  EXPECT_FALSE(e.gpu_counted);
  EXPECT_TRUE(e.notes.empty());
}

TEST(EnergyModel, EveryCoreBusyDrawsTheCalibratedWattsAndIdleGpusCount) {
  // 1 node x 2 ranks x 4 threads: 8 threads on 4 cores, the whole node: 250 W computing.
  // CPU: 50 × 1 + 250 × 2 = 550 J; two idle GPUs: 2 × 60 W × 3 s = 360 J.
  const EnergyPrediction e = predict_energy(with_power(), three_seconds_two_computing(), kBlasFp64, {1, 2, 2}, 4, 1);
  ASSERT_TRUE(e.available) << e.reason;
  EXPECT_NEAR(e.cpu_compute_w, 250, kTol);
  EXPECT_TRUE(e.gpu_counted);
  EXPECT_EQ(e.gpus_computing, 0);
  EXPECT_NEAR(e.run_j, 910, kTol);
}

TEST(EnergyModel, GpuJobCountsTheDrivenGpusAtTheKernelsWattsAndTheHostIdle) {
  // 1 node x 1 rank x 2 GPUs: the host idles (50 W × 3 s = 150 J); both GPUs idle for 3 s
  // (360 J) and the rank's GPU draws 400 − 60 W more for 2 s (680 J): 1190 J.
  const EnergyPrediction e = predict_energy(with_power(), three_seconds_two_computing(), kGpuGemmFp64, {1, 1, 2}, 1, 1);
  ASSERT_TRUE(e.available) << e.reason;
  EXPECT_EQ(e.gpus_computing, 1);
  EXPECT_NEAR(e.cpu_compute_w, 50, kTol);
  EXPECT_NEAR(e.gpu_compute_w, 400, kTol);
  EXPECT_NEAR(e.run_j, 1190, kTol);
  // Four ranks on the two GPUs keep both busy: + another 680 J.
  EXPECT_NEAR(predict_energy(with_power(), three_seconds_two_computing(), kGpuGemmFp64, {1, 4, 2}, 1, 1).run_j, 1870,
              kTol);
}

TEST(EnergyModel, KernelsWithoutTheirOwnWattsSayWhatStoodIn) {
  // Monte Carlo european has no watts of its own: BLAS fp64's stand in, and a note says so.
  const EnergyPrediction mc = predict_energy(with_power(), three_seconds_two_computing(),
                                             {PowerDevice::cpu, "montecarlo", "european"}, {1, 4, 0}, 1, 1);
  ASSERT_TRUE(mc.available) << mc.reason;
  EXPECT_NEAR(mc.cpu_compute_w, 250, kTol);
  ASSERT_EQ(mc.notes.size(), 1u);
  EXPECT_NE(mc.notes[0].find("european"), std::string::npos) << mc.notes[0];
  // pi has its own: 130 W on every core.
  EXPECT_NEAR(predict_energy(with_power(), three_seconds_two_computing(), {PowerDevice::cpu, "montecarlo", "pi"},
                             {1, 4, 0}, 1, 1)
                  .cpu_compute_w,
              130, kTol);
  // The GPU Monte Carlo stands on the fp32 GEMM, which this profile lacks: no energy, and why.
  const EnergyPrediction gpu_mc = predict_energy(with_power(), three_seconds_two_computing(),
                                                 {PowerDevice::gpu, "montecarlo", "pi"}, {1, 1, 1}, 1, 1);
  EXPECT_FALSE(gpu_mc.available);
  EXPECT_NE(gpu_mc.reason.find("fp32 GEMM"), std::string::npos) << gpu_mc.reason;
  // A GPU precision not calibrated is named.
  const EnergyPrediction bf16 = predict_energy(with_power(), three_seconds_two_computing(),
                                               {PowerDevice::gpu, "gemm", "bf16"}, {1, 1, 1}, 1, 1);
  EXPECT_FALSE(bf16.available);
  EXPECT_EQ(bf16.reason, "no power data in the profile (no GPU watts for the bf16 GEMM in the profile)");
}

TEST(EnergyModel, APartWithoutCountersIsLeftOutAndNamed) {
  json power = power_section();
  power["gpu"] = {{"present", false}, {"reason", "NVML absent"}};
  // A CPU job on a node with GPUs: the CPU is counted, the GPUs are named as not counted.
  const EnergyPrediction e = predict_energy(with_power(power), three_seconds_two_computing(), kBlasFp64, {1, 1, 2}, 4,
                                            1);
  ASSERT_TRUE(e.available) << e.reason;
  EXPECT_FALSE(e.gpu_counted);
  EXPECT_NEAR(e.run_j, 50 * 1.0 + 250 * 2.0, kTol);
  ASSERT_EQ(e.notes.size(), 1u);
  EXPECT_EQ(e.notes[0], "GPU energy not counted: NVML absent");
  // A GPU job without GPU counters has no energy: its main draw is unknown.
  const EnergyPrediction g = predict_energy(with_power(power), three_seconds_two_computing(), kGpuGemmFp64, {1, 1, 2},
                                            1, 1);
  EXPECT_FALSE(g.available);
  EXPECT_EQ(g.reason, "no power data in the profile (GPU: NVML absent)");
}

TEST(EnergyModel, TheModelsOwnPredictionGivesTheSameArithmetic) {
  // One rank, one thread, 1000^3 at 20 GFLOP/s: compute 0.1 s and nothing else. 1 of 4 cores:
  // 50 + 200/4 = 100 W for 0.1 s = 10 J.
  GemmConfig cfg;
  cfg.shape = {1000, 1000, 1000};
  cfg.threads = 1;
  const Prediction pred = predict_gemm(with_power(), cfg, {1, 1, 0});
  const EnergyPrediction e = predict_energy(with_power(), pred, kBlasFp64, {1, 1, 0}, 1, 6);
  ASSERT_TRUE(e.available) << e.reason;
  EXPECT_NEAR(e.run_j, 10, 1e-9);
  EXPECT_NEAR(e.job_j, 60, 1e-9);
}

}  // namespace
}  // namespace scalebench
