// `scalebench contrast` end to end under the real mpirun: the CPU modes run, the modes this
// machine cannot do are skipped with their reason, a failing step is marked and the rest still
// shown, and bad requests fail before anything runs: empty lists and paths, numbers the workloads
// would refuse (hex), a row its workload would refuse (tf32 on a CPU row), a study's or a foreign
// folder, a folder another driver holds, a path of the wrong kind where a step or --json/--csv
// writes, a missing launcher; --dry-run refuses them alike. A contrast killed mid-run and run again
// on its folder runs only the rows it had not finished.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"
#include "scalebench/gpu/gpu.hpp"

using nlohmann::json;

namespace {

const char* kSmall = "--n 128 --naive-n 64 --samples 1e6 --naive-samples 1e5 --reps 1 --warmup 0";

bool built_with_cuda() { return run_scalebench("--version").output.find("CUDA on") != std::string::npos; }

const json* row_of(const json& report, const std::string& workload, const std::string& mode) {
  for (const auto& r : report["runs"]) {
    if (r["workload"] == workload && r["mode"] == mode) return &r;
  }
  return nullptr;
}

// The one "scalebench: error" line of `output` ("" when there is none).
std::string error_line(const std::string& output) {
  const std::size_t at = output.find("scalebench: error");
  return at == std::string::npos ? "" : output.substr(at, output.find('\n', at) - at);
}

// A launcher that fails every gemm step as a run refused by scalebench does (its own error line,
// exit 2) and hands the other steps to the real mpirun.
std::string launcher_failing_gemm(const std::string& dir) {
  const char* mpiexec = std::getenv("SCALEBENCH_MPIEXEC");
  const std::string path = dir + "/mpirun-gemm-fails";
  std::ofstream(path) << "#!/bin/sh\ncase \" $* \" in *\" gemm \"*) echo 'scalebench: error: gemm step failed (test "
                         "launcher)' >&2; exit 2;; esac\nexec "
                      << (mpiexec != nullptr && *mpiexec != '\0' ? mpiexec : "mpirun") << " \"$@\"\n";
  run_command("chmod +x '" + path + "'");
  return path;
}

// A UNIX socket at `path` (left there when this returns); false when none could be made.
bool make_socket(const std::string& path) {
  sockaddr_un address{};
  if (path.size() >= sizeof address.sun_path) return false;
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  if (fd < 0) return false;
  const bool made = bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0;
  close(fd);
  return made;
}

}  // namespace

TEST(ContrastCli, RunsTheCpuModesAndSkipsTheRestWithReasons) {
  const std::string dir = make_temp_dir();
  const CliRun r = run_scalebench(std::string("contrast ") + kSmall + " --out-dir " + dir + "/runs --json " + dir +
                                  "/c.json --csv " + dir + "/c.csv");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json report = json::parse(read_file(dir + "/c.json"));
  EXPECT_TRUE(report["ok"].get<bool>());
  for (const char* w : {"gemm", "montecarlo"}) {
    for (const char* m : {"naive", "single-core", "multi-thread"}) {
      const json* row = row_of(report, w, m);
      ASSERT_NE(row, nullptr) << w << " " << m;
      EXPECT_EQ((*row)["status"], "ok") << row->dump();
      EXPECT_GT((*row)["rate"].get<double>(), 0) << row->dump();
      EXPECT_TRUE(file_exists((*row)["record"].get<std::string>()));
    }
    EXPECT_NEAR((*row_of(report, w, "single-core"))["speedup_vs_single_core"].get<double>(), 1.0, 1e-12);
    const json* gpu = row_of(report, w, "gpu");
    ASSERT_NE(gpu, nullptr);
    if (scalebench::visible_gpu_count() > 0) {
      EXPECT_EQ((*gpu)["status"], "ok") << gpu->dump();
    } else {
      EXPECT_EQ((*gpu)["status"], "skipped");
      EXPECT_EQ((*gpu)["reason"], built_with_cuda() ? "no GPU" : "built without CUDA");
    }
    EXPECT_EQ((*row_of(report, w, "multinode"))["reason"], "one node");
  }
  // The table and the CSV say the same.
  EXPECT_NE(r.output.find("single-core"), std::string::npos);
  if (scalebench::visible_gpu_count() == 0) {
    EXPECT_NE(r.output.find(built_with_cuda() ? "skipped: no GPU" : "skipped: built without CUDA"), std::string::npos);
  }
  // The naive rows ran a smaller problem, and the table says so.
  EXPECT_EQ((*row_of(report, "gemm", "naive"))["size"], "n=64");
  EXPECT_EQ((*row_of(report, "gemm", "single-core"))["size"], "n=128");
  EXPECT_NE(r.output.find("naive rows run a smaller problem"), std::string::npos) << r.output;
  // Each step's log holds what the step said (its table).
  const std::string log = read_file(dir + "/runs/gemm-single-core.log");
  EXPECT_NE(log.find("GFLOP/s"), std::string::npos) << log;
  const std::string csv = read_file(dir + "/c.csv");
  EXPECT_EQ(count_of(csv, "\n"), 1 + static_cast<int>(report["runs"].size()));
  EXPECT_TRUE(file_exists(dir + "/runs/contrast.json"));
  // Earlier results are never overwritten.
  const CliRun again = run_scalebench(std::string("contrast ") + kSmall + " --out-dir " + dir + "/runs");
  EXPECT_EQ(again.exit_code, 3) << again.output;
  EXPECT_NE(again.output.find("never overwritten"), std::string::npos);
}

