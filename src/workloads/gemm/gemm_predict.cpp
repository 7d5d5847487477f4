// The distributed GEMM's predicted phases (docs/model.md, "Phases"): Row1D on the host and on
// GPUs (staged, NCCL, node-shared, the --overlap pipeline) and Summa2D, each phase as a record
// reports it (the slowest rank's time), end to end as the schedule runs them; on the machine's
// rates (model/machine_rates.hpp). Ranks that hold blocks of one size behind one link are
// evaluated once (model/rank_classes.hpp): a sum over ranks is a sum over classes, each term
// weighted by its ranks, and the slowest or fastest rank is the slowest or fastest class.
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "gemm/algorithms/summa_layout.hpp"
#include "model/machine_rates.hpp"
#include "model/rank_classes.hpp"
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

// What each rank of Row1D moves: its rows × `bytes_per_row`, by the two sizes of row blocks.
std::vector<RankBytes> bytes_of(const EvenSplit& rows, double bytes_per_row) {
  std::vector<RankBytes> out;
  for (const RankRange& c : ranges_cut_at(0, rows.parts, {rows.extra})) {
    out.push_back({static_cast<int>(c.first), static_cast<int>(c.count),
                   static_cast<double>(rows.count(c.first)) * bytes_per_row});
  }
  return out;
}

