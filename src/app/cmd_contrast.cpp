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
  ContrastSizes gemm, montecarlo;  // --n, --gpu-n, --naive-n; --samples, --gpu-samples, --naive-samples
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

int run(ContrastCli& c) {
  try {
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
    for (const auto& [name, value] : {std::pair<const char*, const std::string*>{"--n", &c.gemm.cpu},
                                      {"--gpu-n", &c.gemm.gpu},
                                      {"--naive-n", &c.gemm.naive},
                                      {"--samples", &c.montecarlo.cpu},
                                      {"--gpu-samples", &c.montecarlo.gpu},
                                      {"--naive-samples", &c.montecarlo.naive}}) {
      if (!value->empty()) parse_positive_count(name, *value);
    }
    o.sizes["gemm"] = c.gemm;
    o.sizes["montecarlo"] = c.montecarlo;
    if (o.reps < 1) throw UsageError(fmt::format("--reps must be >= 1 (got {})", o.reps));
    if (o.warmup < 0) throw UsageError(fmt::format("--warmup must be >= 0 (got {})", o.warmup));
    if (!(o.timeout_s > 0)) throw UsageError("--timeout must be > 0 seconds");
    o.mpirun_args = split_words(c.mpirun_args);
    o.srun_args = split_words(c.srun_args);
    if (!c.json.empty()) o.json_path = c.json;
    if (!c.csv.empty()) o.csv_path = c.csv;
    return run_contrast(o).exit_code;
  } catch (const Error& e) {
    print_error(e.what());
    return static_cast<int>(e.code());
  } catch (const std::exception& e) {
    print_error(fmt::format("internal error: {}; please report it", e.what()));
    return static_cast<int>(ExitCode::internal);
  }
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
  app->add_option(
      "--n", c->gemm.cpu,
      "GEMM size of the CPU rows [measured: single-core takes about 0.5 s x cores a repeat (6..15 s), from a quick "
      "n=512 run]");
  app->add_option("--gpu-n", c->gemm.gpu,
                  "GEMM size of the GPU rows [--n when given, else measured: the fastest GPU row takes about 0.5 s "
                  "a repeat, from a quick n=4096 run on one GPU]");
  app->add_option("--naive-n", c->gemm.naive, "GEMM size for the naive triple loop (about 1 GFLOP/s: ~0.9 s) [768]");
  app->add_option("--precision", c->o.precision, "GEMM precision fp64 | fp32 [fp64]");
  app->add_option(
      "--samples", c->montecarlo.cpu,
      "Monte Carlo pi samples of the CPU rows [measured: single-core takes about 0.5 s x cores a repeat (6..15 s)]");
  app->add_option("--gpu-samples", c->montecarlo.gpu,
                  "Monte Carlo pi samples of the GPU rows [--samples when given, else measured: the fastest GPU row "
                  "takes about 0.5 s a repeat]");
  app->add_option("--naive-samples", c->montecarlo.naive, "Samples for the naive Monte Carlo (~0.6 s) [5e7]");
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
  Subcommand sub;
  sub.app = app;
  sub.run = [c]() { return run(*c); };
  return sub;
}

}  // namespace scalebench::app