TEST(ContrastCli, AFailingStepIsMarkedAndTheOthersStillShown) {
  const std::string dir = make_temp_dir();
  // The gemm step fails with scalebench's own error line (a launcher that fails it so: a row its
  // workload refuses is refused before anything runs); Monte Carlo runs.
  const CliRun r = run_command("SCALEBENCH_MPIEXEC=" + launcher_failing_gemm(dir) + " timeout 120 " +
                               std::getenv("SCALEBENCH_BINARY") + " contrast " + kSmall +
                               " --modes single-core --no-calibrate --out-dir " + dir + "/runs --json " + dir +
                               "/c.json");
  EXPECT_EQ(r.exit_code, 8) << r.output;
  const json report = json::parse(read_file(dir + "/c.json"));
  EXPECT_EQ((*row_of(report, "gemm", "single-core"))["status"], "failed");
  EXPECT_NE((*row_of(report, "gemm", "single-core"))["reason"].get<std::string>().find("gemm step failed"),
            std::string::npos)
      << report.dump();
  EXPECT_EQ((*row_of(report, "montecarlo", "single-core"))["status"], "ok");
}

TEST(ContrastCli, NumbersAreParsedAsTheWorkloadsParseThem) {
  // --reps, --warmup and --timeout are decimal, as gemm's and montecarlo's numbers (parse.hpp):
  // hex, octal prefixes, exponents of whole counts and blanks are refused with the line gemm gives;
  // 010 is ten, not eight; nothing is made.
  const std::string dir = make_temp_dir();
  const std::string plan = " --dry-run --workload gemm --modes single-core --out-dir " + dir + "/runs";
  for (const std::string value : {"0x10", "0b11", "1e3", "' 5'"}) {
    SCOPED_TRACE(value);
    const CliRun gemm = run_scalebench("gemm --dry-run --n 64 --reps " + value);
    const CliRun contrast = run_scalebench("contrast --reps " + value + plan);
    EXPECT_TRUE(is_refusal(gemm, 2, "--reps"));
    EXPECT_TRUE(is_refusal(contrast, 2, "--reps"));
    EXPECT_EQ(error_line(contrast.output), error_line(gemm.output));
  }
  expect_refused("contrast --warmup 0x10" + plan, 2, "--warmup");
  expect_refused("contrast --timeout 0x10" + plan, 2, "--timeout");
  expect_refused("contrast --timeout ' 60'" + plan, 2, "--timeout");
  const CliRun r = run_scalebench("contrast --reps 010 --warmup 1_0 --timeout 6e1" + plan);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find(" --reps 10 --warmup 10 "), std::string::npos) << r.output;
  EXPECT_FALSE(file_exists(dir + "/runs"));
}

TEST(ContrastCli, ARowItsWorkloadWouldRefuseIsRefusedBeforeAnythingRuns) {
  // Each row's arguments are checked as its workload checks them (gemm's and montecarlo's own
  // validation): tf32 on a CPU row, a size beyond the library's int, too few samples, a naive row
  // of minutes. --dry-run and the run refuse alike, exit 2, one line naming the row, and make nothing.
  const std::string dir = make_temp_dir();
  const std::string quick = " --no-calibrate --no-report --reps 1 --warmup 0 --out-dir " + dir + "/runs";
  const struct {
    std::string args, says;
  } cases[] = {
      {"--workload gemm --modes single-core --n 64 --precision tf32",
       "gemm single-core row would run `gemm --n 64 --precision tf32 --backend openblas"},
      {"--workload gemm --modes single-core --n 64 --precision tf32", "--precision tf32 needs --backend cublas"},
      {"--workload gemm --modes naive --naive-n 64 --precision bf16", "--precision bf16 needs --backend cublas"},
      {"--workload gemm --modes single-core --n 64 --precision fp16", "unknown --precision 'fp16'"},
      {"--workload gemm --modes single-core --n 2147483648", "--n = 2147483648 exceeds"},
      {"--workload montecarlo --modes single-core --samples 1",
       "--samples must be at least 128 for --problem pi (got 1)"},
      {"--workload gemm --modes naive --naive-n 16384", "--backend naive on 16384x16384x16384"},
  };
  for (const auto& c : cases) {
    for (const char* dry : {" --dry-run", ""}) {
      const CliRun r = run_scalebench("contrast " + c.args + quick + dry);
      EXPECT_TRUE(is_refusal(r, 2, c.says)) << c.args << dry;
      EXPECT_EQ(count_of(r.output, "\n"), 1) << r.output;
      EXPECT_FALSE(file_exists(dir + "/runs")) << c.args << dry << ": the folder was made";
    }
  }
  // tf32 where every gemm row runs on a GPU (a one-GPU machine's plan, saved hwloc XML): planned.
  const char* src = std::getenv("SCALEBENCH_SOURCE_DIR");
  const char* bin = std::getenv("SCALEBENCH_BINARY");
  if (src == nullptr || bin == nullptr) GTEST_SKIP() << "SCALEBENCH_SOURCE_DIR and SCALEBENCH_BINARY are not set";
  const CliRun gpu = run_command(std::string("HWLOC_XMLFILE=") + src + "/tests/data/h100-sxm-1p16c-1gpu-vm.xml '" +
                                 bin + "' contrast --dry-run --workload gemm --modes gpu --precision tf32 --out-dir " +
                                 dir + "/runs 2>&1");
  if (scalebench::gpu_support_built()) {
    ASSERT_EQ(gpu.exit_code, 0) << gpu.output;
    EXPECT_NE(gpu.output.find("--precision tf32 --backend cublas"), std::string::npos) << gpu.output;
  } else {
    EXPECT_TRUE(is_refusal(gpu, 3, "mode gpu cannot run here: built without CUDA"));
  }
}

