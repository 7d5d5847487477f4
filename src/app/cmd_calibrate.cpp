// `scalebench calibrate`: times this machine (or every rank of an allocation) and writes the
// machine profile the model predicts from (docs/model.md).
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "commands.hpp"
#include "run_support.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/base/output_file.hpp"
#include "scalebench/mpi/mpi.hpp"
#include "scalebench/workloads/model.hpp"

namespace scalebench::app {
namespace {

struct CalibrateCliOptions {
  bool quick = false, quiet = false;
  std::string out;
};

// The default place's folder is made on demand; a path given with --out must already have one.
void prepare_output(const std::string& path, bool default_place) {
  if (default_place) {
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
    if (ec)
      throw ResourceError(fmt::format("cannot create the folder of {} ({}); pass --out FILE", path, ec.message()));
  }
  check_output_path(path);
}

int run_calibrate(const CalibrateCliOptions& o) {
  return run_mpi_command(
      main_argc(), main_argv(), [] {},
      [&](const Communicator& comm) {
        const std::string path = o.out.empty() ? default_profile_path() : o.out;
        agree(comm, [&] {
          if (comm.is_root()) prepare_output(path, o.out.empty() && !std::getenv("SCALEBENCH_PROFILE"));
        });
        const double t0 = wall_seconds();
        const Profile p = calibrate_machine(comm, {o.quick, o.quiet});
        if (comm.is_root()) {
          write_json_atomic(path, to_json(p));
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
  app->add_option("--out", o->out,
                  "Profile file [SCALEBENCH_PROFILE, else $XDG_CACHE_HOME/scalebench/profile-<host>.json, "
                  "XDG_CACHE_HOME defaulting to ~/.cache]");
  app->add_flag("--quiet", o->quiet, "No progress lines");
  return {app, [o] { return run_calibrate(*o); }};
}

}  // namespace scalebench::app
