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
// `scalebench <args>` started in the background, its output to `log`; returns its pid.
int start_scalebench(const std::string& args, const std::string& log);
// Waits up to `seconds` for a pid from start_scalebench; its exit code (128+signal), -1 if still running.
int wait_exit(int pid, double seconds);
// True when `pgrep -f pattern` finds a process within `seconds` (wanted) or none (wanted false).
// Put a bracket in the pattern (`seed=4[2]`): the shell that runs pgrep must not match itself.
bool wait_for_process(const std::string& pattern, bool wanted, double seconds);
// How many times `needle` occurs in `hay`.
int count_of(const std::string& hay, const std::string& needle);
// A fresh empty folder for output files, removed with everything in it when the test program ends.
std::string make_temp_dir();
bool file_exists(const std::string& path);
std::string read_file(const std::string& path);
