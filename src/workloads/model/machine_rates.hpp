#pragma once
// The machine's side of every workload's prediction (model/predict.cpp): what a rank's threads, its
// node's cores and its GPU give while the node's ranks run at once, and a prediction's band over the
// profile's spread. The workloads' own models (gemm/gemm_predict.cpp,
// montecarlo/montecarlo_predict.cpp) build their phases on them.
#include <algorithm>
#include <vector>

#include "scalebench/workloads/model.hpp"

namespace scalebench::machine {

double max_of(const std::vector<double>& v);
double min_of(const std::vector<double>& v);
// Cores each rank may use: its threads, or its share of the node when the ranks oversubscribe it.
double thread_share(const Profile& p, const MachineLayout& m, int threads);
// One rank's BLAS rate when all R ranks of its node multiply at once: what its threads reach
// alone, but no more than its share of the node's rate on all the cores the ranks keep busy.
double node_shared_blas_gflops(const Profile& p, Precision prec, double threads, const MachineLayout& m,
                               const GemmShape& block);
// The same for a rate measured by thread count (Monte Carlo kernels).
double node_shared_rate(const std::vector<ThreadRate>& rates, double threads, const Profile& p, const MachineLayout& m);
// Ranks that share one GPU (1 when every rank has its own).
double gpu_sharing(const MachineLayout& m);

// The prediction on the profile's median figures, with its band: the same model on every figure
// at its slowest repeat (high) and its fastest (low).
template <class Model>
Prediction with_band(const Profile& p, Model model) {
  Prediction out = model(p);
  out.low = out.high = out.end_to_end;
  if (!profile_has_spread(p)) return out;
  const double slow = model(profile_at_bound(p, false)).end_to_end;
  const double fast = model(profile_at_bound(p, true)).end_to_end;
  out.low = std::min({fast, slow, out.end_to_end});
  out.high = std::max({fast, slow, out.end_to_end});
  return out;
}

}  // namespace scalebench::machine
