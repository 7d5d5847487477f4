#include "scalebench/drivers/contrast.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "scalebench/base/build_info.hpp"
#include "scalebench/base/env.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/base/host.hpp"
#include "scalebench/base/input_file.hpp"
#include "scalebench/base/output_file.hpp"
#include "scalebench/drivers/launch.hpp"
#include "scalebench/drivers/process.hpp"
#include "scalebench/drivers/report.hpp"
#include "scalebench/topology/topology.hpp"
#include "scalebench/workloads/run_context.hpp"
#include "study/contrast_sizing.hpp"
#include "study/files.hpp"
#include "study/prediction_columns.hpp"
#include "study/results_dir.hpp"
#include "study/time_left.hpp"

namespace scalebench {

namespace {

using study::csv_escape;
using study::human_rate;
using study::make_dirs;
using study::self_binary;
using study::utc_stamp;

std::string row_mode(const ContrastStep& s) { return s.label.empty() ? std::string(mode_name(s.mode)) : s.label; }

std::string name_of(const Workload& w) { return std::string(w.name()); }

// The size a row runs: the naive rows a smaller one, the GPU rows their own.
std::string row_size(const ContrastOptions& o, const Workload& w, Mode mode) {
  const auto it = o.sizes.find(name_of(w));
  const ContrastSizes sizes = it == o.sizes.end() ? ContrastSizes{} : it->second;
  if (mode == Mode::naive) return sizes.naive.empty() ? w.contrast_sizing().naive : sizes.naive;
  return mode == Mode::gpu ? sizes.gpu : sizes.cpu;
}

// The workload's arguments of a step, then --json (not --quiet: the step's log holds its table
// and its errors).
std::vector<std::string> workload_args(const ContrastOptions& o, const ContrastStep& step, const std::string& record) {
  const Workload& w = *step.workload;
  std::vector<std::string> a = w.contrast_args(
      {step.mode, step.label, step.ranks, row_size(o, w, step.mode), o.precision, o.reps, o.warmup});
  a.insert(a.end(), {"--json", record});
  return a;
}

// The launcher part of a step: the plan's launcher options, the hosts, the extra arguments.
std::vector<std::string> step_launcher_argv(const LaunchSetup& setup, const PlacementPlan& plan) {
  const LaunchArgs la = launch_args(plan, setup.launcher == "srun" ? Launcher::srun : Launcher::mpirun);
  std::vector<std::string> argv{setup.program};
  argv.insert(argv.end(), la.launcher_args.begin(), la.launcher_args.end());
  const auto hosts = host_args(setup, plan.nodes, plan.ranks_per_node);
  argv.insert(argv.end(), hosts.begin(), hosts.end());
  argv.insert(argv.end(), setup.extra.begin(), setup.extra.end());
  return argv;
}

// The gpu mode's rows of workload `w` (Workload::gpu_rows) and the placement each runs on.
std::vector<std::pair<std::string, PlacementPlan>> gpu_rows(const Workload& w, const PlacementPlan& every_gpu) {
  PlacementPlan one = every_gpu;
  if (one.possible && one.ranks_per_node > 1) {
    one.ranks_per_node = 1;
    one.ranks.resize(1);
  }
  PlacementPlan multi = every_gpu;
  if (multi.possible && multi.total_ranks() < 2) {
    multi.possible = false;
    multi.reason = "one GPU: the gpu row runs on it";
  }
  std::vector<std::pair<std::string, PlacementPlan>> rows;
  for (const GpuRow& row : w.gpu_rows()) {
    const PlacementPlan& plan = row.span == GpuSpan::one     ? one
                                : row.span == GpuSpan::every ? multi
                                : multi.possible             ? multi
                                                             : one;
    rows.emplace_back(row.label, plan);
  }
  return rows;
}

// What every step of a contrast shares: the launch, the binary, the folder.
struct StepContext {
  const LaunchSetup* setup;
  std::string binary, out_dir;
};

// A step of workload `w` on `plan` as row `label` ("" for the mode's own row), or skipped with the
// plan's reason.
ContrastStep make_step(const ContrastOptions& o, const StepContext& ctx, const Workload& w, const PlacementPlan& plan,
                       const std::string& label) {
  ContrastStep s;
  s.workload = &w;
  s.mode = plan.mode;
  s.label = label;
  if (!plan.possible) {
    s.skipped = true;
    s.reason = plan.reason;
    return s;
  }
  const std::string stem = fmt::format("{}-{}", w.name(), row_mode(s));
  s.record_path = ctx.out_dir + "/" + stem + ".json";
  s.log_path = ctx.out_dir + "/" + stem + ".log";
  s.nodes = plan.nodes;
  s.ranks = plan.total_ranks();
  for (const auto& r : plan.ranks) s.cores += plan.nodes * std::max(r.cores, 1);
  const Launcher launcher = ctx.setup->launcher == "srun" ? Launcher::srun : Launcher::mpirun;
  s.argv = step_launcher_argv(*ctx.setup, plan);
  const LaunchArgs la = launch_args(plan, launcher);
  s.argv.push_back(ctx.binary);
  const auto wa = workload_args(o, s, s.record_path);
  s.argv.insert(s.argv.end(), wa.begin(), wa.end());
  s.argv.insert(s.argv.end(), la.program_args.begin(), la.program_args.end());
  return s;
}

// The machine as the allocation gives it: narrowed to the CPUs it grants on each node (the least
// of SLURM_CPUS_ON_NODE, SLURM_JOB_CPUS_PER_NODE and this process's CPU set), never the whole node.
Topology allocation_topology(Topology topo) {
  if (!topo.is_this_machine()) return topo;
  std::vector<int> mine = allowed_cpus();
  const int n = allocation_cpus(std::getenv("SLURM_CPUS_ON_NODE"), std::getenv("SLURM_JOB_CPUS_PER_NODE"),
                                static_cast<int>(mine.size()));
  if (n <= 0 || n >= static_cast<int>(topo.cpus().size())) return topo;
  mine.resize(std::min(mine.size(), static_cast<std::size_t>(n)));
  return topo.restricted_to(mine);
}

// One contrast row from a run record.
nlohmann::json summarize(const ContrastStep& s) {
  const auto& r = s.record;
  nlohmann::json row = {{"workload", name_of(*s.workload)}, {"mode", row_mode(s)}};
  if (r.is_null()) return row;
  const RunFigures f = s.workload->figures(r);
  row["ranks"] = f.ranks;
  row["threads_per_rank"] = f.threads;
  row["gpus"] = s.mode == Mode::gpu ? f.ranks : 0;
  row["time_s"] = f.time_s;
  row["rate"] = f.rate;
  row["compute_rate"] = f.compute_rate;
  row["rate_unit"] = f.rate_unit;
  const double total = f.compute_s + f.comm_s + f.transfer_s;
  row["share"] = {{"compute", total > 0 ? f.compute_s / total : 0.0},
                  {"communication", total > 0 ? f.comm_s / total : 0.0},
                  {"transfer", total > 0 ? f.transfer_s / total : 0.0}};
  row["ok"] = r.value("ok", false);
  row["predicted"] = study::predicted_json(study::predicted_figures(r));
  return row;
}

// Runs one step and reads its record; nothing of it is kept when a stop signal came.
void run_one(const ContrastOptions& o, ContrastStep& s) {
  const StepOutcome out = run_step(s.argv, s.log_path, o.timeout_s);
  if (out.stopped_by != 0) std::remove(s.record_path.c_str());
  throw_if_stopped(
      fmt::format("the {} {} run was stopped; no contrast table was written", s.workload->name(), row_mode(s)));
  // A run killed at its time limit counts as exit code 7 (timeout), as documented.
  s.exit_code = out.timed_out ? static_cast<int>(ExitCode::timeout) : out.exit_code;
  s.timed_out = out.timed_out;
  s.record = nlohmann::json::parse(study::read_run_output(s.record_path, "record"), nullptr, false);
  if (!s.record.is_object()) s.record = nullptr;
  if (out.exit_code != 0) {
    s.launch_failed = !out.timed_out && !has_scalebench_error(s.log_path);
    const std::string why = failure_lines(s.log_path);
    s.reason = out.timed_out   ? fmt::format("timed out after {:.0f} s", o.timeout_s)
               : out.not_found ? fmt::format("could not start {} (see {})", s.argv[0], s.log_path)
               : why.empty()   ? fmt::format("exit code {} (see {})", out.exit_code, s.log_path)
                               : why;
  }
  try {
    s.summary = summarize(s);
  } catch (const nlohmann::json::exception&) {
    s.record = nullptr;  // a record of another shape than a run writes: the row shows no figures
    s.summary = summarize(s);
  }
}

// A step's work for the estimate of the time left (study::run_work): its size over its cores, a
// GPU counted as kGpuCores cores (rough: the estimate is refined by every step that finishes).
constexpr int kGpuCores = 32;
// The naive rows run some hundred times slower per unit of work: they count as none, so that they
// neither feed the estimate nor take part in it.
double step_work(const ContrastOptions& o, const ContrastStep& s) {
  if (s.mode == Mode::naive) return 0.0;
  return study::run_work(name_of(*s.workload), row_size(o, *s.workload, s.mode), o.reps + o.warmup,
                         s.mode == Mode::gpu ? s.ranks * kGpuCores : s.cores);
}

// Runs the steps that are not skipped, in order; returns how many failed.
int run_steps(const ContrastOptions& o, std::vector<ContrastStep>& steps) {
  const auto to_run = std::count_if(steps.begin(), steps.end(), [](const ContrastStep& s) { return !s.skipped; });
  double work_to_come = 0;
  for (const auto& s : steps) work_to_come += s.skipped ? 0.0 : step_work(o, s);
  study::TimeLeft left;
  int failed = 0, ran = 0;
  for (auto& s : steps) {
    if (s.skipped) continue;
    throw_if_stopped("no contrast table was written");
    if (!o.quiet) {
      const std::string eta = left.text(work_to_come);
      std::fprintf(stderr, "scalebench contrast: [%d/%ld]%s %s %s: %s\n", ++ran, static_cast<long>(to_run),
                   eta.empty() ? "" : (" (" + eta + ")").c_str(), name_of(*s.workload).c_str(), row_mode(s).c_str(),
                   join_args(s.argv).c_str());
    }
    const auto start = std::chrono::steady_clock::now();
    run_one(o, s);
    const double work = step_work(o, s);
    left.finished(work, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    work_to_come -= work;
    if (s.exit_code != 0) ++failed;
  }
  return failed;
}

// Sets the sizes left empty from a quick run of the probe's row (contrast_sizing.hpp), aiming at
// `target` seconds a repeat; a GPU probe far below its target runs once more at the scaled size.
// Says so on stderr and returns what it measured, for the report. A probe that fails leaves the
// fallback.
nlohmann::json probe_size(ContrastOptions& o, const StepContext& ctx, const Workload& w, const PlacementPlan& plan,
                          bool gpu, double target) {
  const ContrastSizing sizing = w.contrast_sizing();
  std::string& size = gpu ? o.sizes[name_of(w)].gpu : o.sizes[name_of(w)].cpu;
  double probe = gpu ? sizing.gpu_probe : sizing.cpu_probe;
  nlohmann::json j = {{"target_s", target}, {"probes", nlohmann::json::array()}};
  double t = 0;
  for (int round = 0; round < (gpu ? 2 : 1); ++round) {
    ContrastOptions po = o;
    po.reps = 1;
    po.warmup = 1;
    (gpu ? po.sizes[name_of(w)].gpu : po.sizes[name_of(w)].cpu) = fmt::format("{:.0f}", probe);
    ContrastStep s = make_step(po, ctx, w, plan, "probe-" + std::string(gpu ? "gpu" : mode_name(plan.mode)));
    if (!o.quiet) std::fprintf(stderr, "scalebench contrast: measuring: %s\n", join_args(s.argv).c_str());
    run_one(po, s);
    t = s.exit_code == 0 ? s.summary.value("time_s", 0.0) : 0.0;
    j["probes"].push_back({{"probe", join_args(s.argv)}, {"probe_size", probe}, {"probe_s", t}});
    if (t <= 0) {
      j["failed"] = s.reason;
      break;
    }
    if (t >= target / 2) break;
    const double next = std::stod(w.scaled_size(probe, t, target));
    if (next <= probe) break;
    if (round + 1 < (gpu ? 2 : 1)) probe = next;
  }
  size = t > 0 ? w.scaled_size(probe, t, target) : sizing.fallback;
  j["size"] = size;
  if (!o.quiet) {
    std::fprintf(stderr, "scalebench contrast: %s %s rows: %s %s (%s)\n", name_of(w).c_str(), gpu ? "GPU" : "CPU",
                 std::string(w.size_key()).c_str(), size.c_str(),
                 t > 0 ? fmt::format("the probe took {:.3g} s a repeat; aiming at {:.1f} s a repeat", t, target).c_str()
                       : ("the probe failed: " + j.value("failed", std::string())).c_str());
  }
  return j;
}

// The sizes the options leave open: measured (contrast_sizing.hpp) unless --dry-run; a GPU size
// follows the CPU size when that was given.
nlohmann::json choose_sizes(ContrastOptions& o, const StepContext& ctx, const std::vector<PlacementPlan>& plans) {
  nlohmann::json sizing = nlohmann::json::object();
  const auto plan_of = [&](Mode m) -> const PlacementPlan* {
    for (const auto& p : plans) {
      if (p.mode == m && p.possible) return &p;
    }
    return nullptr;
  };
  for (const Workload* w : o.workloads) {
    std::string& cpu = o.sizes[name_of(*w)].cpu;
    std::string& gpu = o.sizes[name_of(*w)].gpu;
    const bool cpu_given = !cpu.empty();
    nlohmann::json& j = sizing[name_of(*w)];
    if (cpu.empty()) {
      const PlacementPlan* single = plan_of(Mode::single_core);
      const PlacementPlan* all = plan_of(Mode::multi_thread);
      const int cores = all != nullptr && !all->ranks.empty() ? all->ranks.front().cores : 1;
      if (single != nullptr && !o.dry_run) {
        j["cpu"] = probe_size(o, ctx, *w, *single, false, study::single_core_repeat_s(cores));
      } else {
        cpu = w->contrast_sizing().fallback;
      }
    }
    if (gpu.empty()) {
      const PlacementPlan* every = plan_of(Mode::gpu);
      if (every != nullptr && !o.dry_run && !cpu_given) {
        // The fastest row of these sizes runs on every GPU: kFastestRowS for it.
        j["gpu"] = probe_size(o, ctx, *w, gpu_rows(*w, *every).front().second, true,
                              study::kFastestRowS * std::max(1, every->total_ranks()));
      } else {
        gpu = cpu;
      }
    }
  }
  return sizing;
}

// The paths a contrast writes in its folder (contrast.json, contrast.csv, report.html, each row's
// and each probe's record and log), checked by kind before the folder is made or anything runs: a
// folder or FIFO in the place of a log would otherwise be found by the run that writes it.
void check_contrast_paths(
    const std::string& out_dir,
    const std::vector<std::pair<const Workload*, std::pair<std::string, PlacementPlan>>>& planned) {
  if (path_kind(out_dir) != "a folder") return;  // new: check_output_dir checked where it goes
  std::vector<std::string> names = {"contrast.json", "contrast.csv", "report.html", study::kLockFileName};
  for (const auto& [w, row] : planned) {
    const std::string mode = row.first.empty() ? std::string(mode_name(row.second.mode)) : row.first;
    for (const std::string& stem : {fmt::format("{}-{}", w->name(), mode), fmt::format("{}-probe-gpu", w->name()),
                                    fmt::format("{}-probe-{}", w->name(), mode)}) {
      names.push_back(stem + ".json");
      names.push_back(stem + ".log");
    }
  }
  for (const auto& name : names) {
    study::check_own_file(out_dir + "/" + name, name == study::kLockFileName ? "lock file" : name);
  }
}

}  // namespace

const std::vector<std::string>& contrast_row_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (Mode m : all_modes()) {
      out.emplace_back(mode_name(m));
      if (m != Mode::gpu) continue;
      for (const Workload* w : workloads()) {
        for (const GpuRow& row : w->gpu_rows()) {
          if (!row.label.empty() && std::find(out.begin(), out.end(), row.label) == out.end()) out.push_back(row.label);
        }
      }
    }
    return out;
  }();
  return names;
}

