// The sharded Monte Carlo's predicted phases (docs/model.md, "Phases"): each rank's chunks at its
// share of the node's rate (model/machine_rates.hpp), then the reduction of the sums. Ranks hold
// chunks of two counts, and the last chunk may be short: the slowest and fastest ranks are found
// among a few (model/rank_classes.hpp), not by counting every rank's samples.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "model/machine_rates.hpp"
#include "model/rank_classes.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/base/phases.hpp"
#include "scalebench/workloads/model.hpp"

namespace scalebench {
namespace {

// The samples rank `r` of `ranks` draws: its share of an even split (naive), or its chunks, the
// last one cut at the sample count.
std::int64_t samples_of(const MonteCarloConfig& cfg, std::int64_t chunks, int r, int ranks) {
  if (cfg.backend == McBackendKind::naive) return EvenSplit(cfg.samples, ranks).count(r);
  const ChunkRange c = rank_chunks(chunks, r, ranks);
  return std::max<std::int64_t>(std::min(c.last * cfg.chunk_size, cfg.samples) - c.first * cfg.chunk_size, 0);
}

// Ranks among which the fewest and the most samples are drawn: ranks before the one holding the
// last chunk draw whole chunks, one more on ranks [0, extra) (rank_chunks); it draws what is left;
// ranks after it draw none. Each run of ranks drawing the same has one of these.
// (The naive split's two sizes lie on the first and the last rank.)
std::vector<int> sample_extremes(std::int64_t chunks, int ranks) {
  const std::int64_t base = chunks / ranks, extra = chunks % ranks;
  const std::int64_t last = std::max<std::int64_t>(chunks - 1, 0);
  std::int64_t owner = 0;
  if (last < extra * (base + 1)) {
    owner = last / (base + 1);
  } else if (base > 0) {
    owner = extra + (last - extra * (base + 1)) / base;
  }
  std::vector<int> out;
  for (const std::int64_t r :
       {std::int64_t{0}, extra - 1, extra, owner - 1, owner, owner + 1, std::int64_t{ranks} - 1}) {
    if (r >= 0 && r < ranks) out.push_back(static_cast<int>(r));
  }
  return out;
}

Prediction predict_montecarlo_at(const Profile& p, const MonteCarloConfig& cfg_in, const MachineLayout& m) {
  check_layout(m);
  MonteCarloConfig cfg = cfg_in;
  resolve_defaults(cfg);
  const std::string problem = to_string(cfg.problem);
  const double units_per_sample = cfg.problem == McProblem::asian ? cfg.steps : 1.0;
  double rate = 0;
  const bool on_gpu = cfg.backend == McBackendKind::cuda || cfg.backend == McBackendKind::curand;
  if (on_gpu) {
    const auto it = p.gpu.montecarlo.find(problem);
    if (!p.gpu.present || it == p.gpu.montecarlo.end() || !it->second.count(to_string(cfg.backend))) {
      throw UsageError(fmt::format("profile {} has no GPU Monte Carlo rate for {} on {} ({})", p.source, problem,
                                   to_string(cfg.backend), p.gpu.present ? "not measured" : p.gpu.reason));
    }
    rate = it->second.at(to_string(cfg.backend)) / machine::gpu_sharing(m);
  } else {
    const std::string backend = to_string(cfg.backend);
    const auto pit = p.montecarlo.find(problem);
    if (pit == p.montecarlo.end() || !pit->second.count(backend)) {
      throw UsageError(fmt::format("profile {} has no Monte Carlo rate for {} on {}; run `scalebench calibrate`",
                                   p.source, problem, backend));
    }
    const int threads = cfg.backend == McBackendKind::naive ? 1 : std::max(cfg.threads, 1);
    rate = machine::node_shared_rate(pit->second.at(backend), machine::thread_share(p, m, threads), p, m);
  }
  if (rate <= 0) throw UsageError(fmt::format("profile {} gives a zero Monte Carlo rate for {}", p.source, problem));
  const int ranks = m.ranks();
  const std::int64_t chunks = chunk_count(cfg);
  std::vector<double> compute;
  for (const int r : sample_extremes(chunks, ranks)) {
    compute.push_back(static_cast<double>(samples_of(cfg, chunks, r, ranks)) * units_per_sample / rate);
  }
  // π: one all-reduce of the hits. Options: naive all-reduces each sum; cpu/cuda gather the
  // tree nodes (sizes, then the bytes: linear) and broadcast the total.
  double reduce = 0;
  if (cfg.problem == McProblem::pi) {
    reduce = small_reduce_seconds(p, m, 1);
  } else if (cfg.backend == McBackendKind::naive || cfg.backend == McBackendKind::curand) {
    reduce = small_reduce_seconds(p, m, kSumCount);
  } else {
    // At most 2·log2(chunks) tree nodes of six doubles each per rank.
    const double tree_nodes = 2.0 * std::log2(std::max(static_cast<double>(chunks), 2.0));
    reduce = 2 * gatherv_seconds(p, m, {{0, ranks, 56.0 * tree_nodes}}) + small_reduce_seconds(p, m, 1);
  }
  Prediction out;
  const double slowest = machine::max_of(compute);
  out.phases = {{phase::compute, slowest}, {phase::reduce, reduce + slowest - machine::min_of(compute)}};
  out.end_to_end = slowest + reduce;
  if (on_gpu) {
    const double d2h = p.gpu.d2h_pinned.latency_s;
    out.phases.emplace_back(phase::d2h, d2h);
    out.end_to_end += d2h;
  }
  return check_prediction(out,
                          fmt::format("montecarlo {} {} samples {}", problem, to_string(cfg.backend), cfg.samples));
}

}  // namespace

Prediction predict_montecarlo(const Profile& p, const MonteCarloConfig& cfg, const MachineLayout& m) {
  return machine::with_band(p, [&](const Profile& q) { return predict_montecarlo_at(q, cfg, m); });
}

}  // namespace scalebench
