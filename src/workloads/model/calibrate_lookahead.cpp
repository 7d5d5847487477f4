// What Summa2D's host lookahead hides on this machine (calibrate_steps.hpp): the algorithm's own
// panel schedules, run side by side on the calibration's ranks, with whatever moves MPI's bytes
// here (MPI moves a host ring's messages only inside the ranks' own calls).
#include <algorithm>
#include <cmath>
#include <memory>

#include "calibrate_steps.hpp"
#include "scalebench/base/phases.hpp"
#include "scalebench/base/verify.hpp"
#include "scalebench/cpu/gemm.hpp"
#include "scalebench/mpi/mpi.hpp"
#include "scalebench/mpi/timing.hpp"
#include "scalebench/workloads/distributed_gemm.hpp"

namespace scalebench {
namespace {

// The broadcasts below this fraction of a blocking repeat are too small here to tell what a
// lookahead hides from the repeats' noise: it is taken to hide nothing.
constexpr double kLeastBroadcastShare = 0.02;

// Seconds of one repeat of `alg` on every rank: the slowest rank's, from a common start; and the
// slowest rank's broadcast phase in it.
std::pair<double, double> time_repeat(DistributedGemm& alg, PhaseRecorder& rec, const Communicator& comm) {
  comm.barrier();
  const double t0 = wall_seconds();
  alg.multiply(rec);
  const double mine = wall_seconds() - t0;
  rec.next_repeat();
  const auto& b = rec.samples(phase::broadcast);
  const double broadcast = b.empty() ? 0.0 : b.back();
  return {comm.max(mine), comm.max(broadcast)};
}

}  // namespace

LookaheadMeasure measure_lookahead(const Communicator& comm, std::int64_t n, int threads, int reps) {
  LookaheadMeasure out;
  out.n = n;
  out.grid = most_square_grid(comm.size());
  // 16 k-panels: enough for a lookahead to have panels to run ahead to.
  out.panel_width = std::max<std::int64_t>(8, (n + 15) / 16);
  std::vector<GemmConfig> cfgs;
  for (int depth = 0; depth <= kMaxAutoLookahead; ++depth) {
    GemmConfig cfg;
    cfg.shape = {n, n, n};
    cfg.backend = GemmBackendKind::openblas;
    cfg.threads = threads;
    cfg.algorithm = GemmAlgorithm::summa2d;
    cfg.grid_rows = out.grid.rows;
    cfg.grid_cols = out.grid.cols;
    cfg.panel_width = out.panel_width;
    cfg.lookahead = depth;
    cfg.peer = false;
    cfg.quiet = true;
    cfgs.push_back(cfg);
  }
  const GemmTestHooks hooks;
  const std::unique_ptr<LocalGemm> local = make_cpu_gemm(GemmBackendKind::openblas, threads);
  std::vector<std::unique_ptr<DistributedGemm>> algs;
  std::vector<PhaseRecorder> recs(cfgs.size());
  PhaseRecorder setup;
  for (const GemmConfig& cfg : cfgs) {
    algs.push_back(make_distributed_gemm(cfg, hooks, comm, *local, nullptr));
    algs.back()->prepare(setup);
  }
  // One warm-up each, then the depths in turn, `reps` times: a drift of the machine's speed falls
  // on every depth alike.
  std::vector<std::vector<double>> seconds(cfgs.size());
  std::vector<double> broadcast;
  for (int rep = -1; rep < reps; ++rep) {
    for (std::size_t d = 0; d < algs.size(); ++d) {
      const auto [s, b] = time_repeat(*algs[d], recs[d], comm);
      if (rep < 0) continue;
      seconds[d].push_back(s);
      if (d == 0) broadcast.push_back(b);
    }
  }
  // Each schedule's last product checked (Freivalds), which also takes the host ring's last sends
  // back before its buffers go.
  const std::vector<double> x = freivalds_vector(cfgs[0].seed, n);
  for (const auto& alg : algs) out.verified = alg->verify(x).ok && out.verified;
  out.blocking_s = median_of(seconds[0]);
  out.broadcast_s = median_of(broadcast);
  const bool tells = out.broadcast_s > kLeastBroadcastShare * out.blocking_s && out.broadcast_s > 0;
  for (std::size_t d = 1; d < algs.size(); ++d) {
    const double s = median_of(seconds[d]);
    const double hidden = tells ? (out.blocking_s - s) / out.broadcast_s : 0.0;
    out.depths.push_back({static_cast<int>(d), s, std::clamp(hidden, kLookaheadMinHidden, kLookaheadMaxHidden)});
  }
  return out;
}

}  // namespace scalebench
