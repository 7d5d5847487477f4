// `auto` for gemm's schedule options: the alternatives, why the run would refuse one, and the
// ranking by the model or, without a profile, by the stated rules (choice.hpp; docs/model.md,
// "auto: the model decides").
#include "scalebench/workloads/choice.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <numeric>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "scalebench/base/error.hpp"
#include "scalebench/base/partition.hpp"
#include "scalebench/gpu/gpu.hpp"
#include "scalebench/workloads/distributed_gemm.hpp"

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
  for (int r = 1; r <= ranks; ++r) {
    if (ranks % r == 0) out.push_back({r, ranks / r});
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

// Host bytes the fullest node (rank 0's: it holds A and C whole) needs for `alt`; UsageError
// when a count overflows.
double root_node_host_bytes(const GemmConfig& alt, const MachineLayout& m) {
  const int on_node = std::min(m.ranks_per_node, m.ranks());
  double need = 0;
  if (alt.algorithm == GemmAlgorithm::summa2d) {
    const ProcessGrid g = resolve_grid(alt, m.ranks());
    for (int r = 0; r < on_node; ++r) need += static_cast<double>(summa_host_bytes(alt, g, r));
    return need;
  }
  const RowPartition rows(alt.shape.m, m.ranks());
  if (alt.distribution == GemmDistribution::shared) {
    // One A, B and C on the node (A and C whole on rank 0's), plus each rank's peer C_i.
    const double e = static_cast<double>(host_element_bytes(alt.precision));
    const double sm = static_cast<double>(alt.shape.m), sn = static_cast<double>(alt.shape.n),
                 sk = static_cast<double>(alt.shape.k);
    need = (sm * sk + sk * sn + sm * sn) * e;
    if (alt.peer) {
      for (int r = 0; r < on_node; ++r) need += static_cast<double>(rows.block(r).count) * sn * e;
    }
    return need;
  }
  for (int r = 0; r < on_node; ++r) {
    need += static_cast<double>(host_bytes_per_rank(alt, rows.block(r).count, r == 0));
  }
  return need;
}

// Device bytes rank 0's GPU needs (device memory plan; --overlap's panel buffer not counted).
double root_gpu_bytes(const GemmConfig& alt, const MachineLayout& m) {
  const RowPartition rows(alt.shape.m, m.ranks());
  const std::int64_t mine = rows.block(0).count;
  const bool nccl = alt.transport == Transport::nccl || (alt.overlap && m.ranks() > 1);
  // Rank 0 moves all of A in and C out when blocks go device to device.
  const std::int64_t held = nccl && alt.distribution == GemmDistribution::replicated ? alt.shape.m : mine;
  const DeviceMemoryPlan plan = plan_device_memory({mine, alt.shape.n, alt.shape.k}, held, alt.precision, nccl);
  const double sharing = m.gpus_per_node > 0 ? std::ceil(static_cast<double>(m.ranks_per_node) / m.gpus_per_node) : 1.0;
  return static_cast<double>(plan.total()) * sharing;
}

// The run's own rules for an alternative's options (gemm_config.cpp validate, the driver's
// checks), as one sentence; "" when it passes them.
std::string option_refusal(const GemmConfig& alt, const MachineLayout& m) {
  try {
    validate(alt);
  } catch (const UsageError& e) {
    return e.what();
  }
  const int ranks = m.ranks();
  if (alt.algorithm == GemmAlgorithm::row1d) {
    if (alt.grid_rows > 0 && (alt.grid_rows != ranks || alt.grid_cols != 1)) {
      return fmt::format("--grid {}x{} needs --algorithm summa2d (row1d runs on {}x1)", alt.grid_rows, alt.grid_cols,
                         ranks);
    }
    if (ranks > alt.shape.m) return fmt::format("{} ranks but only {} rows of A (--m)", ranks, alt.shape.m);
  } else {
    if (alt.resident) return "summa2d has no --resident schedule";
    // Its --overlap is its lookahead, on by default: the same run as the alternative without it.
    if (alt.overlap) return "summa2d's --overlap is its --lookahead (on by default): the same run as without --overlap";
    try {
      resolve_grid(alt, ranks);
    } catch (const UsageError& e) {
      return e.what();
    }
  }
  if (alt.overlap && alt.transport == Transport::mpi && ranks > 1) {
    return fmt::format("--overlap moves blocks between GPUs with NCCL; with {} ranks it needs --transport nccl", ranks);
  }
  return "";
}

}  // namespace

