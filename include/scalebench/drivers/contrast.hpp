#pragma once
// `scalebench contrast`: one run per execution mode this machine (or Slurm allocation) can do,
// each launched as its own job step, collected and shown side by side.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <map>

#include "scalebench/topology/placement.hpp"
#include "scalebench/workloads/workload.hpp"

namespace scalebench {

// A workload's sizes in the contrast (values of its size_key()); empty: measured
// (study/contrast_sizing.hpp), the GPU rows' the CPU rows' when those were given, the naive row's
// the workload's ContrastSizing::naive.
struct ContrastSizes {
  std::string cpu, gpu, naive;
};

struct ContrastOptions {
  std::vector<const Workload*> workloads;  // empty: every registered workload (workload.hpp)
  std::vector<Mode> modes;                 // empty: every mode, skipping those not possible here
  std::vector<std::string> rows;           // the rows asked for by name (--modes); empty: every row of `modes`
  bool modes_explicit = false;             // a requested mode that cannot run is an error
  // Sizes by workload name; a workload or a size not given: measured (contrast_sizing.hpp) — the
  // CPU rows from a quick single-core run, the GPU rows from a quick one-GPU run.
  std::map<std::string, ContrastSizes> sizes;
  std::string precision = "fp64";  // of the workloads that have one (gemm)
  int reps = 3;
  int warmup = 1;
  std::string peer{};      // --peer: a library the CPU rows also time (gemm: scalapack); "" none
  double timeout_s = 900;  // per step
  std::string out_dir;     // empty: results/contrast-<UTC time>-<pid>
  std::optional<std::string> json_path;
  std::optional<std::string> csv_path;
  bool dry_run = false;
  std::string launcher = "auto";  // auto | mpirun | srun
  std::string hosts, hostfile;    // mpirun's hosts (--hosts a,b / --hostfile FILE): multinode runs on them
  std::vector<std::string> mpirun_args, srun_args;  // extra launcher arguments of every step
  std::string binary;                               // scalebench itself (default /proc/self/exe)
  bool quiet = false;
  bool report = true;  // write report.html at the end (scalebench report)
  // With no current profile for this host and build, calibrate quickly first (contrast_calibrate.cpp)
  // so that the rows carry predictions; --no-calibrate: not.
  bool calibrate = true;
};

struct ContrastStep {
  const Workload* workload = nullptr;
  Mode mode = Mode::naive;
  std::string label;     // the row's name when it is not the mode's ("gpu-naive", "multi-gpu")
  bool on_gpus = false;  // one rank per GPU: the gpu mode's rows, and multinode with the gpu layout
  bool skipped = false;
  std::string reason;             // why skipped, or why failed
  std::vector<std::string> argv;  // the launch command
  std::string record_path, log_path;
  int exit_code = -1;
  bool timed_out = false;
  bool launch_failed = false;  // failed without scalebench's own error: the launcher's
  int nodes = 1;
  int ranks = 0;              // in all
  int cores = 0;              // the cores its ranks own, in all
  nlohmann::json record;      // the run's record, when it wrote one
  nlohmann::json summary;     // the contrast row
  bool from_earlier = false;  // finished by an earlier invocation on this --out-dir (resumed)
};

struct ContrastResult {
  std::vector<ContrastStep> steps;
  int exit_code = 0;      // 0; ExitCode::partial when a step failed; ExitCode::launch when a
                          // step failed to launch (no scalebench error) or none ran
  int from_earlier = 0;   // rows finished by an earlier invocation on this --out-dir, not run again
  nlohmann::json report;  // the whole contrast (--json)
};

// The rows a contrast can show, in order: the modes' names and the gpu mode's extra rows.
const std::vector<std::string>& contrast_row_names();
// The mode a row name runs in (UsageError naming the rows for an unknown name).
Mode contrast_row_mode(const std::string& name);

// Plans, launches and collects; each finished row is appended to the folder's runs.jsonl. Run again
// on the same --out-dir after it was stopped or killed, it runs only the rows not finished ok, at
// the sizes of the first invocation (contrast-plan.json), and then writes the table; a folder that
// holds a finished contrast (contrast.json) is refused. Throws UsageError/ResourceError for
// requests that cannot start.
ContrastResult run_contrast(const ContrastOptions& options);

}  // namespace scalebench
