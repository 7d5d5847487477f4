#include "gemm/algorithms/summa_layout.hpp"

#include <algorithm>
#include <iterator>

namespace scalebench {
namespace {

// The part of `p` holding each index of an ascending series (parts may be empty): the last part
// starting at or before it (an empty part starts where the next one does, so it is never that
// one unless it is the last). One pass over the parts for all the panels: a grid of a million
// ranks has as many parts and panels.
class PartOf {
 public:
  explicit PartOf(const RowPartition& p) : offsets_(p.offsets()) {}
  int operator()(std::int64_t at) {
    while (next_ < offsets_.size() && offsets_[next_] <= at) ++next_;
    return next_ == 0 ? static_cast<int>(offsets_.size()) - 1 : static_cast<int>(next_) - 1;
  }

 private:
  const std::vector<std::int64_t>& offsets_;
  std::size_t next_ = 0;  // the parts starting at or before the last index asked
};

}  // namespace

SummaLayout::SummaLayout(const GemmShape& s, const ProcessGrid& g, std::int64_t panel_width)
    : grid(g), rows(s.m, g.rows), cols(s.n, g.cols), k_of_a(s.k, g.cols), k_of_b(s.k, g.rows) {
  std::vector<std::int64_t> edges;
  edges.reserve(k_of_a.offsets().size() + k_of_b.offsets().size() + 1);
  std::merge(k_of_a.offsets().begin(), k_of_a.offsets().end(), k_of_b.offsets().begin(), k_of_b.offsets().end(),
             std::back_inserter(edges));
  edges.push_back(s.k);  // no offset lies past it
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  const std::int64_t w = std::max<std::int64_t>(panel_width, 1);
  PartOf a_col(k_of_a), b_row(k_of_b);
  for (std::size_t e = 0; e + 1 < edges.size(); ++e) {
    // Steps of at most the block's own width: a --panel-width near 2^63 never overflows `first`.
    for (std::int64_t first = edges[e]; first < edges[e + 1]; first += std::min(w, edges[e + 1] - first)) {
      const std::int64_t width = std::min(w, edges[e + 1] - first);
      panels.push_back({first, width, a_col(first), b_row(first)});
    }
  }
}

std::int64_t SummaLayout::widest_panel() const {
  std::int64_t w = 0;
  for (const auto& p : panels) w = std::max(w, p.width);
  return w;
}

}  // namespace scalebench
