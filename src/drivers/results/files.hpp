#pragma once
// What the drivers (contrast, study) share: where the binary is, folders, reading records.
#include <initializer_list>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scalebench/workloads/workload.hpp"

namespace scalebench::results {

using scalebench::RunFigures;

// This executable's path (/proc/self/exe), for the runs a driver launches.
std::string self_binary();
// 20260102T030405Z
std::string utc_stamp();
// mkdir -p; ResourceError naming the folder when it cannot be made.
void make_dirs(const std::string& path);
// The figures of a run record, from the workload named by its "subcommand" (workload.hpp);
// empty figures for a record of no registered workload.
RunFigures run_figures(const nlohmann::json& record);
// The last "scalebench: error" line of a run's log (empty when none).
std::string last_error_line(const std::string& log_path);
// Checked before any work, so that a driver never runs for an hour and then cannot write:
// ResourceError saying what is wrong with the file `option` names (a folder, a name too long, a
// folder that is missing or not writable).
void check_output_file(const std::string& path, const std::string& option);
// The same for a folder the driver will create or fill (a file in its place, an unwritable parent).
void check_output_dir(const std::string& path, const std::string& option);
// A run's record and log, just before the run that writes them: each must be missing or a regular
// file (check_results_file: never a link, never in a linked folder; ResourceError otherwise); a
// regular file there is a killed run's leftover (no runs.jsonl line names it: the caller chose the
// names so) and is removed, so that the run starts them anew. An empty path is skipped.
void prepare_step_files(const std::string& record_path, const std::string& log_path);
// `stem` when no line of `lines` names `stem`.json or `stem`.log (as "record_path" or "log_path"),
// else the first of `stem`-2, `stem`-3, … that none names: a file an earlier line names is never
// replaced.
std::string unnamed_stem(const std::string& stem, const std::vector<nlohmann::json>& lines);
// "12.3 GFLOP/s", "1.23 G/s": a rate for the tables (unit "GFLOP/s" or "samples/s"), legible whatever
// its size (report/figure_text.hpp).
std::string human_rate(double v, const std::string& unit);
// A CSV field, quoted when it must be.
std::string csv_escape(const std::string& s);
// Sets Open MPI's run-as-root variables for the steps when running as root without them (a
// driver's runs are deliberate); no-op otherwise.
void allow_mpirun_as_root();

}  // namespace scalebench::results
