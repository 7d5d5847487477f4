#include "scalebench/contrast.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "scalebench/build_info.hpp"
#include "scalebench/error.hpp"
#include "scalebench/launch.hpp"
#include "scalebench/process.hpp"
#include "scalebench/record.hpp"
#include "scalebench/topology.hpp"
#include "study/files.hpp"
#include "study/prediction_columns.hpp"

namespace scalebench {

std::string_view workload_name(Workload w) { return w == Workload::gemm ? "gemm" : "montecarlo"; }

namespace {

using study::csv_escape;
using study::human_rate;
using study::make_dirs;
using study::self_binary;
using study::utc_stamp;

// The Monte Carlo `gpu-naive` row: the gpu mode's placement running the cuRAND backend (arrays of
// library random numbers, then a kernel and a reduction), beside the fused kernel's `gpu` row.
constexpr const char* kGpuNaive = "gpu-naive";

std::string row_mode(const ContrastStep& s) { return s.label.empty() ? std::string(mode_name(s.mode)) : s.label; }

std::vector<std::string> workload_args(const ContrastOptions& o, const ContrastStep& step, const std::string& record) {
  const Workload w = step.workload;
  const Mode mode = step.mode;
  std::vector<std::string> a;
  const std::string reps = std::to_string(o.reps), warmup = std::to_string(o.warmup);
  if (w == Workload::gemm) {
    const std::string backend = mode == Mode::naive ? "naive" : mode == Mode::gpu ? "cublas" : "openblas";
    a = {"gemm", "--n", mode == Mode::naive ? o.naive_n : o.n, "--precision", o.precision, "--backend", backend,
         "--reps", reps, "--warmup", warmup, "--no-peer"};
  } else {
    const std::string backend = mode == Mode::naive ? "naive"
                                : mode == Mode::gpu ? (step.label == kGpuNaive ? "curand" : "cuda")
                                                    : "cpu";
    a = {"montecarlo", "--problem", "pi", "--samples", mode == Mode::naive ? o.naive_samples : o.samples,
         "--backend", backend, "--reps", reps, "--warmup", warmup};
  }
  // Not --quiet: the step's log holds its table (and its errors).
  a.insert(a.end(), {"--json", record});
  return a;
}

// The problem a step runs: the naive modes run a smaller one.
std::string problem_size(const ContrastOptions& o, Workload w, Mode mode) {
  const bool naive = mode == Mode::naive;
  if (w == Workload::gemm) return "n=" + (naive ? o.naive_n : o.n);
  return (naive ? o.naive_samples : o.samples) + " samples";
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

// The machine as the allocation gives it: narrowed to the CPUs it grants on each node (the least
// of SLURM_CPUS_ON_NODE, SLURM_JOB_CPUS_PER_NODE and this process's CPU set), never the whole node.
Topology allocation_topology(Topology topo) {
  if (!topo.is_this_machine()) return topo;
  std::vector<int> mine = affinity_cpus();
  const int n = allocation_cpus(std::getenv("SLURM_CPUS_ON_NODE"), std::getenv("SLURM_JOB_CPUS_PER_NODE"),
                                static_cast<int>(mine.size()));
  if (n <= 0 || n >= static_cast<int>(topo.cpus().size())) return topo;
  mine.resize(std::min(mine.size(), static_cast<std::size_t>(n)));
  return topo.restricted_to(mine);
}

// One contrast row from a run record.
nlohmann::json summarize(const ContrastStep& s) {
  const auto& r = s.record;
  nlohmann::json row = {{"workload", workload_name(s.workload)}, {"mode", row_mode(s)}};
  if (r.is_null()) return row;
  const study::RunFigures f = study::run_figures(r);
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
  throw_if_stopped(fmt::format("the {} {} run was stopped; no contrast table was written", workload_name(s.workload),
                               row_mode(s)));
  // A run killed at its time limit counts as exit code 7 (timeout), as documented.
  s.exit_code = out.timed_out ? static_cast<int>(ExitCode::timeout) : out.exit_code;
  s.timed_out = out.timed_out;
  if (std::ifstream in(s.record_path); in) {
    try {
      in >> s.record;
    } catch (const std::exception&) {
      s.record = nullptr;
    }
  }
  if (out.exit_code != 0) {
    s.launch_failed = !out.timed_out && !has_scalebench_error(s.log_path);
    const std::string why = failure_lines(s.log_path);
    s.reason = out.timed_out   ? fmt::format("timed out after {:.0f} s", o.timeout_s)
               : out.not_found ? fmt::format("could not start {} (see {})", s.argv[0], s.log_path)
               : why.empty()   ? fmt::format("exit code {} (see {})", out.exit_code, s.log_path)
                               : why;
  }
  s.summary = summarize(s);
}

// Runs the steps that are not skipped, in order; returns how many failed.
int run_steps(const ContrastOptions& o, std::vector<ContrastStep>& steps) {
  const auto to_run = std::count_if(steps.begin(), steps.end(), [](const ContrastStep& s) { return !s.skipped; });
  int failed = 0, ran = 0;
  for (auto& s : steps) {
    if (s.skipped) continue;
    throw_if_stopped("no contrast table was written");
    if (!o.quiet) {
      std::fprintf(stderr, "scalebench contrast: [%d/%ld] %s %s: %s\n", ++ran, static_cast<long>(to_run),
                   std::string(workload_name(s.workload)).c_str(), row_mode(s).c_str(),
                   join_args(s.argv).c_str());
    }
    run_one(o, s);
    if (s.exit_code != 0) ++failed;
  }
  return failed;
}

}  // namespace

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
  const std::string out_dir =
      o.out_dir.empty() ? fmt::format("results/contrast-{}-{}", utc_stamp(), static_cast<long>(getpid())) : o.out_dir;
  if (o.json_path) study::check_output_file(*o.json_path, "--json");
  if (o.csv_path) study::check_output_file(*o.csv_path, "--csv");
  if (!o.dry_run) study::check_output_dir(out_dir, "--out-dir");
  if (!o.dry_run && access((out_dir + "/contrast.json").c_str(), F_OK) == 0) {
    throw ResourceError(fmt::format("{} already holds a contrast; earlier results are never overwritten: choose "
                                    "another --out-dir", out_dir));
  }

