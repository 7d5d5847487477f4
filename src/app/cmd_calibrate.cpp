// `scalebench calibrate`: times this machine (or every rank of an allocation) and writes the
// machine profile the model predicts from (docs/model.md).
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>

#include <fmt/format.h>

#include "commands.hpp"
#include "run_support.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/base/output_file.hpp"
#include "scalebench/mpi/mpi.hpp"
#include "scalebench/workloads/model.hpp"
#include "scalebench/workloads/profile_lock.hpp"

namespace scalebench::app {
namespace {

struct CalibrateCliOptions {
  bool quick = false, quiet = false, if_stale = false, no_check = false;
  std::optional<std::string> out;  // set when --out was given (even empty)
};

// Where the profile goes and the name of what chose it: --out, SCALEBENCH_PROFILE or the default
// place. An empty --out is refused (it once wrote the default profile silently).
ProfileSource output_of(const CalibrateCliOptions& o) {
  if (o.out) {
    if (o.out->empty()) throw UsageError("--out is empty; give the profile file to write, or drop --out");
    return {*o.out, "--out"};
  }
  return default_profile_source();
}

// The default place's folder is made on demand; a path given with --out or SCALEBENCH_PROFILE
// must already have one.
void prepare_output(const ProfileSource& out) {
  if (out.origin == kDefaultProfileOrigin) {
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(out.path).parent_path(), ec);
    if (ec) {
      throw ResourceError(fmt::format("cannot create the folder of {} ({}); pass --out FILE", out.path, ec.message()));
    }
  }
  check_output_path(out.path, out.origin);
}

int run_calibrate(const CalibrateCliOptions& o) {
  return run_mpi_command(
      main_argc(), main_argv(), [&] { (void)output_of(o); },
      [&](const Communicator& comm) {
        const ProfileSource out = output_of(o);
        const std::string& path = out.path;
        agree(comm, [&] {
          if (comm.is_root()) prepare_output(out);
        });
        // Held until the profile is written: a calibration started meanwhile waits, then finds it current.
        const ProfileLock lock(comm, path, o.quiet);
        if (o.if_stale) {
          const std::string why = comm.bcast_string(comm.is_root() ? why_calibrate(out) : "", 0);
          if (why.empty()) {
            if (comm.is_root() && !o.quiet) {
              std::printf("calibrate: profile %s is current for this host and build; nothing timed\n", path.c_str());
            }
            return 0;
          }
          if (comm.is_root() && !o.quiet)
            std::printf("calibrate: profile %s: %s; calibrating\n", path.c_str(), why.c_str());
        }
        const double t0 = wall_seconds();
        const Profile p = calibrate_machine(comm, {o.quick, o.quiet, !o.no_check});
        if (comm.is_root()) {
          // What is written must read back: a figure the model refuses (a zero or infinite rate
          // from a timer's glitch) fails the calibration instead of leaving an unusable profile.
          const nlohmann::json j = to_json(p);
          try {
            (void)profile_from_json(j, path);
          } catch (const UsageError& e) {
            throw RuntimeLibraryError(fmt::format("calibration measured an unusable figure ({}); nothing was written; "
                                                  "run `scalebench calibrate` again",
                                                  e.what()));
          }
          write_json_atomic(path, j);
          if (!o.quiet) std::printf("calibrate: profile written to %s (%.1f s)\n", path.c_str(), wall_seconds() - t0);
        }
        return 0;
      });
}

}  // namespace

Subcommand register_calibrate(CLI::App& root) {
  auto o = std::make_shared<CalibrateCliOptions>();
  auto* app = root.add_subcommand(
      "calibrate",
      "Time this machine with short micro-benchmarks (BLAS, memory, Monte Carlo kernels, MPI point-to-point and "
      "collectives by rank count, GPU copies, GEMM and NCCL when a GPU is visible) and write the machine profile "
      "that gemm, montecarlo and predict use; run under mpirun for the MPI figures");
  app->add_flag("--quick", o->quick, "Fewer sizes, shorter timings (under a minute on two cores)");
  app->add_option_function<std::string>(
      "--out", [o](const std::string& path) { o->out = path; },
      "Profile file [SCALEBENCH_PROFILE, else $XDG_CACHE_HOME/scalebench/profile-<host>.json, "
      "XDG_CACHE_HOME defaulting to ~/.cache]");
  app->add_flag("--quiet", o->quiet, "No progress lines");
  app->add_flag("--if-stale", o->if_stale,
                "Time nothing when the profile is already there and current for this host and build (host, "
                "scalebench build, MPI library, BLAS build and kernel, GPU model and driver)");
  app->add_flag("--no-check", o->no_check,
                "Skip the check runs at the end (one short run per backend, predicted from the new profile, "
                "then timed)");
  return {app, [o] { return run_calibrate(*o); }};
}

}  // namespace scalebench::app
