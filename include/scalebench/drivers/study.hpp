#pragma once
// `scalebench study FILE`: a scaling study declared in a YAML file (jobs/*.yaml) — one workload,
// fixed options, a sweep (the cartesian product of lists of option values and rank counts) —
// planned into runs, each launched as its own job step (mpirun, or srun inside a Slurm
// allocation), appended to results/<study>/runs.jsonl as it finishes, and summarised as speed-up
// and efficiency against the smallest run of each series. docs/studies.md has the file format.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace scalebench {

struct StudySpec {
  std::string file;  // where it was read from
  std::string name;  // results/<name>/
  std::string description;
  std::string workload;  // a registered workload's name (workload.hpp)
  // Options of the workload subcommand given to every run, in file order: name (without --)
  // and value as written; a value `true` is a bare flag, `false` leaves the option out.
  std::vector<std::pair<std::string, std::string>> args;
  // The swept options in file order, each with its values; "ranks" is the rank count.
  std::vector<std::pair<std::string, std::vector<std::string>>> sweep;
  std::vector<std::string> mpirun_args;  // extra launcher arguments (mpirun)
  std::vector<std::string> srun_args;    // extra launcher arguments (srun)
  std::string hosts;                     // mpirun's hosts, "a,b:4" (key hosts)
  std::string hostfile;                  // mpirun's hostfile (key hostfile)
  double timeout_s = 900;                // per run
  // The named baseline (key baseline): swept keys and the value each takes in the baseline run.
  // Empty: each series is compared with its own run on the fewest cores or GPUs.
  std::vector<std::pair<std::string, std::string>> baseline;
};

// Reads and checks a study file. UsageError naming the file (and line) for anything wrong.
StudySpec load_study(const std::string& path);

struct StudyRun {
  int index = 0;                                             // 1-based, in plan order
  int ranks = 1;                                             // in all: nodes x ranks_per_node
  int nodes = 1;                                             // key nodes (1 when not given: every rank on one node)
  int ranks_per_node = 1;                                    // key ranks_per_node, or ranks / nodes
  bool placed = false;                                       // the study names nodes or ranks_per_node
  std::vector<std::pair<std::string, std::string>> options;  // args then the sweep point
  std::string key;                                           // identity for resume: workload, ranks and sorted options
  std::vector<std::string> workload_argv;                    // `<workload> --opt value …` (no launcher, no --json)
};

// The runs of a study, in sweep order (the first swept key varies slowest).
std::vector<StudyRun> plan_study(const StudySpec& spec);

struct StudyOptions {
  std::string file;
  std::string out_dir;            // empty: results/<study name>
  std::string launcher = "auto";  // auto | mpirun | srun
  std::string binary;             // scalebench itself (default /proc/self/exe)
  bool dry_run = false;           // print the plan; check nothing, run nothing
  bool rerun = false;             // run again runs that already finished (appended, never replacing)
  bool quiet = false;
  bool report = true;           // write report.html at the end (scalebench report)
  double timeout_s = 0;         // > 0: overrides the file's timeout_s
  std::string hosts, hostfile;  // non-empty: override the file's hosts/hostfile
};

struct StudyResult {
  int exit_code = 0;                          // 0; ExitCode::partial when a run failed; ExitCode::launch when a
                                              // run failed to launch or none could run here
  int ran = 0, from_earlier = 0, failed = 0;  // runs run now, found done in runs.jsonl, failed now
  int launch_failed = 0;                      // of the failed: without scalebench's own error (the launcher's)
  nlohmann::json summary;                     // what summary.json holds
};

// Plans, checks every run with --dry-run under the launcher (so a bad option stops the study
// before anything runs), runs what is not done yet, appends each to runs.jsonl, and rewrites the
// summary (summary.json, summary.csv, summary.md) from every run in runs.jsonl.
StudyResult run_study(const StudyOptions& options);

}  // namespace scalebench
