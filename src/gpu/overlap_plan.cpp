// The cut of one --overlap repeat into panels and row blocks (scalebench/gpu/gpu.hpp).
#include <algorithm>

#include "scalebench/gpu/gpu.hpp"

namespace scalebench {
namespace {
std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }
}  // namespace

int OverlapPlan::rounds() const noexcept {
  std::size_t most = 0;
  for (const auto& b : blocks) most = std::max(most, b.size());
  return static_cast<int>(most);
}

std::int64_t OverlapPlan::pack_elements(int rank, std::int64_t k) const noexcept {
  if (rank != 0) return head.at(static_cast<std::size_t>(rank)) * k;
  std::int64_t rows = 0;
  for (std::size_t r = 1; r < head.size(); ++r) rows += head[r];
  return rows * k;
}

OverlapPlan make_overlap_plan(const GemmShape& global, const RowPartition& rows) {
  OverlapPlan plan;
  // Wide enough for the multiply to run at full speed, narrow enough that the first panel
  // (all a GPU waits for before it starts) is a small part of B; the first panels narrower
  // still (a quarter, a quarter, a half), so the multiply starts sooner and the panels behind
  // it arrive while it runs.
  const std::int64_t width = std::min<std::int64_t>(2048, ceil_div(global.k, 4));
  std::vector<std::int64_t> widths;
  if (width >= 4) widths = {width / 4, width / 4, width / 2};
  std::int64_t c = 0;
  for (std::size_t i = 0; c < global.k; ++i) {
    plan.panel_first.push_back(c);
    c += std::min(i < widths.size() ? widths[i] : width, global.k - c);
  }
  plan.panel_first.push_back(global.k);
  for (int r = 0; r < rows.parts(); ++r) {
    const std::int64_t count = rows.block(r).count;
    const std::int64_t head = ceil_div(count, 2);
    plan.head.push_back(head);
    std::vector<Block> blocks;
    const std::int64_t rest = count - head;
    if (rest > 0) {
      const std::int64_t height = std::min<std::int64_t>(2048, ceil_div(rest, 8));
      for (std::int64_t at = head; at < count; at += height) blocks.push_back({at, std::min(height, count - at)});
    }
    plan.blocks.push_back(std::move(blocks));
  }
  return plan;
}

}  // namespace scalebench
