#pragma once
// Runs the real scalebench binary (optionally under the real mpirun) and captures what it says.
#include <gtest/gtest.h>

#include <string>

struct CliRun {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Any shell command.
CliRun run_command(const std::string& command);
// `scalebench <args>` run directly.
CliRun run_scalebench(const std::string& args);
// `mpirun -np <ranks> --oversubscribe scalebench <args>`, killed after `timeout_s` seconds.
CliRun run_scalebench_mpi(int ranks, const std::string& args, int timeout_s = 120);
// `mpirun -np <ranks> --oversubscribe`, each rank under a shell that prints "rank-exit <code>"
// after scalebench ends, so that every rank's own exit code is seen (ranks_exiting).
CliRun run_scalebench_each_rank(int ranks, const std::string& args);
// How many ranks of a run_scalebench_each_rank printed "rank-exit <code>".
int ranks_exiting(const CliRun& run, int code);

// The refusal every bad input must give: exit `code`, exactly one "scalebench: error" line (on
// every rank's behalf), and that line naming `names` (the option, file, variable or value).
testing::AssertionResult is_refusal(const CliRun& run, int code, const std::string& names);
// `scalebench <args>` run directly is refused so; a failure shows the arguments and the output.
void expect_refused(const std::string& args, int code, const std::string& names);
// The same under mpirun on `ranks` ranks: every rank exits `code`, one line in all.
void expect_refused_on_every_rank(int ranks, const std::string& args, int code, const std::string& names);

// `scalebench <args>` started in the background, its output to `log`; returns its pid.
int start_scalebench(const std::string& args, const std::string& log);
// Waits up to `seconds` for a pid from start_scalebench; its exit code (128+signal), -1 if still running.
int wait_exit(int pid, double seconds);
// True when `pgrep -f pattern` finds a process within `seconds` (wanted) or none (wanted false).
// Put a bracket in the pattern (`seed=4[2]`): the shell that runs pgrep must not match itself.
bool wait_for_process(const std::string& pattern, bool wanted, double seconds);
// `command` run with SCALEBENCH_POWERCAP_ROOT at a fake powercap tree under `dir` (one package
// domain) whose counter a background writer advances by `uj_per_step` µJ every 10 ms; the writer is
// stopped by its pid and waited for before the tree is removed, so no write races the removal.
CliRun run_with_fake_rapl(const std::string& dir, long long uj_per_step, const std::string& command);
// How many times `needle` occurs in `hay`.
int count_of(const std::string& hay, const std::string& needle);
// `text` with every "D/" (a placeholder for a folder) replaced by `folder` + "/", in one pass: a
// folder whose own name holds "D/" is never replaced again.
std::string with_folder(const std::string& text, const std::string& folder);
// A fresh empty folder for output files, removed with everything in it when the test program ends.
std::string make_temp_dir();
bool file_exists(const std::string& path);
std::string read_file(const std::string& path);
