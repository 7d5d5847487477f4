#include "model/rank_classes.hpp"

#include <algorithm>
#include <stdexcept>

namespace scalebench {

EvenSplit::EvenSplit(std::int64_t total, int parts_in) : parts(parts_in) {
  if (parts <= 0 || total < 0) throw std::invalid_argument("EvenSplit: parts must be > 0 and total >= 0");
  base = total / parts;
  extra = total % parts;
}

std::vector<RankRange> ranges_cut_at(std::int64_t lo, std::int64_t hi, std::initializer_list<std::int64_t> cuts) {
  std::vector<std::int64_t> at{lo};
  for (const std::int64_t c : cuts) {
    if (c > lo && c < hi) at.push_back(c);
  }
  std::sort(at.begin(), at.end());
  at.erase(std::unique(at.begin(), at.end()), at.end());
  std::vector<RankRange> out;
  for (std::size_t i = 0; i < at.size(); ++i) {
    const std::int64_t end = i + 1 < at.size() ? at[i + 1] : hi;
    if (end > at[i]) out.push_back({at[i], end - at[i]});
  }
  return out;
}

std::int64_t GridCell::ranks_below(int grid_cols, std::int64_t limit) const noexcept {
  // Rank i·C + j lies below `limit` when grid row i is below limit / C, or is that row and column
  // j below limit % C.
  const std::int64_t full_rows = limit / grid_cols, last_cols = limit % grid_cols;
  const std::int64_t below = std::clamp(full_rows - rows.first, std::int64_t{0}, rows.count);
  std::int64_t n = below * cols.count;
  if (full_rows >= rows.first && full_rows < rows.end()) {
    n += std::clamp(last_cols - cols.first, std::int64_t{0}, cols.count);
  }
  return n;
}

std::vector<GridCell> grid_cells(int grid_rows, int grid_cols, std::initializer_list<std::int64_t> row_cuts,
                                 std::initializer_list<std::int64_t> col_cuts) {
  std::vector<GridCell> out;
  const std::vector<RankRange> cols = ranges_cut_at(0, grid_cols, col_cuts);
  for (const RankRange& r : ranges_cut_at(0, grid_rows, row_cuts)) {
    for (const RankRange& c : cols) out.push_back({r, c});
  }
  return out;
}

}  // namespace scalebench
