#pragma once
// Ranks that hold the same work behind the same link, taken once (docs/model.md, "Limits"): the
// workloads' models evaluate one rank of each class and weight a sum by the class's size or bound
// a phase by it, so a prediction costs the same at four ranks as at four million. Row blocks come
// in two sizes (RowPartition's even split), a rank sits on rank 0's node or behind the inter-node
// link, and a Summa2D grid's rows and columns hold blocks of at most two sizes each way.
#include <cstdint>
#include <initializer_list>
#include <vector>

namespace scalebench {

// RowPartition's even split of `total` over `parts` without its table of parts: parts
// [0, extra) hold base + 1, the others base.
struct EvenSplit {
  EvenSplit(std::int64_t total, int parts);
  std::int64_t count(std::int64_t part) const noexcept { return base + (part < extra ? 1 : 0); }
  std::int64_t base = 0;
  std::int64_t extra = 0;
  int parts = 1;
};

// Ranks (or grid rows, grid columns) [first, first + count).
struct RankRange {
  std::int64_t first = 0;
  std::int64_t count = 0;
  std::int64_t end() const noexcept { return first + count; }
};

// [lo, hi) cut at each of `cuts` that lies inside, in order; no range is empty.
std::vector<RankRange> ranges_cut_at(std::int64_t lo, std::int64_t hi, std::initializer_list<std::int64_t> cuts);

// A block of a process grid of `grid_cols` columns (rank = row × grid_cols + column): the ranks
// of grid rows `rows` and grid columns `cols`.
struct GridCell {
  RankRange rows, cols;
  std::int64_t ranks() const noexcept { return rows.count * cols.count; }
  std::int64_t first_rank(int grid_cols) const noexcept { return rows.first * grid_cols + cols.first; }
  // Its ranks numbered below `limit` (ranks_per_node: those on rank 0's node).
  std::int64_t ranks_below(int grid_cols, std::int64_t limit) const noexcept;
};

// The cells of a grid_rows × grid_cols grid cut where a grid row's or a grid column's share
// changes (`row_cuts`, `col_cuts`: the first row or column of a smaller share), rows first; the
// first cell holds rank 0.
std::vector<GridCell> grid_cells(int grid_rows, int grid_cols, std::initializer_list<std::int64_t> row_cuts,
                                 std::initializer_list<std::int64_t> col_cuts);

}  // namespace scalebench
