// The drivers' launch under the real mpirun on this host: the commands for hosts, nodes and srun's
// PMI type; a launcher that fails stops a study (or marks a contrast) with exit code 9 and the
// launcher's own error line, never "skipped"; a study of which nothing can run here exits 9.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"

using nlohmann::json;

namespace {

constexpr const char* kOpalError = "[node1:01234] OPAL ERROR: Unreachable in file ext3x_client.c at line 112";

// An executable shell script.
std::string write_script(const std::string& path, const std::string& body) {
  std::ofstream(path) << "#!/bin/sh\n" << body;
  run_command("chmod +x '" + path + "'");
  return path;
}

// A launcher that fails as Open MPI does when it cannot reach its PMIx server; with
// `check_passes`, the runs' --dry-run checks go to the real mpirun and only the runs fail.
std::string failing_launcher(const std::string& dir, bool check_passes) {
  std::string body;
  if (check_passes) body += "case \"$*\" in *--dry-run*) exec mpirun \"$@\";; esac\n";
  body += std::string("echo '") + kOpalError + "' >&2\necho '*** An error occurred in MPI_Init' >&2\nexit 1\n";
  return write_script(dir + "/mpirun-fails", body);
}

struct ScopedEnv {
  std::string name;
  ScopedEnv(const std::string& n, const std::string& v) : name(n) { setenv(n.c_str(), v.c_str(), 1); }
  ~ScopedEnv() { unsetenv(name.c_str()); }
};

const char* kStudy = R"(study: two
workload: gemm
args: {n: 64, backend: openblas, threads: 1, reps: 1, warmup: 0}
sweep:
  ranks: [1, 2]
mpirun_args: [--oversubscribe]
)";

std::string write_study(const std::string& dir, const std::string& body) {
  const std::string path = dir + "/study.yaml";
  std::ofstream(path) << body;
  return path;
}

}  // namespace

