// `scalebench contrast`: the main job — every execution mode side by side.
#include <algorithm>
#include <cmath>
#include <sstream>
#include <utility>

#include <fmt/format.h>

#include "commands.hpp"
#include "run_support.hpp"
#include "scalebench/base/checked_size.hpp"
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
  // Numbers kept as given and parsed as every workload's (parse.hpp: decimal, no hex, ranges checked).
  std::string reps = "3", warmup = "1", timeout = "900";
  ContrastOptions o;
  // The options whose value may not be empty when given (a list or a path).
  std::vector<std::pair<const CLI::Option*, const std::string*>> nonempty;
};

// An option given with an empty value ("--out-dir ''", "--modes ''") is refused: it would silently
// mean the default.
void refuse_empty(const ContrastCli& c) {
  for (const auto& [option, value] : c.nonempty) {
    if (option->count() > 0 && value->empty()) {
      throw UsageError(fmt::format("{} is empty; give a value", option->get_name()));
    }
  }
}

// "--mpi=pmix --exclusive": launcher arguments, split at white space.
std::vector<std::string> split_words(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string w; ss >> w;) out.push_back(w);
  return out;
}

// "a,b": the items of a comma-separated list given to `option`. An empty item ("a,,b", "a,", ",")
// is refused: an empty list would silently mean "every one".
std::vector<std::string> split_list(const std::string& s, const char* option, const char* example) {
  std::vector<std::string> out;
  for (std::size_t start = 0;;) {
    const std::size_t comma = s.find(',', start);
    out.push_back(s.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (out.back().empty()) {
      throw UsageError(
          fmt::format("{} '{}' has an empty item; give a comma-separated list, e.g. {}", option, s, example));
    }
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
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
void add_workload_options(CLI::App* app, const Workload& w, ContrastCli& c) {
  const ContrastSizing sizing = w.contrast_sizing();
  ContrastSizes& sizes = c.o.sizes[std::string(w.name())];
  c.nonempty.emplace_back(app->add_option(sizing.cpu_option.name, sizes.cpu, sizing.cpu_option.help), &sizes.cpu);
  c.nonempty.emplace_back(app->add_option(sizing.gpu_option.name, sizes.gpu, sizing.gpu_option.help), &sizes.gpu);
  c.nonempty.emplace_back(app->add_option(sizing.naive_option.name, sizes.naive, sizing.naive_option.help),
                          &sizes.naive);
  if (!sizing.precision_help.empty() && app->get_option_no_throw("--precision") == nullptr) {
    c.nonempty.emplace_back(app->add_option("--precision", c.o.precision, sizing.precision_help), &c.o.precision);
  }
}

int run(const ContrastCli& c) {
  return run_reporting([&] {
    refuse_empty(c);
    ContrastOptions o = c.o;
    if (o.peer == "none") o.peer.clear();
    if (c.workload != "both" && c.workload != "all") {
      for (const auto& name : split_list(c.workload, "--workload", "gemm,montecarlo")) {
        const Workload* w = find_workload(name);
        if (w == nullptr) {
          throw UsageError(fmt::format("unknown --workload '{}'; use {}, a comma-separated list of them, or both", name,
                                       workload_names()));
        }
        if (std::find(o.workloads.begin(), o.workloads.end(), w) == o.workloads.end()) o.workloads.push_back(w);
      }
      if (o.workloads.empty()) throw UsageError(fmt::format("--workload is empty; use {} or both", workload_names()));
    }
    for (const auto& m :
         c.modes.empty() ? std::vector<std::string>{} : split_list(c.modes, "--modes", "single-core,multi-thread")) {
      const Mode mode = contrast_row_mode(m);
      if (std::find(o.modes.begin(), o.modes.end(), mode) == o.modes.end()) o.modes.push_back(mode);
      o.rows.push_back(m);
    }
    o.modes_explicit = !o.modes.empty();
    for (const Workload* w : workloads()) check_sizes(*w, o.sizes[std::string(w->name())]);
    o.reps = static_cast<int>(parse_integer("--reps", c.reps, 1, kMaxRepeats));
    o.warmup = static_cast<int>(parse_integer("--warmup", c.warmup, 0, kMaxRepeats));
    check_repeats(o.reps, o.warmup);  // every row runs them: reps + warmup within one run's limit
    o.timeout_s = parse_real("--timeout", c.timeout);
    if (!(o.timeout_s > 0 && std::isfinite(o.timeout_s))) {
      throw UsageError(fmt::format("--timeout must be a finite number of seconds > 0 (got {})", o.timeout_s));
    }
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
  auto* workload = app->add_option("--workload", c->workload,
                                   fmt::format("{}, a comma-separated list of them, or both (every workload) [both]",
                                               workload_names(" | ")));
  auto* modes =
      app->add_option("--modes", c->modes,
                      "Comma-separated rows to run (naive,single-core,multi-thread,numa,gpu,gpu-naive,multi-gpu,"
                      "gpu-staged,multinode); a row this machine cannot do is then an error [every row; those not "
                      "possible are skipped with the reason]");
  for (const Workload* w : workloads()) add_workload_options(app, *w, *c);
  app->add_option("--peer", c->o.peer,
                  "scalapack: the gemm rows on the CPU also time ScaLAPACK's PDGEMM on their ranks (gemm --peer; "
                  "the run/peer column) | none [none]")
      ->check([](const std::string& v) {
        return v == "scalapack" || v == "none" ? std::string() : "unknown --peer '" + v + "'; use scalapack or none";
      });
  auto* reps = app->add_option("--reps", c->reps, "Timed repeats per run, 1 to 2^30 with --warmup [3]");
  auto* warmup = app->add_option("--warmup", c->warmup, "Warm-up repeats per run, 0 to 2^30 with --reps [1]");
  auto* timeout = app->add_option("--timeout", c->timeout, "Seconds one run may take before it is killed [900]");
  auto* out_dir = app->add_option("--out-dir", c->o.out_dir,
                                  "Folder for the runs' records and logs; must not hold earlier results (a study's, a "
                                  "finished contrast's or other files); one contrast at a time (a lock file in it) "
                                  "[results/contrast-<UTC>-<pid>]");
  auto* json = app->add_option("--json", c->json, "Also write the whole contrast as JSON to this file");
  auto* csv = app->add_option("--csv", c->csv, "Also write the contrast table as CSV to this file");
  app->add_option("--launcher", c->o.launcher,
                  "auto (srun inside a Slurm allocation, else mpirun) | mpirun | srun [auto]");
  auto* hosts =
      app->add_option("--hosts", c->o.hosts,
                      "mpirun's hosts, comma-separated, each optionally host:slots: the multinode mode runs on all of "
                      "them, the other modes on the first");
  auto* hostfile = app->add_option("--hostfile", c->o.hostfile,
                                   "mpirun's hosts as an Open MPI hostfile (one 'host [slots=N]' a line)");
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
  app->add_flag(
      "--no-calibrate", [c](std::int64_t) { c->o.calibrate = false; },
      "Without a current profile for this host and build (SCALEBENCH_PROFILE, else the default place), do not run "
      "`calibrate --quick` on this host first: the rows then carry no predictions");
  c->nonempty.insert(c->nonempty.end(), {{workload, &c->workload},
                                         {modes, &c->modes},
                                         {out_dir, &c->o.out_dir},
                                         {json, &c->json},
                                         {csv, &c->csv},
                                         {hosts, &c->o.hosts},
                                         {hostfile, &c->o.hostfile},
                                         {reps, &c->reps},
                                         {warmup, &c->warmup},
                                         {timeout, &c->timeout}});
  return {app, [c] { return run(*c); }};
}

}  // namespace scalebench::app
