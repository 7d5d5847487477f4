// Bad input to `scalebench gemm` under a real mpirun with 2 ranks: one clear line from rank 0,
// the documented exit code, no hang (the runner times out at 120 s), no output file.
#include <gtest/gtest.h>

#include <dirent.h>

#include <chrono>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"

namespace {

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct BadInput {
  const char* name;
  std::string args;
  int ranks;
  int exit_code;
  const char* message;  // a fragment the one error line must contain
};

int files_in(const std::string& dir) {
  int n = 0;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") ++n;
    }
    closedir(d);
  }
  return n;
}

class GemmBadInput : public testing::TestWithParam<BadInput> {};

TEST_P(GemmBadInput, OneLineDocumentedExitCodeNoOutputFile) {
  const auto& c = GetParam();
  const std::string dir = make_temp_dir();
  const std::string json = dir + "/r.json";
  std::string args = "gemm " + c.args;
  if (c.args.find("--json") == std::string::npos) args += " --json " + json;
  const CliRun r = run_scalebench_mpi(c.ranks, args);
  EXPECT_EQ(r.exit_code, c.exit_code) << r.output;
  EXPECT_EQ(count_of(r.output, "scalebench: error"), 1) << r.output;
  EXPECT_NE(r.output.find(c.message), std::string::npos) << "expected '" << c.message << "' in:\n" << r.output;
  EXPECT_EQ(files_in(dir), 0) << "an output file was left behind";
}

const BadInput kBadInputs[] = {
    {"n_zero", "--n 0", 2, 2, "--n must be a whole number > 0"},
    {"n_negative", "--n -5", 2, 2, "--n must be a whole number > 0"},
    {"n_not_a_number", "--n abc", 2, 2, "--n must be a whole number > 0 (got 'abc')"},
    {"m_not_a_number", "--n 64 --m x12", 2, 2, "--m must be a whole number > 0"},
    {"k_not_a_number", "--n 64 --k 1.5", 2, 2, "--k must be a whole number > 0"},
    {"more_ranks_than_rows", "--n 64 --m 1 --algorithm row1d", 2, 2, "2 ranks but only 1 rows of A"},
    {"memory_exceeds_machine", "--n 2000000", 2, 3, "of host memory"},
    {"unknown_backend", "--n 64 --backend magma", 2, 2, "unknown --backend 'magma'"},
    {"unknown_precision", "--n 64 --precision fp8", 2, 2, "unknown --precision 'fp8'"},
    {"gpu_precision_on_cpu", "--n 64 --precision tf32", 2, 2, "--precision tf32 needs --backend cublas"},
    {"threads_zero", "--n 64 --threads 0", 2, 2, "--threads must be a whole number in [1, 65536]"},
    {"threads_negative", "--n 64 --threads -3", 2, 2, "--threads must be a whole number in [1, 65536]"},
    {"unwritable_json", "--n 64 --json /nonexistent-folder/r.json", 2, 3, "cannot write --json"},
    {"unknown_option", "--n 64 --frobnicate", 2, 2, "frobnicate"},
    {"naive_too_large", "--n 8192 --backend naive", 2, 2, "--backend naive on 8192x8192x8192"},
    {"reps_zero", "--n 64 --reps 0", 2, 2, "--reps must be a whole number in [1,"},
};

INSTANTIATE_TEST_SUITE_P(Cli, GemmBadInput, testing::ValuesIn(kBadInputs),
                         [](const testing::TestParamInfo<BadInput>& p) { return std::string(p.param.name); });

TEST(GemmCli, WrongResultExitsFourAndRecordSaysNotOk) {
  const std::string dir = make_temp_dir();
  const CliRun r = run_scalebench_mpi(2, "gemm --n 64 --reps 1 --inject-error-rank 1 --json " + dir + "/r.json");
  EXPECT_EQ(r.exit_code, 4) << r.output;
  EXPECT_NE(r.output.find("verification failed"), std::string::npos) << r.output;
  const std::string rec = read_file(dir + "/r.json");
  EXPECT_NE(rec.find("\"ok\": false"), std::string::npos) << rec;
  EXPECT_NE(rec.find("\"status\": \"verification_failed\""), std::string::npos);
}