std::vector<GemmConfig> gemm_alternatives(const GemmConfig& cfg, int ranks) {
  const GemmAutoOptions& a = cfg.autos;
  const bool gpu = cfg.backend == GemmBackendKind::cublas;
  std::vector<GemmConfig> out;
  for (const GemmAlgorithm alg : either(a.algorithm, {GemmAlgorithm::row1d, GemmAlgorithm::summa2d}, cfg.algorithm)) {
    std::vector<ProcessGrid> grids{{cfg.grid_rows, cfg.grid_cols}};
    if (a.grid) grids = alg == GemmAlgorithm::summa2d ? grids_of(ranks) : std::vector<ProcessGrid>{{0, 0}};
    const auto dists = either(a.distribution && alg == GemmAlgorithm::row1d,
                              {GemmDistribution::replicated, GemmDistribution::shared},
                              a.distribution ? GemmDistribution::replicated : cfg.distribution);
    const auto transports = either(a.transport && gpu, {Transport::mpi, Transport::nccl},
                                   a.transport ? Transport::mpi : cfg.transport);
    const auto overlaps = either(a.overlap && gpu, {false, true}, a.overlap ? false : cfg.overlap);
    for (const auto& g : grids) {
      for (const auto d : dists) {
        for (const auto t : transports) {
          for (const bool o : overlaps) {
            GemmConfig c = cfg;
            c.algorithm = alg;
            c.grid_rows = g.rows;
            c.grid_cols = g.cols;
            c.distribution = d;
            c.transport = t;
            c.overlap = o;
            c.autos = {};
            c.choice = nullptr;
            out.push_back(std::move(c));
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
// several ranks share a node (one copy of A, B and C per node, only node leaders send), else
// replicated; NCCL between several GPUs, else MPI; --overlap on a GPU.
auto rule_key(const GemmConfig& c, const MachineLayout& m) {
  const bool gpu = c.backend == GemmBackendKind::cublas;
  const bool want_shared = m.ranks_per_node > 1;
  const bool want_nccl = gpu && m.ranks() > 1;
  return std::make_tuple(c.algorithm != GemmAlgorithm::row1d, std::abs(c.grid_rows - c.grid_cols),
                         (c.distribution == GemmDistribution::shared) != want_shared,
                         (c.transport == Transport::nccl) != want_nccl, c.overlap != gpu);
}

constexpr const char* kRulesText =
    "row1d before summa2d, the most square grid, shared when ranks share a node, NCCL between GPUs, overlap on a GPU";

void rank_by_rules(GemmChoice& c, const MachineLayout& m, const std::vector<std::size_t>& feasible) {
  std::vector<std::size_t> order = feasible;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return rule_key(c.alternatives[a].cfg, m) < rule_key(c.alternatives[b].cfg, m);
  });
  c.taken = static_cast<int>(order.front());
  for (const std::size_t i : feasible) {
    auto& alt = c.alternatives[i];
    if (alt.why.empty()) alt.why = i == order.front() ? "" : "feasible; later in the rules' order";
  }
  c.alternatives[order.front()].why = fmt::format("taken: the first feasible in the rules' order ({})", kRulesText);
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
  const auto best = *std::min_element(predicted.begin(), predicted.end(), [&](std::size_t a, std::size_t b) {
    return *c.alternatives[a].seconds < *c.alternatives[b].seconds;
  });
  c.taken = static_cast<int>(best);
  const double fastest = *c.alternatives[best].seconds;
  for (const std::size_t i : predicted) {
    auto& a = c.alternatives[i];
    a.why = i == best ? "taken: the fastest predicted"
                      : fmt::format("slower: {:+.1f}% over the fastest predicted", 100.0 * (*a.seconds / fastest - 1));
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
                    {"predicted_s", a.seconds ? nlohmann::json(*a.seconds) : nlohmann::json(nullptr)},
                    {"verdict", verdict_of(c, i)},
                    {"why", a.why}});
  }
  return {{"options", auto_option_names(autos)},
          {"by", c.by_model ? "model" : "rules"},
          {"basis", c.basis},
          {"taken", alternative_text(c.chosen(), ranks)},
          {"alternatives", alts}};
}

std::string choice_table(const GemmChoice& c, const GemmAutoOptions& autos) {
  const int ranks = std::max(1, c.ranks);
  std::string out = fmt::format("auto ({}) by {}: took {}\n", auto_option_names(autos), c.basis,
                                alternative_text(c.chosen(), ranks));
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
