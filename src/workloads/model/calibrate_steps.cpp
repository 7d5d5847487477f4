// The quiet wait, one BLAS series with its collapsed-point check, and how calibrate was launched
// (calibrate_steps.hpp; docs/model.md, "Calibration").
#include "calibrate_steps.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <thread>

#include <fmt/format.h>

#include "scalebench/base/host.hpp"
#include "scalebench/mpi/mpi.hpp"

namespace scalebench {

void wait_quietly(const Communicator& comm) {
  MPI_Request req = MPI_REQUEST_NULL;
  SCALEBENCH_MPI(MPI_Ibarrier(comm.get(), &req));
  int done = 0;
  auto nap = std::chrono::microseconds(50);
  for (;;) {
    SCALEBENCH_MPI(MPI_Test(&req, &done, MPI_STATUS_IGNORE));
    if (done) return;
    std::this_thread::sleep_for(nap);
    nap = std::min(nap * 2, std::chrono::microseconds(5000));
  }
}

std::vector<std::size_t> collapsed_points(const std::vector<double>& gflops) {
  std::vector<std::size_t> out;
  // The first point has no smaller neighbour; a rate that rises with size is normal there.
  for (std::size_t i = 1; i < gflops.size(); ++i) {
    const double before = gflops[i - 1];
    const double after = i + 1 < gflops.size() ? gflops[i + 1] : before;
    if (gflops[i] < kCollapsedFraction * std::min(before, after)) out.push_back(i);
  }
  return out;
}

namespace {

std::vector<double> rates_of(const std::vector<BlasPoint>& points) {
  std::vector<double> out;
  for (const auto& p : points) out.push_back(p.gflops);
  return out;
}

}  // namespace

BlasSeries time_blas_series(const std::string& what, int threads, const std::vector<std::int64_t>& sides,
                            std::int64_t grow_from, double max_multiply_s, const BlasTimer& time) {
  BlasSeries out;
  for (const std::int64_t n : sides) {
    if (n > grow_from && !out.points.empty()) {
      const BlasPoint& last = out.points.back();
      const double last_n = static_cast<double>(last.shape.n);
      const double last_s = 2 * last_n * last_n * last_n / (last.gflops * 1e9);
      if (last_s * std::pow(static_cast<double>(n) / last_n, 3) > max_multiply_s) break;
    }
    const TimedRate r = time(n, 0);
    out.points.push_back({threads, {n, n, n}, r.gflops, r.spread});
  }
  for (const std::size_t i : collapsed_points(rates_of(out.points))) {
    BlasPoint& p = out.points[i];
    out.retimed.push_back(p.shape.n);
    const TimedRate r = time(p.shape.n, 1);
    p.gflops = r.gflops;
    p.spread = r.spread;
  }
  const std::vector<double> after = rates_of(out.points);
  for (const std::size_t i : collapsed_points(after)) {
    const double before = after[i - 1];
    const std::string next = i + 1 < after.size()
                                 ? fmt::format(" and {:.1f} at {}^3", after[i + 1], out.points[i + 1].shape.n)
                                 : std::string();
    out.warnings.push_back(fmt::format("{} at {}^3: {:.1f} GFLOP/s, far below {:.1f} at {}^3{}, also when re-timed; "
                                       "the machine was busy or this size is slow on it: calibrate again on a quiet "
                                       "machine if runs use this size",
                                       what, out.points[i].shape.n, after[i], before, out.points[i - 1].shape.n, next));
  }
  return out;
}

nlohmann::json launch_description(int ranks) {
  const auto set = [](const char* name) {
    const char* v = std::getenv(name);
    return v != nullptr && *v != '\0';
  };
  // Open MPI's mpirun sets OMPI_COMM_WORLD_SIZE (also inside an allocation); srun sets a step;
  // another mpirun (MPICH's Hydra) only its PMI_RANK. (An Open MPI singleton sets PMIX_RANK.)
  const bool srun = !set("OMPI_COMM_WORLD_SIZE") && set("SLURM_PROCID") && set("SLURM_STEP_ID");
  const bool mpirun = !srun && (set("OMPI_COMM_WORLD_SIZE") || set("PMI_RANK"));
  const std::string launcher = srun ? "srun" : mpirun ? "mpirun" : "singleton";
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  const auto allowed = static_cast<long>(allowed_cpus().size());
  return {{"launcher", launcher},
          {"ranks", ranks},
          {"binding", online > 0 && allowed < online ? "bound" : "none"},
          {"cpus_allowed", allowed},
          {"cpus", online}};
}

}  // namespace scalebench