TEST(ContrastCli, DryRunRefusesTheOutputsTheRunRefuses) {
  // --out-dir, --json and --csv are checked as the run checks them, --dry-run too (it makes
  // nothing): --json/--csv naming a block device, a socket or a link into a missing folder (as
  // gemm's --json); --out-dir naming a file, a FIFO, /dev/null, a symbolic link, a foreign folder
  // or a finished contrast. Exit 3, one line, before any work.
  const std::string dir = make_temp_dir();
  const std::string runs = " --out-dir " + dir + "/runs";
  ASSERT_EQ(run_command("cd " + dir +
                        " && touch plain && mkfifo fifo && mkdir real foreign finished && touch "
                        "foreign/notes.txt finished/contrast.json && ln -s real link && ln -s nosuch/c.json "
                        "dangling && ln -s loop loop")
                .exit_code,
            0);
  std::vector<std::pair<std::string, std::string>> cases = {
      {"--json " + dir + "/dangling" + runs, "--json " + dir + "/dangling"},
      {"--csv " + dir + "/dangling" + runs, "--csv " + dir + "/dangling"},
      {"--json " + dir + "/loop" + runs, "--json " + dir + "/loop"},
      {"--out-dir " + dir + "/plain", "is a file, not a folder"},
      {"--out-dir " + dir + "/fifo", "is a file, not a folder"},
      {"--out-dir /dev/null", "is a file, not a folder"},
      {"--out-dir " + dir + "/link", "--out-dir " + dir + "/link"},
      {"--out-dir " + dir + "/foreign", "is not empty and holds no contrast results (it holds notes.txt)"},
      {"--out-dir " + dir + "/finished", "already holds a contrast"},
  };
  if (make_socket(dir + "/socket")) {
    cases.emplace_back("--json " + dir + "/socket" + runs, "it is a socket");
    cases.emplace_back("--csv " + dir + "/socket" + runs, "it is a socket");
  }
  const std::string block = run_command("mknod " + dir + "/block b 7 0 2>/dev/null && echo " + dir +
                                        "/block || find /dev -maxdepth 1 -type b 2>/dev/null | head -n 1")
                                .output;
  if (!block.empty() && block.back() == '\n') {
    const std::string path = block.substr(0, block.size() - 1);
    cases.emplace_back("--json " + path + runs, "it is a block device");
    cases.emplace_back("--csv " + path + runs, "it is a block device");
  }
  const std::string before = run_command("ls -lAR --time-style=full-iso " + dir).output;
  for (const auto& [args, says] : cases) {
    for (const char* dry : {" --dry-run", ""}) {
      const CliRun r = run_scalebench(std::string("contrast ") + kSmall + " --modes single-core --no-calibrate " +
                                      args + dry);
      EXPECT_TRUE(is_refusal(r, 3, says)) << args << dry;
      EXPECT_EQ(count_of(r.output, "\n"), 1) << r.output;
    }
  }
  EXPECT_EQ(run_command("ls -lAR --time-style=full-iso " + dir).output, before) << "something was made or changed";
}

TEST(ContrastCli, DryRunNeedsTheLauncherTheRunNeeds) {
  // A launcher that is not there: --dry-run refuses as the run does (exit 3, one line), before any
  // folder is made; the plan of another machine (HWLOC_XMLFILE), which only --dry-run shows, needs none.
  const std::string dir = make_temp_dir();
  const std::string run = std::string("SCALEBENCH_MPIEXEC=/nonexistent/mpirun timeout 120 ") +
                          std::getenv("SCALEBENCH_BINARY") + " contrast --modes single-core --out-dir " + dir + "/runs";
  for (const char* dry : {" --dry-run", ""}) {
    const CliRun r = run_command(run + dry);
    EXPECT_TRUE(is_refusal(r, 3, "launcher '/nonexistent/mpirun' not found")) << dry;
    EXPECT_FALSE(file_exists(dir + "/runs"));
  }
  const char* src = std::getenv("SCALEBENCH_SOURCE_DIR");
  if (src == nullptr) GTEST_SKIP() << "SCALEBENCH_SOURCE_DIR is not set (run through ctest)";
  const CliRun other = run_command(std::string("HWLOC_XMLFILE=") + src + "/tests/data/amd-epyc-1p2c-workstation.xml " +
                                   run + " --dry-run");
  EXPECT_EQ(other.exit_code, 0) << other.output;
  EXPECT_NE(other.output.find("/nonexistent/mpirun -np 1"), std::string::npos) << other.output;
}

