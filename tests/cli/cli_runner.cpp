#include "cli_runner.hpp"

#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

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

CliRun run_scalebench_mpi(int ranks, const std::string& args) {
  return run_shell("timeout 120 " + env_or("SCALEBENCH_MPIEXEC", "mpirun") + " -np " + std::to_string(ranks) +
                   " --oversubscribe " + env_or("SCALEBENCH_BINARY", "scalebench") + " " + args);
}

int count_of(const std::string& hay, const std::string& needle) {
  int n = 0;
  for (std::size_t pos = hay.find(needle); pos != std::string::npos; pos = hay.find(needle, pos + 1)) ++n;
  return n;
}

std::string make_temp_dir() {
  std::string tmpl = "/tmp/scalebench-test-XXXXXX";
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  return tmpl;
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