TEST(GemmCli, GoodRunVerifiesPrintsTableAndWritesRecord) {
  const std::string dir = make_temp_dir();
  const CliRun r = run_scalebench_mpi(2, "gemm --n 96 --m 101 --reps 2 --json " + dir + "/r.json");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  for (const char* phase : {"scatter", "broadcast", "compute", "gather", "verify", "end_to_end"}) {
    EXPECT_NE(r.output.find(phase), std::string::npos) << phase;
  }
  EXPECT_NE(r.output.find("freivalds PASSED"), std::string::npos);
  EXPECT_EQ(count_of(r.output, "scalebench gemm "), 1) << "only rank 0 prints the table";
  EXPECT_NE(read_file(dir + "/r.json").find("\"ok\": true"), std::string::npos);
}

// The record says where the process's wall time went: its parts in the order they ran, each
// non-negative, adding up to the process's age at the record, which is under the launcher's wall.
TEST(GemmCli, RecordItemizesTheWallFromTheProcessStart) {
  const std::string dir = make_temp_dir();
  const double t0 = steady_seconds();
  const CliRun r = run_scalebench_mpi(2, "gemm --n 128 --reps 2 --warmup 1 --json " + dir + "/r.json");
  const double launcher_wall = steady_seconds() - t0;
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto wall = nlohmann::json::parse(read_file(dir + "/r.json"))["wall"];
  ASSERT_TRUE(wall.is_object()) << wall.dump();
  std::vector<std::string> names;
  double sum = 0;
  for (const auto& p : wall["parts"]) {
    names.push_back(p["part"].get<std::string>());
    EXPECT_GE(p["s"].get<double>(), 0.0) << p.dump();
    sum += p["s"].get<double>();
  }
  const std::vector<std::string> expected = {"start",      "mpi_init", "command", "checks_and_placement",
                                             "idle_power", "setup",    "warmup",  "timed",
                                             "peers",      "finish"};
  EXPECT_EQ(names, expected);
  const double to_record = wall["to_record_s"].get<double>();
  EXPECT_NEAR(sum, to_record, 1e-6);
  EXPECT_GT(to_record, 0.0);
  EXPECT_LT(to_record, launcher_wall) << "the process started after the launcher and wrote its record before exiting";
  EXPECT_NE(r.output.find("wall: "), std::string::npos) << r.output;
}

TEST(GemmCli, DryRunComputesNothingAndWritesNothing) {
  const std::string dir = make_temp_dir();
  const CliRun r = run_scalebench_mpi(2, "gemm --n 4096 --dry-run --json " + dir + "/r.json");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("nothing is computed"), std::string::npos);
  EXPECT_NE(r.output.find("rank    1"), std::string::npos) << r.output;
  EXPECT_FALSE(file_exists(dir + "/r.json"));
}

TEST(GemmCli, HelpListsEveryOptionEnvironmentVariableAndExitCode) {
  const CliRun r = run_scalebench("gemm --help");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* s : {"--n", "--m", "--k", "--precision", "--backend", "--threads", "--reps", "--warmup", "--seed",
                        "--json", "--dry-run", "--verify", "--fill", "--force", "OPENBLAS_NUM_THREADS",
                        "OMP_NUM_THREADS", "verification failed"}) {
    EXPECT_NE(r.output.find(s), std::string::npos) << s;
  }
  const CliRun v = run_scalebench("--version");
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_NE(v.output.find("git "), std::string::npos);
}

TEST(GemmCli, ThreadsFromEnvironmentAreHonouredAndRecorded) {
  const std::string dir = make_temp_dir();
  setenv("OPENBLAS_NUM_THREADS", "1", 1);
  const CliRun d = run_scalebench("gemm --n 64 --reps 1 --json " + dir + "/s.json");
  EXPECT_EQ(d.exit_code, 0) << d.output;
  EXPECT_NE(read_file(dir + "/s.json").find("\"threads_source\": \"OPENBLAS_NUM_THREADS\""), std::string::npos);
  const CliRun e = run_scalebench("gemm --n 64 --reps 1 --threads 2 --json " + dir + "/t.json");
  EXPECT_EQ(e.exit_code, 0) << e.output;
  EXPECT_NE(read_file(dir + "/t.json").find("\"threads_source\": \"--threads\""), std::string::npos);
  unsetenv("OPENBLAS_NUM_THREADS");
}

}  // namespace
