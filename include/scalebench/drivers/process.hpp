#pragma once
// Launching one job step (mpirun/srun …) as a child process with a time limit, and stopping it
// for sure: when it times out, when the driver is asked to stop (SIGINT, SIGTERM, SIGHUP), and
// when the driver itself dies (even by SIGKILL).
#include <string>
#include <vector>

#include "scalebench/base/error.hpp"

namespace scalebench {

struct StepOutcome {
  int exit_code = -1;      // the child's exit status; 128+signal if killed by a signal
  bool timed_out = false;  // killed at the time limit (exit_code then 124)
  bool not_found = false;  // the program could not be started (exit_code 127)
  int stopped_by = 0;      // the signal that stopped the driver during this step (0: none)
  double seconds = 0;
};

// Runs argv[0] (looked up on PATH) with stdout and stderr appended to `log_path`, as the leader
// of a new session (mpirun puts every rank in a process group of its own, but they all stay in
// the session). Stopping the step — at the time limit `timeout_s` (0: none), or on a stop signal
// while a StopSignals guard lives — sends the signal to the leader (mpirun passes it on to the
// ranks), waits up to a grace period, then SIGKILLs whatever of the session remains. A watchdog
// process kills the session if the driver dies mid-step. When run_step returns, nothing of the
// step is left running.
StepOutcome run_step(const std::vector<std::string>& argv, const std::string& log_path, double timeout_s);

// A descriptor the watchdogs of later steps keep open (-1: none): a driver's results-folder lock,
// so that a driver killed mid-step leaves its folder locked until its step is stopped too.
void keep_in_watchdogs(int fd) noexcept;

// True if `program` is an executable path or found on PATH.
bool program_available(const std::string& program);

// While one lives, SIGINT, SIGTERM and SIGHUP no longer end the process: the first one is
// recorded, passed on to the running step (run_step), and the driver ends itself cleanly
// through throw_if_stopped(). The previous handlers come back when it is destroyed.
class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
};

// The signal that asked the driver to stop, 0 when none.
int stop_signal() noexcept;

// A driver stopped by a signal: exit code 128 + signal (130 SIGINT, 143 SIGTERM, 129 SIGHUP),
// as a shell reports a process killed by that signal.
class Stopped : public Error {
 public:
  Stopped(int signal, const std::string& what);
  int signal() const noexcept { return signal_; }

 private:
  int signal_;
};

// Throws Stopped (saying `what` was stopped and what was kept) when a stop signal arrived.
void throw_if_stopped(const std::string& what);

}  // namespace scalebench
