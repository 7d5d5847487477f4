// The distributed GEMM's predicted phases (docs/model.md, "Phases"): Row1D on the host and on
// GPUs (staged, NCCL, node-shared, the --overlap pipeline) and Summa2D, each phase as a record
// reports it (the slowest rank's time), end to end as the schedule runs them; on the machine's
// rates (model/machine_rates.hpp).
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "gemm/algorithms/summa_layout.hpp"
#include "model/machine_rates.hpp"
#include "scalebench/base/checked_size.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/base/partition.hpp"
#include "scalebench/base/phases.hpp"
#include "scalebench/gpu/gpu.hpp"
#include "scalebench/workloads/gemm/distributed_gemm.hpp"
#include "scalebench/workloads/model.hpp"

namespace scalebench {
namespace {

// The matrix sides as doubles: byte and flop counts are computed in floating point.
struct Sides {
  double m, n, k;
};
Sides sides(const GemmShape& s) {
  return {static_cast<double>(s.m), static_cast<double>(s.n), static_cast<double>(s.k)};
}

std::vector<double> bytes_of(const std::vector<std::int64_t>& counts, double bytes_per_unit) {
  std::vector<double> out;
  for (auto c : counts) out.push_back(static_cast<double>(c) * bytes_per_unit);
  return out;
}

double sum_after_root(const std::vector<double>& v) {
  double s = 0;
  for (std::size_t r = 1; r < v.size(); ++r) s += v[r];
  return s;
}

Link nccl_link(const Profile& p, const MachineLayout& m) {
  if (m.nodes > 1) return slowest_link(p, m);
  if (!p.gpu.nccl_intra) {
    throw UsageError(fmt::format("profile {} has no NCCL figures (calibrated with {} GPU(s)); calibrate with several "
                                 "GPUs on a node",
                                 p.source, p.gpu.count));
  }
  return *p.gpu.nccl_intra;
}

struct GemmBlocks {
  RowPartition rows;
  std::vector<double> compute;  // per rank
};

double block_seconds(const Profile& p, const GemmConfig& cfg, const MachineLayout& m, const GemmShape& block) {
  const double flops = 2.0 * static_cast<double>(block.m) * static_cast<double>(block.n) * static_cast<double>(block.k);
  double gflops = 0;
  switch (cfg.backend) {
    case GemmBackendKind::naive:
      gflops = naive_gemm_gflops(p, cfg.precision, block) * machine::thread_share(p, m, 1);
      break;
    case GemmBackendKind::openblas:
      gflops = machine::node_shared_blas_gflops(p, cfg.precision, machine::thread_share(p, m, cfg.threads), m, block);
      break;
    case GemmBackendKind::cublas: gflops = gpu_gemm_gflops(p, cfg.precision, block) / machine::gpu_sharing(m); break;
  }
  return block.m == 0 ? 0.0 : flops / (gflops * 1e9);
}

GemmBlocks compute_times(const Profile& p, const GemmConfig& cfg, const MachineLayout& m) {
  const auto& s = cfg.shape;
  GemmBlocks b{RowPartition(s.m, m.ranks()), {}};
  // Row blocks take at most two sizes: each is rated once (a million ranks stay quick).
  std::map<std::int64_t, double> by_rows;
  b.compute.reserve(static_cast<std::size_t>(m.ranks()));
  for (int r = 0; r < m.ranks(); ++r) {
    const std::int64_t rows = b.rows.counts()[static_cast<std::size_t>(r)];
    auto it = by_rows.find(rows);
    if (it == by_rows.end()) it = by_rows.emplace(rows, block_seconds(p, cfg, m, {rows, s.n, s.k})).first;
    b.compute.push_back(it->second);
  }
  return b;
}

// --distribution shared: what crosses nodes. Rank 0 sends each other node its ranks' rows of A
// and receives their rows of C, one message per rank over the inter-node link; B is relayed
// among the node leaders (a chain of segments from three nodes on); inside a node nothing is
// copied (0 s).
// The broadcast phase of the first remote leader (the slowest rank's) also holds its wait for
// the rest of the scatter: rank 0 relays B once its last block of A is sent.
struct SharedTraffic {
  double scatter = 0, broadcast = 0, gather = 0;
  double broadcast_wait = 0;  // in the broadcast phase, not in end to end (it is the scatter's time)
};
SharedTraffic shared_traffic(const Profile& p, const MachineLayout& m, const RowPartition& rows, const Sides& s,
                             double e) {
  SharedTraffic t;
  if (m.nodes <= 1) return t;
  const Link l = link_to(p, m, m.ranks_per_node);
  double first_node = 0;  // the blocks of the first remote node, sent first
  for (int r = 0; r < m.ranks(); ++r) {
    if (m.node_of(r) == 0) continue;
    const double count = static_cast<double>(rows.counts()[static_cast<std::size_t>(r)]);
    t.scatter += l.seconds(count * s.k * e);
    t.gather += l.seconds(count * s.n * e);
    if (m.node_of(r) == 1) first_node = t.scatter;
  }
  const MachineLayout leaders{m.nodes, 1, m.gpus_per_node > 0 ? 1 : 0};
  t.broadcast = relay_seconds(p, leaders, s.k * s.n * e);
  t.broadcast_wait = t.scatter - first_node;
  return t;
}

// Replicated B goes to every rank by relay_seconds (row1d.cpp: along the ranks from 3 ranks and 4
// segments on, else MPI's broadcast). Along the chain B leaves rank 0 once its last block of A is
// out: rank 1, served first, waits for the rest of the scatter in the broadcast phase (as the
// shared distribution's first leader).
double replicated_b_wait(const Profile& p, const MachineLayout& m, const RowPartition& rows, double a_row_bytes,
                         double scatter, double b_bytes) {
  if (!relay_goes_along_chain(m.ranks(), static_cast<std::int64_t>(b_bytes))) return 0.0;
  const double first = link_to(p, m, 1).seconds(static_cast<double>(rows.counts()[1]) * a_row_bytes);
  return std::max(0.0, scatter - first);
}

Prediction predict_cpu_gemm(const Profile& p, const GemmConfig& cfg, const MachineLayout& m) {
  const Sides s = sides(cfg.shape);
  const double e = static_cast<double>(host_element_bytes(cfg.precision));
  const GemmBlocks b = compute_times(p, cfg, m);
  const bool shared = cfg.distribution == GemmDistribution::shared;
  const SharedTraffic t = shared ? shared_traffic(p, m, b.rows, s, e) : SharedTraffic{};
  const double scatter = shared ? t.scatter : scatterv_seconds(p, m, bytes_of(b.rows.counts(), s.k * e));
  const double bcast = shared ? t.broadcast : relay_seconds(p, m, s.k * s.n * e);
  const double gather = shared ? t.gather : gatherv_seconds(p, m, bytes_of(b.rows.counts(), s.n * e));
  const double compute = machine::max_of(b.compute);
  const double wait = shared ? t.broadcast_wait : replicated_b_wait(p, m, b.rows, s.k * e, scatter, s.k * s.n * e);
  Prediction out;
  // The gather's slowest rank is the one that finished its multiply first and waits for the last.
  out.phases = {{phase::scatter, scatter},
                {phase::broadcast, bcast + wait},
                {phase::compute, compute},
                {phase::gather, gather + compute - machine::min_of(b.compute)}};
  out.end_to_end = scatter + bcast + compute + gather;
  return out;
}

// An --overlap pipeline's fill (B's first k-panel, `b_share` of it on each link, and the head
// rows' first panel of A in) and drain (the last row block of C out), which overlap nothing.
struct FillDrain {
  double fill = 0, drain = 0;
};
FillDrain fill_and_drain(const GpuProfile& g, const GemmShape& shape, const RowPartition& rows, double eh,
                         double b_share) {
  const OverlapPlan plan = make_overlap_plan(shape, rows);
  const double n = static_cast<double>(shape.n);
  const double width = plan.panels() > 0 ? static_cast<double>(plan.panel_first[1] - plan.panel_first[0])
                                         : static_cast<double>(shape.k);
  const double head = plan.head.empty() ? 0.0 : static_cast<double>(plan.head[0]);
  const double last_rows = plan.blocks.empty() || plan.blocks[0].empty()
                               ? head
                               : static_cast<double>(plan.blocks[0].back().count);
  return {g.h2d_pinned.seconds((width * n * b_share + head * width) * eh), g.d2h_pinned.seconds(last_rows * n * eh)};
}

// --distribution shared on GPUs: the inter-node phases above, then every rank copies its own rows
// over its own link (links assumed independent): A's rows and B whole (transport mpi) or its
// slice of B's rows (1 / the node's ranks: every node holds B), all-gathered over NCCL among the
// node's GPUs; --overlap runs these as a pipeline.
Prediction predict_shared_gpu_gemm(const Profile& p, const GemmConfig& cfg, const MachineLayout& m,
                                   const GemmBlocks& b) {
  const Sides s = sides(cfg.shape);
  const auto& g = p.gpu;
  const double eh = static_cast<double>(host_element_bytes(cfg.precision));
  const double ein = static_cast<double>(device_input_bytes(cfg.precision));
  const int per_node = std::max(1, m.ranks_per_node);
  const bool nccl = (cfg.transport == Transport::nccl || cfg.overlap) && per_node > 1;
  const SharedTraffic t = shared_traffic(p, m, b.rows, s, eh);
  const RowPartition slices(cfg.shape.k, per_node);
  std::vector<double> h2d, d2h, device;
  for (int r = 0; r < m.ranks(); ++r) {
    const auto i = static_cast<std::size_t>(r);
    const double rows = static_cast<double>(b.rows.counts()[i]);
    const double b_rows = nccl ? static_cast<double>(slices.counts()[static_cast<std::size_t>(r % per_node)]) : s.k;
    h2d.push_back(g.h2d_pinned.seconds((rows * s.k + b_rows * s.n) * eh));
    d2h.push_back(g.d2h_pinned.seconds(rows * s.n * eh));
    device.push_back(h2d.back() + b.compute[i] + d2h.back());
  }
  const double allgather =
      nccl ? nccl_link(p, {1, per_node, m.gpus_per_node}).seconds(s.k * s.n * ein * (per_node - 1) / per_node) : 0.0;
  const double compute = machine::max_of(b.compute);
  Prediction out;
  out.phases = {{phase::scatter, t.scatter},        {phase::broadcast, t.broadcast + t.broadcast_wait},
                {phase::h2d, machine::max_of(h2d)}, {phase::allgather, allgather},
                {phase::compute, compute},          {phase::d2h, machine::max_of(d2h)},
                {phase::gather, t.gather}};
  const double host = t.scatter + t.broadcast + t.gather;
  if (!cfg.overlap) {
    out.end_to_end = host + machine::max_of(device) + allgather;
    return out;
  }
  const auto [fill, drain] = fill_and_drain(g, cfg.shape, b.rows, eh, 1.0 / per_node);
  out.phases.emplace_back(phase::fill, fill);
  out.phases.emplace_back(phase::drain, drain);
  out.end_to_end = host + fill + std::max({machine::max_of(h2d), machine::max_of(d2h), compute, allgather}) + drain;
  out.notes.push_back("overlap, shared: end-to-end = inter-node phases + first panel in + the busiest of each GPU's "
                      "link in, link out, multiply, NCCL all-gather + last block out");
  return out;
}

Prediction predict_gpu_gemm(const Profile& p, const GemmConfig& cfg, const MachineLayout& m) {
  const Sides s = sides(cfg.shape);
  const auto& g = p.gpu;
  const double eh = static_cast<double>(host_element_bytes(cfg.precision));
  const double ein = static_cast<double>(device_input_bytes(cfg.precision));
  const double eout = static_cast<double>(device_output_bytes(cfg.precision));
  const GemmBlocks b = compute_times(p, cfg, m);
  const double compute = machine::max_of(b.compute);
  const double kn = s.k * s.n;
  Prediction out;
  if (cfg.distribution == GemmDistribution::shared) return predict_shared_gpu_gemm(p, cfg, m, b);
  if (cfg.resident) {
    out.phases = {{phase::scatter, 0.0}, {phase::broadcast, 0.0}, {phase::compute, compute}, {phase::gather, 0.0}};
    out.end_to_end = compute;
    return out;
  }
  if (cfg.transport == Transport::mpi && !cfg.overlap) {
    // The MPI phases are those of the CPU run, then each rank's copies and multiply.
    const double scatter = scatterv_seconds(p, m, bytes_of(b.rows.counts(), s.k * eh));
    const double bcast = relay_seconds(p, m, kn * eh);
    const double wait = replicated_b_wait(p, m, b.rows, s.k * eh, scatter, kn * eh);
    std::vector<double> h2d, d2h, device;
    for (int r = 0; r < m.ranks(); ++r) {
      const double rows = static_cast<double>(b.rows.counts()[r]);
      h2d.push_back(g.h2d_pinned.seconds((rows * s.k + kn) * eh));
      d2h.push_back(g.d2h_pinned.seconds(rows * s.n * eh));
      device.push_back(h2d.back() + b.compute[r] + d2h.back());
    }
    const double gather = gatherv_seconds(p, m, bytes_of(b.rows.counts(), s.n * eh));
    out.phases = {{phase::scatter, scatter},
                  {phase::broadcast, bcast + wait},
                  {phase::h2d, machine::max_of(h2d)},
                  {phase::compute, compute},
                  {phase::d2h, machine::max_of(d2h)},
                  {phase::gather, gather + machine::max_of(device) - machine::min_of(device)}};
    out.end_to_end = scatter + bcast + machine::max_of(device) + gather;
    return out;
  }
  // NCCL (or --overlap): rank 0 moves all of A and B in and all of C out; the others' blocks go
  // device to device, rank 0's sends sharing its link.
  const double h2d = g.h2d_pinned.seconds((s.m * s.k + kn) * eh);
  const double d2h = g.d2h_pinned.seconds(s.m * s.n * eh);
  double scatter = 0, bcast = 0, gather = 0;
  if (m.ranks() > 1) {
    const Link l = nccl_link(p, m);
    scatter = l.seconds(sum_after_root(bytes_of(b.rows.counts(), s.k * ein)));
    bcast = l.seconds(kn * ein);
    gather = l.seconds(sum_after_root(bytes_of(b.rows.counts(), s.n * eout)));
  }
  out.phases = {{phase::h2d, h2d},         {phase::scatter, scatter}, {phase::broadcast, bcast},
                {phase::compute, compute}, {phase::gather, gather},   {phase::d2h, d2h}};
  if (!cfg.overlap) {
    out.end_to_end = h2d + scatter + bcast + compute + gather + d2h;
    return out;
  }
  // The pipeline: its busiest resource sets the pace; the first panel in and the last block out
  // cannot overlap anything.
  const auto [fill, drain] = fill_and_drain(g, cfg.shape, b.rows, eh, 1.0);
  out.phases.emplace_back(phase::fill, fill);
  out.phases.emplace_back(phase::drain, drain);
  out.end_to_end = fill + std::max({h2d, d2h, compute, scatter + bcast + gather}) + drain;
  out.notes.push_back("overlap: end-to-end = first panel in + the busiest of host link in, host link out, "
                      "multiply, NCCL + last block out");
  return out;
}

// The layout of a group of `size` ranks whose members stand `stride` ranks apart (a Summa2D grid
// row: stride 1; a grid column: stride = the grid's columns), ranks placed by blocks on nodes.
MachineLayout group_layout(const MachineLayout& m, int size, int stride) {
  const int per_node = std::max(1, std::min(size, m.ranks_per_node / std::max(1, stride)));
  return {(size + per_node - 1) / per_node, per_node, m.gpus_per_node};
}

// What a host lookahead of `depth` panels hides, as calibrate measured it on the rank count
// nearest this layout's (one node or several as the layout; then the nearest by ratio of ranks,
// the larger on a tie). UsageError when the profile has no figure for that depth.
double lookahead_hidden(const Profile& p, int depth, const MachineLayout& m) {
  const LookaheadFit* best = nullptr;
  auto distance = [&m](const LookaheadFit& f) {
    return std::make_pair((f.nodes > 1) != (m.nodes > 1),
                          std::abs(std::log(static_cast<double>(f.ranks) / static_cast<double>(m.ranks()))));
  };
  for (const auto& f : p.lookahead) {
    if (f.depth != depth) continue;
    if (best == nullptr || distance(f) < distance(*best) || (distance(f) == distance(*best) && f.ranks > best->ranks)) {
      best = &f;
    }
  }
  if (best == nullptr) {
    throw UsageError(fmt::format("profile {} has no figure for what a lookahead of {} hides (calibrated before it "
                                 "was measured, or on one rank); run `scalebench calibrate` with several ranks",
                                 p.source, depth));
  }
  return best->hidden;
}

// --algorithm summa2d on a CPU backend (src/workloads/gemm/algorithms/summa2d.cpp): rank 0 packs and
// sends every rank its A_ij and B_ij, one message each; for every k-panel the owners broadcast
// A's part along their grid row and B's part along their grid column and each rank adds the
// panel product to C_ij; rank 0 receives and unpacks every C_ij. The slowest rank holds the
// largest blocks (the first grid row and column).
Prediction predict_summa2d(const Profile& p, const GemmConfig& cfg, const MachineLayout& m) {
  if (cfg.backend == GemmBackendKind::cublas) {
    throw UsageError("the model predicts --algorithm summa2d on the CPU backends (naive, openblas) only");
  }
  const ProcessGrid g = resolve_grid(cfg, m.ranks());
  const SummaLayout lay(cfg.shape, g, cfg.panel_width);
  const double e = static_cast<double>(host_element_bytes(cfg.precision));
  const auto at = [](const RowPartition& part, int i) {
    return static_cast<double>(part.counts()[static_cast<std::size_t>(i)]);
  };
  // Packing and unpacking on rank 0: each element read once and written once, on one core.
  const double copy_Bps = rate_at_threads(p.triad_Bps, 1, p.cores) * 2.0 / 3.0;
  const double s_m = static_cast<double>(cfg.shape.m), s_n = static_cast<double>(cfg.shape.n),
               s_k = static_cast<double>(cfg.shape.k);
  double scatter = copy_Bps > 0 ? 2 * (s_m * s_k + s_k * s_n) * e / copy_Bps : 0.0;
  double gather = copy_Bps > 0 ? 2 * s_m * s_n * e / copy_Bps : 0.0;
  std::vector<double> compute;
  std::map<std::pair<double, double>, double> by_block;
  for (int r = 0; r < m.ranks(); ++r) {
    const int i = r / g.cols, j = r % g.cols;
    const double mi = at(lay.rows, i), nj = at(lay.cols, j);
    if (r > 0) {
      const Link l = link_to(p, m, r);
      scatter += l.seconds(mi * at(lay.k_of_a, j) * e) + l.seconds(at(lay.k_of_b, i) * nj * e);
      gather += l.seconds(mi * nj * e);
    }
    // Blocks take at most two sizes each way: each block's panels are rated once.
    auto it = by_block.find({mi, nj});
    if (it == by_block.end()) {
      double seconds = 0;
      for (const auto& panel : lay.panels) {
        const GemmShape block{static_cast<std::int64_t>(mi), static_cast<std::int64_t>(nj), panel.width};
        const double gflops = cfg.backend == GemmBackendKind::naive
                                  ? naive_gemm_gflops(p, cfg.precision, block) * machine::thread_share(p, m, 1)
                                  : machine::node_shared_blas_gflops(p, cfg.precision,
                                                                     machine::thread_share(p, m, cfg.threads), m,
                                                                     block);
        seconds += 2.0 * mi * nj * static_cast<double>(panel.width) / (gflops * 1e9);
      }
      it = by_block.emplace(std::make_pair(mi, nj), seconds).first;
    }
    compute.push_back(it->second);
  }
  const MachineLayout row = group_layout(m, g.cols, 1), col = group_layout(m, g.rows, g.cols);
  double bcast = 0;
  for (const auto& panel : lay.panels) {
    const double w = static_cast<double>(panel.width);
    if (g.cols > 1) bcast += bcast_seconds(p, row, at(lay.rows, 0) * w * e);
    if (g.rows > 1) bcast += bcast_seconds(p, col, w * at(lay.cols, 0) * e);
  }
  // With a lookahead (the host ring) the broadcast phase is what the blocking broadcasts take,
  // less what calibrate measured a lookahead of that depth takes off them here.
  double hidden = 0;
  if (cfg.lookahead > 0 && bcast > 0) {
    hidden = lookahead_hidden(p, cfg.lookahead, m);
    bcast *= 1.0 - hidden;
  }
  const double slowest = machine::max_of(compute);
  Prediction out;
  out.phases = {{phase::scatter, scatter},
                {phase::broadcast, bcast},
                {phase::compute, slowest},
                {phase::gather, gather + slowest - machine::min_of(compute)}};
  out.end_to_end = scatter + bcast + slowest + gather;
  out.notes.push_back(fmt::format("summa2d on a {} grid, {} panels", to_string(g), lay.panels.size()));
  if (cfg.lookahead > 0 && bcast > 0) {
    out.notes.push_back(fmt::format("lookahead {}: the blocking broadcasts' time x (1 - {:.3f}), as calibrate measured "
                                    "it",
                                    cfg.lookahead, hidden));
  }
  return out;
}

Prediction predict_gemm_at(const Profile& p, const GemmConfig& cfg, const MachineLayout& m) {
  if (cfg.threads <= 0) throw UsageError("predict_gemm: threads per rank must be resolved (> 0)");
  check_layout(m);
  // Row1D's rule (gemm refuses the run likewise); Summa2D's grid is checked where it is made.
  if (cfg.algorithm != GemmAlgorithm::summa2d && m.ranks() > cfg.shape.m) {
    throw UsageError(
        fmt::format("{} ranks but only {} rows of A: every rank needs at least one row; use fewer ranks or a larger "
                    "--m",
                    m.ranks(), cfg.shape.m));
  }
  const std::string what = fmt::format("gemm {}x{}x{}", cfg.shape.m, cfg.shape.n, cfg.shape.k);
  if (cfg.algorithm == GemmAlgorithm::summa2d) return check_prediction(predict_summa2d(p, cfg, m), what);
  return check_prediction(cfg.backend == GemmBackendKind::cublas ? predict_gpu_gemm(p, cfg, m)
                                                                 : predict_cpu_gemm(p, cfg, m),
                          what);
}

}  // namespace

Prediction predict_gemm(const Profile& p, const GemmConfig& cfg, const MachineLayout& m) {
  return machine::with_band(p, [&](const Profile& q) { return predict_gemm_at(q, cfg, m); });
}

}  // namespace scalebench
