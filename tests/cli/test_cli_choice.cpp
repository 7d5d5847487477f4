// `auto` with the real binary under the real mpirun: without a profile the rules decide and the
// record and table say so; with a current profile (the synthetic one, made this host's) the model
// ranks every alternative and the run takes the fastest predicted (or the rules' first of ties); a host-memory limit
// refuses replicated; `predict gemm … auto` prints the ranking (a slow inter-node link takes shared; GPUs with NCCL
// figures take NCCL, without them staged MPI); bad values and a choice with nothing feasible are one line and exit 2.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"
#include "scalebench/workloads/gemm/choice.hpp"

namespace {

using nlohmann::json;

std::string synthetic_profile() {
  return std::string(std::getenv("SCALEBENCH_SOURCE_DIR")) + "/tests/data/profile-synthetic.json";
}

json read_json(const std::string& path) { return json::parse(read_file(path)); }

void write_json(const std::string& path, const json& j) { std::ofstream(path) << j.dump(2); }

// The synthetic profile as this host's and this build's (host and versions of `record`).
std::string current_synthetic(const std::string& dir, const json& record) {
  json p = read_json(synthetic_profile());
  p["host"] = record["rank_info"][0]["host"];
  p["versions"] = record["versions"];
  const std::string path = dir + "/profile-here.json";
  write_json(path, p);
  return path;
}

// `env` then scalebench under the real mpirun with 2 ranks.
CliRun mpi_with(const std::string& env, const std::string& args) {
  return run_command(env + " timeout 120 " + std::getenv("SCALEBENCH_MPIEXEC") + " -np 2 --oversubscribe " +
                     std::getenv("SCALEBENCH_BINARY") + " " + args + " 2>&1");
}

const json* taken_of(const json& choice) {
  for (const auto& a : choice["alternatives"]) {
    if (a["verdict"] == "taken") return &a;
  }
  return nullptr;
}

// The record's configuration is the alternative the choice took.
void expect_ran_the_choice(const json& record) {
  const json* taken = taken_of(record["choice"]);
  ASSERT_NE(taken, nullptr) << record["choice"].dump(2);
  EXPECT_EQ(record["config"]["algorithm"], (*taken)["algorithm"]);
  EXPECT_EQ(record["config"]["distribution"], (*taken)["distribution"]);
  EXPECT_EQ(record["config"]["transport"], (*taken)["transport"]);
  EXPECT_EQ(record["config"]["overlap"], (*taken)["overlap"]);
}

constexpr const char* kRun = "gemm --n 256 --threads 1 --reps 1 --warmup 0 --no-peer ";

TEST(CliChoice, RulesWithoutAProfileThenTheModelWithOne) {
  const std::string dir = make_temp_dir();
  const std::string none = "SCALEBENCH_PROFILE=" + dir + "/none.json ";
  const CliRun rules = mpi_with(none, std::string(kRun) + "--algorithm auto --distribution auto --json " + dir +
                                          "/rules.json");
  ASSERT_EQ(rules.exit_code, 0) << rules.output;
  EXPECT_NE(rules.output.find("auto (algorithm,grid,distribution,lookahead) by rules: no profile at " + dir +
                              "/none.json"),
            std::string::npos)
      << rules.output;
  const json r = read_json(dir + "/rules.json");
  EXPECT_EQ(r["choice"]["by"], "rules");
  EXPECT_EQ(r["choice"]["asked"], "algorithm,distribution");
  EXPECT_EQ(r["choice"]["defaulted"], "grid,lookahead");
  // row1d x {replicated, shared}; summa2d on 1x2 and 2x1, each with lookahead 0, 1 and 2.
  EXPECT_EQ(r["choice"]["alternatives"].size(), 8u);
  expect_ran_the_choice(r);

  // The same run with a current profile: every feasible alternative predicted, the fastest taken,
  // or of those within kChoiceTieMargin of it (ties for the model) the rules' first.
  const std::string profile = current_synthetic(dir, r);
  const CliRun model = mpi_with("SCALEBENCH_PROFILE=" + profile,
                                std::string(kRun) + "--algorithm auto --grid auto --distribution auto --json " + dir +
                                    "/model.json");
  ASSERT_EQ(model.exit_code, 0) << model.output;
  EXPECT_NE(model.output.find("by model: profile " + profile), std::string::npos) << model.output;
  const json m = read_json(dir + "/model.json");
  EXPECT_EQ(m["choice"]["by"], "model");
  expect_ran_the_choice(m);
  const json* taken = taken_of(m["choice"]);
  ASSERT_NE(taken, nullptr);
  for (const auto& a : m["choice"]["alternatives"]) {
    if (a["verdict"] == "refused") continue;
    ASSERT_TRUE(a["predicted_s"].is_number()) << a.dump();
    EXPECT_LE((*taken)["predicted_s"].get<double>(),
              (1 + scalebench::kChoiceTieMargin) * a["predicted_s"].get<double>())
        << a.dump();
    if ((*taken)["predicted_s"].get<double>() > a["predicted_s"].get<double>()) {
      EXPECT_NE((*taken)["why"].get<std::string>().find("ties for the model"), std::string::npos) << taken->dump();
    }
  }
  EXPECT_TRUE(m["prediction"].value("available", false)) << m["prediction"].dump();

  // Host memory for the shared copy but not for every rank's B and C_i: replicated is refused.
  // n=1024 fp64: 8 MiB a matrix; replicated needs 48 MiB on the node, shared 32 MiB.
  const CliRun mem = mpi_with("SCALEBENCH_PROFILE=" + profile,
                              "gemm --n 1024 --threads 1 --reps 1 --warmup 0 --algorithm row1d --distribution auto "
                              "--auto-memory-per-node 41943040 --json " +
                                  dir + "/mem.json");
  ASSERT_EQ(mem.exit_code, 0) << mem.output;
  const json k = read_json(dir + "/mem.json");
  expect_ran_the_choice(k);
  EXPECT_EQ(k["config"]["distribution"], "shared");
  bool refused = false;
  for (const auto& a : k["choice"]["alternatives"]) {
    if (a["distribution"] == "replicated") {
      refused = a["verdict"] == "refused" && a["why"].get<std::string>().find("host memory") != std::string::npos;
    }
  }
  EXPECT_TRUE(refused) << k["choice"].dump(2);
}

TEST(CliChoice, DryRunShowsTheChoice) {
  const CliRun r = run_scalebench_mpi(2, "gemm --n 128 --threads 1 --algorithm auto --dry-run");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("auto (algorithm,grid,distribution,lookahead) by "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("(asked: algorithm; not given: grid,distribution,lookahead)"), std::string::npos) << r.output;
  // The whole ranking, not its first line alone: every alternative with its verdict.
  EXPECT_NE(r.output.find("summa2d 2x1 replicated lookahead 2"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--dry-run: nothing is computed"), std::string::npos) << r.output;
}

TEST(CliChoice, PredictRanksTheAlternatives) {
  const std::string dir = make_temp_dir();
  // A slow link between nodes: the shared distribution sends fewer bytes across.
  const CliRun slow = run_scalebench("predict gemm --n 4096 --algorithm row1d --distribution auto --nodes 4 "
                                     "--ranks-per-node 4 --inter-node-gbps 0.08 --profile " +
                                     synthetic_profile() + " --json " + dir + "/slow.json");
  ASSERT_EQ(slow.exit_code, 0) << slow.output;
  EXPECT_NE(slow.output.find("auto (distribution) by model"), std::string::npos) << slow.output;
  const json s = read_json(dir + "/slow.json");
  const json* taken = taken_of(s["choice"]);
  ASSERT_NE(taken, nullptr) << s.dump(2);
  EXPECT_EQ((*taken)["distribution"], "shared");
  EXPECT_NE(s["workload"].get<std::string>().find("(auto: row1d 16x1 shared)"), std::string::npos) << s["workload"];
  // With the algorithm open too, summa2d's blocks move fewer bytes still: every alternative ranked.
  const CliRun both = run_scalebench("predict gemm --n 4096 --algorithm auto --distribution auto --nodes 4 "
                                     "--ranks-per-node 4 --inter-node-gbps 0.08 --profile " +
                                     synthetic_profile());
  ASSERT_EQ(both.exit_code, 0) << both.output;
  EXPECT_EQ(count_of(both.output, " s  row1d 16x1 "), 2) << both.output;
  EXPECT_EQ(count_of(both.output, " s  summa2d 4x4 replicated lookahead "), 3) << both.output;  // 0, 1, 2

  // Four GPUs with NCCL figures: NCCL.
  const std::string gpu_args = "predict gemm --n 4000 --backend cublas --algorithm row1d --distribution replicated "
                               "--transport auto --overlap auto --ranks-per-node 4 --gpus-per-node 4 --profile ";
  const CliRun nccl = run_scalebench(gpu_args + synthetic_profile());
  ASSERT_EQ(nccl.exit_code, 0) << nccl.output;
  EXPECT_NE(nccl.output.find("(auto: row1d 4x1 replicated transport nccl"), std::string::npos) << nccl.output;

  // The same GPUs in a profile without NCCL figures: NCCL cannot be predicted, staged MPI is taken.
  json p = read_json(synthetic_profile());
  p["gpu"].erase("nccl_intra");
  write_json(dir + "/no-nccl.json", p);
  const CliRun staged = run_scalebench(gpu_args + dir + "/no-nccl.json");
  ASSERT_EQ(staged.exit_code, 0) << staged.output;
  EXPECT_NE(staged.output.find("(auto: row1d 4x1 replicated transport mpi no-overlap)"), std::string::npos)
      << staged.output;
  EXPECT_NE(staged.output.find("not predicted: profile"), std::string::npos) << staged.output;
}

// No schedule option given: each is `auto` by default. Without a profile the rules decide (two
// ranks on a node: row1d, shared), the record's choice names the options as not given, and one
// line says so before the table; with every option pinned there is nothing to choose.
TEST(CliChoice, APlainGemmRecordsTheDefaultedChoice) {
  const std::string dir = make_temp_dir();
  const std::string none = "SCALEBENCH_PROFILE=" + dir + "/none.json ";
  const CliRun plain = mpi_with(none, std::string(kRun) + "--json " + dir + "/plain.json");
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  EXPECT_EQ(count_of(plain.output, "not given: auto by default"), 1) << plain.output;
  const json r = read_json(dir + "/plain.json");
  const json& c = r["choice"];
  EXPECT_EQ(c["options"], "algorithm,grid,distribution,lookahead") << c.dump(2);
  EXPECT_EQ(c["defaulted"], "algorithm,grid,distribution,lookahead");
  EXPECT_EQ(c["asked"], "");
  EXPECT_EQ(c["by"], "rules");
  EXPECT_NE(c["basis"].get<std::string>().find("no profile at " + dir + "/none.json"), std::string::npos);
  EXPECT_EQ(c["taken"], "row1d 2x1 shared");
  const json* taken = taken_of(c);
  ASSERT_NE(taken, nullptr);
  EXPECT_NE((*taken)["why"].get<std::string>().find("the rules' order"), std::string::npos) << taken->dump();
  expect_ran_the_choice(r);
  EXPECT_EQ(r["distribution"]["scheme"], "shared") << r["distribution"].dump();

  const CliRun pinned = mpi_with(none, std::string(kRun) + "--algorithm row1d --distribution replicated --json " + dir +
                                           "/pinned.json");
  ASSERT_EQ(pinned.exit_code, 0) << pinned.output;
  EXPECT_EQ(pinned.output.find("auto ("), std::string::npos) << pinned.output;
  const json q = read_json(dir + "/pinned.json");
  EXPECT_TRUE(!q.contains("choice") || q["choice"].is_null()) << q.dump();
  EXPECT_EQ(q["config"]["distribution"], "replicated");
}

// Options that belong to one schedule keep their refusal where it is pinned, and pick the schedule
// where the algorithm is left open: --lookahead 2 alone runs summa2d with it.
TEST(CliChoice, ASchedulesOwnOptionPicksItsSchedule) {
  const std::string dir = make_temp_dir();
  const CliRun r = run_scalebench_mpi(2, std::string(kRun) + "--lookahead 2 --json " + dir + "/r.json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json rec = read_json(dir + "/r.json");
  EXPECT_EQ(rec["config"]["algorithm"], "summa2d");
  EXPECT_EQ(rec["config"]["lookahead"], 2);
  EXPECT_TRUE(is_refusal(run_scalebench_mpi(2, std::string(kRun) + "--algorithm row1d --lookahead 2"), 2,
                         "--lookahead is the panel pipeline of --algorithm summa2d"));
}

struct Bad {
  const char* name;
  int ranks;
  std::string args;
  std::string message;
};

class ChoiceRefused : public testing::TestWithParam<Bad> {};

TEST_P(ChoiceRefused, ExitTwoWithOneLine) {
  const auto& c = GetParam();
  const CliRun r = run_scalebench_mpi(c.ranks, "gemm --threads 1 " + c.args);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(count_of(r.output, "scalebench: error"), 1) << r.output;
  EXPECT_NE(r.output.find(c.message), std::string::npos) << "expected '" << c.message << "' in:\n" << r.output;
  EXPECT_EQ(r.output.find("verification"), std::string::npos) << r.output;
}

INSTANTIATE_TEST_SUITE_P(Cli, ChoiceRefused,
                         testing::Values(Bad{"overlap_value", 1, "--n 32 --overlap maybe", "unknown --overlap 'maybe'"},
                                         Bad{"transport_value", 1, "--n 32 --transport fast", "use mpi, nccl or auto"},
                                         Bad{"memory_value", 1, "--n 32 --distribution auto --auto-memory-per-node 0",
                                             "--auto-memory-per-node"},
                                         Bad{"nothing_feasible", 3, "--m 2 --n 2 --k 2 --algorithm auto --grid auto",
                                             "found no alternative this run accepts"}),
                         [](const testing::TestParamInfo<Bad>& i) { return std::string(i.param.name); });

}  // namespace

namespace {

// Every alternative refused for memory alone: the machine cannot hold the run, exit 3 as for a
// pinned run (docs/model.md), each refusal with its real figures (never "0.00 GiB"); in the run and
// in `predict`.
TEST(CliChoice, AllRefusedForMemoryIsExitThreeWithRealFigures) {
  for (const std::string& args :
       {std::string("gemm --threads 1 --n 64 --distribution auto --auto-memory-per-node 1000 --dry-run"),
        "predict gemm --n 64 --distribution auto --auto-memory-per-node 1000 --profile " + synthetic_profile()}) {
    SCOPED_TRACE(args);
    const CliRun r = args.starts_with("predict") ? run_scalebench(args) : run_scalebench_mpi(1, args);
    EXPECT_TRUE(is_refusal(r, 3, "found no alternative this run accepts")) << r.output;
    EXPECT_EQ(r.output.find("0.00 GiB"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("1000 bytes is free"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("KiB of host memory"), std::string::npos) << r.output;
  }
}

}  // namespace