  ContrastResult result;
  const auto add_step = [&](Workload w, const PlacementPlan& plan, const std::string& label) {
    ContrastStep s;
    s.workload = w;
    s.mode = plan.mode;
    s.label = label;
    if (!plan.possible) {
      s.skipped = true;
      s.reason = plan.reason;
      result.steps.push_back(std::move(s));
      return;
    }
    const std::string stem = fmt::format("{}-{}", workload_name(w), row_mode(s));
    s.record_path = out_dir + "/" + stem + ".json";
    s.log_path = out_dir + "/" + stem + ".log";
    s.nodes = plan.nodes;
    s.argv = step_launcher_argv(setup, plan);
    const LaunchArgs la = launch_args(plan, setup.launcher == "srun" ? Launcher::srun : Launcher::mpirun);
    s.argv.push_back(binary);
    const auto wa = workload_args(o, s, s.record_path);
    s.argv.insert(s.argv.end(), wa.begin(), wa.end());
    s.argv.insert(s.argv.end(), la.program_args.begin(), la.program_args.end());
    result.steps.push_back(std::move(s));
  };
  for (Workload w : o.workloads) {
    for (const auto& plan : plans) {
      add_step(w, plan, "");
      if (w == Workload::montecarlo && plan.mode == Mode::gpu) add_step(w, plan, kGpuNaive);
    }
  }

  if (o.dry_run) {
    std::string out = fmt::format("scalebench contrast --dry-run on {} ({}): nothing is run\n", topo.host(), topo.source());
    for (const auto& s : result.steps) {
      out += fmt::format("  {:<11} {:<13} ", workload_name(s.workload), row_mode(s));
      out += s.skipped ? fmt::format("skipped: {}\n", s.reason) : join_args(s.argv) + "\n";
    }
    std::fputs(out.c_str(), stdout);
    return result;
  }

  make_dirs(out_dir);
  const int failed = run_steps(o, result.steps);
  const int to_run = static_cast<int>(std::count_if(result.steps.begin(), result.steps.end(),
                                                    [](const ContrastStep& s) { return !s.skipped; }));
  const auto launch_failed = std::count_if(result.steps.begin(), result.steps.end(),
                                           [](const ContrastStep& s) { return s.launch_failed; });

