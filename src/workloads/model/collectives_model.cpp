// The communication and rate building blocks of the model (docs/model.md, "Links" and "Rates").
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "scalebench/base/error.hpp"
#include "scalebench/mpi/mpi.hpp"
#include "scalebench/workloads/model.hpp"

namespace scalebench {
namespace {

int ceil_log2(int n) {
  int r = 0;
  while ((1 << r) < n) ++r;
  return r;
}

// Open MPI's tuned bcast moves from a binomial tree to scatter + ring all-gather for large messages.
constexpr double kBcastLargeBytes = 512.0 * 1024.0;

// A fit measured at exactly this rank count and node count, if the profile holds one.
const CollectiveFit* measured_fit(const Profile& p, const std::string& name, const MachineLayout& m) {
  const auto it = p.collectives.find(name);
  if (it == p.collectives.end()) return nullptr;
  for (const auto& f : it->second) {
    if (f.ranks == m.ranks() && f.nodes == m.nodes) return &f;
  }
  return nullptr;
}

// Each class of `bytes` without the root, cut where its ranks leave rank 0's node (their link
// changes there): f(first rank, ranks, bytes of each).
template <class F>
void for_each_remote_class(const MachineLayout& m, const std::vector<RankBytes>& bytes, F f) {
  for (const RankBytes& b : bytes) {
    const int first = std::max(b.first, 1), end = std::min(b.first + b.count, m.ranks());
    if (first >= end) continue;
    const int cut = std::clamp(m.ranks_per_node, first, end);
    if (cut > first) f(first, cut - first, b.bytes);
    if (end > cut) f(cut, end - cut, b.bytes);
  }
}

double linear_collective(const Profile& p, const MachineLayout& m, const std::vector<RankBytes>& bytes,
                         const char* name) {
  if (m.ranks() <= 1) return 0.0;
  double moved = 0;
  for_each_remote_class(m, bytes, [&](int, int count, double b) { moved += count * b; });
  if (const auto* fit = measured_fit(p, name, m)) return fit->link.seconds(moved);
  // Linear algorithm: the root exchanges with each rank in turn.
  double t = 0;
  for_each_remote_class(m, bytes,
                        [&](int first, int count, double b) { t += count * link_to(p, m, first).seconds(b); });
  return t;
}

// Interpolates y over log(x) between measured points, clamped at the ends. Points sorted by x.
double interpolate_log(std::vector<std::pair<double, double>> pts, double x) {
  std::sort(pts.begin(), pts.end());
  if (pts.empty()) return 0.0;
  if (x <= pts.front().first) return pts.front().second;
  if (x >= pts.back().first) return pts.back().second;
  for (std::size_t i = 1; i < pts.size(); ++i) {
    if (x <= pts[i].first) {
      const double t = std::log(x / pts[i - 1].first) / std::log(pts[i].first / pts[i - 1].first);
      return pts[i - 1].second + t * (pts[i].second - pts[i - 1].second);
    }
  }
  return pts.back().second;
}

double cube_side(const GemmShape& s) {
  return std::cbrt(static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k));
}

}  // namespace

Link link_to(const Profile& p, const MachineLayout& m, int rank) {
  if (m.node_of(rank) == 0) return p.intra_node;
  if (!p.inter_node) {
    throw UsageError(fmt::format("profile {} has no inter-node figures (it was calibrated on one node); calibrate "
                                 "across nodes or pass --inter-node-gbps and --inter-node-latency-us",
                                 p.source));
  }
  return *p.inter_node;
}

Link slowest_link(const Profile& p, const MachineLayout& m) {
  return m.nodes > 1 ? link_to(p, m, m.ranks_per_node) : p.intra_node;
}

double bcast_seconds(const Profile& p, const MachineLayout& m, double bytes) {
  const int ranks = m.ranks();
  if (ranks <= 1) return 0.0;
  if (const auto* fit = measured_fit(p, "bcast", m)) return fit->link.seconds(bytes);
  const int inter_rounds = ceil_log2(m.nodes);
  const int intra_rounds = ceil_log2(m.nodes > 1 ? m.ranks_per_node : ranks);
  if (bytes < kBcastLargeBytes) {
    // Binomial tree: every round carries the whole message; the first ceil(log2 N) cross nodes.
    double t = intra_rounds * p.intra_node.seconds(bytes);
    if (inter_rounds > 0) t += inter_rounds * link_to(p, m, m.ranks_per_node).seconds(bytes);
    return t;
  }
  // Scatter (binomial) then ring all-gather, each moving (P-1)/P of the message over the
  // slowest link.
  const Link l = slowest_link(p, m);
  const double share = static_cast<double>(ranks - 1) / ranks * bytes / l.bandwidth_Bps;
  return (ceil_log2(ranks) + ranks - 1) * l.latency_s + 2.0 * share;
}

