// A newcomer's contrast shows predictions: with no current profile for this host and build it
// calibrates quickly first, as tools/run does (docs/model.md, "The profile").
#include <cstdio>

#include <fmt/format.h>

#include "contrast/contrast_steps.hpp"
#include "results/files.hpp"
#include "results/results_dir.hpp"
#include "scalebench/workloads/model.hpp"

namespace scalebench::contrast {
namespace {

// A quick calibration's time limit: it takes some 30 s on a 2-core machine.
constexpr double kCalibrateTimeoutS = 600;

// The commands tried in turn: 2 ranks on this host (the MPI figures), then one process.
std::vector<std::vector<std::string>> calibrate_commands(const StepContext& ctx) {
  const std::vector<std::string> calibrate = {ctx.binary, "calibrate", "--quick", "--if-stale"};
  std::vector<std::vector<std::string>> out;
  if (ctx.setup->launcher == "mpirun") {
    std::vector<std::string> two = {ctx.setup->program, "-np", "2", "--oversubscribe"};
    two.insert(two.end(), calibrate.begin(), calibrate.end());
    out.push_back(std::move(two));
  }
  out.push_back(calibrate);
  return out;
}

}  // namespace

nlohmann::json calibrate_first(const ContrastOptions& o, const StepContext& ctx) {
  const ProfileSource source = default_profile_source();
  const std::string why = why_calibrate(source);
  nlohmann::json out = {{"profile", source.path}, {"why", why}};
  if (why.empty()) {
    out["status"] = "current";
    return out;
  }
  // On a cluster (hosts given, or srun) the profile is the user's to make: calibrate there
  // (docs/cluster.md); a profile made on this host alone would say nothing of the links.
  if (!o.calibrate || o.dry_run || !ctx.setup->hosts.empty() || ctx.setup->launcher != "mpirun") {
    out["status"] = "not asked";
    // A profile that is there but stale or unusable is said once: the rows get no prediction from it.
    if (!o.quiet && why != kNoProfile) {
      std::fprintf(stderr,
                   "scalebench contrast: no current profile at %s (%s): the rows carry no prediction; run "
                   "`scalebench calibrate`\n",
                   source.path.c_str(), why.c_str());
    }
    return out;
  }
  const std::string log = ctx.out_dir + "/" + kCalibrateLogName;
  out["log"] = log;
  if (!o.quiet) {
    std::fprintf(stderr, "scalebench contrast: no current profile at %s (%s): calibrating quickly once (%s)\n",
                 source.path.c_str(), why.c_str(), log.c_str());
  }
  results::prepare_step_files("", log);  // written in the folder, never through a link
  for (const auto& argv : calibrate_commands(ctx)) {
    const launch::StepRequest q{argv, "", log, kCalibrateTimeoutS,
                                "the calibration was stopped; no contrast row was run: run the contrast again"};
    const launch::StepResult r = launch::run_one_step(q);
    out["command"] = join_args(argv);
    if (r.exit_code == 0) {
      // Another calibration held the profile's lock (ProfileLock) and made it meanwhile: taken as is.
      const bool made_meanwhile = results::read_run_output(log, "calibrate log").find("; nothing timed") !=
                                  std::string::npos;
      out["status"] = made_meanwhile ? "current" : "calibrated";
      if (made_meanwhile) out["why"] = "made meanwhile by another calibration of this host";
      return out;
    }
    out["reason"] = r.reason;
  }
  out["status"] = "failed";
  if (!o.quiet) {
    // The reason is calibrate's own line: the options it names are calibrate's, so the advice
    // here names only what the contrast offers.
    std::fprintf(stderr,
                 "scalebench contrast: the calibration failed (`scalebench calibrate` said: %s; %s); the rows run "
                 "without predictions: run `scalebench calibrate --quick` to see and fix its cause, set "
                 "SCALEBENCH_PROFILE to a profile, or give --no-calibrate\n",
                 out.value("reason", std::string()).c_str(), log.c_str());
  }
  return out;
}

}  // namespace scalebench::contrast