// What the ranks other than the root move in all.
double sum_after_root(const std::vector<RankBytes>& v) {
  double s = 0;
  for (const RankBytes& b : v) s += (b.first == 0 ? b.count - 1 : b.count) * b.bytes;
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

// Row1D's row blocks: rank r holds rows.count(r) rows, a multiply of `large` seconds on ranks
// [0, rows.extra) and of `small` on the others.
struct GemmBlocks {
  EvenSplit rows;
  double large = 0, small = 0;
  double compute(std::int64_t rank) const { return rank < rows.extra ? large : small; }
  double slowest() const { return rows.extra > 0 ? std::max(large, small) : small; }
  double fastest() const { return rows.extra > 0 ? std::min(large, small) : small; }
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
  GemmBlocks b{EvenSplit(s.m, m.ranks())};
  if (b.rows.extra > 0) b.large = block_seconds(p, cfg, m, {b.rows.base + 1, s.n, s.k});
  b.small = block_seconds(p, cfg, m, {b.rows.base, s.n, s.k});
  return b;
}

// --distribution shared: what crosses nodes. Rank 0 sends each other node its ranks' rows of A
// and receives their rows of C, one message per rank over the inter-node link; B is relayed
// among the nodes (a chain of segments from three nodes on): on its lanes (node_shared.hpp) the
// link carries B once, as from the leaders alone, so the relay of all of B among one rank a node
// is its time; inside a node nothing is copied (0 s).
// The broadcast phase of the first remote leader (the slowest rank's) also holds its wait for
// the rest of the scatter: rank 0 relays B once its last block of A is sent.
struct SharedTraffic {
  double scatter = 0, broadcast = 0, gather = 0;
  double broadcast_wait = 0;  // in the broadcast phase, not in end to end (it is the scatter's time)
};
SharedTraffic shared_traffic(const Profile& p, const MachineLayout& m, const EvenSplit& rows, const Sides& s,
                             double e) {
  SharedTraffic t;
  if (m.nodes <= 1) return t;
  const Link l = link_to(p, m, m.ranks_per_node);
  double first_node = 0;  // the blocks of the first remote node, sent first
  const std::int64_t per_node = m.ranks_per_node;
  for (const RankRange& c : ranges_cut_at(per_node, m.ranks(), {rows.extra, 2 * per_node})) {
    const double count = static_cast<double>(rows.count(c.first)), ranks = static_cast<double>(c.count);
    t.scatter += ranks * l.seconds(count * s.k * e);
    t.gather += ranks * l.seconds(count * s.n * e);
    if (c.first < 2 * per_node) first_node = t.scatter;
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
double replicated_b_wait(const Profile& p, const MachineLayout& m, const EvenSplit& rows, double a_row_bytes,
                         double scatter, double b_bytes) {
  if (!relay_goes_along_chain(m.ranks(), static_cast<std::int64_t>(b_bytes))) return 0.0;
  const double first = link_to(p, m, 1).seconds(static_cast<double>(rows.count(1)) * a_row_bytes);
  return std::max(0.0, scatter - first);
}

Prediction predict_cpu_gemm(const Profile& p, const GemmConfig& cfg, const MachineLayout& m) {
  const Sides s = sides(cfg.shape);
  const double e = static_cast<double>(host_element_bytes(cfg.precision));
  const GemmBlocks b = compute_times(p, cfg, m);
  const bool shared = cfg.distribution == GemmDistribution::shared;
  const SharedTraffic t = shared ? shared_traffic(p, m, b.rows, s, e) : SharedTraffic{};
  const double scatter = shared ? t.scatter : scatterv_seconds(p, m, bytes_of(b.rows, s.k * e));
  const double bcast = shared ? t.broadcast : relay_seconds(p, m, s.k * s.n * e);
  const double gather = shared ? t.gather : gatherv_seconds(p, m, bytes_of(b.rows, s.n * e));
  const double compute = b.slowest();
  const double wait = shared ? t.broadcast_wait : replicated_b_wait(p, m, b.rows, s.k * e, scatter, s.k * s.n * e);
  Prediction out;
  // The gather's slowest rank is the one that finished its multiply first and waits for the last.
  out.phases = {{phase::scatter, scatter},
                {phase::broadcast, bcast + wait},
                {phase::compute, compute},
                {phase::gather, gather + compute - b.fastest()}};
  out.end_to_end = scatter + bcast + compute + gather;
  return out;
}

// An --overlap pipeline's fill (B's first k-panel, `b_share` of it on each link, and the head
// rows' first panel of A in) and drain (the last row block of C out), which overlap nothing.
struct FillDrain {
  double fill = 0, drain = 0;
};
FillDrain fill_and_drain(const GpuProfile& g, const GemmShape& shape, const EvenSplit& rows, double eh,
                         double b_share) {
  // Rank 0's plan (it depends on rank 0's rows alone).
  const OverlapPlan plan = make_overlap_plan(shape, RowPartition(rows.count(0), 1));
  const double n = static_cast<double>(shape.n);
  const double width = plan.panels() > 0 ? static_cast<double>(plan.panel_first[1] - plan.panel_first[0])
                                         : static_cast<double>(shape.k);
  const double head = plan.head.empty() ? 0.0 : static_cast<double>(plan.head[0]);
  const double last_rows = plan.blocks.empty() || plan.blocks[0].empty()
                               ? head
                               : static_cast<double>(plan.blocks[0].back().count);
  return {g.h2d_pinned.seconds((width * n * b_share + head * width) * eh), g.d2h_pinned.seconds(last_rows * n * eh)};
}

// One rank of each pair (size of its row block, size of its slice of B) that occurs under
// --distribution shared: rank r holds rows.count(r) rows and slice r % (ranks per node) of B.
std::vector<std::int64_t> shared_representatives(const EvenSplit& rows, const EvenSplit& slices) {
  std::vector<std::int64_t> out;
  const std::int64_t per_node = slices.parts;
  for (const RankRange& held : ranges_cut_at(0, rows.parts, {rows.extra})) {
    for (const RankRange& slice : ranges_cut_at(0, per_node, {slices.extra})) {
      // The first rank of `held` whose place on its node lies in `slice`.
      const std::int64_t at = held.first % per_node;
      std::int64_t r = held.first;
      if (at < slice.first) {
        r += slice.first - at;
      } else if (at >= slice.end()) {
        r += per_node - at + slice.first;
      }
      if (r < held.end()) out.push_back(r);
    }
  }
  return out;
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
  const EvenSplit slices(cfg.shape.k, per_node);
  double h2d = 0, d2h = 0, device = 0;  // the slowest rank's
  for (const std::int64_t r : shared_representatives(b.rows, slices)) {
    const double rows = static_cast<double>(b.rows.count(r));
    const double b_rows = nccl ? static_cast<double>(slices.count(r % per_node)) : s.k;
    const double in = g.h2d_pinned.seconds((rows * s.k + b_rows * s.n) * eh);
    const double back = g.d2h_pinned.seconds(rows * s.n * eh);
    h2d = std::max(h2d, in);
    d2h = std::max(d2h, back);
    device = std::max(device, in + b.compute(r) + back);
  }
  const double allgather =
      nccl ? nccl_link(p, {1, per_node, m.gpus_per_node}).seconds(s.k * s.n * ein * (per_node - 1) / per_node) : 0.0;
  const double compute = b.slowest();
  Prediction out;
  out.phases = {{phase::scatter, t.scatter}, {phase::broadcast, t.broadcast + t.broadcast_wait},
                {phase::h2d, h2d},           {phase::allgather, allgather},
                {phase::compute, compute},   {phase::d2h, d2h},
                {phase::gather, t.gather}};
  const double host = t.scatter + t.broadcast + t.gather;
  if (!cfg.overlap) {
    out.end_to_end = host + device + allgather;
    return out;
  }
  const auto [fill, drain] = fill_and_drain(g, cfg.shape, b.rows, eh, 1.0 / per_node);
  out.phases.emplace_back(phase::fill, fill);
  out.phases.emplace_back(phase::drain, drain);
  out.end_to_end = host + fill + std::max({h2d, d2h, compute, allgather}) + drain;
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
  const double compute = b.slowest();
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
    const double scatter = scatterv_seconds(p, m, bytes_of(b.rows, s.k * eh));
    const double bcast = relay_seconds(p, m, kn * eh);
    const double wait = replicated_b_wait(p, m, b.rows, s.k * eh, scatter, kn * eh);
    // Each size of row block: its copies in and out and its device's whole time.
    std::vector<double> h2d, d2h, device;
    for (const RankRange& c : ranges_cut_at(0, m.ranks(), {b.rows.extra})) {
      const double rows = static_cast<double>(b.rows.count(c.first));
      h2d.push_back(g.h2d_pinned.seconds((rows * s.k + kn) * eh));
      d2h.push_back(g.d2h_pinned.seconds(rows * s.n * eh));
      device.push_back(h2d.back() + b.compute(c.first) + d2h.back());
    }
    const double gather = gatherv_seconds(p, m, bytes_of(b.rows, s.n * eh));
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
    scatter = l.seconds(sum_after_root(bytes_of(b.rows, s.k * ein)));
    bcast = l.seconds(kn * ein);
    gather = l.seconds(sum_after_root(bytes_of(b.rows, s.n * eout)));
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

// The seconds of every panel product on an mi × nj block, added in panel order; panels of one
// width are rated once (a large grid has thousands of panels in a few widths).
double summa_block_seconds(const Profile& p, const GemmConfig& cfg, const MachineLayout& m, const SummaLayout& lay,
                           double mi, double nj) {
  std::map<std::int64_t, double> by_width;
  double seconds = 0;
  for (const auto& panel : lay.panels) {
    auto it = by_width.find(panel.width);
    if (it == by_width.end()) {
      const GemmShape block{static_cast<std::int64_t>(mi), static_cast<std::int64_t>(nj), panel.width};
      const double gflops = cfg.backend == GemmBackendKind::naive
                                ? naive_gemm_gflops(p, cfg.precision, block) * machine::thread_share(p, m, 1)
                                : machine::node_shared_blas_gflops(p, cfg.precision,
                                                                   machine::thread_share(p, m, cfg.threads), m, block);
      it = by_width.emplace(panel.width, 2.0 * mi * nj * static_cast<double>(panel.width) / (gflops * 1e9)).first;
    }
    seconds += it->second;
  }
  return seconds;
}

// --algorithm summa2d on a CPU backend (src/workloads/gemm/algorithms/summa2d.cpp): rank 0 packs and
// sends every rank its A_ij and B_ij, one message each; for every k-panel the owners broadcast
// A's part along their grid row and B's part along their grid column and each rank adds the
// panel product to C_ij; rank 0 receives and unpacks every C_ij. The slowest rank holds the
// largest blocks (the first grid row and column). Grid rows and columns hold blocks of at most
// two sizes each way (and A's and B's k blocks likewise): each cell of equal blocks is evaluated
// once, its messages weighted by its ranks on rank 0's node and on the others.
Prediction predict_summa2d(const Profile& p, const GemmConfig& cfg, const MachineLayout& m) {
  if (cfg.backend == GemmBackendKind::cublas) {
    throw UsageError("the model predicts --algorithm summa2d on the CPU backends (naive, openblas) only");
  }
  const ProcessGrid g = resolve_grid(cfg, m.ranks());
  const SummaLayout lay(cfg.shape, g, cfg.panel_width);
  const double e = static_cast<double>(host_element_bytes(cfg.precision));
  const auto at = [](const RowPartition& part, std::int64_t i) {
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
  const auto& s = cfg.shape;
  for (const GridCell& c : grid_cells(g.rows, g.cols, {EvenSplit(s.m, g.rows).extra, EvenSplit(s.k, g.rows).extra},
                                      {EvenSplit(s.n, g.cols).extra, EvenSplit(s.k, g.cols).extra})) {
    const std::int64_t i = c.rows.first, j = c.cols.first;
    const double mi = at(lay.rows, i), nj = at(lay.cols, j);
    auto it = by_block.find({mi, nj});
    if (it == by_block.end())
      it = by_block.emplace(std::make_pair(mi, nj), summa_block_seconds(p, cfg, m, lay, mi, nj)).first;
    compute.push_back(it->second);
    // Rank 0 sends and receives nothing of its own.
    const std::int64_t on_first_node = c.ranks_below(g.cols, m.ranks_per_node);
    const std::int64_t near = on_first_node - (c.first_rank(g.cols) == 0 ? 1 : 0), far = c.ranks() - on_first_node;
    for (const auto& [ranks, first] : {std::make_pair(near, 0), std::make_pair(far, m.ranks_per_node)}) {
      if (ranks <= 0) continue;
      const Link l = link_to(p, m, first);
      const double n = static_cast<double>(ranks);
      scatter += n * (l.seconds(mi * at(lay.k_of_a, j) * e) + l.seconds(at(lay.k_of_b, i) * nj * e));
      gather += n * l.seconds(mi * nj * e);
    }
  }
  const MachineLayout row = group_layout(m, g.cols, 1), col = group_layout(m, g.rows, g.cols);
  // Each panel's broadcasts along a grid row and a grid column, in panel order; rated once per width.
  std::map<std::int64_t, std::pair<double, double>> by_width;
  double bcast = 0;
  for (const auto& panel : lay.panels) {
    auto it = by_width.find(panel.width);
    if (it == by_width.end()) {
      const double w = static_cast<double>(panel.width);
      it = by_width
               .emplace(panel.width, std::make_pair(g.cols > 1 ? bcast_seconds(p, row, at(lay.rows, 0) * w * e) : 0.0,
                                                    g.rows > 1 ? bcast_seconds(p, col, w * at(lay.cols, 0) * e) : 0.0))
               .first;
    }
    if (g.cols > 1) bcast += it->second.first;
    if (g.rows > 1) bcast += it->second.second;
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