  // Speed-up over single-core (rate ratio: naive runs a smaller problem), efficiency per core.
  std::map<std::string, double> single_core_rate;
  for (const auto& s : result.steps) {
    if (s.mode == Mode::single_core && s.exit_code == 0) {
      single_core_rate[std::string(workload_name(s.workload))] = s.summary.value("rate", 0.0);
    }
  }
  nlohmann::json rows = nlohmann::json::array();
  std::string table = fmt::format("scalebench contrast on {} ({} cores, {} NUMA domain{}, {} GPU{}); results in {}\n",
                                  topo.host(), topo.cores().size(), topo.cpu_numa_domains().size(),
                                  topo.cpu_numa_domains().size() == 1 ? "" : "s", topo.gpus().size(),
                                  topo.gpus().size() == 1 ? "" : "s", out_dir);
  table += fmt::format("{:<11}{:<14}{:>5}  {:<14}{:<13}{:>11}  {:<24}{:>18}{:>10}{:>7}  {:<28}{}\n", "workload",
                       "mode", "nodes", "size", "ranks x thr", "time s", "predicted s, miss", "rate", "speed-up", "eff.",
                       "compute/comm/transfer", "status");
  for (auto& s : result.steps) {
    nlohmann::json row = s.summary.is_null() ? nlohmann::json{{"workload", workload_name(s.workload)},
                                                              {"mode", row_mode(s)}}
                                              : s.summary;
    row["size"] = problem_size(o, s.workload, s.mode);
    row["status"] = s.skipped ? "skipped" : s.exit_code == 0 ? "ok" : s.timed_out ? "timeout" : "failed";
    if (!s.reason.empty()) row["reason"] = s.reason;
    if (!s.skipped) {
      row["nodes"] = s.nodes;
      row["command"] = join_args(s.argv);
      row["record"] = s.record_path;
      row["exit_code"] = s.exit_code;
    }
    const auto base = single_core_rate.find(std::string(workload_name(s.workload)));
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
        "{:<11}{:<14}{:>5}  {:<14}{:<13}{:>11}  {:<24}{:>18}{:>10}{:>7}  {:<28}{}\n", row["workload"].get<std::string>(),
        row["mode"].get<std::string>(), row.contains("nodes") ? std::to_string(row["nodes"].get<int>()) : "-",
        row["size"].get<std::string>(),
        row.contains("ranks") ? fmt::format("{}x{}{}", row["ranks"].get<int>(), row["threads_per_rank"].get<int>(),
                                            row.value("gpus", 0) > 0 ? fmt::format(" {}GPU", row["gpus"].get<int>()) : "")
                              : "-",
        row.contains("time_s") && s.exit_code == 0 ? fmt::format("{:.4f}", row["time_s"].get<double>()) : "-",
        s.exit_code == 0 ? study::predicted_cell(study::predicted_figures(s.record), row.value("time_s", 0.0)) : "-",
        row.contains("rate") && s.exit_code == 0 ? human_rate(rate, row["rate_unit"].get<std::string>()) : "-",
        row.contains("speedup_vs_single_core") ? fmt::format("{:.2f}x", row["speedup_vs_single_core"].get<double>()) : "-",
        row.contains("parallel_efficiency") ? fmt::format("{:.0f}%", 100 * row["parallel_efficiency"].get<double>()) : "-",
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
    csv += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", row["workload"].get<std::string>(),
                       row["mode"].get<std::string>(), num("nodes"), num("ranks"), num("threads_per_rank"), num("gpus"),
                       csv_escape(row.value("size", std::string())), num("time_s"), num("rate"),
                       row.value("rate_unit", std::string()), num("speedup_vs_single_core"), num("parallel_efficiency"),
                       share("compute"), share("communication"), share("transfer"), row["status"].get<std::string>(),
                       csv_escape(row.value("reason", std::string())), predicted("predicted_s"), predicted("miss"),
                       pr.is_object() ? pr["worst_phase"].get<std::string>() : std::string());
  }
  write_file_atomic(out_dir + "/contrast.csv", csv);
  if (o.json_path) write_json_atomic(*o.json_path, result.report);
  if (o.csv_path) write_file_atomic(*o.csv_path, csv);
  if (failed > 0) {
    std::fprintf(stderr, "scalebench: error: %d of %d contrast runs failed%s (marked in the table); logs in %s\n",
                 failed, to_run, launch_failed > 0 ? ", some to launch" : "", out_dir.c_str());
  }
  return result;
}

}  // namespace scalebench
