#pragma once
// Runs the real scalebench binary (optionally under the real mpirun) and captures what it says.
#include <string>

struct CliRun {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Any shell command.
CliRun run_command(const std::string& command);
// `scalebench <args>` run directly.
CliRun run_scalebench(const std::string& args);
// `mpirun -np <ranks> --oversubscribe scalebench <args>`.
CliRun run_scalebench_mpi(int ranks, const std::string& args);
// How many times `needle` occurs in `hay`.
int count_of(const std::string& hay, const std::string& needle);
// A fresh empty folder for output files.
std::string make_temp_dir();
bool file_exists(const std::string& path);
std::string read_file(const std::string& path);
