#pragma once
// Where Summa2D's blocks and panels lie. Rank (i, j) of a pr × pc grid holds rows block i and
// columns block j of C, A_ij = (rows block i) × (k block j of `k_of_a`), and B_ij = (k block i
// of `k_of_b`) × (columns block j). A k-panel never crosses a block edge of either k partition,
// so its A part lies in one grid column and its B part in one grid row.
#include <cstdint>
#include <vector>

#include "scalebench/base/partition.hpp"
#include "scalebench/workloads/gemm/distributed_gemm.hpp"

namespace scalebench {

struct SummaPanel {
  std::int64_t first = 0, width = 0;  // columns [first, first + width) of A, the same rows of B
  int a_col = 0;                      // the grid column holding it in A
  int b_row = 0;                      // the grid row holding it in B
};

struct SummaLayout {
  SummaLayout(const GemmShape& s, const ProcessGrid& g, std::int64_t panel_width);
  std::int64_t widest_panel() const;

  ProcessGrid grid;
  RowPartition rows;    // rows of A and C over the grid rows
  RowPartition cols;    // columns of B and C over the grid columns
  RowPartition k_of_a;  // columns of A over the grid columns
  RowPartition k_of_b;  // rows of B over the grid rows
  std::vector<SummaPanel> panels;
};

}  // namespace scalebench
