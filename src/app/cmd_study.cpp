// `scalebench study FILE`: a scaling study from a study file (jobs/*.yaml).
#include <cmath>

#include <fmt/format.h>

#include "commands.hpp"
#include "run_support.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/drivers/study.hpp"

namespace scalebench::app {
namespace {

// An option given with an empty value ("--out-dir ''") is refused: it would silently mean the default.
void refuse_empty(const CLI::Option* option, const std::string& value, const char* give) {
  if (option->count() > 0 && value.empty()) {
    throw UsageError(fmt::format("{} is empty; give {}", option->get_name(), give));
  }
}

}  // namespace

Subcommand register_study(CLI::App& root) {
  auto o = std::make_shared<StudyOptions>();
  auto* app = root.add_subcommand(
      "study",
      "Run a scaling study from a study file (jobs/*.yaml): one run per point of its sweep, each launched as "
      "its own mpirun/srun step, appended to results/<study>/runs.jsonl as it finishes (a rerun skips the "
      "runs already there), summarised as speed-up and efficiency (summary.md, .csv, .json). SIGINT, SIGTERM or "
      "SIGHUP stop the running step too (waited for, not recorded) and exit 128+signal: 130, 143, 129");
  app->add_option("file", o->file, "The study file, e.g. jobs/strong-scaling-cpu.yaml")->required();
  auto* out_dir = app->add_option("--out-dir", o->out_dir,
                                  "Folder of the study's results, one study driver at a time (a lock file in it); "
                                  "never a contrast's or another non-empty folder [results/<study name>]");
  app->add_option("--launcher", o->launcher,
                  "auto (srun inside a Slurm allocation, else mpirun) | mpirun | srun [auto]");
  auto* hosts = app->add_option(
      "--hosts", o->hosts,
      "mpirun's hosts, comma-separated, each optionally host:slots; overrides the file's hosts/hostfile");
  auto* hostfile = app->add_option("--hostfile", o->hostfile,
                                   "mpirun's Open MPI hostfile; overrides the file's hosts/hostfile");
  auto* timeout = app->add_option("--timeout", o->timeout_s,
                                  "Seconds one run may take before it is killed [the file's timeout_s, 900]");
  app->add_flag("--rerun", o->rerun,
                "Run again the runs already in runs.jsonl (appended beside the earlier ones, never replacing them)");
  app->add_flag("--dry-run", o->dry_run, "Print every run's command and whether it is done; run nothing");
  app->add_flag("--quiet", o->quiet, "No table, no progress lines");
  app->add_flag(
      "--no-report", [o](std::int64_t) { o->report = false; },
      "Do not write report.html at the end (scalebench report DIR writes it later)");
  auto predict = std::make_shared<std::pair<bool, std::string>>();
  app->add_flag("--predict", predict->first,
                "Print the study's table as the machine profile predicts it (docs/model.md); run nothing");
  auto* profile = app->add_option("--profile", predict->second,
                                  "With --predict: the machine profile [SCALEBENCH_PROFILE, else the "
                                  "default place]");
  return {app, [o, predict, out_dir, hosts, hostfile, profile, timeout] {
            if (predict->first) {
              return run_reporting([&] {
                refuse_empty(profile, predict->second, "a profile file");
                return print_study_prediction(o->file, predict->second);
              });
            }
            return run_reporting([&] {
              if (timeout->count() > 0 && !(o->timeout_s > 0 && std::isfinite(o->timeout_s))) {
                throw UsageError(
                    fmt::format("--timeout must be a finite number of seconds > 0 (got {})", o->timeout_s));
              }
              // Given but empty is an error, never the default (nor, for the hosts, this host alone).
              refuse_empty(out_dir, o->out_dir, "a folder");
              refuse_empty(hosts, o->hosts, "a comma-separated list of hosts, e.g. node1,node2");
              refuse_empty(hostfile, o->hostfile, "a hostfile");
              return run_study(*o).exit_code;
            });
          }};
}

}  // namespace scalebench::app