Mode contrast_row_mode(const std::string& name) {
  const auto& names = contrast_row_names();
  if (std::find(names.begin(), names.end(), name) == names.end()) {
    std::string all;
    for (const auto& n : names) all += (all.empty() ? "" : ", ") + n;
    throw UsageError(fmt::format("unknown mode '{}'; use {}", name, all));
  }
  for (Mode m : all_modes()) {
    if (name == mode_name(m)) return m;
  }
  return Mode::gpu;  // the gpu mode's own rows
}

ContrastResult run_contrast(const ContrastOptions& o) {
  if (std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMIX_RANK")) {
    throw UsageError("run `scalebench contrast` directly, not under mpirun: it launches each mode itself");
  }
  const StopSignals stop_signals;
  LaunchRequest request;
  request.launcher = o.launcher;
  request.hosts = o.hosts;
  request.hostfile = o.hostfile;
  request.mpirun_args = o.mpirun_args;
  request.srun_args = o.srun_args;
  request.dry_run = o.dry_run;
  const LaunchSetup setup = resolve_launch(request);
  const std::string& launcher = setup.launcher;

  const Topology topo = allocation_topology(Topology::load());
  if (!topo.is_this_machine() && !o.dry_run) {
    throw UsageError("HWLOC_XMLFILE describes another machine: use `scalebench contrast --dry-run` to see its plan, "
                     "or unset HWLOC_XMLFILE to run here");
  }
  PlanOptions plan_opts;
  plan_opts.nodes = setup.nodes;
  const std::vector<Mode> modes = o.modes.empty() ? all_modes() : o.modes;
  std::vector<PlacementPlan> plans;
  for (Mode m : modes) {
    plans.push_back(plan_placement(topo, m, plan_opts));
    if (m == Mode::gpu && !build_with_cuda()) {
      plans.back().possible = false;
      plans.back().reason = "built without CUDA";
    }
    if (o.modes_explicit && !plans.back().possible) {
      throw ResourceError(fmt::format("mode {} cannot run here: {}", mode_name(m), plans.back().reason));
    }
  }

  const std::string binary = o.binary.empty() ? self_binary() : o.binary;
  const std::string out_dir = o.out_dir.empty()
                                  ? fmt::format("results/contrast-{}-{}", utc_stamp(), static_cast<long>(getpid()))
                                  : o.out_dir;
  if (o.json_path) study::check_output_file(*o.json_path, "--json");
  if (o.csv_path) study::check_output_file(*o.csv_path, "--csv");
  if (o.json_path) study::check_not_in_results_folder(*o.json_path, "--json", out_dir);
  if (o.csv_path) study::check_not_in_results_folder(*o.csv_path, "--csv", out_dir);
  if (!o.dry_run) study::check_output_dir(out_dir, "--out-dir");
  if (!o.dry_run && !path_kind(out_dir + "/contrast.json").empty()) {
    throw ResourceError(fmt::format("{} already holds a contrast; earlier results are never overwritten: choose "
                                    "another --out-dir",
                                    out_dir));
  }
  if (!o.dry_run) study::check_folder_is_ours(out_dir, study::DriverKind::contrast, "--out-dir");

  ContrastResult result;
  const StepContext ctx{&setup, binary, out_dir};
  ContrastOptions sized = o;
  if (sized.workloads.empty()) sized.workloads = workloads();
  std::vector<std::pair<const Workload*, std::pair<std::string, PlacementPlan>>> planned;
  for (const Workload* w : sized.workloads) {
    for (const auto& plan : plans) {
      for (auto& row : plan.mode == Mode::gpu ? gpu_rows(*w, plan)
                                              : std::vector<std::pair<std::string, PlacementPlan>>{{"", plan}}) {
        const std::string name = row.first.empty() ? std::string(mode_name(plan.mode)) : row.first;
        const bool asked = std::find(o.rows.begin(), o.rows.end(), name) != o.rows.end();
        if (!o.rows.empty() && !asked) continue;
        if (asked && !row.second.possible) {
          throw ResourceError(fmt::format("mode {} cannot run here: {}", name, row.second.reason));
        }
        planned.emplace_back(w, std::move(row));
      }
    }
  }
  std::optional<study::FolderLock> lock;
  if (!o.dry_run) {
    check_contrast_paths(out_dir, planned);  // every path written or read back, by kind, before any run
    make_dirs(out_dir);
    lock.emplace(out_dir, study::DriverKind::contrast, "--out-dir");
  }
  const nlohmann::json sizing = choose_sizes(sized, ctx, plans);
  for (const auto& [w, row] : planned) result.steps.push_back(make_step(sized, ctx, *w, row.second, row.first));

  if (o.dry_run) {
    std::string out = fmt::format("scalebench contrast --dry-run on {} ({}): nothing is run\n", topo.host(),
                                  topo.source());
    for (const auto& s : result.steps) {
      out += fmt::format("  {:<11} {:<13} ", s.workload->name(), row_mode(s));
      out += s.skipped ? fmt::format("skipped: {}\n", s.reason) : join_args(s.argv) + "\n";
    }
    std::fputs(out.c_str(), stdout);
    return result;
  }

  const int failed = run_steps(sized, result.steps);
  const int to_run = static_cast<int>(
      std::count_if(result.steps.begin(), result.steps.end(), [](const ContrastStep& s) { return !s.skipped; }));
  const auto launch_failed = std::count_if(result.steps.begin(), result.steps.end(),
                                           [](const ContrastStep& s) { return s.launch_failed; });

  // Speed-up over single-core (rate ratio: naive runs a smaller problem), efficiency per core.
  std::map<std::string, double> single_core_rate;
  for (const auto& s : result.steps) {
    if (s.mode == Mode::single_core && s.exit_code == 0) {
      single_core_rate[name_of(*s.workload)] = s.summary.value("rate", 0.0);
    }
  }
  nlohmann::json rows = nlohmann::json::array();
  std::string table = fmt::format("scalebench contrast on {} ({} cores, {} NUMA domain{}, {} GPU{}); results in {}\n",
                                  topo.host(), topo.cores().size(), topo.cpu_numa_domains().size(),
                                  topo.cpu_numa_domains().size() == 1 ? "" : "s", topo.gpus().size(),
                                  topo.gpus().size() == 1 ? "" : "s", out_dir);
  table += fmt::format("{:<11}{:<14}{:>5}  {:<14}{:<13}{:>11}  {:<24}{:>18}{:>10}{:>7}  {:<28}{}\n", "workload", "mode",
                       "nodes", "size", "ranks x thr", "time s", "predicted s, miss", "rate", "speed-up", "eff.",
                       "compute/comm/transfer", "status");
  for (auto& s : result.steps) {
    nlohmann::json row = s.summary.is_null() ? nlohmann::json{{"workload", name_of(*s.workload)}, {"mode", row_mode(s)}}
                                             : s.summary;
    row["size"] = s.workload->size_text(row_size(sized, *s.workload, s.mode));
    row["status"] = s.skipped ? "skipped" : s.exit_code == 0 ? "ok" : s.timed_out ? "timeout" : "failed";
    if (!s.reason.empty()) row["reason"] = s.reason;
    if (!s.skipped) {
      row["nodes"] = s.nodes;
      row["command"] = join_args(s.argv);
      row["record"] = s.record_path;
      row["exit_code"] = s.exit_code;
    }
    const auto base = single_core_rate.find(name_of(*s.workload));
    const double rate = row.value("rate", 0.0);
    if (base != single_core_rate.end() && base->second > 0 && rate > 0 && s.exit_code == 0) {
      row["speedup_vs_single_core"] = rate / base->second;
      const int cores = row.value("ranks", 0) * row.value("threads_per_rank", 0);
      if (s.mode != Mode::gpu && s.mode != Mode::naive && cores > 0) {
        row["parallel_efficiency"] = rate / base->second / cores;
      }
    }
    std::string where = "-";
    if (row.contains("share")) {
      where = fmt::format("{:.0f}% / {:.0f}% / {:.0f}%", 100 * row["share"]["compute"].get<double>(),
                          100 * row["share"]["communication"].get<double>(),
                          100 * row["share"]["transfer"].get<double>());
    }
    const std::string status = row["status"].get<std::string>();
    table += fmt::format(
        "{:<11}{:<14}{:>5}  {:<14}{:<13}{:>11}  {:<24}{:>18}{:>10}{:>7}  {:<28}{}\n",
        row["workload"].get<std::string>(), row["mode"].get<std::string>(),
        row.contains("nodes") ? std::to_string(row["nodes"].get<int>()) : "-", row["size"].get<std::string>(),
        row.contains("ranks")
            ? fmt::format("{}x{}{}", row["ranks"].get<int>(), row["threads_per_rank"].get<int>(),
                          row.value("gpus", 0) > 0 ? fmt::format(" {}GPU", row["gpus"].get<int>()) : "")
            : "-",
        row.contains("time_s") && s.exit_code == 0 ? fmt::format("{:.4f}", row["time_s"].get<double>()) : "-",
        s.exit_code == 0 ? study::predicted_cell(study::predicted_figures(s.record), row.value("time_s", 0.0)) : "-",
        row.contains("rate") && s.exit_code == 0 ? human_rate(rate, row["rate_unit"].get<std::string>()) : "-",
        row.contains("speedup_vs_single_core") ? fmt::format("{:.2f}x", row["speedup_vs_single_core"].get<double>())
                                               : "-",
        row.contains("parallel_efficiency") ? fmt::format("{:.0f}%", 100 * row["parallel_efficiency"].get<double>())
                                            : "-",
        where, status == "ok" ? status : status + ": " + s.reason);
    rows.push_back(row);
  }
  if (std::any_of(result.steps.begin(), result.steps.end(), [](const auto& s) { return s.mode == Mode::naive; })) {
    table += "naive rows run a smaller problem (the size column): compare their rates, not their times\n";
  }
  if (!o.quiet) {
    std::fputs(table.c_str(), stdout);
    std::fflush(stdout);
  }

  result.exit_code = launch_failed > 0 ? static_cast<int>(ExitCode::launch)
                     : failed > 0      ? static_cast<int>(ExitCode::partial)
                                       : 0;
  result.report = {{"schema_version", kSchemaVersion},
                   {"subcommand", "contrast"},
                   {"command_line", command_line()},
                   {"host", topo.host()},
                   {"launcher", launcher},
                   {"nodes", setup.nodes},
                   {"nodes_from", setup.nodes_from},
                   {"sizing", sizing},
                   {"out_dir", out_dir},
                   {"runs", rows},
                   {"ok", failed == 0},
                   {"exit_code", result.exit_code},
                   {"finished_at", utc_now_iso8601()}};
  write_json_atomic(out_dir + "/contrast.json", result.report);
  std::string csv = "workload,mode,nodes,ranks,threads_per_rank,gpus,size,time_s,rate,rate_unit,speedup_vs_single_core,"
                    "parallel_efficiency,compute_share,communication_share,transfer_share,status,reason,predicted_s,"
                    "prediction_miss,worst_phase\n";
  for (const auto& row : rows) {
    auto num = [&](const char* k) { return row.contains(k) ? fmt::format("{}", row[k].get<double>()) : std::string(); };
    auto share = [&](const char* k) {
      return row.contains("share") ? fmt::format("{}", row["share"][k].get<double>()) : std::string();
    };
    const nlohmann::json& pr = row.contains("predicted") ? row["predicted"] : nlohmann::json();
    auto predicted = [&](const char* k) { return pr.is_object() ? pr[k].dump() : std::string(); };
    csv += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
                       row["workload"].get<std::string>(), row["mode"].get<std::string>(), num("nodes"), num("ranks"),
                       num("threads_per_rank"), num("gpus"), csv_escape(row.value("size", std::string())),
                       num("time_s"), num("rate"), row.value("rate_unit", std::string()), num("speedup_vs_single_core"),
                       num("parallel_efficiency"), share("compute"), share("communication"), share("transfer"),
                       row["status"].get<std::string>(), csv_escape(row.value("reason", std::string())),
                       predicted("predicted_s"), predicted("miss"),
                       pr.is_object() ? pr["worst_phase"].get<std::string>() : std::string());
  }
  write_file_atomic(out_dir + "/contrast.csv", csv);
  if (o.json_path) write_json_atomic(*o.json_path, result.report);
  if (o.csv_path) write_file_atomic(*o.csv_path, csv);
  if (o.report && failed < to_run) write_report_after_run(out_dir, o.quiet);
  if (failed > 0) {
    std::fprintf(stderr, "scalebench: error: %d of %d contrast runs failed%s (marked in the table); logs in %s\n",
                 failed, to_run, launch_failed > 0 ? ", some to launch" : "", out_dir.c_str());
  }
  return result;
}

}  // namespace scalebench
