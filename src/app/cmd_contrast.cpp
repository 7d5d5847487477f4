// `scalebench contrast`: the main job — every execution mode side by side.
#include <algorithm>
#include <sstream>
#include <utility>

#include <fmt/format.h>

#include "commands.hpp"
#include "run_support.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/base/parse.hpp"
#include "scalebench/drivers/contrast.hpp"
#include "scalebench/workloads/workload.hpp"

namespace scalebench::app {
namespace {

struct ContrastCli {
  std::string workload = "both";
  std::string modes;
  std::string json, csv;
  std::string mpirun_args, srun_args;
  ContrastOptions o;
};

// "--mpi=pmix --exclusive": launcher arguments, split at white space.
std::vector<std::string> split_words(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string w; ss >> w;) out.push_back(w);
  return out;
}

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

// The sizes given to the workload's contrast options: positive counts (UsageError otherwise).
void check_sizes(const Workload& w, const ContrastSizes& sizes) {
  const ContrastSizing sizing = w.contrast_sizing();
  for (const auto& [option, value] : {std::pair{&sizing.cpu_option, &sizes.cpu},
                                      {&sizing.gpu_option, &sizes.gpu},
                                      {&sizing.naive_option, &sizes.naive}}) {
    if (!value->empty()) parse_positive_count(option->name, *value);
  }
}

// The workload's contrast options: its sizes, and --precision when it has one.
void add_workload_options(CLI::App* app, const Workload& w, ContrastOptions& o) {
  const ContrastSizing sizing = w.contrast_sizing();
  ContrastSizes& sizes = o.sizes[std::string(w.name())];
  app->add_option(sizing.cpu_option.name, sizes.cpu, sizing.cpu_option.help);
  app->add_option(sizing.gpu_option.name, sizes.gpu, sizing.gpu_option.help);
  app->add_option(sizing.naive_option.name, sizes.naive, sizing.naive_option.help);
  if (!sizing.precision_help.empty()) app->add_option("--precision", o.precision, sizing.precision_help);
}

int run(const ContrastCli& c) {
  return run_reporting([&] {
    ContrastOptions o = c.o;
    if (c.workload != "both" && c.workload != "all") {
      for (const auto& name : split_list(c.workload)) {
        const Workload* w = find_workload(name);
        if (w == nullptr) {
          throw UsageError(fmt::format("unknown --workload '{}'; use {}, a comma-separated list of them, or both", name,
                                       workload_names()));
        }
        if (std::find(o.workloads.begin(), o.workloads.end(), w) == o.workloads.end()) o.workloads.push_back(w);
      }
      if (o.workloads.empty()) throw UsageError(fmt::format("--workload is empty; use {} or both", workload_names()));
    }
    for (const auto& m : split_list(c.modes)) {
      const Mode mode = contrast_row_mode(m);
      if (std::find(o.modes.begin(), o.modes.end(), mode) == o.modes.end()) o.modes.push_back(mode);
      o.rows.push_back(m);
    }
    o.modes_explicit = !o.modes.empty();
    for (const Workload* w : workloads()) check_sizes(*w, o.sizes[std::string(w->name())]);
    if (o.reps < 1) throw UsageError(fmt::format("--reps must be >= 1 (got {})", o.reps));
    if (o.warmup < 0) throw UsageError(fmt::format("--warmup must be >= 0 (got {})", o.warmup));
    if (!(o.timeout_s > 0)) throw UsageError("--timeout must be > 0 seconds");
    o.mpirun_args = split_words(c.mpirun_args);
    o.srun_args = split_words(c.srun_args);
    if (!c.json.empty()) o.json_path = c.json;
    if (!c.csv.empty()) o.csv_path = c.csv;
    return run_contrast(o).exit_code;
  });
}

}  // namespace

Subcommand register_contrast(CLI::App& root) {
  auto c = std::make_shared<ContrastCli>();
  auto* app = root.add_subcommand(
      "contrast",
      "Run the workloads in every execution mode this machine or allocation can do (naive, single-core, "
      "multi-thread, numa, gpu, multinode), each as its own mpirun/srun step, and show them side by side. SIGINT, "
      "SIGTERM or SIGHUP stop the running step too (waited for) and exit 128+signal: 130, 143, 129");
  app->add_option("--workload", c->workload,
                  fmt::format("{}, a comma-separated list of them, or both (every workload) [both]",
                              workload_names(" | ")));
  app->add_option("--modes", c->modes,
                  "Comma-separated rows to run (naive,single-core,multi-thread,numa,gpu,gpu-naive,multi-gpu,"
                  "gpu-staged,multinode); a row this machine cannot do is then an error [every row; those not "
                  "possible are skipped with the reason]");
  for (const Workload* w : workloads()) add_workload_options(app, *w, c->o);
  app->add_option("--reps", c->o.reps, "Timed repeats per run [3]");
  app->add_option("--warmup", c->o.warmup, "Warm-up repeats per run [1]");
  app->add_option("--timeout", c->o.timeout_s, "Seconds one run may take before it is killed [900]");
  app->add_option(
      "--out-dir", c->o.out_dir,
      "Folder for the runs' records and logs; must not hold earlier results [results/contrast-<UTC>-<pid>]");
  app->add_option("--json", c->json, "Also write the whole contrast as JSON to this file");
  app->add_option("--csv", c->csv, "Also write the contrast table as CSV to this file");
  app->add_option("--launcher", c->o.launcher,
                  "auto (srun inside a Slurm allocation, else mpirun) | mpirun | srun [auto]");
  app->add_option("--hosts", c->o.hosts,
                  "mpirun's hosts, comma-separated, each optionally host:slots: the multinode mode runs on all of "
                  "them, the other modes on the first");
  app->add_option("--hostfile", c->o.hostfile, "mpirun's hosts as an Open MPI hostfile (one 'host [slots=N]' a line)");
  app->add_option("--mpirun-args", c->mpirun_args,
                  "Extra mpirun arguments for every step, one string: --mpirun-args='--mca pml ucx'");
  app->add_option("--srun-args", c->srun_args,
                  "Extra srun arguments for every step, one string: --srun-args='--mpi=pmix --exclusive' [--mpi= "
                  "from SLURM_MPI_TYPE, else pmix when srun offers it]");
  app->add_flag("--dry-run", c->o.dry_run, "Print the plan and the launch command of every mode; run nothing");
  app->add_flag("--quiet", c->o.quiet, "No table, no progress lines");
  app->add_flag(
      "--no-report", [c](std::int64_t) { c->o.report = false; },
      "Do not write report.html in the out-dir at the end (scalebench report DIR writes it later)");
  return {app, [c] { return run(*c); }};
}

}  // namespace scalebench::app
