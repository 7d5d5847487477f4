// `scalebench study`: the study's runs checked, run one by one as job steps through the sweep loop
// both drivers share (sweep.hpp), each appended to the study's results store (results_store.hpp) as
// it finishes, then summarised (study_summary.hpp). Resume is by run key (sweep_to_do): a run with
// an ok line is not run again, unless --rerun.
#include "scalebench/drivers/study.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "launch/step_runner.hpp"
#include "launch/sweep.hpp"
#include "launch/time_left.hpp"
#include "results/files.hpp"
#include "results/results_dir.hpp"
#include "results/results_store.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/base/host.hpp"
#include "scalebench/base/input_file.hpp"
#include "scalebench/base/output_file.hpp"
#include "scalebench/drivers/launch.hpp"
#include "scalebench/drivers/process.hpp"
#include "scalebench/drivers/report.hpp"
#include "scalebench/topology/placement.hpp"
#include "study/baseline.hpp"
#include "study/study_launcher.hpp"
#include "study/study_summary.hpp"

namespace scalebench {
namespace {

using launch::StepRequest;
using results::ResultsStore;
using study::StudyLauncher;

// Up to this many runs, every run is checked with --dry-run before the first starts; above it, a
// covering set (see runs_to_check).
constexpr std::size_t kCheckEveryRunUpTo = 16;

void progress(const StudyOptions& o, const std::string& line) {
  if (!o.quiet) std::fprintf(stderr, "scalebench study: %s\n", line.c_str());
}

// The runs checked with --dry-run before the first starts: all of a small study; of a large one,
// enough that every value of every swept option (ranks included) is checked at least once, plus
// the last run (in sweep order usually the largest). The others are checked by running them.
std::vector<const StudyRun*> runs_to_check(const std::vector<const StudyRun*>& todo) {
  if (todo.size() <= kCheckEveryRunUpTo) return todo;
  std::vector<const StudyRun*> out;
  std::set<std::string> seen;
  for (const StudyRun* r : todo) {
    bool adds = r == todo.back();
    for (const auto& [k, v] : r->options) adds = seen.insert(k + "=" + v).second || adds;
    adds = seen.insert(fmt::format("ranks={}", r->ranks)).second || adds;
    adds = seen.insert(fmt::format("nodes={}", r->nodes)).second || adds;
    if (adds) out.push_back(r);
  }
  return out;
}

// Checks the runs (--dry-run under the launcher): a bad option stops the study here, before
// anything is run or written to runs.jsonl; a run this machine cannot hold (a resource error:
// memory, launcher slots) is returned with its reason, to be skipped as contrast skips modes.
std::map<int, std::string> check_runs(const StudyOptions& o, const StudyLauncher& l, const std::string& out_dir,
                                      const std::vector<const StudyRun*>& todo) {
  const auto checked = runs_to_check(todo);
  if (checked.size() < todo.size()) {
    progress(o, fmt::format("checking {} of {} runs first (every value of every swept option at least once); the "
                            "others are checked as they run",
                            checked.size(), todo.size()));
  }
  std::map<int, std::string> cannot_run;
  for (const StudyRun* r : todo) {
    if (const std::string why = l.limit(*r); !why.empty()) cannot_run[r->index] = why;
  }
  int k = 0;
  for (const StudyRun* r : checked) {
    if (cannot_run.count(r->index) != 0) continue;
    throw_if_stopped("nothing was run");
    progress(o, fmt::format("[{}/{}] checking run {} ({})", ++k, checked.size(), r->index, r->key));
    auto argv = l.argv(*r);
    argv.insert(argv.end(), {"--dry-run", "--quiet"});
    const std::string log = fmt::format("{}/runs/check-{}.log", out_dir, r->index);
    results::prepare_step_files("", log);  // never through a link; an earlier check's log goes
    const StepOutcome out = run_step(argv, log, 120);
    throw_if_stopped("nothing was run");
    const bool own = has_scalebench_error(log);
    if (out.exit_code == static_cast<int>(ExitCode::usage) && own) {
      const std::string lines = failure_lines(log);
      std::remove(log.c_str());  // its lines are in the error: the study leaves nothing of it
      throw UsageError(fmt::format("study {}: run {} ({}) cannot start: {}; fix {} (nothing was run)", l.spec->name,
                                   r->index, r->key, lines, l.spec->file));
    }
    if (out.exit_code != 0 && launch::cannot_run_here(out.exit_code) && own) {
      // Not the file's fault: this machine cannot hold the run (memory, GPUs, CUDA), as scalebench says.
      cannot_run[r->index] = fmt::format("{} (exit code {}; {})", failure_lines(log), out.exit_code, log);
      continue;
    }
    if (out.exit_code != 0) {
      // The launch itself failed (launcher, PMI, MPI start-up): no run can be trusted to start.
      const std::string why = out.timed_out ? "the check timed out after 120 s" : failure_lines(log);
      throw LaunchError(fmt::format("study {}: run {} ({}) could not be launched: {} (exit code {}; {}); no run was "
                                    "started: fix the launch (srun_args, mpirun_args, hosts) and run the study again",
                                    l.spec->name, r->index, r->key, why.empty() ? "no output" : why, out.exit_code,
                                    log));
    }
    std::remove(log.c_str());
  }
  return cannot_run;
}

// What the study makes in its folder before the first run (the folder, runs/, the lock file), taken
// away again when it stops there on a usage error or a signal: a study file to fix leaves the
// results folder as it was. A launch that fails keeps its check log, which the error names.
class MadeBeforeTheRuns {
 public:
  explicit MadeBeforeTheRuns(std::string dir)
      : dir_(std::move(dir)),
        folder_(path_kind(dir_).empty()),
        runs_(path_kind(dir_ + "/runs").empty()),
        lock_(path_kind(dir_ + "/" + results::kLockFileName).empty()) {}