TEST(LaunchCli, AStudyWhoseCheckCannotLaunchStopsWithTheLaunchersError) {
  const std::string dir = make_temp_dir();
  const std::string file = write_study(dir, kStudy);
  const ScopedEnv env("SCALEBENCH_MPIEXEC", failing_launcher(dir, false));
  const CliRun r = run_scalebench("study " + file + " --out-dir " + dir + "/out");
  EXPECT_EQ(r.exit_code, 9) << r.output;
  EXPECT_NE(r.output.find(kOpalError), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("could not be launched"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("skipped"), std::string::npos) << r.output;
  EXPECT_EQ(count_of(r.output, "scalebench: error"), 1) << r.output;
  EXPECT_FALSE(file_exists(dir + "/out/runs.jsonl"));
}

TEST(LaunchCli, StudyRunsThatFailToLaunchShowTheLaunchersErrorAndExit9) {
  const std::string dir = make_temp_dir();
  const std::string file = write_study(dir, kStudy);
  const ScopedEnv env("SCALEBENCH_MPIEXEC", failing_launcher(dir, true));
  const CliRun r = run_scalebench("study " + file + " --out-dir " + dir + "/out");
  EXPECT_EQ(r.exit_code, 9) << r.output;
  EXPECT_NE(r.output.find(kOpalError), std::string::npos) << r.output;
  const json summary = json::parse(read_file(dir + "/out/summary.json"));
  ASSERT_EQ(summary["runs"].size(), 2u);
  for (const auto& run : summary["runs"]) {
    EXPECT_EQ(run["status"], "failed") << run.dump();
    EXPECT_NE(run["reason"].get<std::string>().find("OPAL ERROR: Unreachable"), std::string::npos) << run.dump();
  }
}

TEST(LaunchCli, AContrastWhoseStepsCannotLaunchExits9WithTheLaunchersError) {
  const std::string dir = make_temp_dir();
  const ScopedEnv env("SCALEBENCH_MPIEXEC", failing_launcher(dir, false));
  const CliRun r = run_scalebench("contrast --workload montecarlo --modes single-core --samples 1e5 --reps 1 "
                                  "--warmup 0 --out-dir " +
                                  dir + "/runs --json " + dir + "/c.json");
  EXPECT_EQ(r.exit_code, 9) << r.output;
  EXPECT_NE(r.output.find("failed: [node1:01234] OPAL ERROR: Unreachable"), std::string::npos) << r.output;
  const json report = json::parse(read_file(dir + "/c.json"));
  EXPECT_EQ(report["runs"][0]["status"], "failed");
  EXPECT_EQ(report["exit_code"].get<int>(), 9);
}

TEST(LaunchCli, AStudyOfWhichNothingCanRunHereExits9) {
  const std::string dir = make_temp_dir();
  const std::string file = write_study(dir, R"(study: wide
workload: gemm
args: {n: 64, backend: openblas, threads: 1, reps: 1, warmup: 0}
sweep:
  nodes: [2, 3]
)");
  const CliRun r = run_scalebench("study " + file + " --out-dir " + dir + "/out");
  EXPECT_EQ(r.exit_code, 9) << r.output;
  EXPECT_NE(r.output.find("none of the 2 runs"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("needs 2 nodes; this host gives 1"), std::string::npos) << r.output;
  const json summary = json::parse(read_file(dir + "/out/summary.json"));
  EXPECT_EQ(summary["runs"][0]["status"], "skipped");
  EXPECT_EQ(summary["runs"][1]["nodes"].get<int>(), 3);
}

TEST(LaunchCli, HostsNodesAndPmiShapeTheCommands) {
  const std::string dir = make_temp_dir();
  // The plans below are those of a saved machine (one NUMA domain, two cores, no GPU), so the
  // expected commands do not depend on the machine the test runs on.
  const char* src = std::getenv("SCALEBENCH_SOURCE_DIR");
  ASSERT_NE(src, nullptr);
  const ScopedEnv xml("HWLOC_XMLFILE", std::string(src) + "/tests/data/amd-epyc-1p2c-workstation.xml");
  CliRun r = run_scalebench(
      "contrast --dry-run --workload gemm --hosts node1,node2 --mpirun-args='--mca btl tcp,self'");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("--host node1:1,node2:1 --mca btl tcp,self"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("single-core   mpirun -np 1 --map-by ppr:1:node:PE=1 --bind-to core --host node1:1 "),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("skipped: one node"), std::string::npos) << r.output;

  std::ofstream(dir + "/hosts") << "node1 slots=2\nnode2 slots=2\n";
  const std::string file = write_study(dir, R"(study: nodes
workload: gemm
args: {n: 64, backend: openblas}
sweep:
  nodes: [1, 2]
  ranks_per_node: [2]
)");
  r = run_scalebench("study " + file + " --dry-run --out-dir " + dir + "/s --hostfile " + dir + "/hosts");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("mpirun -np 2 --map-by ppr:2:node --bind-to none --host node1:2 "), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("mpirun -np 4 --map-by ppr:2:node --bind-to none --hostfile " + dir + "/hosts "),
            std::string::npos)
      << r.output;

  // Inside a Slurm allocation: srun steps name the PMI type of SLURM_MPI_TYPE and how many nodes.
  const ScopedEnv job("SLURM_JOB_ID", "1"), nodes("SLURM_JOB_NUM_NODES", "2"), mpi("SLURM_MPI_TYPE", "pmix");
  r = run_scalebench("study " + file + " --dry-run --out-dir " + dir + "/s2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("srun -n 4 --nodes=2 --ntasks-per-node=2 --mpi=pmix "), std::string::npos) << r.output;
  r = run_scalebench("contrast --dry-run --workload gemm");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(count_of(r.output, "--mpi=pmix"), 4) << r.output;  // naive, single-core, multi-thread, multinode
  EXPECT_NE(r.output.find("srun --nodes=2 --ntasks=2"), std::string::npos) << r.output;
  r = run_scalebench("contrast --dry-run --launcher srun --hosts node1,node2");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--hosts/--hostfile are for mpirun"), std::string::npos) << r.output;
}

TEST(LaunchCli, RecordsSayNodesAndWhichPhasesCrossTheNetwork) {
  const std::string dir = make_temp_dir();
  const CliRun g = run_scalebench_mpi(3, "gemm --n 96 --threads 1 --reps 2 --warmup 1 --quiet --algorithm row1d "
                                         "--distribution replicated --json " +
                                             dir + "/g.json");
  ASSERT_EQ(g.exit_code, 0) << g.output;
  const json r = json::parse(read_file(dir + "/g.json"));
  EXPECT_EQ(r["nodes"].get<int>(), 1);
  EXPECT_EQ(r["ranks_per_node"].get<int>(), 3);
  const json& net = r["network"];
  // One host: nothing crosses the network; ranks 1 and 2 receive B whole and their rows of A.
  const double b_bytes = 96.0 * 96 * 8;
  EXPECT_EQ(net["phases"]["broadcast"]["intra_node_bytes"].get<double>(), 2 * b_bytes);
  EXPECT_EQ(net["phases"]["scatter"]["intra_node_bytes"].get<double>(), 64.0 * 96 * 8);  // rows 32..95
  for (const char* phase : {"scatter", "broadcast", "gather"}) {
    EXPECT_EQ(net["phases"][phase]["inter_node_bytes"].get<double>(), 0.0) << phase;
    EXPECT_FALSE(net["phases"][phase]["crosses_network"].get<bool>()) << phase;
  }
  EXPECT_EQ(net["peers"]["broadcast"]["what"], "MPI_Bcast");
  EXPECT_EQ(net["peers"]["scatter"]["what"], "MPI_Scatterv");
  for (const char* phase : {"scatter", "broadcast"}) {
    EXPECT_EQ(net["peers"][phase]["bare"]["per_repeat_max_s"].size(), 2u) << phase;  // the warm-up dropped
    EXPECT_GT(net["peers"][phase]["bare"]["median_s"].get<double>(), 0.0) << phase;
    const double ratio = net["peers"][phase]["ratio_phase_vs_bare"].get<double>();
    EXPECT_NEAR(ratio,
                net["peers"][phase]["bare"]["median_s"].get<double>() / r["phases"][phase]["median_s"].get<double>(),
                1e-12)
        << phase;
  }
  const CliRun m = run_scalebench_mpi(2, "montecarlo --problem pi --samples 1e5 --threads 1 --quiet --json " + dir +
                                             "/m.json");
  ASSERT_EQ(m.exit_code, 0) << m.output;
  const json mr = json::parse(read_file(dir + "/m.json"));
  EXPECT_EQ(mr["nodes"].get<int>(), 1);
  EXPECT_EQ(mr["ranks_per_node"].get<int>(), 2);
}

TEST(LaunchCli, AHostfileIsReadWithoutBlockingAndByKind) {
  const std::string dir = make_temp_dir();
  ASSERT_EQ(run_command("mkfifo " + dir + "/fifo && mkdir " + dir + "/folder").exit_code, 0);
  const std::string study = write_study(dir, R"(study: hf
workload: gemm
args: {n: 64, backend: openblas}
hostfile: )" + dir + R"(/fifo
)");
  const struct {
    std::string args, says;
  } cases[] = {
      {"contrast --dry-run --hostfile " + dir + "/fifo", "cannot read --hostfile " + dir + "/fifo: it is a FIFO"},
      {"contrast --dry-run --hostfile " + dir + "/folder", "cannot read --hostfile " + dir + "/folder: it is a folder"},
      {"contrast --dry-run --hostfile /dev/zero", "cannot read --hostfile /dev/zero: it is a character device"},
      {"contrast --dry-run --hostfile " + dir + "/nosuch", "cannot read --hostfile " + dir + "/nosuch: no such file"},
      {"study " + study + " --dry-run --out-dir " + dir + "/s --hostfile " + dir + "/folder",
       "cannot read --hostfile " + dir + "/folder: it is a folder"},
      {"study " + study + " --dry-run --out-dir " + dir + "/s",
       "cannot read hostfile of " + study + " " + dir + "/fifo: it is a FIFO"},
  };
  for (const auto& c : cases) {
    const CliRun r = run_scalebench(c.args);  // under `timeout`: a read that blocks fails the test
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.output;
    EXPECT_EQ(count_of(r.output, "\n"), 1) << r.output;
    EXPECT_NE(r.output.find(c.says), std::string::npos) << c.args << "\n" << r.output;
  }
}
