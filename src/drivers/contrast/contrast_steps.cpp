// The contrast's rows planned into steps: each workload in each mode (and the gpu mode's own rows),
// placed, sized and given its launch command and its key in the results store.
#include <algorithm>
#include <cstdlib>
#include <memory>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "contrast/contrast_steps.hpp"
#include "results/results_dir.hpp"
#include "scalebench/base/build_info.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/base/host.hpp"
#include "scalebench/base/input_file.hpp"
#include "scalebench/workloads/command.hpp"

namespace scalebench::contrast {
namespace {

// The workload's arguments of a step, then --json (not --quiet: the step's log holds its table
// and its errors).
std::vector<std::string> workload_args(const ContrastOptions& o, const ContrastStep& step, const std::string& record) {
  const Workload& w = *step.workload;
  std::vector<std::string> a = w.contrast_args(
      {step.mode, step.label, step.on_gpus, step.ranks, row_size(o, step), o.precision, o.reps, o.warmup, o.peer});
  a.insert(a.end(), {"--json", record});
  return a;
}

Launcher launcher_of(const StepContext& ctx) {
  return ctx.setup->launcher == "srun" ? Launcher::srun : Launcher::mpirun;
}

// What the step's scalebench parses: the workload's arguments (subcommand first), --json, then the
// placement's own (--pin, --threads).
std::vector<std::string> program_args(const ContrastOptions& o, const ContrastStep& s, const LaunchArgs& la) {
  std::vector<std::string> a = workload_args(o, s, s.record_path);
  a.insert(a.end(), la.program_args.begin(), la.program_args.end());
  return a;
}

UsageError refused_row(const ContrastStep& s, const std::vector<std::string>& args, const std::string& why) {
  return UsageError(fmt::format("the {} {} row would run `{}`, which {} refuses: {}; give the contrast options every "
                                "row takes, or leave this row out with --modes",
                                s.workload->name(), row_mode(s), join_args(args), s.workload->name(), why));
}

// `args` parsed and configured by the workload's own subcommand, as the step's ranks would before
// MPI_Init (command.hpp: no machine needed); UsageError naming the row when it refuses them.
void check_row_args(const ContrastStep& s, const std::vector<std::string>& args) {
  CLI::App parser;
  const std::shared_ptr<WorkloadCommand> command = s.workload->add_command(parser);
  std::vector<std::string> reversed(args.rbegin(), args.rend() - 1);  // CLI11: reversed; less the subcommand
  try {
    parser.parse(reversed);
    refuse_empty_values(parser);
    command->configure();
  } catch (const CLI::ParseError& e) {
    throw refused_row(s, args, e.what());
  } catch (const UsageError& e) {
    throw refused_row(s, args, e.what());
  }
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

}  // namespace

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

std::string row_mode(const ContrastStep& s) { return s.label.empty() ? std::string(mode_name(s.mode)) : s.label; }

std::string name_of(const Workload& w) { return std::string(w.name()); }

// The size a row runs: the naive rows a smaller one, the rows on GPUs their own.
std::string row_size(const ContrastOptions& o, const ContrastStep& s) {
  const Workload& w = *s.workload;
  const auto it = o.sizes.find(name_of(w));
  const ContrastSizes sizes = it == o.sizes.end() ? ContrastSizes{} : it->second;
  if (s.mode == Mode::naive) return sizes.naive.empty() ? w.contrast_sizing().naive : sizes.naive;
  return s.on_gpus ? sizes.gpu : sizes.cpu;
}

// A step of workload `w` on `plan` as row `label` ("" for the mode's own row), or skipped with the
// plan's reason.
ContrastStep make_step(const ContrastOptions& o, const StepContext& ctx, const Workload& w, const PlacementPlan& plan,
                       const std::string& label) {
  ContrastStep s;
  s.workload = &w;
  s.mode = plan.mode;
  s.label = label;
  s.on_gpus = plan.mode == Mode::gpu || (plan.mode == Mode::multinode && plan.layout == Mode::gpu);
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
  s.argv = step_launcher_argv(*ctx.setup, plan);
  s.argv.push_back(ctx.binary);
  const auto args = program_args(o, s, launch_args(plan, launcher_of(ctx)));
  s.argv.insert(s.argv.end(), args.begin(), args.end());
  return s;
}

void check_rows(const ContrastOptions& o, const StepContext& ctx, const std::vector<PlacementPlan>& plans,
                const std::vector<PlannedRow>& planned) {
  ContrastOptions sized = o;
  sized.dry_run = true;  // the sizes left open at their --dry-run values: nothing is measured
  (void)choose_sizes(sized, ctx, plans, nlohmann::json::object());
  for (const auto& [w, label, plan] : planned) {
    const ContrastStep s = make_step(sized, ctx, *w, plan, label);
    if (!s.skipped) check_row_args(s, program_args(sized, s, launch_args(plan, launcher_of(ctx))));
  }
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

std::vector<PlacementPlan> plan_modes(const ContrastOptions& o, const Topology& topo, int nodes) {
  PlanOptions plan_opts;
  plan_opts.nodes = nodes;
  plan_opts.gpus_usable = build_with_cuda();  // else the multinode row runs on the nodes' CPUs
  std::vector<PlacementPlan> plans;
  for (Mode m : o.modes.empty() ? all_modes() : o.modes) {
    plans.push_back(plan_placement(topo, m, plan_opts));
    if (m == Mode::gpu && !build_with_cuda()) {
      plans.back().possible = false;
      plans.back().reason = "built without CUDA";
    }
    if (o.modes_explicit && !plans.back().possible) {
      throw ResourceError(fmt::format("mode {} cannot run here: {}", mode_name(m), plans.back().reason));
    }
  }
  return plans;
}

std::vector<PlannedRow> plan_rows(const ContrastOptions& o, const std::vector<PlacementPlan>& plans) {
  std::vector<PlannedRow> planned;
  for (const Workload* w : o.workloads) {
    for (const auto& plan : plans) {
      for (auto& row : plan.mode == Mode::gpu ? gpu_rows(*w, plan)
                                              : std::vector<std::pair<std::string, PlacementPlan>>{{"", plan}}) {
        const std::string name = row.first.empty() ? std::string(mode_name(plan.mode)) : row.first;
        const bool asked = std::find(o.rows.begin(), o.rows.end(), name) != o.rows.end();
        if (!o.rows.empty() && !asked) continue;
        if (asked && !row.second.possible) {
          throw ResourceError(fmt::format("mode {} cannot run here: {}", name, row.second.reason));
        }
        planned.push_back({w, row.first, std::move(row.second)});
      }
    }
  }
  return planned;
}

std::string step_key(const ContrastOptions& o, const ContrastStep& s) {
  return fmt::format("{} {} {}={} precision={} reps={} warmup={} nodes={} ranks={}", name_of(*s.workload), row_mode(s),
                     s.workload->size_key(), row_size(o, s), o.precision, o.reps, o.warmup, s.nodes, s.ranks) +
         (o.peer.empty() ? "" : " peer=" + o.peer);
}

// The paths a contrast writes in its folder (contrast.json, contrast.csv, contrast-plan.json,
// runs.jsonl, report.html, each row's and each probe's record and log), checked by kind before the
// folder is made or anything runs: a folder or FIFO in the place of a log would otherwise be found
// by the run that writes it.
void check_contrast_paths(const std::string& out_dir, const std::vector<PlannedRow>& planned) {
  if (path_kind(out_dir) != "a folder") return;  // new: check_output_dir checked where it goes
  check_input_file(out_dir + "/runs.jsonl", std::string("the contrast's runs.jsonl"));
  std::vector<std::string> names = {"contrast.json", "contrast.csv",         "report.html",    "runs.jsonl",
                                    kPlanFileName,   results::kLockFileName, kCalibrateLogName};
  for (const auto& [w, label, plan] : planned) {
    const std::string mode = label.empty() ? std::string(mode_name(plan.mode)) : label;
    for (const std::string& stem : {fmt::format("{}-{}", w->name(), mode), fmt::format("{}-probe-gpu", w->name()),
                                    fmt::format("{}-probe-{}", w->name(), mode)}) {
      names.push_back(stem + ".json");
      names.push_back(stem + ".log");
    }
  }
  for (const auto& name : names) {
    results::check_own_file(out_dir + "/" + name, name == results::kLockFileName ? "lock file" : name);
  }
}

}  // namespace scalebench::contrast

namespace scalebench {

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

}  // namespace scalebench
