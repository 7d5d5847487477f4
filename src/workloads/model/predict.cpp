// The machine's side of the predictions (docs/model.md, "Phases"): the rates a node's ranks share
// (machine_rates.hpp), what a prediction is checked against, and its band. Each workload's phases
// are its own: gemm/gemm_predict.cpp, montecarlo/montecarlo_predict.cpp.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "model/machine_rates.hpp"
#include "scalebench/base/checked_size.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/workloads/model.hpp"

namespace scalebench {

namespace machine {

double max_of(const std::vector<double>& v) { return v.empty() ? 0.0 : *std::max_element(v.begin(), v.end()); }
double min_of(const std::vector<double>& v) { return v.empty() ? 0.0 : *std::min_element(v.begin(), v.end()); }

// Cores each rank may use: its threads, or its share of the node when the ranks oversubscribe it.
double thread_share(const Profile& p, const MachineLayout& m, int threads) {
  return std::min(static_cast<double>(threads), static_cast<double>(p.cores) / m.ranks_per_node);
}

// One rank's BLAS rate when all R ranks of its node multiply at once: what its threads reach
// alone, but no more than its share of the node's rate on all the cores the ranks keep busy
// (cores share memory bandwidth, caches and the power budget: 4 ranks × 4 threads do not run 4×
// what 4 threads do alone).
double node_shared_blas_gflops(const Profile& p, Precision prec, double threads, const MachineLayout& m,
                               const GemmShape& block) {
  const double alone = blas_gflops(p, prec, threads, block);
  if (m.ranks_per_node <= 1) return alone;
  const double busy = std::min(threads * m.ranks_per_node, static_cast<double>(p.cores));
  return std::min(alone, blas_gflops(p, prec, busy, block) * threads / busy);
}

// The same for a rate measured by thread count (Monte Carlo kernels): R ranks of T threads each
// get no more than their share of the rate on all R·T cores at once (16 single-thread ranks on
// 16 cores reach the 16-thread rate, about 90% of 16 single threads on the machines measured).
double node_shared_rate(const std::vector<ThreadRate>& rates, double threads, const Profile& p,
                        const MachineLayout& m) {
  const double alone = rate_at_threads(rates, threads, p.cores);
  if (m.ranks_per_node <= 1) return alone;
  const double busy = std::min(threads * m.ranks_per_node, static_cast<double>(p.cores));
  return std::min(alone, rate_at_threads(rates, busy, p.cores) * threads / busy);
}

// Ranks that share one GPU (1 when every rank has its own).
double gpu_sharing(const MachineLayout& m) {
  if (m.gpus_per_node <= 0) throw UsageError("a GPU backend needs GPUs on the node: pass --gpus-per-node");
  return std::max(1.0, std::ceil(static_cast<double>(m.ranks_per_node) / m.gpus_per_node));
}

}  // namespace machine

double Prediction::phase(const std::string& name) const {
  for (const auto& [n, s] : phases) {
    if (n == name) return s;
  }
  return 0.0;
}

void check_layout(const MachineLayout& m, const std::string& nodes_option, const std::string& ranks_option) {
  if (m.nodes < 1) throw UsageError(fmt::format("{} {} must be at least 1", nodes_option, m.nodes));
  if (m.ranks_per_node < 1) throw UsageError(fmt::format("{} {} must be at least 1", ranks_option, m.ranks_per_node));
  product_within(fmt::format("ranks ({} x {})", nodes_option, ranks_option), {m.nodes, m.ranks_per_node},
                 kModelMaxRanks, "the most ranks the model predicts for", "; predict fewer ranks");
  if (m.gpus_per_node < 0 || m.gpus_per_node > kModelMaxGpusPerNode) {
    throw UsageError(fmt::format("--gpus-per-node {} must be in [0, {}]", m.gpus_per_node, kModelMaxGpusPerNode));
  }
}

const Prediction& check_prediction(const Prediction& pred, const std::string& what) {
  auto bad = [&](const std::string& name, double s) {
    return Error(ExitCode::internal,
                 fmt::format("the model predicted {} s for {} of {}: a bug in scalebench's model; please report it "
                             "with the profile and the options",
                             s, name, what));
  };
  for (const auto& [name, s] : pred.phases) {
    if (!std::isfinite(s) || s < 0) throw bad("phase " + name, s);
  }
  if (!std::isfinite(pred.end_to_end) || pred.end_to_end <= 0) throw bad("end-to-end", pred.end_to_end);
  return pred;
}

std::pair<double, double> Prediction::band() const {
  if (low <= 0 && high <= 0) return {end_to_end, end_to_end};
  return {std::min(low, end_to_end), std::max(high, end_to_end)};
}

double miss_outside_band(const Prediction& pred, double measured) {
  if (!(pred.end_to_end > 0)) return 0.0;
  const auto [low, high] = pred.band();
  const double outside = measured < low ? low - measured : measured > high ? measured - high : 0.0;
  return outside / pred.end_to_end;
}

bool prediction_flagged(const Prediction& pred, double measured) {
  return miss_outside_band(pred, measured) > kPredictionTolerance;
}

}  // namespace scalebench
