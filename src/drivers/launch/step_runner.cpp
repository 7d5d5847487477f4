#include "launch/step_runner.hpp"

#include <cstdio>

#include <fmt/format.h>

#include "results/files.hpp"
#include "results/jsonl.hpp"
#include "results/record_check.hpp"
#include "results/results_dir.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/base/host.hpp"
#include "scalebench/drivers/launch.hpp"
#include "scalebench/drivers/process.hpp"
#include "scalebench/topology/placement.hpp"

namespace scalebench::launch {
using results::check_run_record;
using results::read_run_output;

namespace {

// One line saying why a finished step failed.
std::string failure_reason(const StepRequest& q, const StepResult& r, bool not_found) {
  if (r.timed_out) return fmt::format("timed out after {:.0f} s", q.timeout_s);
  if (not_found) return fmt::format("could not start {} (see {})", q.argv.empty() ? "" : q.argv[0], q.log_path);
  std::string why = failure_lines(q.log_path);
  if (why.empty()) return fmt::format("exit code {} (see {})", r.exit_code, q.log_path);
  if (r.cannot_run) return fmt::format("cannot run here: {} (exit code {}; {})", why, r.exit_code, q.log_path);
  return why;
}

}  // namespace

bool cannot_run_here(int exit_code) {
  return exit_code == static_cast<int>(ExitCode::resource) || exit_code == static_cast<int>(ExitCode::no_cuda);
}

std::string StepResult::status(bool skip_cannot_run) const {
  if (exit_code == 0 && !no_record) return "ok";
  if (timed_out) return "timeout";
  return skip_cannot_run && cannot_run ? "skipped" : "failed";
}

namespace {

// The run's record as the drivers read it back: one that cannot be read, that breaks the JSON rule
// of every record (jsonl.hpp: a byte-order mark, a key twice, too deep), or whose fields are not of
// their kinds and ranges (record_check.hpp), counts as none.
nlohmann::json read_back_record(const std::string& path) {
  nlohmann::json record;
  if (!results::json_text_problem(read_run_output(path, "record"), record).empty() || !record.is_object()) {
    return nullptr;
  }
  try {
    check_run_record(JsonField(record, JsonOrigin{"record " + path, ""}));
  } catch (const JsonFieldError&) {
    return nullptr;
  }
  return record;
}

}  // namespace

StepResult run_one_step(const StepRequest& q) {
  StepResult r;
  r.started_at = utc_now_iso8601();
  const StepOutcome out = run_step(q.argv, q.log_path, q.timeout_s);
  if (out.stopped_by != 0) std::remove(q.record_path.c_str());
  throw_if_stopped(q.stopped);
  r.finished_at = utc_now_iso8601();
  r.timed_out = out.timed_out;
  r.exit_code = out.timed_out ? static_cast<int>(ExitCode::timeout) : out.exit_code;
  r.record = read_back_record(q.record_path);
  if (r.exit_code == 0 && (r.record.is_object() || q.record_path.empty())) return r;
  if (r.exit_code == 0) {
    // Exited 0 without a record to read back: nothing measured is known, so it is not a finished run.
    r.no_record = r.own_error = true;
    r.reason = fmt::format("it exited 0 but its record {} could not be read back as a run record", q.record_path);
    return r;
  }
  r.own_error = !out.timed_out && has_scalebench_error(q.log_path);
  r.launch_failed = !out.timed_out && !r.own_error;
  // A run that could not write its own record (a full disk) failed: it is not one this machine
  // cannot hold, and skipping it would lose it.
  const bool own_output = !q.record_path.empty() &&
                          results::last_error_line(q.log_path).find(q.record_path) != std::string::npos;
  r.cannot_run = r.own_error && cannot_run_here(r.exit_code) && !own_output;
  r.reason = failure_reason(q, r, out.not_found);
  return r;
}

nlohmann::json step_line(const std::string& key, const StepRequest& q, const StepResult& r, bool skip_cannot_run) {
  return {{"key", key},
          {"launch_failed", r.launch_failed},
          {"command", join_args(q.argv)},
          {"started_at", r.started_at},
          {"finished_at", r.finished_at},
          {"exit_code", r.exit_code},
          {"status", r.status(skip_cannot_run)},
          {"reason", r.reason},
          {"record_path", q.record_path},
          {"log_path", q.log_path},
          {"record", r.record}};
}

}  // namespace scalebench::launch