TEST(ContrastCli, BadRequestsFailBeforeAnythingRuns) {
  const std::string dir = make_temp_dir();
  // A mode this machine cannot do: multinode outside an allocation everywhere, gpu where none is visible.
  CliRun r = run_scalebench("contrast --modes multinode --out-dir " + dir + "/a");
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("mode multinode cannot run here: one node"), std::string::npos) << r.output;
  EXPECT_FALSE(file_exists(dir + "/a"));
  if (scalebench::visible_gpu_count() == 0) {
    r = run_scalebench("contrast --modes gpu --out-dir " + dir + "/a");
    EXPECT_EQ(r.exit_code, 3) << r.output;
    EXPECT_NE(r.output.find(built_with_cuda() ? "mode gpu cannot run here: no GPU"
                                              : "mode gpu cannot run here: built without CUDA"),
              std::string::npos)
        << r.output;
    EXPECT_FALSE(file_exists(dir + "/a"));
  }
  r = run_scalebench("contrast --modes warp-drive");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = run_scalebench("contrast --workload fft");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  setenv("SCALEBENCH_MPIEXEC", "/nonexistent/mpirun", 1);
  r = run_scalebench("contrast --out-dir " + dir + "/b");
  unsetenv("SCALEBENCH_MPIEXEC");
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("launcher '/nonexistent/mpirun' not found"), std::string::npos) << r.output;
  EXPECT_EQ(count_of(r.output, "scalebench: error"), 1);
}

TEST(ContrastCli, DryRunShowsEveryCommandAndRunsNothing) {
  const std::string dir = make_temp_dir();
  const CliRun r = run_scalebench("contrast --dry-run --out-dir " + dir + "/runs");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("--bind-to core"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("skipped: one node"), std::string::npos);
  EXPECT_FALSE(file_exists(dir + "/runs"));
}

TEST(ContrastCli, ARunPastItsTimeLimitIsKilledAndMarked) {
  const std::string dir = make_temp_dir();
  const CliRun r = run_scalebench("contrast --workload gemm --modes single-core --n 3001 --reps 20 --timeout 1 "
                                  "--out-dir " +
                                  dir + "/runs --json " + dir + "/c.json");
  EXPECT_EQ(r.exit_code, 8) << r.output;
  const json report = json::parse(read_file(dir + "/c.json"));
  const json* row = row_of(report, "gemm", "single-core");
  ASSERT_NE(row, nullptr);
  EXPECT_EQ((*row)["status"], "timeout");
  EXPECT_EQ((*row)["exit_code"], 7);
  // The whole step (mpirun and its ranks) is gone: the pattern's brackets keep the shell that
  // runs pgrep from matching itself.
  const CliRun ps = run_command("pgrep -f 'gemm --n 300[1]'");
  EXPECT_EQ(ps.exit_code, 1) << "still running:\n" << ps.output;
}

TEST(ContrastCli, OutputsAreCheckedBeforeAnyWork) {
  const std::string dir = make_temp_dir();
  std::ofstream(dir + "/plain") << "x";
  const std::string runs = " --out-dir " + dir + "/runs";
  const struct {
    std::string args;
    std::string says;
  } cases[] = {
      {"--json " + dir + runs, "--json " + dir + " is a folder"},
      {"--csv " + dir + runs, "--csv " + dir + " is a folder"},
      {"--json " + dir + "/" + std::string(300, 'j') + runs, "more than the 255"},
      {"--csv " + dir + "/nosuch/c.csv" + runs, "does not exist"},
      {"--out-dir " + dir + "/plain", "is a file, not a folder"},
      {"--out-dir " + dir + "/plain/sub", "is a file, not a folder"},
  };
  for (const auto& c : cases) {
    const CliRun r = run_scalebench(std::string("contrast ") + kSmall + " " + c.args);
    EXPECT_EQ(r.exit_code, 3) << c.args << "\n" << r.output;
    EXPECT_EQ(count_of(r.output, "\n"), 1) << r.output;
    EXPECT_NE(r.output.find(c.says), std::string::npos) << r.output;
    EXPECT_FALSE(file_exists(dir + "/runs")) << "a step ran before the outputs were checked";
  }
}

