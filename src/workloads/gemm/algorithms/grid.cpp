// Algorithm names, process grids and the memory a Summa2D rank holds.
#include <fmt/format.h>

#include <algorithm>

#include "gemm/algorithms/summa_layout.hpp"
#include "scalebench/base/checked_size.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/base/parse.hpp"
#include "scalebench/workloads/gemm/distributed_gemm.hpp"

namespace scalebench {

GemmAlgorithm parse_gemm_algorithm(const std::string& s) {
  if (s == "row1d") return GemmAlgorithm::row1d;
  if (s == "summa2d") return GemmAlgorithm::summa2d;
  throw UsageError(fmt::format("unknown --algorithm '{}'; use row1d or summa2d", s));
}

ProcessGrid most_square_grid(int ranks) {
  ProcessGrid g{1, ranks > 0 ? ranks : 1};
  for (int r = 1; r * r <= ranks; ++r) {
    if (ranks % r == 0) g = {r, ranks / r};
  }
  return g;
}

ProcessGrid parse_grid(const std::string& text) {
  const auto x = text.find('x');
  if (x == std::string::npos || x == 0 || x + 1 == text.size()) {
    throw UsageError(fmt::format("--grid '{}' is not PRxPC; give process rows x columns, e.g. --grid 2x3", text));
  }
  ProcessGrid g;
  g.rows = static_cast<int>(parse_integer("--grid (rows)", text.substr(0, x), 1, 65536));
  g.cols = static_cast<int>(parse_integer("--grid (columns)", text.substr(x + 1), 1, 65536));
  // rows x columns must be a rank count MPI can hold (65536 x 65536 once wrapped to 0 processes).
  product_within(fmt::format("--grid {} processes (rows x columns)", text), {g.rows, g.cols}, kInt32Max,
                 "the most ranks an MPI job counts", "; give a grid of PR*PC = the run's ranks");
  return g;
}

std::string to_string(const ProcessGrid& g) { return fmt::format("{}x{}", g.rows, g.cols); }

ProcessGrid resolve_grid(const GemmConfig& cfg, int ranks) {
  if (cfg.grid_rows == 0) {
    const ProcessGrid g = most_square_grid(ranks);
    if (cfg.algorithm == GemmAlgorithm::summa2d && (g.rows > cfg.shape.m || g.cols > cfg.shape.n)) {
      throw UsageError(fmt::format("the {} grid of {} ranks needs at least {} rows and {} columns of C (got {}x{}); "
                                   "use fewer ranks or a larger --m/--n",
                                   to_string(g), ranks, g.rows, g.cols, cfg.shape.m, cfg.shape.n));
    }
    return g;
  }
  const ProcessGrid g{cfg.grid_rows, cfg.grid_cols};
  if (g.size() != ranks) {
    throw UsageError(
        fmt::format("--grid {} has {} processes but the run has {} ranks; give PR*PC = {} (e.g. --grid {})",
                    to_string(g), g.size(), ranks, ranks, to_string(most_square_grid(ranks))));
  }
  if (g.rows > cfg.shape.m || g.cols > cfg.shape.n) {
    throw UsageError(fmt::format("--grid {} needs at least {} rows and {} columns of C (got {}x{}); every process "
                                 "needs a block; use a smaller grid or a larger --m/--n",
                                 to_string(g), g.rows, g.cols, cfg.shape.m, cfg.shape.n));
  }
  return g;
}

std::int64_t summa_host_bytes(const GemmConfig& cfg, const ProcessGrid& grid, int rank) {
  const SummaLayout layout(cfg.shape, grid, cfg.panel_width);
  const auto e = static_cast<std::int64_t>(host_element_bytes(cfg.precision));
  const int i = rank / grid.cols, j = rank % grid.cols;
  const std::int64_t mi = layout.rows.block(i).count, nj = layout.cols.block(j).count;
  const std::int64_t ka = layout.k_of_a.block(j).count, kb = layout.k_of_b.block(i).count;
  // The panels received: lookahead + 1 of each (host ring; the blocking schedule holds one).
  const std::int64_t w = layout.widest_panel() * (std::max(cfg.lookahead, 0) + 1);
  const std::string limit = "the largest 64-bit byte count", advice = "; use a smaller size";
  const std::int64_t blocks = sum_within("elements of A_ij + B_ij + C_ij + panels",
                                         {product_within("A_ij", {mi, ka}, kInt64Max, limit, advice),
                                          product_within("B_ij", {kb, nj}, kInt64Max, limit, advice),
                                          product_within("C_ij", {mi, nj}, kInt64Max, limit, advice),
                                          product_within("A panel", {mi, w}, kInt64Max, limit, advice),
                                          product_within("B panel", {w, nj}, kInt64Max, limit, advice)},
                                         kInt64Max, limit, advice);
  std::int64_t whole = 0;
  if (rank == 0) {
    const auto& s = cfg.shape;
    whole = sum_within("elements of A + B + C",
                       {product_within("A", {s.m, s.k}, kInt64Max, limit, advice),
                        product_within("B", {s.k, s.n}, kInt64Max, limit, advice),
                        product_within("C", {s.m, s.n}, kInt64Max, limit, advice)},
                       kInt64Max, limit, advice);
  }
  return product_within("host bytes of one rank",
                        {sum_within("elements", {blocks, whole}, kInt64Max, limit, advice), e}, kInt64Max, limit,
                        advice);
}

}  // namespace scalebench
