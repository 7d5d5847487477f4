// GEMM's part of `scalebench calibrate` (gemm_calibrate.hpp): what Summa2D's host lookahead hides on
// this machine, the algorithm's own panel schedules run side by side on the calibration's ranks,
// with whatever moves MPI's bytes here (MPI moves a host ring's messages only inside the ranks'
// own calls).
#include <algorithm>
#include <cmath>
#include <memory>

#include "gemm/gemm_calibrate.hpp"

#include <fmt/format.h>
#include "scalebench/base/error.hpp"
#include "scalebench/base/phases.hpp"
#include "scalebench/base/verify.hpp"
#include "scalebench/cpu/gemm.hpp"
#include "scalebench/mpi/mpi.hpp"
#include "scalebench/mpi/timing.hpp"
#include "scalebench/workloads/gemm/distributed_gemm.hpp"

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

namespace {

// The size of the lookahead runs: the largest whose blocking repeat the new profile predicts under
// 0.05 s (--quick) or 0.2 s on these ranks.
std::int64_t lookahead_side(const Profile& p, const MachineLayout& m, int threads, bool quick) {
  GemmConfig cfg;
  cfg.algorithm = GemmAlgorithm::summa2d;
  cfg.threads = threads;
  cfg.lookahead = 0;
  std::int64_t pick = 256;
  for (const std::int64_t n : {256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096}) {
    cfg.shape = {n, n, n};
    cfg.panel_width = std::max<std::int64_t>(8, (n + 15) / 16);
    try {
      if (predict_gemm(p, cfg, m).end_to_end <= (quick ? 0.05 : 0.2)) pick = n;
    } catch (const UsageError&) {
      break;
    }
  }
  return pick;
}

}  // namespace

// On every rank of the calibration (two or more): what a lookahead of 1..kMaxAutoLookahead hides,
// kept in mpi.lookahead for this rank count and node count.
void calibrate_gemm_lookahead(Profile& p, const Communicator& comm, const CalibrateOptions& o,
                              const std::function<void(const std::string&)>& say) {
  if (comm.size() < 2) return;
  const Communicator& node = comm.node();
  const auto per_node = static_cast<int>(comm.max(static_cast<std::int64_t>(node.size())));
  const auto nodes = static_cast<int>(comm.sum(static_cast<std::int64_t>(node.rank() == 0 ? 1 : 0)));
  std::int64_t n = 0, threads = 0;
  if (comm.is_root()) {
    threads = std::max(1, p.cores / per_node);
    n = lookahead_side(p, {(comm.size() + per_node - 1) / per_node, per_node, 0}, static_cast<int>(threads), o.quick);
  }
  n = comm.max(n);
  threads = comm.max(threads);
  const LookaheadMeasure lm = measure_lookahead(comm, n, static_cast<int>(threads), o.quick ? 3 : 5);
  if (!comm.is_root()) return;
  if (!lm.verified) {
    const std::string w = "Summa2D's lookahead runs gave a wrong product (Freivalds' check failed): their times are "
                          "not kept, and the model predicts no lookahead; please report it";
    say("warning: " + w);
    p.warnings.push_back(w);
    return;
  }
  std::string depths;
  for (const auto& d : lm.depths) {
    p.lookahead.push_back({comm.size(), nodes, d.depth, d.hidden});
    depths += fmt::format(", lookahead {} {:.4f} s (hides {:+.0f}%)", d.depth, d.seconds, d.hidden * 100);
  }
  say(fmt::format("Summa2D lookahead on {} ranks ({}, n={}, panels of {}): blocking {:.4f} s (broadcasts {:.4f} s){}",
                  comm.size(), to_string(lm.grid), lm.n, lm.panel_width, lm.blocking_s, lm.broadcast_s, depths));
}

}  // namespace scalebench