TEST(ContrastCli, StoppingTheContrastStopsItsStep) {
  const std::string dir = make_temp_dir();
  const int pid = start_scalebench("contrast --workload gemm --modes single-core --n 2501 --reps 100 --out-dir " + dir +
                                       "/runs --json " + dir + "/c.json",
                                   dir + "/log");
  ASSERT_TRUE(wait_for_process("gemm --n 250[1]", true, 60)) << read_file(dir + "/log");
  kill(pid, SIGINT);
  const int rc = wait_exit(pid, 20);
  if (rc < 0) kill(pid, SIGKILL);
  EXPECT_EQ(rc, 130) << read_file(dir + "/log");
  EXPECT_TRUE(wait_for_process("gemm --n 250[1]", false, 1)) << "the step outlived the contrast";
  EXPECT_NE(read_file(dir + "/log").find("stopped by SIGINT"), std::string::npos) << read_file(dir + "/log");
  EXPECT_FALSE(file_exists(dir + "/c.json"));
  EXPECT_FALSE(file_exists(dir + "/runs/contrast.json"));
  EXPECT_FALSE(file_exists(dir + "/runs/gemm-single-core.json"));
}

TEST(ContrastCli, ALauncherFailureShowsTheLaunchersOwnLines) {
  const std::string dir = make_temp_dir();
  // A real mpirun that cannot start its launch component: it prints its own error box and fails.
  const CliRun r = run_command("OMPI_MCA_plm=nosuch " + std::string(std::getenv("SCALEBENCH_BINARY")) +
                               " contrast --workload montecarlo --modes single-core --samples 1e5 --reps 1 --warmup 0 "
                               "--quiet --out-dir " +
                               dir + "/runs --json " + dir + "/c.json");
  EXPECT_EQ(r.exit_code, 9) << r.output;  // failed to launch: no scalebench error, the launcher's
  const json report = json::parse(read_file(dir + "/c.json"));
  const std::string reason = (*row_of(report, "montecarlo", "single-core"))["reason"];
  EXPECT_EQ(reason.find("exit code"), std::string::npos) << reason;
  // The cause, from Open MPI's own help text in the step's log: what it could not open, and which.
  const std::string log = read_file(dir + "/runs/montecarlo-single-core.log");
  ASSERT_NE(log.find("Component: nosuch"), std::string::npos) << log;
  EXPECT_NE(reason.find("A requested component was not found"), std::string::npos) << reason;
  EXPECT_NE(reason.find("Component: nosuch"), std::string::npos) << reason;
}
TEST(ContrastCli, MonteCarloGpuNaiveRowSitsBesideTheGpuRow) {
  // The plan of a one-GPU machine (saved hwloc XML): the gpu mode runs the fused kernel (cuda),
  // gpu-naive the cuRAND arrays (curand), on the same placement; a build without CUDA skips both.
  const char* src = std::getenv("SCALEBENCH_SOURCE_DIR");
  const char* bin = std::getenv("SCALEBENCH_BINARY");
  if (src == nullptr || bin == nullptr)
    GTEST_SKIP() << "SCALEBENCH_SOURCE_DIR and SCALEBENCH_BINARY are not set (run through ctest)";
  const CliRun r = run_command(std::string("HWLOC_XMLFILE=") + src + "/tests/data/h100-sxm-1p16c-1gpu-vm.xml '" + bin +
                               "' contrast --dry-run --workload montecarlo 2>&1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_EQ(count_of(r.output, "montecarlo  gpu-naive "), 1) << r.output;
  ASSERT_EQ(count_of(r.output, "montecarlo  gpu "), 1) << r.output;
  const std::string naive = r.output.substr(r.output.find("montecarlo  gpu-naive "));
  const std::string naive_line = naive.substr(0, naive.find('\n'));
  const std::string fused = r.output.substr(r.output.find("montecarlo  gpu "));
  const std::string fused_line = fused.substr(0, fused.find('\n'));
  if (scalebench::gpu_support_built()) {
    EXPECT_NE(naive_line.find("--backend curand"), std::string::npos) << naive_line;
    EXPECT_NE(fused_line.find("--backend cuda"), std::string::npos) << fused_line;
    EXPECT_NE(naive_line.find("montecarlo-gpu-naive.json"), std::string::npos) << naive_line;
  } else {
    EXPECT_NE(naive_line.find("skipped: built without CUDA"), std::string::npos) << naive_line;
    EXPECT_NE(fused_line.find("skipped: built without CUDA"), std::string::npos) << fused_line;
  }
}

TEST(ContrastCli, MultinodeRowRunsOnTheNodesGpus) {
  // A 4-GPU, 2-domain node's plan (saved hwloc XML) across 2 hosts: with CUDA built the multinode
  // row takes the gpu layout — one rank per GPU on every node, the GPU back ends at the GPU rows'
  // size; without, it runs on the nodes' CPUs (numa layout) at the CPU rows' size.
  const char* src = std::getenv("SCALEBENCH_SOURCE_DIR");
  const char* bin = std::getenv("SCALEBENCH_BINARY");
  if (src == nullptr || bin == nullptr)
    GTEST_SKIP() << "SCALEBENCH_SOURCE_DIR and SCALEBENCH_BINARY are not set (run through ctest)";
  const CliRun r = run_command(std::string("HWLOC_XMLFILE=") + src + "/tests/data/ibm-s822lc-power8-2p2n-4gpu.xml '" +
                               bin +
                               "' contrast --dry-run --hosts a,b --modes multinode --n 1024 --gpu-n 4096 "
                               "--samples 1e7 --gpu-samples 1e9 2>&1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto line_of = [&](const std::string& start) {
    const auto at = r.output.find(start);
    return at == std::string::npos ? std::string() : r.output.substr(at, r.output.find('\n', at) - at);
  };
  const std::string gemm = line_of("gemm        multinode"), mc = line_of("montecarlo  multinode");
  ASSERT_FALSE(gemm.empty() || mc.empty()) << r.output;
  if (scalebench::gpu_support_built()) {
    // Across hosts mpirun leaves GPU ranks unbound (its node split stays whole); --pin gpu binds.
    for (const char* want : {"-np 8 ", "--map-by ppr:4:node --bind-to none", "--backend cublas", "--n 4096",
                             "--transport auto", "--pin gpu"}) {
      EXPECT_NE(gemm.find(want), std::string::npos) << want << " not in: " << gemm;
    }
    for (const char* want : {"-np 8 ", "--backend cuda", "--samples 1e9", "--pin gpu"}) {
      EXPECT_NE(mc.find(want), std::string::npos) << want << " not in: " << mc;
    }
  } else {
    for (const char* want : {"-np 4 ", "--backend openblas", "--n 1024", "--pin numa"}) {
      EXPECT_NE(gemm.find(want), std::string::npos) << want << " not in: " << gemm;
    }
    for (const char* want : {"--backend cpu", "--samples 1e7"}) {
      EXPECT_NE(mc.find(want), std::string::npos) << want << " not in: " << mc;
    }
  }
}

TEST(ContrastCli, EmptyListsAndPathsAreRefused) {
  const std::string dir = make_temp_dir();
  const std::string out = " --out-dir " + dir + "/out";
  const struct {
    std::string args, says;
  } cases[] = {
      {"--modes ," + out, "--modes ',' has an empty item"},
      {"--modes ''" + out, "--modes is empty"},
      {"--modes single-core," + out, "--modes 'single-core,' has an empty item"},
      {"--modes ,single-core" + out, "--modes ',single-core' has an empty item"},
      {"--workload ," + out, "--workload ',' has an empty item"},
      {"--workload ''" + out, "--workload is empty"},
      {"--out-dir ''", "--out-dir is empty"},
      {"--json ''" + out, "--json is empty"},
      {"--csv ''" + out, "--csv is empty"},
      {"--hosts ''" + out, "--hosts is empty"},
      {"--hosts ," + out, "--hosts ',' has an empty item"},
      {"--hostfile ''" + out, "--hostfile is empty"},
      {"--n ''" + out, "--n is empty"},
      {"--precision ''" + out, "--precision is empty"},
  };
  for (const auto& c : cases) {
    const CliRun r = run_scalebench("contrast " + c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.output;
    EXPECT_EQ(count_of(r.output, "\n"), 1) << r.output;
    EXPECT_NE(r.output.find(c.says), std::string::npos) << c.args << "\n" << r.output;
  }
  EXPECT_FALSE(file_exists(dir + "/out"));
}

TEST(ContrastCli, NeverWritesIntoAStudysOrAForeignFolder) {
  const std::string dir = make_temp_dir();
  const struct {
    std::string make, says;
  } cases[] = {
      {"touch D/runs.jsonl D/summary.json", "holds a study's results (runs.jsonl, summary.json); a contrast never "
                                            "writes into another driver's folder"},
      {"touch D/summary.md", "holds a study's results (summary.md)"},
      {"echo '{\"driver\":\"study\"}' > D/.scalebench.lock", "holds a study's results (.scalebench.lock)"},
      {"touch D/notes.txt", "is not empty and holds no contrast results (it holds notes.txt)"},
      {"mkdir D/runs", "is not empty and holds no contrast results (it holds runs)"},
  };
  int i = 0;
  for (const auto& c : cases) {
    const std::string out = dir + "/o" + std::to_string(i++);
    const std::string make = with_folder(c.make, out);
    ASSERT_EQ(run_command("mkdir -p " + out + " && " + make).exit_code, 0) << make;
    const std::string before = run_command("ls -la --time-style=full-iso " + out).output;
    const CliRun r = run_scalebench(std::string("contrast ") + kSmall + " --modes single-core --out-dir " + out);
    EXPECT_EQ(r.exit_code, 3) << make << "\n" << r.output;
    EXPECT_EQ(count_of(r.output, "\n"), 1) << r.output;
    EXPECT_NE(r.output.find("--out-dir " + out + " " + c.says), std::string::npos) << make << "\n" << r.output;
    EXPECT_EQ(run_command("ls -la --time-style=full-iso " + out).output, before) << "the folder was changed";
  }
}

TEST(ContrastCli, JsonAndCsvNeverReplaceAnotherDriversResults) {
  const std::string dir = make_temp_dir();
  run_command("mkdir -p " + dir + "/study && touch " + dir + "/study/runs.jsonl");
  std::ofstream(dir + "/study/summary.json") << "{\"study\":\"mine\"}\n";
  for (const std::string option : {"--json", "--csv"}) {
    const CliRun r = run_scalebench(std::string("contrast ") + kSmall + " --modes single-core --out-dir " + dir +
                                    "/c " + option + " " + dir + "/study/summary.json");
    EXPECT_EQ(r.exit_code, 3) << r.output;
    EXPECT_EQ(count_of(r.output, "\n"), 1) << r.output;
    EXPECT_NE(r.output.find("cannot write " + option + " " + dir + "/study/summary.json: folder " + dir +
                            "/study holds a study's results (runs.jsonl, summary.json)"),
              std::string::npos)
        << r.output;
    EXPECT_EQ(read_file(dir + "/study/summary.json"), "{\"study\":\"mine\"}\n");
    EXPECT_FALSE(file_exists(dir + "/c"));
  }
}

TEST(ContrastCli, OneDriverAFolderAndEveryPathCheckedByKind) {
  const std::string dir = make_temp_dir();
  // A folder whose lock another driver holds (flock(1) here, as a driver's flock(2)): refused with
  // the holder's pid and host, before any run.
  const std::string held = dir + "/held";
  run_command("mkdir -p " + held);
  std::ofstream(held + "/.scalebench.lock") << R"({"driver":"contrast","pid":4242,"host":"nodeA","started_at":"t"})"
                                            << "\n";
  // A shell that takes the lock on descriptor 9 and becomes `sleep` (same pid, lock kept).
  const std::string lock = held + "/.scalebench.lock";
  const int holder = std::atoi(
      run_command("(exec 9>>" + lock + " && flock 9 && exec sleep 60) > /dev/null 2>&1 & echo $!").output.c_str());
  ASSERT_GT(holder, 0);
  bool locked = false;
  for (int i = 0; i < 200 && !locked; ++i) locked = run_command("flock -n " + lock + " true").exit_code != 0;
  ASSERT_TRUE(locked);
  CliRun r = run_scalebench(std::string("contrast ") + kSmall + " --modes single-core --out-dir " + held);
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_EQ(count_of(r.output, "\n"), 1) << r.output;
  EXPECT_NE(r.output.find("--out-dir " + held + " is in use by another scalebench contrast (pid 4242 on host nodeA"),
            std::string::npos)
      << r.output;
  EXPECT_FALSE(file_exists(held + "/gemm-single-core.log"));
  kill(holder, SIGTERM);

  // A stopped contrast's folder (its lock file names a contrast) with a FIFO or a folder where a
  // step writes: refused before any run, never blocked on.
  const struct {
    std::string make, says;
  } cases[] = {
      {"mkfifo D/gemm-single-core.log", "gemm-single-core.log D/gemm-single-core.log: it is a FIFO"},
      {"mkdir D/gemm-single-core.json", "gemm-single-core.json D/gemm-single-core.json: it is a folder"},
      {"mkfifo D/gemm-probe-single-core.log", "gemm-probe-single-core.log D/gemm-probe-single-core.log: it is a FIFO"},
      {"mkdir D/contrast.csv", "contrast.csv D/contrast.csv: it is a folder"},
      {"mkdir D/report.html", "report.html D/report.html: it is a folder"},
  };
  int i = 0;
  for (const auto& c : cases) {
    const std::string out = dir + "/o" + std::to_string(i++);
    const std::string make = with_folder(c.make, out), says = with_folder(c.says, out);
    ASSERT_EQ(run_command("mkdir -p " + out + " && " + make).exit_code, 0) << make;
    std::ofstream(out + "/.scalebench.lock") << R"({"driver":"contrast","pid":1,"host":"h"})"
                                             << "\n";
    r = run_scalebench("contrast --workload gemm --modes single-core --out-dir " + out);
    EXPECT_EQ(r.exit_code, 3) << make << "\n" << r.output;
    EXPECT_EQ(count_of(r.output, "\n"), 1) << r.output;
    EXPECT_NE(r.output.find(says), std::string::npos) << make << "\n" << r.output;
  }
}

TEST(ContrastCli, RunAgainAfterASigkillItRunsOnlyTheRowsNotFinished) {
  const std::string dir = make_temp_dir();
  const std::string out = dir + "/runs";
  // The naive row (n=64) finishes at once; the single-core row runs for seconds and is killed.
  const std::string args = "contrast --workload gemm --modes naive,single-core --naive-n 64 --reps 30 --warmup 0 "
                           "--no-report --out-dir " +
                           out;
  const int pid = start_scalebench(args + " --n 1201", dir + "/log");
  ASSERT_TRUE(wait_for_process("gemm --n 120[1]", true, 60)) << read_file(dir + "/log");
  kill(pid, SIGKILL);
  EXPECT_EQ(wait_exit(pid, 10), 128 + SIGKILL);
  EXPECT_TRUE(wait_for_process("gemm --n 120[1]", false, 30)) << "the step outlived the killed contrast";
  // The killed driver's lock goes when its watchdog has stopped the step.
  bool free = false;
  for (int i = 0; i < 300 && !free; ++i) {
    free = run_command("flock -n " + out + "/.scalebench.lock true").exit_code == 0;
    if (!free) run_command("sleep 0.1");
  }
  ASSERT_TRUE(free) << "the lock outlived the killed contrast by 30 s";
  EXPECT_FALSE(file_exists(out + "/contrast.json"));
  const std::string naive_record = read_file(out + "/gemm-naive.json");
  ASSERT_FALSE(naive_record.empty());
  ASSERT_EQ(count_of(read_file(out + "/runs.jsonl"), "\n"), 1) << read_file(out + "/runs.jsonl");

  // The unfinished folder is the contrast's: a study is refused there.
  const char* source = std::getenv("SCALEBENCH_SOURCE_DIR");
  if (source != nullptr) {
    const CliRun study = run_scalebench("study " + std::string(source) + "/jobs/smoke.yaml --out-dir " + out);
    EXPECT_EQ(study.exit_code, 3) << study.output;
    EXPECT_NE(study.output.find("holds a contrast's results"), std::string::npos) << study.output;
  }

  // Run again on the same folder, --n left out: the size comes from the first invocation's plan,
  // with no probe; the naive row is taken from runs.jsonl, the single-core row runs.
  const CliRun again = run_scalebench(args + " --json " + dir + "/c.json");
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("1 rows finished earlier"), std::string::npos) << again.output;
  EXPECT_FALSE(file_exists(out + "/gemm-probe-single-core.log")) << "the size was measured again";
  const json report = json::parse(read_file(dir + "/c.json"));
  EXPECT_EQ(report["from_earlier"], 1);
  const json* naive = row_of(report, "gemm", "naive");
  const json* single = row_of(report, "gemm", "single-core");
  ASSERT_NE(naive, nullptr);
  ASSERT_NE(single, nullptr);
  EXPECT_EQ((*naive)["status"], "ok") << naive->dump();
  EXPECT_EQ((*naive)["from_earlier"], true) << naive->dump();
  EXPECT_EQ((*single)["status"], "ok") << single->dump();
  EXPECT_EQ((*single)["size"], "n=1201") << single->dump();
  EXPECT_FALSE(single->contains("from_earlier"));
  EXPECT_GT((*single)["rate"].get<double>(), 0);
  EXPECT_NEAR((*single)["speedup_vs_single_core"].get<double>(), 1.0, 1e-12);
  EXPECT_EQ(read_file(out + "/gemm-naive.json"), naive_record) << "the finished row was run again";
  EXPECT_EQ(count_of(read_file(out + "/runs.jsonl"), "\n"), 2);
  EXPECT_TRUE(file_exists(out + "/contrast.csv"));

  // Finished: the folder is never written again.
  const CliRun third = run_scalebench(args);
  EXPECT_EQ(third.exit_code, 3) << third.output;
  EXPECT_NE(third.output.find("never overwritten"), std::string::npos) << third.output;
}

TEST(ContrastCli, WithNoProfileItCalibratesOnceAndItsRowsArePredicted) {
  // A cache folder of its own, empty: the first contrast calibrates quickly (2 ranks on this host)
  // and its row carries a prediction; the second finds the profile current; --no-calibrate, on
  // another empty cache, makes none.
  const std::string dir = make_temp_dir();
  const std::string cache = "env -u SCALEBENCH_PROFILE XDG_CACHE_HOME=" + dir + "/cache ";
  const std::string args = std::string(" contrast ") + kSmall + " --workload montecarlo --modes single-core --out-dir ";
  CliRun r = run_command(cache + "timeout 300 " + std::getenv("SCALEBENCH_BINARY") + args + dir + "/a");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("no current profile at " + dir + "/cache/scalebench/profile-"), std::string::npos)
      << r.output;
  json c = json::parse(read_file(dir + "/a/contrast.json"));
  EXPECT_EQ(c["calibration"]["status"], "calibrated") << c["calibration"].dump();
  EXPECT_NE(read_file(dir + "/a/calibrate.log").find("calibrate: profile written to"), std::string::npos);
  ASSERT_EQ(c["runs"].size(), 1u);
  EXPECT_GT(c["runs"][0]["predicted"].value("predicted_s", 0.0), 0.0) << c["runs"][0].dump();
  r = run_command(cache + "timeout 120 " + std::getenv("SCALEBENCH_BINARY") + args + dir + "/b");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("calibrating"), std::string::npos) << r.output;
  EXPECT_EQ(json::parse(read_file(dir + "/b/contrast.json"))["calibration"]["status"], "current");
  EXPECT_FALSE(file_exists(dir + "/b/calibrate.log"));
  r = run_command("env -u SCALEBENCH_PROFILE XDG_CACHE_HOME=" + dir + "/none timeout 120 " +
                  std::getenv("SCALEBENCH_BINARY") + args + dir + "/c --no-calibrate");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(json::parse(read_file(dir + "/c/contrast.json"))["calibration"]["status"], "not asked");
  EXPECT_FALSE(file_exists(dir + "/none/scalebench")) << "a profile was made";
}
