#pragma once
// Launching one job step (mpirun/srun …) as a child process with a time limit.
#include <string>
#include <vector>

namespace scalebench {

struct StepOutcome {
  int exit_code = -1;      // the child's exit status; 128+signal if killed by a signal
  bool timed_out = false;  // killed at the time limit (exit_code then 124)
  bool not_found = false;  // the program could not be started (exit_code 127)
  double seconds = 0;
};

// Runs argv[0] (looked up on PATH) with stdout and stderr appended to `log_path`, in its own
// process group, killing the whole group after `timeout_s` seconds (0: no limit).
StepOutcome run_step(const std::vector<std::string>& argv, const std::string& log_path, double timeout_s);

// True if `program` is an executable path or found on PATH.
bool program_available(const std::string& program);

}  // namespace scalebench