double relay_seconds(const Profile& p, const MachineLayout& m, double bytes) {
  const int ranks = m.ranks();
  if (!relay_goes_along_chain(ranks, static_cast<std::int64_t>(bytes))) {
    return bcast_seconds(p, m, bytes);
  }
  // Timed along these ranks by calibration: inside a node a rank of the chain both receives and
  // forwards each segment, which a pair's link does not show.
  if (const auto* fit = measured_fit(p, "relay", m)) return fit->link.seconds(bytes);
  // A pipeline of `segments` stages over ranks - 1 links in a row: the last segment leaves the
  // root after `segments` of them and crosses ranks - 2 more links.
  const Link l = slowest_link(p, m);
  const double segments = std::ceil(bytes / static_cast<double>(kRelaySegmentBytes));
  return (segments + ranks - 2) * l.seconds(bytes / segments);
}

double scatterv_seconds(const Profile& p, const MachineLayout& m, const std::vector<RankBytes>& bytes) {
  return linear_collective(p, m, bytes, "scatterv");
}

double gatherv_seconds(const Profile& p, const MachineLayout& m, const std::vector<RankBytes>& bytes) {
  return linear_collective(p, m, bytes, "gatherv");
}

double small_reduce_seconds(const Profile& p, const MachineLayout& m, int messages) {
  if (m.ranks() <= 1) return 0.0;
  if (const auto* fit = measured_fit(p, "reduce", m)) return messages * fit->link.latency_s;
  double round = ceil_log2(m.nodes > 1 ? m.ranks_per_node : m.ranks()) * p.intra_node.latency_s;
  if (m.nodes > 1) round += ceil_log2(m.nodes) * link_to(p, m, m.ranks_per_node).latency_s;
  return messages * round;
}

double rate_at_threads(const std::vector<ThreadRate>& rates_in, double threads, int cores) {
  if (rates_in.empty()) return 0.0;
  auto rates = rates_in;
  std::sort(rates.begin(), rates.end(), [](const ThreadRate& a, const ThreadRate& b) { return a.threads < b.threads; });
  const double t = std::min(threads, static_cast<double>(cores));
  const auto& lo = rates.front();
  const auto& hi = rates.back();
  if (t <= lo.threads) return lo.per_s * t / lo.threads;
  if (t >= hi.threads) return hi.per_s * t / hi.threads;
  for (std::size_t i = 1; i < rates.size(); ++i) {
    if (t <= rates[i].threads) {
      const double f = (t - rates[i - 1].threads) / (rates[i].threads - rates[i - 1].threads);
      return rates[i - 1].per_s + f * (rates[i].per_s - rates[i - 1].per_s);
    }
  }
  return hi.per_s;
}

double blas_gflops(const Profile& p, Precision prec, double threads, const GemmShape& block) {
  const auto it = p.blas.find(to_string(prec));
  if (it == p.blas.end() || it->second.empty()) {
    throw UsageError(
        fmt::format("profile {} has no BLAS rates for {}; run `scalebench calibrate`", p.source, to_string(prec)));
  }
  // Over shapes at each measured thread count, then over thread counts.
  std::map<int, std::vector<std::pair<double, double>>> by_threads;
  for (const auto& pt : it->second) by_threads[pt.threads].emplace_back(cube_side(pt.shape), pt.gflops);
  std::vector<ThreadRate> at_shape;
  const double side = cube_side(block);
  for (auto& [t, pts] : by_threads) at_shape.push_back({t, interpolate_log(pts, side)});
  return rate_at_threads(at_shape, threads, p.cores);
}

double naive_gemm_gflops(const Profile& p, Precision prec, const GemmShape& block) {
  const auto it = p.naive_gflops.find(to_string(prec));
  if (it == p.naive_gflops.end() || it->second.empty()) {
    throw UsageError(fmt::format("profile {} has no naive rate for {}", p.source, to_string(prec)));
  }
  std::vector<std::pair<double, double>> pts;
  for (const auto& [n, gf] : it->second) pts.emplace_back(static_cast<double>(n), gf);
  return interpolate_log(pts, cube_side(block));
}

double gpu_gemm_gflops(const Profile& p, Precision prec, const GemmShape& block) {
  const auto it = p.gpu.gemm_gflops.find(to_string(prec));
  if (!p.gpu.present || it == p.gpu.gemm_gflops.end() || it->second.empty()) {
    throw UsageError(fmt::format("profile {} has no GPU GEMM rate for {} ({}); calibrate on a machine with a GPU",
                                 p.source, to_string(prec), p.gpu.present ? "not measured" : p.gpu.reason));
  }
  std::vector<std::pair<double, double>> pts;
  for (const auto& [n, gf] : it->second) pts.emplace_back(static_cast<double>(n), gf);
  return interpolate_log(pts, cube_side(block));
}

}  // namespace scalebench
