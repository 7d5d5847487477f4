#pragma once
// The one way both drivers (contrast, study) run a run: launched as its own job step (run_step:
// mpirun here, srun in an allocation) with a time limit and stopped for sure on a stop signal; its
// record read back; its failure classified (the run's own scalebench error, this machine cannot
// hold it, the launcher's failure, the time limit) and said in one line.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace scalebench::launch {

struct StepRequest {
  std::vector<std::string> argv;      // the whole launch command, --json record_path included
  std::string record_path, log_path;  // record_path empty: the step writes no record
  double timeout_s = 0;               // 0: none
  std::string stopped;                // what the driver says when a stop signal ends it during this step
};

struct StepResult {
  int exit_code = -1;          // the run's; ExitCode::timeout when killed at its time limit
  bool timed_out = false;      //
  bool own_error = false;      // the log holds scalebench's own error line
  bool launch_failed = false;  // failed without scalebench's own error: the launcher's failure
  bool cannot_run = false;     // scalebench says this machine cannot hold the run (memory, GPUs, CUDA)
  bool no_record = false;      // exited 0, but the record it was to write could not be read back
  nlohmann::json record;       // the run's record (an object), or null
  std::string reason;          // why it failed, one line; empty when it did not
  std::string started_at, finished_at;
  // "ok" (exit 0 and its record read back), "timeout", "skipped" (cannot run here, when the
  // driver skips such runs) or "failed".
  std::string status(bool skip_cannot_run) const;
};

// scalebench's own exit codes that say this machine cannot hold a run (memory, GPUs, CUDA), not
// that the run or the request is wrong.
bool cannot_run_here(int exit_code);

// Runs the step (process.hpp run_step) and reads its record. When a stop signal came, the step's
// record is removed and Stopped (process.hpp) is thrown with `q.stopped`: nothing of a
// stopped run is kept.
StepResult run_one_step(const StepRequest& q);

// The fields of a results-store line (results_store.hpp) every driver writes for a step: key,
// command, times, exit code, status, reason, launch_failed, record and log paths, the record.
nlohmann::json step_line(const std::string& key, const StepRequest& q, const StepResult& r, bool skip_cannot_run);

}  // namespace scalebench::launch
