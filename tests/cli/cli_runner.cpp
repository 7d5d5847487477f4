#include "cli_runner.hpp"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace {

std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

CliRun run_shell(const std::string& command) {
  CliRun r;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) throw std::runtime_error("popen failed");
  char buf[4096];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) r.output.append(buf, n);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

}  // namespace

CliRun run_command(const std::string& command) { return run_shell(command); }

CliRun run_scalebench(const std::string& args) {
  return run_shell("timeout 120 " + env_or("SCALEBENCH_BINARY", "scalebench") + " " + args);
}

CliRun run_scalebench_mpi(int ranks, const std::string& args, int timeout_s) {
  return run_shell("timeout " + std::to_string(timeout_s) + " " + env_or("SCALEBENCH_MPIEXEC", "mpirun") + " -np " +
                   std::to_string(ranks) + " --oversubscribe " + env_or("SCALEBENCH_BINARY", "scalebench") + " " +
                   args);
}

CliRun run_scalebench_each_rank(int ranks, const std::string& args) {
  return run_shell("timeout 120 " + env_or("SCALEBENCH_MPIEXEC", "mpirun") + " -np " + std::to_string(ranks) +
                   " --oversubscribe sh -c '\"$0\" \"$@\"; echo rank-exit $?' " +
                   env_or("SCALEBENCH_BINARY", "scalebench") + " " + args);
}

int ranks_exiting(const CliRun& run, int code) {
  return count_of(run.output, "rank-exit " + std::to_string(code) + "\n");
}

namespace {

// Exactly one "scalebench: error" line in the output, and it names `names`.
testing::AssertionResult one_error_line_naming(const CliRun& run, const std::string& names) {
  const std::string prefix = "scalebench: error";
  const int lines = count_of(run.output, prefix);
  const std::size_t at = run.output.find(prefix);
  const std::string line = at == std::string::npos ? "" : run.output.substr(at, run.output.find('\n', at) - at);
  if (lines == 1 && line.find(names) != std::string::npos) return testing::AssertionSuccess();
  return testing::AssertionFailure() << "expected one error line naming '" << names << "'; got " << lines
                                     << " error line(s) in:\n"
                                     << run.output;
}

}  // namespace

testing::AssertionResult is_refusal(const CliRun& run, int code, const std::string& names) {
  if (run.exit_code != code) {
    return testing::AssertionFailure() << "expected exit " << code << ", got " << run.exit_code << " with:\n"
                                       << run.output;
  }
  return one_error_line_naming(run, names);
}

void expect_refused(const std::string& args, int code, const std::string& names) {
  EXPECT_TRUE(is_refusal(run_scalebench(args), code, names)) << "scalebench " << args;
}

void expect_refused_on_every_rank(int ranks, const std::string& args, int code, const std::string& names) {
  const CliRun run = run_scalebench_each_rank(ranks, args);
  EXPECT_EQ(ranks_exiting(run, code), ranks) << "scalebench " << args << "\n" << run.output;
  EXPECT_TRUE(one_error_line_naming(run, names)) << "scalebench " << args << " on " << ranks << " ranks";
}

int start_scalebench(const std::string& args, const std::string& log) {
  const std::string command = "exec " + env_or("SCALEBENCH_BINARY", "scalebench") + " " + args + " > " + log + " 2>&1";
  const pid_t pid = fork();
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  if (pid < 0) throw std::runtime_error("fork failed");
  return pid;
}

int wait_exit(int pid, double seconds) {
  for (double waited = 0; waited < seconds; waited += 0.05) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    usleep(50'000);
  }
  return -1;
}

bool wait_for_process(const std::string& pattern, bool wanted, double seconds) {
  for (double waited = 0; waited < seconds; waited += 0.1) {
    const bool found = run_shell("pgrep -f '" + pattern + "' > /dev/null").exit_code == 0;
    if (found == wanted) return true;
    usleep(100'000);
  }
  return false;
}

int count_of(const std::string& hay, const std::string& needle) {
  int n = 0;
  for (std::size_t pos = hay.find(needle); pos != std::string::npos; pos = hay.find(needle, pos + 1)) ++n;
  return n;
}

std::string with_folder(const std::string& text, const std::string& folder) {
  std::string out;
  std::size_t from = 0;
  for (std::size_t p = text.find("D/"); p != std::string::npos; from = p + 1, p = text.find("D/", from)) {
    out += text.substr(from, p - from) + folder;
  }
  return out + text.substr(from);
}

namespace {

// The folders make_temp_dir made, removed when the test program ends (passed or failed).
struct TempDirs {
  std::vector<std::string> paths;
  ~TempDirs() {
    for (const auto& p : paths) {
      std::error_code ec;
      std::filesystem::remove_all(p, ec);
    }
  }
};
TempDirs g_temp_dirs;

}  // namespace

std::string make_temp_dir() {
  // In the build folder where the tests' environment says so (cmake/ScalebenchTest.cmake).
  const char* base = std::getenv("SCALEBENCH_TEST_TMPDIR");
  std::string tmpl = std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/scalebench-test-XXXXXX";
  if (base != nullptr && *base != '\0') {
    std::error_code ec;
    std::filesystem::create_directories(base, ec);
  }
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  g_temp_dirs.paths.push_back(tmpl);
  return tmpl;
}

CliRun run_with_fake_rapl(const std::string& dir, long long uj_per_step, const std::string& command) {
  const std::string zone = dir + "/pc/intel-rapl:0";
  const CliRun made = run_shell("mkdir -p " + zone + " && echo package-0 > " + zone + "/name && echo 0 > " + zone +
                                "/energy_uj && echo 262143328850 > " + zone + "/max_energy_range_uj");
  if (made.exit_code != 0) return made;
  const std::string writer = "( n=0; while :; do n=$((n+" + std::to_string(uj_per_step) + ")); echo $n > " + zone +
                             "/energy_uj.new && mv " + zone + "/energy_uj.new " + zone +
                             "/energy_uj; sleep 0.01; done ) & w=$!; ";
  return run_shell(writer + "SCALEBENCH_POWERCAP_ROOT=" + dir + "/pc " + command +
                   "; rc=$?; kill $w; wait $w 2>/dev/null; rm -rf " + dir + "/pc; exit $rc");
}

bool file_exists(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
