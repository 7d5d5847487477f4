// `auto` for gemm's schedule options: the alternatives, why the run would refuse one, and the
// ranking by the model or, without a profile, by the stated rules (choice.hpp; docs/model.md,
// "auto: the model decides").
#include "scalebench/workloads/gemm/choice.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <numeric>
#include <optional>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "gemm/algorithms/algorithm_description.hpp"
#include "model/rank_classes.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/gpu/gpu.hpp"
#include "scalebench/workloads/gemm/distributed_gemm.hpp"

namespace scalebench {
namespace {

// Bytes in the unit that keeps three significant figures (512 bytes, 1.50 MiB, 12.0 GiB): a
// small figure is never rounded to "0.00 GiB".
std::string bytes_text(double bytes) {
  constexpr std::array<const char*, 5> kUnits = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  if (bytes < 1024) return fmt::format("{:.0f} bytes", bytes);
  std::size_t unit = 0;
  double v = bytes / 1024;
  while (v >= 1024 && unit + 1 < kUnits.size()) {
    v /= 1024;
    ++unit;
  }
  return fmt::format("{:.3g} {}", v, kUnits[unit]);
}

// "<need> ... <have>": both in bytes_text, or as exact byte counts when those read the same.
std::pair<std::string, std::string> need_and_have(double need, double have) {
  std::string n = bytes_text(need), h = bytes_text(have);
  if (n == h) return {fmt::format("{:.0f} bytes", need), fmt::format("{:.0f} bytes", have)};
  return {n, h};
}

// The factorisations PR x PC of `ranks`, the most square first (rows <= columns first on a tie).
std::vector<ProcessGrid> grids_of(int ranks) {
  std::vector<ProcessGrid> out;
  for (int r = 1; r <= ranks / r; ++r) {
    if (ranks % r != 0) continue;
    out.push_back({r, ranks / r});
    if (r != ranks / r) out.push_back({ranks / r, r});
  }
  std::stable_sort(out.begin(), out.end(), [](const ProcessGrid& a, const ProcessGrid& b) {
    const auto key = [](const ProcessGrid& g) { return std::make_tuple(std::abs(g.rows - g.cols), g.rows > g.cols); };
    return key(a) < key(b);
  });
  if (out.size() > static_cast<std::size_t>(kMaxAutoGrids)) out.resize(kMaxAutoGrids);
  return out;
}

template <class T>
std::vector<T> either(bool open, std::vector<T> all, T given) {
  return open ? all : std::vector<T>{given};
}

// Host bytes of rank 0's node under Summa2D: each cell of the grid whose ranks hold blocks of one
// size (rank 0 apart: it holds A, B and C whole) counted once for its ranks on that node.
double summa_root_node_host_bytes(const GemmConfig& alt, const MachineLayout& m) {
  const ProcessGrid g = resolve_grid(alt, m.ranks());
  const auto& s = alt.shape;
  const std::int64_t on_node = std::min(m.ranks_per_node, m.ranks());
  double need = static_cast<double>(summa_host_bytes(alt, g, 0));
  for (const GridCell& c : grid_cells(g.rows, g.cols, {EvenSplit(s.m, g.rows).extra, EvenSplit(s.k, g.rows).extra},
                                      {EvenSplit(s.n, g.cols).extra, EvenSplit(s.k, g.cols).extra})) {
    const bool holds_root = c.first_rank(g.cols) == 0;  // rank 0 is counted above
    const std::int64_t ranks = c.ranks_below(g.cols, on_node) - (holds_root ? 1 : 0);
    if (ranks <= 0) continue;
    // Any rank of the cell but rank 0: the next one along its first grid row, or down its column.
    const std::int64_t one = holds_root ? (c.cols.count > 1 ? 1 : g.cols) : c.first_rank(g.cols);
    need += static_cast<double>(ranks) * static_cast<double>(summa_host_bytes(alt, g, static_cast<int>(one)));
  }
  return need;
}

// Host bytes the fullest node (rank 0's: it holds A and C whole) needs for `alt`; UsageError
// when a count overflows.
double root_node_host_bytes(const GemmConfig& alt, const MachineLayout& m) {
  if (alt.algorithm == GemmAlgorithm::summa2d) return summa_root_node_host_bytes(alt, m);
  const int on_node = std::min(m.ranks_per_node, m.ranks());
  double need = 0;
  const EvenSplit rows(alt.shape.m, m.ranks());
  if (alt.distribution == GemmDistribution::shared) {
    // One A, B and C on the node (A and C whole on rank 0's), plus each rank's peer C_i.
    const double e = static_cast<double>(host_element_bytes(alt.precision));
    const double sm = static_cast<double>(alt.shape.m), sn = static_cast<double>(alt.shape.n),
                 sk = static_cast<double>(alt.shape.k);
    need = (sm * sk + sk * sn + sm * sn) * e;
    if (alt.peer) {
      for (const RankRange& c : ranges_cut_at(0, on_node, {rows.extra})) {
        need += static_cast<double>(c.count) * (static_cast<double>(rows.count(c.first)) * sn * e);
      }
    }
    return need;
  }
  // Rank 0 holds A and C whole; the others of its node their rows, in two sizes.
  for (const RankRange& c : ranges_cut_at(0, on_node, {1, rows.extra})) {
    need += static_cast<double>(c.count) *
            static_cast<double>(host_bytes_per_rank(alt, rows.count(c.first), c.first == 0));
  }
  return need;
}

// Device bytes rank 0's GPU needs (device memory plan; --overlap's panel buffer not counted).
double root_gpu_bytes(const GemmConfig& alt, const MachineLayout& m) {
  const std::int64_t mine = EvenSplit(alt.shape.m, m.ranks()).count(0);
  const bool nccl = alt.transport == Transport::nccl || (alt.overlap && m.ranks() > 1);
  // Rank 0 moves all of A in and C out when blocks go device to device.
  const std::int64_t held = nccl && alt.distribution == GemmDistribution::replicated ? alt.shape.m : mine;
  const DeviceMemoryPlan plan = plan_device_memory({mine, alt.shape.n, alt.shape.k}, held, alt.precision, nccl);
  const double sharing = m.gpus_per_node > 0 ? std::ceil(static_cast<double>(m.ranks_per_node) / m.gpus_per_node) : 1.0;
  return static_cast<double>(plan.total()) * sharing;
}

// The run's own rules for an alternative's options (check_gemm_options, as the driver checks
// them), as one sentence; "" when it passes them.
std::string option_refusal(const GemmConfig& alt, const MachineLayout& m) {
  try {
    check_gemm_options(alt, m.ranks());
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

// The lookaheads an alternative of algorithm `alg` may take: summa2d's 0..kMaxAutoLookahead when
// left open; row1d has none (it keeps the placeholder, and so is never refused for it).
std::vector<int> lookaheads_of(const GemmConfig& cfg, GemmAlgorithm alg) {
  if (alg == GemmAlgorithm::row1d) return {cfg.autos.lookahead ? kDefaultLookahead : cfg.lookahead};
  if (!cfg.autos.lookahead) return {cfg.lookahead};
  std::vector<int> out;
  for (int d = 0; d <= kMaxAutoLookahead; ++d) out.push_back(d);
  return out;
}

}  // namespace

std::vector<GemmConfig> gemm_alternatives(const GemmConfig& cfg, int ranks) {
  const GemmAutoOptions& a = cfg.autos;
  const bool gpu = cfg.backend == GemmBackendKind::cublas;
  std::vector<GemmConfig> out;
  for (const GemmAlgorithm alg : either(a.algorithm, {GemmAlgorithm::row1d, GemmAlgorithm::summa2d}, cfg.algorithm)) {
    const bool row1d = alg == GemmAlgorithm::row1d;
    // --overlap given with the algorithm left open is row1d's pipeline: summa2d reads it as its
    // lookahead only when --algorithm summa2d is given too.
    if (!row1d && a.algorithm && !a.overlap && cfg.overlap) continue;
    std::vector<ProcessGrid> grids{{cfg.grid_rows, cfg.grid_cols}};
    if (a.grid) grids = row1d ? std::vector<ProcessGrid>{{0, 0}} : grids_of(ranks);
    const auto dists = either(a.distribution && row1d, {GemmDistribution::replicated, GemmDistribution::shared},
                              a.distribution ? GemmDistribution::replicated : cfg.distribution);
    const auto transports = either(a.transport && gpu, {Transport::mpi, Transport::nccl},
                                   a.transport ? Transport::mpi : cfg.transport);
    // Summa2D's overlap is its lookahead: left open, only its lookaheads are ranked.
    const auto overlaps = either(a.overlap && gpu && row1d, {false, true}, a.overlap ? false : cfg.overlap);
    for (const auto& g : grids) {
      for (const auto d : dists) {
        for (const auto t : transports) {
          for (const bool o : overlaps) {
            for (const int depth : lookaheads_of(cfg, alg)) {
              GemmConfig c = cfg;
              c.algorithm = alg;
              c.grid_rows = g.rows;
              c.grid_cols = g.cols;
              c.distribution = d;
              c.transport = t;
              c.overlap = o;
              c.lookahead = depth;
              c.autos = {};
              c.choice = nullptr;
              out.push_back(std::move(c));
            }
          }
        }
      }
    }
  }
  return out;
}

std::string gemm_refusal(const GemmConfig& alt, const ChoiceFacts& facts) {
  const MachineLayout& m = facts.layout;
  if (std::string why = option_refusal(alt, m); !why.empty()) return why;
  const bool needs_nccl = alt.transport == Transport::nccl || (alt.overlap && m.ranks() > 1);
  if (needs_nccl && !facts.device_transport) return "NCCL is not in this scalebench (built without CUDA)";
  // Ranks beyond a node's GPUs share them (--share-gpu), and NCCL takes one GPU per rank.
  if (needs_nccl && alt.backend == GemmBackendKind::cublas && m.gpus_per_node > 0 &&
      m.ranks_per_node > m.gpus_per_node) {
    return fmt::format("NCCL needs one GPU per rank, and {} ranks share {} GPU(s) on a node", m.ranks_per_node,
                       m.gpus_per_node);
  }
  const bool shared = alt.algorithm == GemmAlgorithm::row1d && alt.distribution == GemmDistribution::shared;
  if (shared && facts.shared_refusal && !facts.shared_refusal->empty()) {
    return "shared windows cannot be made (the run would fall back to replicated): " + *facts.shared_refusal;
  }
  try {
    if (facts.host_bytes_per_node) {
      const double need = root_node_host_bytes(alt, m);
      if (need > *facts.host_bytes_per_node) {
        const auto [n, h] = need_and_have(need, *facts.host_bytes_per_node);
        return fmt::format("needs {} of host memory on rank 0's node, {} is free", n, h);
      }
    }
    if (facts.gpu_bytes && alt.backend == GemmBackendKind::cublas && alt.algorithm == GemmAlgorithm::row1d) {
      const double need = root_gpu_bytes(alt, m);
      if (need > *facts.gpu_bytes) {
        const auto [n, h] = need_and_have(need, *facts.gpu_bytes);
        return fmt::format("needs {} of GPU memory on rank 0's GPU, it has {}", n, h);
      }
    }
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

namespace {

// The rules' order (docs/model.md): row1d before summa2d; the most square grid; shared when
// several ranks share a node (one copy of A, B and C per node, B crossing nodes once), else
// replicated; NCCL between several GPUs, else MPI; --overlap on a GPU; summa2d's lookahead 1 over
// NCCL (a stream of its own moves the next panel while one multiplies), else 0 (on the host MPI
// moves a panel only inside the ranks' own calls: what a lookahead hides there is known only once
// calibrate measured it, and it cost time at 16 to 64 ranks of a 64-core node).
int rule_lookahead(const GemmConfig& c) {
  return c.backend == GemmBackendKind::cublas && c.transport == Transport::nccl ? 1 : 0;
}

auto rule_key(const GemmConfig& c, const MachineLayout& m) {
  const bool gpu = c.backend == GemmBackendKind::cublas;
  const bool want_shared = m.ranks_per_node > 1;
  const bool want_nccl = gpu && m.ranks() > 1;
  const bool summa2d = c.algorithm == GemmAlgorithm::summa2d;
  return std::make_tuple(summa2d, std::abs(c.grid_rows - c.grid_cols),
                         (c.distribution == GemmDistribution::shared) != want_shared,
                         (c.transport == Transport::nccl) != want_nccl, c.overlap != gpu,
                         summa2d ? std::abs(c.lookahead - rule_lookahead(c)) : 0);
}

constexpr const char* kRulesText =
    "row1d before summa2d, the most square grid, shared when ranks share a node, NCCL between GPUs, overlap on a "
    "GPU, summa2d's lookahead 1 over NCCL and 0 on the host";

// The first of `among` in the rules' order.
std::size_t first_by_rules(const GemmChoice& c, const MachineLayout& m, const std::vector<std::size_t>& among) {
  std::vector<std::size_t> order = among;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return rule_key(c.alternatives[a].cfg, m) < rule_key(c.alternatives[b].cfg, m);
  });
  return order.front();
}

void rank_by_rules(GemmChoice& c, const MachineLayout& m, const std::vector<std::size_t>& feasible) {
  const std::size_t first = first_by_rules(c, m, feasible);
  c.taken = static_cast<int>(first);
  for (const std::size_t i : feasible) {
    auto& alt = c.alternatives[i];
    if (alt.why.empty()) alt.why = i == first ? "" : "feasible; later in the rules' order";
  }
  c.alternatives[first].why = fmt::format("taken: the first feasible in the rules' order ({})", kRulesText);
}

// No alternative is feasible. Options the user asked as `auto` make that the choice's own error;
// options only defaulted never refuse a run of their own: the rules' first alternative runs, and
// the run's own check refuses it with the message and exit code a pinned run gets.
void nothing_feasible(GemmChoice& c, const GemmConfig& cfg, const MachineLayout& m) {
  if (!cfg.autos.asked.any()) {
    std::vector<std::size_t> all(c.alternatives.size());
    std::iota(all.begin(), all.end(), std::size_t{0});
    const std::size_t first = first_by_rules(c, m, all);
    c.taken = static_cast<int>(first);
    c.by_model = false;
    c.basis = "rules: no alternative is feasible; the rules' first runs and its own check says why";
    c.alternatives[first].why = "taken: the first in the rules' order (" + c.alternatives[first].why + ")";
    return;
  }
  std::string all;
  for (const auto& a : c.alternatives) all += fmt::format("; {}: {}", alternative_text(a.cfg, m.ranks()), a.why);
  const std::string what = fmt::format("auto ({}) found no alternative this run accepts{}",
                                       auto_option_names(cfg.autos), all);
  // Every alternative refused for memory: the machine cannot hold the run (as for a pinned run).
  const bool memory_only = std::all_of(c.alternatives.begin(), c.alternatives.end(), [](const GemmAlternative& a) {
    return a.why.rfind("refused: needs ", 0) == 0 && a.why.find(" memory ") != std::string::npos;
  });
  if (memory_only) throw ResourceError(what);
  throw UsageError(what);
}

}  // namespace

GemmChoice choose_gemm(const GemmConfig& cfg, const ChoiceFacts& facts, const Profile* profile,
                       const std::string& no_profile) {
  GemmChoice c;
  const MachineLayout& m = facts.layout;
  c.ranks = m.ranks();
  std::vector<std::size_t> feasible, predicted;
  for (GemmConfig& alt : gemm_alternatives(cfg, m.ranks())) {
    GemmAlternative a;
    a.cfg = std::move(alt);
    a.why = gemm_refusal(a.cfg, facts);
    a.feasible = a.why.empty();
    if (!a.feasible) a.why = "refused: " + a.why;
    if (a.feasible) feasible.push_back(c.alternatives.size());
    if (a.feasible && profile != nullptr) {
      GemmConfig p = a.cfg;
      if (p.backend == GemmBackendKind::naive) p.threads = 1;
      if (p.threads <= 0) p.threads = std::max(1, profile->cores / std::max(1, m.ranks_per_node));
      try {
        a.seconds = predict_gemm(*profile, p, m).end_to_end;
        predicted.push_back(c.alternatives.size());
      } catch (const UsageError& e) {
        a.why = fmt::format("not predicted: {}", e.what());
      }
    }
    c.alternatives.push_back(std::move(a));
  }
  if (feasible.empty()) {
    nothing_feasible(c, cfg, m);
    return c;
  }
  if (predicted.empty()) {
    c.by_model = false;
    c.basis = profile == nullptr
                  ? fmt::format("rules: {}", no_profile)
                  : fmt::format("rules: the model (profile {}) predicts none of the feasible alternatives",
                                profile->source);
    rank_by_rules(c, m, feasible);
    return c;
  }
  c.by_model = true;
  c.basis = fmt::format("model: profile {}", profile->source);
  const auto fastest_at = *std::min_element(predicted.begin(), predicted.end(), [&](std::size_t a, std::size_t b) {
    return *c.alternatives[a].seconds < *c.alternatives[b].seconds;
  });
  const double fastest = *c.alternatives[fastest_at].seconds;
  // Alternatives predicted within the model's margin of the fastest are ties: the model cannot
  // tell them apart, so the rules' first of them is taken (it does not switch on noise).
  std::vector<std::size_t> ties;
  for (const std::size_t i : predicted) {
    if (*c.alternatives[i].seconds <= fastest * (1 + kChoiceTieMargin)) ties.push_back(i);
  }
  const std::size_t best = first_by_rules(c, m, ties);
  c.taken = static_cast<int>(best);
  std::optional<std::size_t> next;  // the fastest of the others: what the taken one beat
  for (const std::size_t i : predicted) {
    auto& a = c.alternatives[i];
    if (i != best && (!next || *a.seconds < *c.alternatives[*next].seconds)) next = i;
    a.why = i == best ? (ties.size() > 1 ? fmt::format("taken: the rules' first of {} predicted within {:.0f}% of the "
                                                       "fastest (ties for the model)",
                                                       ties.size(), 100 * kChoiceTieMargin)
                                         : std::string("taken: the fastest predicted"))
                      : fmt::format("slower: {:+.1f}% over the fastest predicted", 100.0 * (*a.seconds / fastest - 1));
  }
  if (next) {
    const double ahead = *c.alternatives[*next].seconds / *c.alternatives[best].seconds - 1;
    c.alternatives[best].why += fmt::format(", {:.1f}% {} the next ({})", 100.0 * std::abs(ahead),
                                            ahead >= 0 ? "ahead of" : "behind",
                                            alternative_text(c.alternatives[*next].cfg, m.ranks()));
  }
  return c;
}

std::string alternative_text(const GemmConfig& alt, int ranks) {
  std::string grid = alt.algorithm == GemmAlgorithm::row1d ? fmt::format("{}x1", ranks) : "?";
  if (alt.algorithm == GemmAlgorithm::summa2d) {
    try {
      grid = to_string(resolve_grid(alt, ranks));
    } catch (const UsageError&) {
      grid = fmt::format("{}x{}", alt.grid_rows, alt.grid_cols);
    }
  }
  std::string out = fmt::format("{} {} {}", to_string(alt.algorithm), grid, to_string(alt.distribution));
  if (alt.backend == GemmBackendKind::cublas) {
    out += fmt::format(" transport {} {}", to_string(alt.transport), alt.overlap ? "overlap" : "no-overlap");
  }
  if (alt.algorithm == GemmAlgorithm::summa2d) out += fmt::format(" lookahead {}", alt.lookahead);
  return out;
}

namespace {
std::string verdict_of(const GemmChoice& c, std::size_t i) {
  const auto& a = c.alternatives[i];
  if (static_cast<int>(i) == c.taken) return "taken";
  if (!a.feasible) return "refused";
  if (c.by_model) return a.seconds ? "slower" : "not predicted";
  return "feasible";
}
}  // namespace

nlohmann::json choice_json(const GemmChoice& c, const GemmAutoOptions& autos) {
  const int ranks = std::max(1, c.ranks);
  nlohmann::json alts = nlohmann::json::array();
  for (std::size_t i = 0; i < c.alternatives.size(); ++i) {
    const auto& a = c.alternatives[i];
    alts.push_back({{"options", alternative_text(a.cfg, ranks)},
                    {"algorithm", to_string(a.cfg.algorithm)},
                    {"grid", a.cfg.algorithm == GemmAlgorithm::summa2d && a.cfg.grid_rows > 0
                                 ? nlohmann::json(fmt::format("{}x{}", a.cfg.grid_rows, a.cfg.grid_cols))
                                 : nlohmann::json(nullptr)},
                    {"distribution", to_string(a.cfg.distribution)},
                    {"transport", to_string(a.cfg.transport)},
                    {"overlap", a.cfg.overlap},
                    {"lookahead", a.cfg.algorithm == GemmAlgorithm::summa2d ? nlohmann::json(a.cfg.lookahead)
                                                                            : nlohmann::json(nullptr)},
                    {"predicted_s", a.seconds ? nlohmann::json(*a.seconds) : nlohmann::json(nullptr)},
                    {"verdict", verdict_of(c, i)},
                    {"why", a.why}});
  }
  return {{"options", auto_option_names(autos)},
          {"asked", asked_option_names(autos)},
          {"defaulted", defaulted_option_names(autos)},
          {"by", c.by_model ? "model" : "rules"},
          {"basis", c.basis},
          {"taken", alternative_text(c.chosen(), ranks)},
          {"alternatives", alts}};
}

std::string choice_line(const GemmChoice& c, const GemmAutoOptions& autos) {
  const std::string asked = asked_option_names(autos), defaulted = defaulted_option_names(autos);
  std::string out = fmt::format("auto ({}) by {}: took {}", auto_option_names(autos), c.basis,
                                alternative_text(c.chosen(), std::max(1, c.ranks)));
  if (!asked.empty() && !defaulted.empty()) {
    out += fmt::format(" (asked: {}; not given: {})", asked, defaulted);
  } else if (!defaulted.empty()) {
    out += " (not given: auto by default)";
  }
  return out + "\n";
}

std::string choice_table(const GemmChoice& c, const GemmAutoOptions& autos) {
  const int ranks = std::max(1, c.ranks);
  std::string out = choice_line(c, autos);
  // Predicted ones first, fastest first; then the rest in enumeration order.
  std::vector<std::size_t> order(c.alternatives.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const auto& x = c.alternatives[a].seconds;
    const auto& y = c.alternatives[b].seconds;
    if (x && y) return *x < *y;
    return x.has_value() && !y.has_value();
  });
  for (const std::size_t i : order) {
    const auto& a = c.alternatives[i];
    out += fmt::format("  {:<8} {:>12}  {:<44} {}\n", verdict_of(c, i),
                       a.seconds ? fmt::format("{:.6f} s", *a.seconds) : std::string("-"),
                       alternative_text(a.cfg, ranks), a.why);
  }
  return out;
}

}  // namespace scalebench
