#pragma once
// The contrast's parts (a study whose sweep is the mode): its rows planned into steps
// (contrast_steps.cpp), the sizes measured or read back from an earlier invocation
// (contrast_sizing.cpp), each step run through the step runner and kept in the results store with
// resume by run key (contrast.cpp), the table and files (contrast_summary.cpp).
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "launch/step_runner.hpp"
#include "scalebench/drivers/contrast.hpp"
#include "scalebench/drivers/launch.hpp"
#include "scalebench/topology/placement.hpp"
#include "scalebench/topology/topology.hpp"

namespace scalebench::contrast {

// What every step of a contrast shares: the launch, the binary, the folder.
struct StepContext {
  const LaunchSetup* setup;
  std::string binary, out_dir;
};

// A row to run: its workload, its name ("" for the mode's own row) and its placement.
struct PlannedRow {
  const Workload* workload;
  std::string label;
  PlacementPlan plan;
};

std::string row_mode(const ContrastStep& s);
std::string name_of(const Workload& w);
// The size a row runs: the naive rows a smaller one, the GPU rows their own.
std::string row_size(const ContrastOptions& o, const ContrastStep& s);

// The gpu mode's rows of workload `w` (Workload::gpu_rows) and the placement each runs on.
std::vector<std::pair<std::string, PlacementPlan>> gpu_rows(const Workload& w, const PlacementPlan& every_gpu);
// The machine as the allocation gives it: narrowed to the CPUs it grants on each node.
Topology allocation_topology(Topology topo);
// The placement of each mode (ResourceError for a requested mode that cannot run here).
std::vector<PlacementPlan> plan_modes(const ContrastOptions& o, const Topology& topo, int nodes);
// The rows of every workload and mode asked for, in table order (ResourceError for a row asked
// for by name that cannot run here).
std::vector<PlannedRow> plan_rows(const ContrastOptions& o, const std::vector<PlacementPlan>& plans);
// A step of workload `w` on `plan` as row `label`, or skipped with the plan's reason.
ContrastStep make_step(const ContrastOptions& o, const StepContext& ctx, const Workload& w, const PlacementPlan& plan,
                       const std::string& label);
// Each planned row's arguments parsed and configured by its workload's own subcommand, as its step
// would before MPI_Init (Workload::add_command, WorkloadCommand::configure: no machine needed), the
// sizes left open at their --dry-run values: a row its workload refuses (--precision tf32 on a CPU
// row, a size beyond the library's int) is a UsageError naming the row and its command, before any
// work and before the folder is made.
void check_rows(const ContrastOptions& o, const StepContext& ctx, const std::vector<PlacementPlan>& plans,
                const std::vector<PlannedRow>& planned);
// The key of a step in the results store: what tells its run apart (workload, row, size,
// precision, repeats, placement).
std::string step_key(const ContrastOptions& o, const ContrastStep& s);
// Every path the contrast writes in its folder, checked by kind before the folder is made.
void check_contrast_paths(const std::string& out_dir, const std::vector<PlannedRow>& planned);

// The profile the rows' predictions need: when there is no current one for this host and build
// (calibrate --if-stale's rule) and --no-calibrate was not given, `scalebench calibrate --quick`
// runs on this host (2 ranks, else 1), its output in calibrate.log. What happened, for
// contrast.json: {"profile", "current" | "calibrated" | "failed" | "not asked", "why", "log"}.
nlohmann::json calibrate_first(const ContrastOptions& o, const StepContext& ctx);
// The calibration's log in the contrast's folder.
inline constexpr const char* kCalibrateLogName = "calibrate.log";

// One contrast row from a step's record (its figures, shares and prediction).
nlohmann::json summarize(const ContrastStep& s);
// Runs one step (step_runner.hpp) and reads its record; `stopped` is said when a stop signal ends
// the contrast during it.
launch::StepResult run_step_of(const ContrastOptions& o, ContrastStep& s, const std::string& stopped);

// The folder's contrast-plan.json, when an earlier invocation wrote one (contrast_plan.cpp): each
// field checked (ResourceError naming the file and the field); the host that measured it must be
// this one (ResourceError) and the options that decide the rows this invocation's (UsageError
// naming the option that differs); its sizes then fill those the options leave open. Says on stdout
// which host and options it continues. A folder whose runs.jsonl has `earlier_lines` lines but no
// plan is refused. Returns the earlier sizing (for the report), an empty object without a plan.
nlohmann::json continue_plan(ContrastOptions& o, const std::string& out_dir, std::size_t earlier_lines);
// The sizes the options and the plan leave open, measured (unless --dry-run); returns `sizing`
// with what was measured, for the report.
nlohmann::json choose_sizes(ContrastOptions& o, const StepContext& ctx, const std::vector<PlacementPlan>& plans,
                            nlohmann::json sizing);
// Writes contrast-plan.json: the host, the options and the sizes every row of this contrast runs.
void save_sizes(const ContrastOptions& o, const std::string& out_dir, const nlohmann::json& sizing);
inline constexpr const char* kPlanFileName = "contrast-plan.json";

// The table on stdout, contrast.json and contrast.csv (and --json, --csv) from the steps.
struct SummaryContext {
  const Topology* topo;
  const LaunchSetup* setup;
  std::string out_dir;
  nlohmann::json sizing;
  nlohmann::json calibration;  // calibrate_first's answer
  int failed = 0, from_earlier = 0;
};
void write_contrast_summary(const ContrastOptions& o, const SummaryContext& ctx, ContrastResult& result);

}  // namespace scalebench::contrast
