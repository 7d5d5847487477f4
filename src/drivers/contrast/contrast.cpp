// `scalebench contrast`: a study whose sweep is the mode. Its rows are planned (contrast_steps.cpp),
// sized (contrast_sizing.cpp), run one by one through the sweep loop both drivers share (sweep.hpp:
// the step runner, the folder's results store and its one resume rule), so that a contrast stopped
// or killed and run again on the same --out-dir runs only the rows not finished; the table is
// written at the end (contrast_summary.cpp).
#include "scalebench/drivers/contrast.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include <fmt/format.h>

#include "contrast/contrast_steps.hpp"
#include "launch/step_runner.hpp"
#include "launch/sweep.hpp"
#include "launch/time_left.hpp"
#include "results/files.hpp"
#include "results/results_dir.hpp"
#include "results/results_store.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/base/input_file.hpp"
#include "scalebench/base/output_file.hpp"
#include "scalebench/drivers/process.hpp"
#include "scalebench/drivers/report.hpp"

namespace scalebench {
namespace contrast {

// The row's figures from the step's record; a record of another shape than a run writes counts as
// none (the row shows no figures).
void summarize_record(ContrastStep& s) {
  try {
    s.summary = summarize(s);
  } catch (const nlohmann::json::exception&) {
    s.record = nullptr;
    s.summary = summarize(s);
  }
}

// The step's outcome and figures from its result.
void keep_result(ContrastStep& s, const launch::StepResult& r) {
  s.exit_code = r.exit_code;
  s.timed_out = r.timed_out;
  s.launch_failed = r.launch_failed;
  s.reason = r.reason;
  s.record = r.record;
  summarize_record(s);
}

launch::StepResult run_step_of(const ContrastOptions& o, ContrastStep& s, const std::string& stopped) {
  results::prepare_step_files(s.record_path, s.log_path);  // never through a link; a killed run's leftover goes
  const launch::StepRequest q{s.argv, s.record_path, s.log_path, o.timeout_s, stopped};
  launch::StepResult r = launch::run_one_step(q);
  keep_result(s, r);
  return r;
}

}  // namespace contrast

namespace {

using contrast::name_of;
using contrast::row_mode;

// A step's work for the estimate of the time left (launch::run_work): its size over its cores, a
// GPU counted as kGpuCores cores (rough: the estimate is refined by every step that finishes).
constexpr int kGpuCores = 32;
// The naive rows run some hundred times slower per unit of work: they count as none, so that they
// neither feed the estimate nor take part in it.
double step_work(const ContrastOptions& o, const ContrastStep& s) {
  if (s.mode == Mode::naive) return 0.0;
  return launch::run_work(name_of(*s.workload), contrast::row_size(o, s), static_cast<double>(o.reps) + o.warmup,
                          s.on_gpus ? s.ranks * double{kGpuCores} : s.cores);
}

// A step an earlier invocation finished ok (sweep_to_do), taken from its line in the store
// instead of run again.
void take_from_earlier(const results::ResultsStore& store, const std::string& key, ContrastStep& s) {
  const nlohmann::json& line = *store.shown(key);
  s.exit_code = 0;
  s.from_earlier = true;
  s.record = line["record"].is_object() ? line["record"] : nlohmann::json();
  contrast::summarize_record(s);
}

// A row run again (its earlier line failed) writes a record and log of new names: the files an
// earlier line names are kept as they are (results::unnamed_stem).
void give_unnamed_files(ContrastStep& s, const results::ResultsStore& store) {
  const std::string stem = s.record_path.substr(0, s.record_path.size() - 5);  // less ".json"
  const std::string fresh = results::unnamed_stem(stem, store.lines());
  if (fresh == stem) return;
  std::replace(s.argv.begin(), s.argv.end(), s.record_path, fresh + ".json");
  s.record_path = fresh + ".json";
  s.log_path = fresh + ".log";
}

// The contrast's side of the sweep (sweep.hpp) over `todo`: each row's files named just before it
// runs, its outcome kept in its step, its line marked as the contrast's.
launch::Sweep contrast_sweep(const ContrastOptions& o, const std::vector<ContrastStep*>& todo,
                             const results::ResultsStore& store) {
  launch::Sweep sweep;
  sweep.driver = "contrast";
  sweep.quiet = o.quiet;
  sweep.stopped = "runs.jsonl keeps every row finished before: run the contrast again with the same --out-dir to go on";
  sweep.request = [&o, &todo, &store](std::size_t i) {
    ContrastStep& s = *todo[i];
    give_unnamed_files(s, store);
    const std::string stopped =
        fmt::format("the {} {} run was stopped and not recorded; runs.jsonl keeps every row finished before it: run "
                    "the contrast again with the same --out-dir to go on",
                    s.workload->name(), row_mode(s));
    return launch::StepRequest{s.argv, s.record_path, s.log_path, o.timeout_s, stopped};
  };
  sweep.finished = [&todo](std::size_t i, const launch::StepResult& r, nlohmann::json& line) {
    ContrastStep& s = *todo[i];
    contrast::keep_result(s, r);
    line.update({{"driver", "contrast"},
                 {"workload", name_of(*s.workload)},
                 {"mode", row_mode(s)},
                 {"nodes", s.nodes},
                 {"ranks", s.ranks}});
  };
  return sweep;
}

// Runs the steps that are neither skipped nor finished earlier (sweep.hpp), in order; returns what
// the sweep counted.
launch::SweepCounts run_steps(const ContrastOptions& o, std::vector<ContrastStep>& steps, results::ResultsStore& store,
                              int& from_earlier) {
  std::vector<ContrastStep*> runnable;
  std::vector<std::string> keys;
  for (auto& s : steps) {
    if (s.skipped) continue;
    runnable.push_back(&s);
    keys.push_back(contrast::step_key(o, s));
  }
  const std::vector<std::size_t> to_do = launch::sweep_to_do(keys, store.lines(), false);
  std::vector<ContrastStep*> todo;
  std::vector<launch::SweepItem> items;
  for (std::size_t i = 0, next = 0; i < runnable.size(); ++i) {
    ContrastStep& s = *runnable[i];
    if (next < to_do.size() && to_do[next] == i) {
      ++next;
      todo.push_back(&s);
      items.push_back(
          {keys[i], step_work(o, s), fmt::format("{} {}: {}", name_of(*s.workload), row_mode(s), join_args(s.argv))});
    } else {
      take_from_earlier(store, keys[i], s);
      ++from_earlier;
    }
  }
  if (from_earlier > 0 && !o.quiet) {
    std::fprintf(stderr, "scalebench contrast: %d rows finished earlier (%s), %zu to run\n", from_earlier,
                 store.jsonl_path().c_str(), todo.size());
  }
  return launch::run_sweep(contrast_sweep(o, todo, store), items, store);
}

// The launch of every step. The launcher must be there, --dry-run too (it refuses what the run
// refuses), unless the plan is of another machine (HWLOC_XMLFILE), which only --dry-run shows.
LaunchSetup contrast_launch(const ContrastOptions& o, const Topology& topo) {
  LaunchRequest request;
  request.launcher = o.launcher;
  request.hosts = o.hosts;
  request.hostfile = o.hostfile;
  request.mpirun_args = o.mpirun_args;
  request.srun_args = o.srun_args;
  request.dry_run = !topo.is_this_machine();
  return resolve_launch(request);
}

// The output paths checked before any work, --dry-run too (it makes nothing): --json and --csv as
// the files they are written as (write_json_atomic: a block device, a socket or a link into a
// missing folder refused), the folder (new, or this contrast's own unfinished one; a finished
// contrast is never overwritten).
void check_outputs(const ContrastOptions& o, const std::string& out_dir) {
  if (o.json_path) results::check_output_file(*o.json_path, "--json");
  if (o.csv_path) results::check_output_file(*o.csv_path, "--csv");
  if (o.json_path) check_output_path(*o.json_path, "--json");
  if (o.csv_path) check_output_path(*o.csv_path, "--csv");
  if (o.json_path) results::check_not_in_results_folder(*o.json_path, "--json", out_dir);
  if (o.csv_path) results::check_not_in_results_folder(*o.csv_path, "--csv", out_dir);
  check_results_folder(out_dir, "--out-dir");
  results::check_output_dir(out_dir, "--out-dir");
  if (!path_kind(out_dir + "/contrast.json").empty()) {
    throw ResourceError(fmt::format("{} already holds a contrast; earlier results are never overwritten: choose "
                                    "another --out-dir",
                                    out_dir));
  }
  results::check_folder_is_ours(out_dir, results::DriverKind::contrast, "--out-dir");
}

void print_dry_run(const Topology& topo, const std::vector<ContrastStep>& steps) {
  std::string out = fmt::format("scalebench contrast --dry-run on {} ({}): nothing is run\n", topo.host(),
                                topo.source());
  for (const auto& s : steps) {
    out += fmt::format("  {:<11} {:<13} ", s.workload->name(), row_mode(s));
    out += s.skipped ? fmt::format("skipped: {}\n", s.reason) : join_args(s.argv) + "\n";
  }
  std::fputs(out.c_str(), stdout);
}

// The exit code, the report page and the one error line of a contrast that ran.
void finish(const ContrastOptions& o, const std::string& out_dir, int failed, ContrastResult& result) {
  const int to_run = static_cast<int>(
      std::count_if(result.steps.begin(), result.steps.end(), [](const ContrastStep& s) { return !s.skipped; }));
  if (o.report && failed < to_run) write_report_after_run(out_dir, o.quiet);
  if (failed > 0) {
    const bool launch = result.exit_code == static_cast<int>(ExitCode::launch);
    std::fprintf(stderr, "scalebench: error: %d of %d contrast runs failed%s (marked in the table); logs in %s\n",
                 failed, to_run, launch ? ", some to launch" : "", out_dir.c_str());
  }
}

}  // namespace

ContrastResult run_contrast(const ContrastOptions& o) {
  if (std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMIX_RANK")) {
    throw UsageError("run `scalebench contrast` directly, not under mpirun: it launches each mode itself");
  }
  const StopSignals stop_signals;
  const Topology topo = contrast::allocation_topology(Topology::load());
  const LaunchSetup setup = contrast_launch(o, topo);
  if (!topo.is_this_machine() && !o.dry_run) {
    throw UsageError("HWLOC_XMLFILE describes another machine: use `scalebench contrast --dry-run` to see its plan, "
                     "or unset HWLOC_XMLFILE to run here");
  }
  const std::vector<PlacementPlan> plans = contrast::plan_modes(o, topo, setup.nodes);
  const std::string out_dir = o.out_dir.empty() ? fmt::format("results/contrast-{}-{}", results::utc_stamp(),
                                                              static_cast<long>(getpid()))
                                                : o.out_dir;
  check_outputs(o, out_dir);

  ContrastOptions sized = o;
  if (sized.workloads.empty()) sized.workloads = workloads();
  const auto planned = contrast::plan_rows(sized, plans);
  const contrast::StepContext ctx{&setup, o.binary.empty() ? results::self_binary() : o.binary, out_dir};
  contrast::check_rows(sized, ctx, plans, planned);  // as each row's workload checks it, before any work
  contrast::check_contrast_paths(out_dir, planned);  // every path written or read back, by kind, before any run
  std::optional<results::ResultsStore> store;
  if (!o.dry_run) store.emplace(out_dir, results::DriverKind::contrast, "--out-dir");
  // A folder run before: its plan continued (same host, same options) or refused, before any work
  // (--dry-run reads it without taking the lock).
  const std::size_t earlier_lines = store ? store->lines().size()
                                          : results::read_results(out_dir, results::DriverKind::contrast).lines.size();
  nlohmann::json earlier = contrast::continue_plan(sized, out_dir, earlier_lines);
  contrast::check_rows(sized, ctx, plans, planned);  // again with the sizes the plan gave (measured ones stay in range)
  const nlohmann::json calibration = contrast::calibrate_first(o, ctx);  // before the probes: the rows' predictions
  contrast::SummaryContext summary{&topo, &setup, out_dir,
                                   contrast::choose_sizes(sized, ctx, plans, std::move(earlier)), calibration};
  ContrastResult result;
  for (const auto& row : planned) {
    result.steps.push_back(contrast::make_step(sized, ctx, *row.workload, row.plan, row.label));
  }
  if (o.dry_run) {
    print_dry_run(topo, result.steps);
    return result;
  }
  contrast::save_sizes(sized, out_dir, summary.sizing);
  const launch::SweepCounts counts = run_steps(sized, result.steps, *store, result.from_earlier);
  summary.failed = counts.failed;
  summary.from_earlier = result.from_earlier;
  result.exit_code = counts.launch_failed > 0 ? static_cast<int>(ExitCode::launch)
                     : summary.failed > 0     ? static_cast<int>(ExitCode::partial)
                                              : 0;
  contrast::write_contrast_summary(sized, summary, result);
  finish(o, out_dir, summary.failed, result);
  return result;
}

}  // namespace scalebench