  void undo() const noexcept {
    if (lock_) (void)unlink((dir_ + "/" + results::kLockFileName).c_str());
    if (runs_) (void)rmdir((dir_ + "/runs").c_str());  // only when empty
    if (folder_) (void)rmdir(dir_.c_str());
  }

 private:
  std::string dir_;
  bool folder_, runs_, lock_;
};

// The step of one run: its command with --json, its record and log under `stem`, its time limit.
StepRequest run_request(const StudyLauncher& l, const StudyRun& r, const std::string& stem, double timeout) {
  StepRequest q;
  q.argv = l.argv(r);
  q.argv.insert(q.argv.end(), {"--json", stem + ".json"});
  q.record_path = stem + ".json";
  q.log_path = stem + ".log";
  q.timeout_s = timeout;
  q.stopped = fmt::format("run {} was stopped and not recorded; runs.jsonl keeps every run finished before it: run "
                          "the study again to go on",
                          r.index);
  return q;
}

// The study's fields of a run's runs.jsonl line.
void add_run_fields(const StudySpec& spec, const StudyRun& r, nlohmann::json& line) {
  nlohmann::json opts = nlohmann::json::object();
  for (const auto& [k, v] : r.options) opts[k] = v;
  line.update({{"study", spec.name}, {"index", r.index}, {"ranks", r.ranks}, {"nodes", r.nodes}, {"options", opts}});
}

// A run's work for the estimate of the time left: its size, repeats and workers (ranks x threads).
double run_work(const StudySpec& spec, const StudyRun& r) {
  std::string size, reps = "5", warmup = "1", threads = "1";
  const std::string size_key = study::size_key_of(spec.workload);
  for (const auto& [k, v] : r.options) {
    if (k == size_key) size = v;
    if (k == "reps") reps = v;
    if (k == "warmup") warmup = v;
    if (k == "threads") threads = v;
  }
  // Doubles throughout: a study file's counts are not yet checked by the workload here.
  const double repeats = study::size_value(reps) + study::size_value(warmup);
  return launch::run_work(spec.workload, size, repeats, r.ranks * std::max(1.0, study::size_value(threads)));
}

std::string dry_run_listing(const StudyLauncher& l, const std::vector<StudyRun>& runs,
                            const std::vector<const StudyRun*>& todo, const std::string& jsonl) {
  std::string out = fmt::format("scalebench study {} --dry-run: {} runs, {} already in {}; nothing is run\n",
                                l.spec->name, runs.size(), runs.size() - todo.size(), jsonl);
  const std::set<const StudyRun*> will_run(todo.begin(), todo.end());
  for (const auto& r : runs) {
    const bool will = will_run.count(&r) != 0;
    out += fmt::format("  [{}] {:<8} {}\n", r.index, will ? "to run" : "done", join_args(l.argv(r)));
  }
  return out;
}

// The runs not done yet (sweep_to_do: those without an ok line in runs.jsonl; every run with --rerun).
std::vector<const StudyRun*> runs_to_do(const StudyOptions& o, const std::vector<StudyRun>& runs,
                                        const std::vector<nlohmann::json>& earlier) {
  std::vector<std::string> keys;
  for (const auto& r : runs) keys.push_back(r.key);
  std::vector<const StudyRun*> todo;
  for (const std::size_t i : launch::sweep_to_do(keys, earlier, o.rerun)) todo.push_back(&runs[i]);
  return todo;
}

// A study's folder holds one study: runs.jsonl lines of another study (another `study:` name) mean
// the folder is that study's, and its runs would be mixed with this one's.
void check_same_study(const StudySpec& spec, const std::string& out_dir, const std::vector<nlohmann::json>& earlier) {
  for (const auto& l : earlier) {
    if (l.contains("study") && l["study"].is_string() && l["study"] != spec.name) {
      throw ResourceError(fmt::format("--out-dir {} holds the runs of study '{}' (runs.jsonl), not of '{}' ({}); a "
                                      "folder holds one study: choose another --out-dir",
                                      out_dir, l["study"].get<std::string>(), spec.name, spec.file));
    }
  }
}

// A study run again on its folder says on stdout what it continues: the study, how many runs
// finished earlier and the hosts their records name, and this host. Another host is no refusal: a
// study's runs may span allocations (each record names its hosts).
void say_continuing(const StudySpec& spec, const std::string& out_dir, const std::vector<nlohmann::json>& earlier,
                    std::size_t runs, std::size_t todo) {
  std::set<std::string> hosts;
  for (const auto& l : earlier) {
    const auto record = l.find("record");
    if (record == l.end() || !record->is_object() || !record->contains("hosts") || !(*record)["hosts"].is_array()) {
      continue;
    }
    for (const auto& h : (*record)["hosts"]) {
      if (h.is_string()) hosts.insert(h.get<std::string>());
    }
  }
  std::string named;
  for (const auto& h : hosts) {
    if (!named.empty()) named += ',';
    named += h;
  }
  std::printf("scalebench study: continuing %s (study %s, %s) on host %s: %zu of %zu runs finished earlier%s\n",
              out_dir.c_str(), spec.name.c_str(), spec.file.c_str(), host_name().c_str(), runs - todo, runs,
              named.empty() ? "" : (" on " + named).c_str());
  std::fflush(stdout);
}

// Every path of the study's folder, checked by kind before anything is made or run: runs.jsonl
// (read and appended to), the summaries and the report (written), runs/ and the check logs in it.
// A run's own record and log carry this invocation's time and pid and so are new files.
void check_study_paths(const std::string& out_dir, const std::vector<StudyRun>& runs) {
  const std::string jsonl = out_dir + "/runs.jsonl";
  if (path_kind(out_dir) != "a folder") return;  // new: check_output_dir checked where it goes
  check_input_file(jsonl, std::string("the study's runs.jsonl"));
  results::check_own_file(jsonl, "runs.jsonl");
  for (const char* name : {"summary.json", "summary.csv", "summary.md", "report.html"}) {
    results::check_own_file(out_dir + "/" + name, name);
  }
  results::check_own_file(out_dir + "/" + results::kLockFileName, "lock file");
  results::check_own_folder(out_dir + "/runs", "runs folder");
  if (path_kind(out_dir + "/runs") != "a folder") return;
  for (const auto& r : runs) {
    results::check_own_file(fmt::format("{}/runs/check-{}.log", out_dir, r.index), "check log");
  }
}

// The plan and which runs are done, printed; nothing is checked or run.
StudyResult dry_run(const StudyOptions& o, const StudyLauncher& l, const std::vector<StudyRun>& runs,
                    const std::string& out_dir) {
  const auto todo = runs_to_do(o, runs, results::read_results(out_dir, results::DriverKind::study).lines);
  std::fputs(dry_run_listing(l, runs, todo, results::results_jsonl(out_dir)).c_str(), stdout);
  StudyResult result;
  result.from_earlier = static_cast<int>(runs.size() - todo.size());
  return result;
}

// Runs the runs to do in order through the sweep (sweep.hpp), each appended to the store as it
// finishes; a run this machine turns out not to hold goes into `cannot_run`.
void run_runs(const StudyOptions& o, const StudyLauncher& l, const std::vector<const StudyRun*>& todo,
              ResultsStore& store, std::map<int, std::string>& cannot_run, StudyResult& result) {
  const StudySpec& spec = *l.spec;
  const std::string out_dir = o.out_dir.empty() ? "results/" + spec.name : o.out_dir;
  const double timeout = o.timeout_s > 0 ? o.timeout_s : spec.timeout_s;
  const std::string stamp = results::utc_stamp();
  launch::Sweep sweep;
  sweep.driver = "study";
  sweep.quiet = o.quiet;
  // A run not checked before (a large study checks a covering set) may still find that this
  // machine cannot hold it: skipped with the reason, as the check would have, not failed.
  sweep.skip_cannot_run = true;
  sweep.stopped = "runs.jsonl keeps every run finished before; run the study again to go on";
  sweep.request = [&](std::size_t i) {
    const StudyRun& r = *todo[i];
    return run_request(l, r, fmt::format("{}/runs/{}-{}-{}", out_dir, r.index, stamp, static_cast<long>(getpid())),
                       timeout);
  };
  sweep.finished = [&](std::size_t i, const launch::StepResult& r, nlohmann::json& line) {
    if (r.status(true) == "skipped") cannot_run[todo[i]->index] = r.reason;
    add_run_fields(spec, *todo[i], line);
  };
  std::vector<launch::SweepItem> items;
  for (const StudyRun* r : todo) {
    items.push_back({r->key, run_work(spec, *r), fmt::format("run {} ({})", r->index, r->key)});
  }
  const launch::SweepCounts counts = launch::run_sweep(sweep, items, store);
  result.ran = counts.ran;
  result.failed = counts.failed;
  result.launch_failed = counts.launch_failed;
}

// The table, the report, and the study's exit code with its one error line.
void finish(const StudyOptions& o, const StudySpec& spec, const std::string& out_dir, const std::string& table,
            std::size_t to_do, const std::map<int, std::string>& cannot_run, StudyResult& result) {
  if (!o.quiet) {
    std::fputs(table.c_str(), stdout);
    std::fflush(stdout);
  }
  const auto& summary_runs = result.summary["runs"];
  if (o.report && std::any_of(summary_runs.begin(), summary_runs.end(),
                              [](const nlohmann::json& r) { return r.value("status", std::string()) == "ok"; })) {
    write_report_after_run(out_dir, o.quiet);
  }
  if (to_do > 0 && cannot_run.size() >= to_do) {
    result.exit_code = static_cast<int>(ExitCode::launch);
    std::fprintf(stderr,
                 "scalebench: error: none of the %zu runs of study %s to do can run here (%s); see the "
                 "table\n",
                 to_do, spec.name.c_str(), cannot_run.begin()->second.c_str());
  } else if (result.failed > 0) {
    if (result.launch_failed > 0) result.exit_code = static_cast<int>(ExitCode::launch);
    std::fprintf(stderr, "scalebench: error: %d of %d study runs failed%s (marked in the table); logs in %s/runs\n",
                 result.failed, result.ran, result.launch_failed > 0 ? ", some to launch" : "", out_dir.c_str());
  }
}

}  // namespace

StudyResult run_study(const StudyOptions& o) {
  if (std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMIX_RANK")) {
    throw UsageError("run `scalebench study` directly, not under mpirun: it launches each run itself");
  }
  const StopSignals stop_signals;
  const StudySpec spec = load_study(o.file);
  const auto runs = plan_study(spec);
  const StudyLauncher launcher = study::make_launcher(o, spec);
  const std::string out_dir = o.out_dir.empty() ? "results/" + spec.name : o.out_dir;
  check_results_folder(out_dir, "--out-dir");
  results::check_output_dir(out_dir, "--out-dir");
  results::check_folder_is_ours(out_dir, results::DriverKind::study, "--out-dir");
  check_same_study(spec, out_dir, results::read_results(out_dir, results::DriverKind::study).lines);
  if (o.dry_run) return dry_run(o, launcher, runs, out_dir);
  check_study_paths(out_dir, runs);  // every path read or written, by kind, before the folder is made

  // What earlier invocations finished, read under the lock: runs.jsonl is only ever appended to.
  const MadeBeforeTheRuns made(out_dir);
  ResultsStore store(out_dir, results::DriverKind::study, "--out-dir");
  results::make_dirs(out_dir + "/runs");
  check_same_study(spec, out_dir, store.lines());
  std::vector<const StudyRun*> todo = runs_to_do(o, runs, store.lines());
  if (!store.lines().empty() && !o.quiet) say_continuing(spec, out_dir, store.lines(), runs.size(), todo.size());
  StudyResult result;
  result.from_earlier = static_cast<int>(runs.size() - todo.size());

  const std::size_t to_do = todo.size();
  std::map<int, std::string> cannot_run;
  try {
    cannot_run = check_runs(o, launcher, out_dir, todo);
  } catch (const LaunchError&) {
    throw;
  } catch (...) {
    if (store.lines().empty()) made.undo();
    throw;
  }
  study::SummaryPlace place{launcher.setup.launcher, out_dir, std::move(cannot_run)};
  todo.erase(std::remove_if(todo.begin(), todo.end(),
                            [&](const StudyRun* r) { return place.cannot_run.count(r->index) != 0; }),
             todo.end());
  run_runs(o, launcher, todo, store, place.cannot_run, result);
  const std::string table = study::write_summary(spec, runs, store, place, result);
  finish(o, spec, out_dir, table, to_do, place.cannot_run, result);
  return result;
}

}  // namespace scalebench
