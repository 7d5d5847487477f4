// calibrate --quick under a real mpirun with 2 ranks, then gemm and montecarlo records carrying
// predictions from that profile; a stale profile named in a warning; predict for 16 nodes × 8
// GPUs from the saved synthetic profile, and for 2^22 ranks in seconds; predict's bad input;
// hostile profiles (FIFO, folder, /dev/zero, bad figures) by --profile and SCALEBENCH_PROFILE, in
// bounded time.
#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_runner.hpp"

namespace {

using nlohmann::json;

std::string synthetic_profile() {
  return std::string(std::getenv("SCALEBENCH_SOURCE_DIR")) + "/tests/data/profile-synthetic.json";
}

json read_json(const std::string& path) { return json::parse(read_file(path)); }

TEST(CalibrateCli, QuickProfileThenRecordsCarryPredictions) {
  const std::string dir = make_temp_dir();
  const std::string profile = dir + "/profile.json";
  // Half a minute on a quiet 2-core box; a loaded one (other tests beside it) took over two. Under a
  // fake powercap tree whose counter a writer advances by 1 J (1e6 µJ) every 10 ms, about 100 W:
  // the profile's power section is checked from the same calibration.
  const CliRun cal = run_with_fake_rapl(dir, 1000000,
                                        "timeout 400 " + std::string(std::getenv("SCALEBENCH_MPIEXEC")) +
                                            " -np 2 --oversubscribe -x SCALEBENCH_POWERCAP_ROOT " +
                                            std::getenv("SCALEBENCH_BINARY") + " calibrate --quick --out " + profile);
  ASSERT_EQ(cal.exit_code, 0) << cal.output;
  EXPECT_NE(cal.output.find("profile written to " + profile), std::string::npos) << cal.output;
  const json p = read_json(profile);
  EXPECT_EQ(p["profile_version"], 2);
  EXPECT_GE(p["cores"].get<int>(), 1);
  ASSERT_FALSE(p["blas"]["fp64"].empty());
  for (const auto& pt : p["blas"]["fp64"]) EXPECT_GT(pt["gflops"].get<double>(), 0.1) << pt;
  EXPECT_GT(p["memory"]["triad"][0]["GBps"].get<double>(), 0.1);
  EXPECT_GT(p["mpi"]["intra_node"]["bandwidth_GBps"].get<double>(), 0.0);
  EXPECT_EQ(p["mpi"]["collectives"]["bcast"][0]["ranks"], 2);
  EXPECT_GT(p["montecarlo"]["pi"]["cpu"][0]["per_s"].get<double>(), 0.0);
  // What Summa2D's lookahead 1 and 2 hid on these 2 ranks, as measured (a fraction of the blocking
  // broadcasts, negative where it cost time).
  ASSERT_EQ(p["mpi"]["lookahead"].size(), 2u) << p["mpi"].dump();
  for (const auto& f : p["mpi"]["lookahead"]) {
    EXPECT_EQ(f["ranks"], 2) << f;
    EXPECT_GE(f["hidden"].get<double>(), -10.0) << f;
    EXPECT_LE(f["hidden"].get<double>(), 1.0) << f;
  }
  EXPECT_NE(cal.output.find("Summa2D lookahead on 2 ranks"), std::string::npos) << cal.output;
  // No GPU here (or built without CUDA): recorded as absent with the reason.
  if (!p["gpu"]["present"].get<bool>()) {
    EXPECT_FALSE(p["gpu"]["reason"].get<std::string>().empty());
  }
  // Power from the fake tree: watts per kernel. The writer aims at 100 W; a busy box slows its
  // loop, so only the order of magnitude is asked.
  EXPECT_NE(cal.output.find("calibrate: power: CPU idle "), std::string::npos) << cal.output;
  const json& w = p["power"]["cpu"];
  ASSERT_TRUE(w["present"].get<bool>()) << w.dump();
  EXPECT_EQ(w["source"], "RAPL: package-0");
  const auto plausible = [&](const json& watts, const std::string& what) {
    EXPECT_GT(watts.get<double>(), 5) << what << " " << w.dump();
    EXPECT_LT(watts.get<double>(), 300) << what << " " << w.dump();
  };
  plausible(w["idle_w"], "idle");
  plausible(w["blas_w"]["fp64"], "BLAS fp64");
  plausible(w["blas_w"]["fp32"], "BLAS fp32");
  for (const char* problem : {"pi", "european", "asian"}) plausible(w["montecarlo_w"][problem], problem);
  // No GPU here (or built without CUDA): the GPU part says why.
  if (!p["gpu"]["present"].get<bool>()) {
    EXPECT_FALSE(p["power"]["gpu"]["present"].get<bool>());
    EXPECT_NE(p["power"]["gpu"]["reason"].get<std::string>().find("no GPU visible ("), std::string::npos)
        << p["power"].dump();
  }
  // predict reads the power section back and gives joules.
  const CliRun pr = run_scalebench("predict gemm --n 512 --profile " + profile + " --gpus-per-node 0");
  ASSERT_EQ(pr.exit_code, 0) << pr.output;
  EXPECT_NE(pr.output.find("energy per job (6 repeats): "), std::string::npos) << pr.output;

  const std::string env = "SCALEBENCH_PROFILE=" + profile + " ";
  const CliRun g = run_command(
      env + std::getenv("SCALEBENCH_MPIEXEC") + " -np 2 --oversubscribe " + std::getenv("SCALEBENCH_BINARY") +
      " gemm --n 256 --reps 2 --quiet --algorithm row1d --distribution replicated --json " + dir + "/g.json 2>&1");
  ASSERT_EQ(g.exit_code, 0) << g.output;
  const json rec = read_json(dir + "/g.json");
  ASSERT_TRUE(rec["prediction"]["available"].get<bool>()) << rec["prediction"].dump();
  for (const char* phase : {"scatter", "broadcast", "compute", "gather"}) {
    EXPECT_GT(rec["prediction"]["phases"][phase]["predicted_s"].get<double>(), 0.0) << phase;
    EXPECT_GT(rec["prediction"]["phases"][phase]["measured_s"].get<double>(), 0.0) << phase;
  }
  EXPECT_GT(rec["prediction"]["end_to_end"]["predicted_s"].get<double>(), 0.0);
  EXPECT_FALSE(rec["prediction"]["worst_phase"].get<std::string>().empty());

  const CliRun mc = run_command(env + std::getenv("SCALEBENCH_BINARY") +
                                " montecarlo --problem european --samples 1e5 --reps 2 --quiet --json " + dir +
                                "/m.json 2>&1");
  ASSERT_EQ(mc.exit_code, 0) << mc.output;
  const json mrec = read_json(dir + "/m.json");
  ASSERT_TRUE(mrec["prediction"]["available"].get<bool>()) << mrec["prediction"].dump();
  EXPECT_GT(mrec["prediction"]["phases"]["compute"]["predicted_s"].get<double>(), 0.0);

  // A study and a contrast show predicted beside measured.
  const std::string bin = std::getenv("SCALEBENCH_BINARY");
  const std::string src = std::getenv("SCALEBENCH_SOURCE_DIR");
  const CliRun st = run_command(env + bin + " study " + src + "/jobs/smoke.yaml --quiet --out-dir " + dir +
                                "/study 2>&1");
  ASSERT_EQ(st.exit_code, 0) << st.output;
  const json summary = read_json(dir + "/study/summary.json");
  for (const auto& run : summary["runs"]) {
    ASSERT_TRUE(run["predicted"].is_object()) << run.dump();
    EXPECT_GT(run["predicted"]["predicted_s"].get<double>(), 0.0);
  }
  EXPECT_NE(read_file(dir + "/study/summary.md").find("predicted s, miss"), std::string::npos);
  const CliRun ct = run_command(env + bin +
                                " contrast --modes single-core,multi-thread --n 128 --samples 1e6 --reps 1 --warmup 0 "
                                "--out-dir " +
                                dir + "/contrast --json " + dir + "/contrast.json 2>&1");
  ASSERT_EQ(ct.exit_code, 0) << ct.output;
  EXPECT_NE(ct.output.find("predicted s, miss"), std::string::npos) << ct.output;
  for (const auto& row : read_json(dir + "/contrast.json")["runs"]) {
    ASSERT_TRUE(row["predicted"].is_object()) << row.dump();
    EXPECT_FALSE(row["predicted"]["worst_phase"].get<std::string>().empty());
  }

  // Another machine's profile: named in a warning, the run goes on without prediction.
  const CliRun stale = run_command("SCALEBENCH_PROFILE=" + synthetic_profile() + " " +
                                   std::getenv("SCALEBENCH_BINARY") + " gemm --n 128 --reps 1 --json " + dir +
                                   "/s.json 2>&1");
  ASSERT_EQ(stale.exit_code, 0) << stale.output;
  EXPECT_NE(stale.output.find("warning: no prediction: profile " + synthetic_profile() + " is stale"),
            std::string::npos)
      << stale.output;
  EXPECT_NE(stale.output.find("calibrated on synthetic-node"), std::string::npos) << stale.output;
  EXPECT_FALSE(read_json(dir + "/s.json")["prediction"]["available"].get<bool>());
}

TEST(PredictCli, SixteenNodesOfEightGpusFromASavedProfile) {
  const std::string dir = make_temp_dir();
  const CliRun r = run_scalebench(
      "predict gemm --n 32768 --backend cublas --transport nccl --distribution replicated --nodes 16 "
      "--ranks-per-node 8 --gpus-per-node 8 --reps 4 --warmup 1 --price-per-hour 40 --profile " +
      synthetic_profile() + " --json " + dir + "/p.json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* want :
       {"on 16 node(s) x 8 rank(s)", "end_to_end", "against one GPU", "CPU/GPU crossover", "cost per job"}) {
    EXPECT_NE(r.output.find(want), std::string::npos) << want << " in:\n" << r.output;
  }
  const json p = read_json(dir + "/p.json");
  const double e2e = p["end_to_end_s"].get<double>();
  // 128 GPUs at 1 TFLOP/s: the multiply alone is 2·32768³ / 128e12 s; transfers add to it.
  const double compute = 2.0 * 32768.0 * 32768.0 * 32768.0 / 128e12;
  EXPECT_NEAR(p["phases"]["compute"].get<double>(), compute, compute * 1e-9);
  EXPECT_GT(e2e, compute);
  // Between nodes NCCL runs over the inter-node link (1 GB/s): B alone is 8.6 GB (replicated: every
  // GPU gets B from rank 0's through NCCL).
  EXPECT_NEAR(p["phases"]["broadcast"].get<double>(), 5e-6 + 32768.0 * 32768.0 * 8 / 1e9, 1e-6);
  EXPECT_NEAR(p["cost"]["node_hours"].get<double>(), 16 * e2e * 5 / 3600, 1e-12);
  EXPECT_NEAR(p["cost"]["gpu_hours"].get<double>(), 128 * e2e * 5 / 3600, 1e-12);
  EXPECT_NEAR(p["cost"]["cost"].get<double>(), 40 * 16 * e2e * 5 / 3600, 1e-9);
  EXPECT_NEAR(p["one_gpu"]["speedup"].get<double>(), p["one_gpu"]["end_to_end_s"].get<double>() / e2e, 1e-9);
  // A faster network: the override changes the inter-node phases.
  const CliRun fast = run_scalebench(
      "predict gemm --n 32768 --backend cublas --transport nccl --distribution replicated --nodes 16 "
      "--ranks-per-node 8 --inter-node-gbps 200 --inter-node-latency-us 2 --profile " +
      synthetic_profile() + " --json " + dir + "/f.json");
  ASSERT_EQ(fast.exit_code, 0) << fast.output;
  // 200 Gbit/s rated is 25 GB/s on the wire, of which frames of the default MTU (1500) carry 1448
  // bytes of data in 1514.
  const double b_bytes = 32768.0 * 32768.0 * 8;
  const json f = read_json(dir + "/f.json");
  EXPECT_NEAR(f["phases"]["broadcast"].get<double>(), 2e-6 + b_bytes / (25e9 * 1448 / 1514), 1e-9);
  EXPECT_EQ(f["inter_node_link"]["mtu"], 1500);
  EXPECT_NEAR(f["inter_node_link"]["payload_gbps"].get<double>(), 200.0 * 1448 / 1514, 1e-9);
  EXPECT_NE(fast.output.find("inter-node link: 200 Gbit/s rated, 191.3 Gbit/s of data (MTU 1500: 1448 of 1514"),
            std::string::npos)
      << fast.output;
  // Jumbo frames: 8948 bytes of data in 9014.
  const CliRun jumbo = run_scalebench(
      "predict gemm --n 32768 --backend cublas --transport nccl --distribution replicated --nodes 16 "
      "--ranks-per-node 8 --inter-node-gbps 200 --inter-node-latency-us 2 "
      "--inter-node-mtu 9000 --profile " +
      synthetic_profile() + " --json " + dir + "/j.json");
  ASSERT_EQ(jumbo.exit_code, 0) << jumbo.output;
  EXPECT_NEAR(read_json(dir + "/j.json")["phases"]["broadcast"].get<double>(), 2e-6 + b_bytes / (25e9 * 8948 / 9014),
              1e-9);
  // Monte Carlo on the same machine.
  const CliRun mc = run_scalebench("predict montecarlo --problem pi --samples 1e12 --backend cuda --nodes 16 "
                                   "--ranks-per-node 8 --profile " +
                                   synthetic_profile());
  ASSERT_EQ(mc.exit_code, 0) << mc.output;
  EXPECT_NE(mc.output.find("against one GPU"), std::string::npos) << mc.output;
}

// 2^22 ranks (the most the model takes) with every schedule option left to `auto`: the ranking
// and the phases in seconds, on a loaded 2-core box too. The model takes ranks by class; it once
// evaluated every rank of every alternative (23 s to over a minute on the 2-core box). Monte Carlo
// likewise.
TEST(PredictCli, FourMillionRanksAreAnsweredInSeconds) {
  const std::string dir = make_temp_dir();
  const std::string bin = std::getenv("SCALEBENCH_BINARY");
  const auto seconds_of = [&](const std::string& args, const std::string& json_path) {
    const auto t0 = std::chrono::steady_clock::now();
    const CliRun r = run_command("timeout 120 " + bin + " predict " + args + " --nodes 1048576 --ranks-per-node 4 " +
                                 "--profile " + synthetic_profile() + " --json " + json_path);
    EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.output;
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  const double gemm = seconds_of("gemm --n 65536", dir + "/gemm.json");
  EXPECT_LT(gemm, 10.0) << "predict gemm on 2^22 ranks took " << gemm << " s";
  ASSERT_TRUE(file_exists(dir + "/gemm.json"));
  const json g = read_json(dir + "/gemm.json");
  EXPECT_EQ(g["choice"]["by"], "model") << g["choice"].dump();
  // 65536 rows cannot give each of 2^22 ranks one: row1d is refused, a Summa2D grid taken.
  EXPECT_EQ(g["choice"]["taken"].get<std::string>().rfind("summa2d ", 0), 0u) << g["choice"]["taken"];
  EXPECT_GT(g["end_to_end_s"].get<double>(), 0.0);
  const double mc = seconds_of("montecarlo --samples 1e12", dir + "/mc.json");
  EXPECT_LT(mc, 10.0) << "predict montecarlo on 2^22 ranks took " << mc << " s";
}

TEST(PredictCli, StudyPredictRunsNothing) {
  const std::string dir = make_temp_dir();
  const CliRun r = run_scalebench("study " + std::string(std::getenv("SCALEBENCH_SOURCE_DIR")) +
                                  "/jobs/strong-scaling-cpu.yaml --predict --out-dir " + dir + "/s --profile " +
                                  synthetic_profile());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("nothing was run"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("GFLOP/s"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("cannot predict"), std::string::npos) << r.output;
  EXPECT_FALSE(file_exists(dir + "/s")) << "--predict wrote results";
}

struct BadPredict {
  const char* name;
  std::string args;
  int exit_code;
  const char* message;
};

class PredictBadInput : public testing::TestWithParam<BadPredict> {};

TEST_P(PredictBadInput, OneLineDocumentedExitCode) {
  const auto& c = GetParam();
  expect_refused("predict " + c.args, c.exit_code, c.message);
}

const BadPredict kBad[] = {
    {"nodes_zero", "gemm --n 64 --nodes 0 --profile " + synthetic_profile(), 2,
     "--nodes must be a whole number in [1, 4194304] (got '0')"},
    {"missing_profile", "gemm --n 64 --profile /nonexistent/p.json", 3, "cannot read --profile /nonexistent/p.json"},
    {"empty_profile", "gemm --n 64 --profile ''", 2, "--profile is empty"},
    {"folder_profile", "gemm --n 64 --profile /tmp", 3, "--profile /tmp"},
    {"dev_zero_profile", "gemm --n 64 --profile /dev/zero", 3, "character device"},
    {"ranks_2_31", "gemm --n 64 --nodes 65536 --ranks-per-node 32768 --profile " + synthetic_profile(), 2,
     "ranks (--nodes x --ranks-per-node) = 65536 x 32768 = 2147483648 exceeds the most ranks the model predicts for "
     "(4194304)"},
    {"mc_1e9_ranks", "montecarlo --nodes 1000 --ranks-per-node 1000000 --profile " + synthetic_profile(), 2,
     "= 1000000000 exceeds the most ranks the model predicts for"},
    {"nodes_beyond_int", "gemm --n 64 --nodes 2147483648 --profile " + synthetic_profile(), 2,
     "--nodes must be a whole number in [1, 4194304]"},
    {"gpus_beyond", "gemm --n 64 --gpus-per-node 1e6 --profile " + synthetic_profile(), 2,
     "--gpus-per-node must be a whole number in [0, 1024]"},
    {"grid_overflow", "gemm --algorithm summa2d --grid 65536x65536 --profile " + synthetic_profile(), 2,
     "--grid 65536x65536 processes (rows x columns) = 65536 x 65536 = 4294967296 exceeds"},
    {"panels_beyond", "gemm --algorithm summa2d --m 1 --n 1 --k 1e9 --panel-width 1 --profile " + synthetic_profile(),
     2, "--panel-width 1 makes 1000000000 panels"},
    {"gbps_overflow", "gemm --n 64 --inter-node-gbps 1e308 --profile " + synthetic_profile(), 2,
     "--inter-node-gbps 1e308 must be in"},
    {"latency_beyond", "gemm --n 64 --inter-node-latency-us 1e300 --profile " + synthetic_profile(), 2,
     "--inter-node-latency-us 1e300 must be in"},
    {"price_beyond", "gemm --n 64 --price-per-hour 1e300 --profile " + synthetic_profile(), 2,
     "--price-per-hour 1e300 must be in"},
    {"gpu_without_gpus", "gemm --n 64 --backend cublas --gpus-per-node 0 --profile " + synthetic_profile(), 2,
     "--gpus-per-node"},
    {"bad_gbps", "gemm --n 64 --inter-node-gbps fast --profile " + synthetic_profile(), 2, "--inter-node-gbps"},
    {"mtu_alone", "gemm --n 64 --nodes 2 --inter-node-mtu 9000 --profile " + synthetic_profile(), 2,
     "--inter-node-mtu goes with --inter-node-gbps"},
    {"mtu_small", "gemm --n 64 --nodes 2 --inter-node-gbps 10 --inter-node-mtu 100 --profile " + synthetic_profile(), 2,
     "--inter-node-mtu must be a whole number in [576, 65536] (got '100')"},
    {"mtu_text", "gemm --n 64 --nodes 2 --inter-node-gbps 10 --inter-node-mtu jumbo --profile " + synthetic_profile(),
     2, "--inter-node-mtu must be a whole number"},
    {"no_workload", "--nodes 2", 2, "subcommand is required"},
    {"energy_price_zero", "gemm --n 64 --energy-price 0 --profile " + synthetic_profile(), 2,
     "--energy-price '0' must be a positive finite price per kWh"},
    {"energy_price_negative", "gemm --n 64 --energy-price -0.3 --profile " + synthetic_profile(), 2,
     "--energy-price '-0.3' must be a positive"},
    {"energy_price_nan", "gemm --n 64 --energy-price nan --profile " + synthetic_profile(), 2,
     "--energy-price 'nan' must be a positive"},
    {"energy_price_inf", "montecarlo --energy-price 1e999 --profile " + synthetic_profile(), 2,
     "--energy-price '1e999' must be a positive"},
    {"energy_price_text", "gemm --n 64 --energy-price cheap --profile " + synthetic_profile(), 2,
     "--energy-price 'cheap' must be a positive"},
    {"energy_price_empty", "gemm --n 64 --energy-price '' --profile " + synthetic_profile(), 2,
     "--energy-price is empty"},  // as every option given empty
    {"energy_price_beyond", "gemm --n 64 --energy-price 1e13 --profile " + synthetic_profile(), 2, "at most 1e+12"},
    // A bad price is refused before the profile is read.
    {"energy_price_before_profile", "gemm --n 64 --energy-price -1 --profile /nonexistent/p.json", 2,
     "--energy-price '-1'"},
};
INSTANTIATE_TEST_SUITE_P(Cases, PredictBadInput, testing::ValuesIn(kBad),
                         [](const testing::TestParamInfo<BadPredict>& i) { return std::string(i.param.name); });

// The synthetic profile with a power section (4 cores: idle 50 W, BLAS fp64 on every core 250 W),
// or `power` instead, written to `path`.
void write_powered_profile(const std::string& path, const json& power = nullptr) {
  json j = read_json(synthetic_profile());
  j["power"] = power.is_null() ? json{{"cpu",
                                       {{"present", true},
                                        {"source", "RAPL: package-0"},
                                        {"idle_w", 50},
                                        {"blas_w", {{"fp64", 250}}},
                                        {"montecarlo_w", json::object()}}},
                                      {"gpu", {{"present", false}, {"reason", "NVML absent"}}}}
                               : power;
  std::ofstream(path) << j.dump();
}

TEST(PredictCli, EnergyPerJobAndItsCostFromTheProfilesWatts) {
  const std::string dir = make_temp_dir();
  write_powered_profile(dir + "/p.json");
  // 1000^3 on one thread at 20 GFLOP/s: 0.1 s of compute, nothing else. One of 4 cores busy:
  // 50 + 200/4 = 100 W, 10 J a run; 5 repeats + 1 warm-up: 60 J, 60 / 3.6e6 kWh.
  const CliRun r = run_scalebench("predict gemm --n 1000 --threads 1 --gpus-per-node 0 --energy-price 0.25 "
                                  "--profile " +
                                  dir + "/p.json --json " + dir + "/o.json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("energy per job (6 repeats): 60 J (10 J per run), 1.66667e-05 kWh, 4.16667e-06 at 0.25 "
                          "per kWh"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("CPU per node: 50 W idle, 100 W computing"), std::string::npos) << r.output;
  const json e = read_json(dir + "/o.json")["energy"];
  ASSERT_TRUE(e["available"].get<bool>()) << e.dump();
  EXPECT_NEAR(e["run_j"].get<double>(), 10, 1e-9);
  EXPECT_NEAR(e["job_j"].get<double>(), 60, 1e-9);
  EXPECT_EQ(e["job_repeats"], 6);
  EXPECT_NEAR(e["kwh_per_job"].get<double>(), 60 / 3.6e6, 1e-15);
  EXPECT_NEAR(e["cost_per_job"].get<double>(), 0.25 * 60 / 3.6e6, 1e-15);
  EXPECT_EQ(e["price_per_kwh"], 0.25);
  EXPECT_NEAR(e["watts"]["cpu_per_node"]["compute"].get<double>(), 100, 1e-9);
  // Without a price the energy is there and no cost.
  const CliRun plain = run_scalebench("predict gemm --n 1000 --threads 1 --gpus-per-node 2 --profile " + dir +
                                      "/p.json --json " + dir + "/plain.json");
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  const json pe = read_json(dir + "/plain.json")["energy"];
  EXPECT_FALSE(pe.contains("cost_per_job")) << pe.dump();
  EXPECT_NEAR(pe["job_j"].get<double>(), 60, 1e-9);
  // The GPUs have no counters: named, not counted.
  EXPECT_NE(plain.output.find("note: GPU energy not counted: NVML absent"), std::string::npos) << plain.output;
}

TEST(PredictCli, WithoutPowerDataOneLineSaysWhy) {
  const std::string dir = make_temp_dir();
  // A profile written before power was recorded still predicts time.
  const CliRun old = run_scalebench("predict gemm --n 1000 --energy-price 0.3 --profile " + synthetic_profile() +
                                    " --json " + dir + "/o.json");
  ASSERT_EQ(old.exit_code, 0) << old.output;
  EXPECT_EQ(count_of(old.output, "energy: no power data in the profile (it was calibrated before calibrate read "
                                 "power counters; run `scalebench calibrate` again)\n"),
            1)
      << old.output;
  const json e = read_json(dir + "/o.json")["energy"];
  EXPECT_FALSE(e["available"].get<bool>());
  EXPECT_NE(e["reason"].get<std::string>().find("no power data"), std::string::npos);
  EXPECT_GT(read_json(dir + "/o.json")["end_to_end_s"].get<double>(), 0);
  // A machine without RAPL: the profile's reason is given.
  write_powered_profile(dir + "/none.json", {{"cpu", {{"present", false}, {"reason", "no powercap tree at /none"}}},
                                             {"gpu", {{"present", false}, {"reason", "NVML absent"}}}});
  const CliRun none = run_scalebench("predict montecarlo --profile " + dir + "/none.json");
  ASSERT_EQ(none.exit_code, 0) << none.output;
  EXPECT_NE(none.output.find("energy: no power data in the profile (CPU: no powercap tree at /none)\n"),
            std::string::npos)
      << none.output;
  // A bad watt figure is refused as any bad figure is.
  write_powered_profile(dir + "/bad.json", {{"cpu", {{"present", true}, {"idle_w", -50}}},
                                            {"gpu", {{"present", false}, {"reason", "x"}}}});
  expect_refused("predict gemm --n 64 --profile " + dir + "/bad.json", 2,
                 "profile " + dir + "/bad.json: power.cpu.idle_w must be watts in [0, 1e+07] (got -50)");
}

// calibrate under a powercap tree whose counter a writer advances: the profile's power section
// holds the idle watts and each kernel's, from that counter.
// A profile with one bad figure, written to `path`.
void write_bad_profile(const std::string& path) {
  json j = read_json(synthetic_profile());
  j["montecarlo"]["pi"]["cpu"][0]["per_s"] = -1e8;
  std::ofstream(path) << j.dump();
}

// Every hostile profile, by --profile and by SCALEBENCH_PROFILE: exit 2 or 3 with one line naming
// the file, where it came from and what is wrong, within seconds (`timeout` turns a hang into 124).
TEST(PredictCli, HostileProfilesAreRefusedInBoundedTime) {
  const std::string dir = make_temp_dir();
  const std::string fifo = dir + "/fifo", bad = dir + "/bad.json";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  write_bad_profile(bad);
  const std::string bin = std::getenv("SCALEBENCH_BINARY");
  struct Case {
    std::string path;
    int exit_code;
    const char* what;
  };
  for (const Case& c : {Case{fifo, 3, "FIFO"}, Case{dir, 3, "folder"}, Case{"/dev/zero", 3, "character device"},
                        Case{bad, 2, "montecarlo.pi.cpu[0].per_s"}}) {
    for (const bool by_env : {false, true}) {
      const std::string cmd = by_env ? "SCALEBENCH_PROFILE=" + c.path + " timeout 20 " + bin + " predict montecarlo"
                                     : "timeout 20 " + bin + " predict montecarlo --profile " + c.path;
      const CliRun r = run_command(cmd);
      EXPECT_TRUE(is_refusal(r, c.exit_code, c.what)) << cmd;
      EXPECT_NE(r.output.find(c.path), std::string::npos) << r.output;
      if (c.exit_code == 3) {
        EXPECT_NE(r.output.find(by_env ? "SCALEBENCH_PROFILE" : "--profile"), std::string::npos) << r.output;
      }
    }
  }
}

// A run is never failed by its profile: a bad one, a FIFO or /dev/zero gives a record without
// prediction, the reason in the record and the table, exit 0, in bounded time.
TEST(CalibrateCli, RunsWithABadProfileFinishWithoutPrediction) {
  const std::string dir = make_temp_dir();
  const std::string fifo = dir + "/fifo", bad = dir + "/bad.json";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  {
    json j = read_json(synthetic_profile());
    j["blas"]["fp64"][0]["gflops"] = -10;
    std::ofstream(bad) << j.dump();
  }
  const std::string bin = std::getenv("SCALEBENCH_BINARY");
  struct Case {
    std::string path, what;
  };
  int i = 0;
  for (const Case& c : {Case{bad, "blas.fp64[0].gflops"}, Case{fifo, "FIFO"}, Case{"/dev/zero", "character device"}}) {
    const std::string rec = dir + "/r" + std::to_string(i++) + ".json";
    const CliRun r = run_command("SCALEBENCH_PROFILE=" + c.path + " timeout 60 " + bin +
                                 " gemm --n 64 --reps 1 --warmup 0 --json " + rec + " 2>&1");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("warning: no prediction: "), std::string::npos) << r.output;
    EXPECT_NE(r.output.find(c.what), std::string::npos) << c.what << " in:\n" << r.output;
    const json j = read_json(rec);
    EXPECT_TRUE(j["ok"].get<bool>());
    EXPECT_FALSE(j["prediction"]["available"].get<bool>()) << j["prediction"].dump();
    EXPECT_NE(j["prediction"]["reason"].get<std::string>().find(c.what), std::string::npos) << j["prediction"].dump();
    EXPECT_NE(j["warnings"].dump().find(c.path), std::string::npos) << j["warnings"].dump();
  }
  // Monte Carlo too.
  const CliRun mc = run_command("SCALEBENCH_PROFILE=" + bad + " timeout 60 " + bin +
                                " montecarlo --samples 1e4 --reps 1 --warmup 0 --json " + dir + "/mc.json 2>&1");
  ASSERT_EQ(mc.exit_code, 0) << mc.output;
  EXPECT_FALSE(read_json(dir + "/mc.json")["prediction"]["available"].get<bool>());
}

// calibrate's output paths: refused before any timing, naming --out or SCALEBENCH_PROFILE.
TEST(CalibrateCli, BadOutputPathsAreNamed) {
  const std::string dir = make_temp_dir();
  const std::string bin = std::getenv("SCALEBENCH_BINARY");
  expect_refused("calibrate --quick --out ''", 2, "--out is empty");
  CliRun r = run_scalebench("calibrate --quick --out " + dir);
  EXPECT_TRUE(is_refusal(r, 3, "--out " + dir));
  EXPECT_EQ(r.output.find("--json"), std::string::npos) << r.output;
  r = run_command("SCALEBENCH_PROFILE=" + dir + " timeout 60 " + bin + " calibrate --quick");
  EXPECT_TRUE(is_refusal(r, 3, "SCALEBENCH_PROFILE"));
  EXPECT_EQ(r.output.find("calibrate: profile written"), std::string::npos) << r.output;
}

}  // namespace
