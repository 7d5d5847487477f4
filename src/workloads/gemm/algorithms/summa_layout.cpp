#include "gemm/algorithms/summa_layout.hpp"

#include <algorithm>

namespace scalebench {
namespace {

// The part of `p` holding index `at` (parts may be empty).
int part_of(const RowPartition& p, std::int64_t at) {
  for (int q = 0; q < p.parts(); ++q) {
    const Block b = p.block(q);
    if (at >= b.offset && at < b.offset + b.count) return q;
  }
  return p.parts() - 1;
}

}  // namespace

SummaLayout::SummaLayout(const GemmShape& s, const ProcessGrid& g, std::int64_t panel_width)
    : grid(g), rows(s.m, g.rows), cols(s.n, g.cols), k_of_a(s.k, g.cols), k_of_b(s.k, g.rows) {
  std::vector<std::int64_t> edges = k_of_a.offsets();
  edges.insert(edges.end(), k_of_b.offsets().begin(), k_of_b.offsets().end());
  edges.push_back(s.k);
  std::sort(edges.begin(), edges.end());
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  const std::int64_t w = std::max<std::int64_t>(panel_width, 1);
  for (std::size_t e = 0; e + 1 < edges.size(); ++e) {
    // Steps of at most the block's own width: a --panel-width near 2^63 never overflows `first`.
    for (std::int64_t first = edges[e]; first < edges[e + 1]; first += std::min(w, edges[e + 1] - first)) {
      const std::int64_t width = std::min(w, edges[e + 1] - first);
      panels.push_back({first, width, part_of(k_of_a, first), part_of(k_of_b, first)});
    }
  }
}

std::int64_t SummaLayout::widest_panel() const {
  std::int64_t w = 0;
  for (const auto& p : panels) w = std::max(w, p.width);
  return w;
}

}  // namespace scalebench
