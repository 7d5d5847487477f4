#include "scalebench/base/partition.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace scalebench {

RowPartition::RowPartition(std::int64_t total, int parts) : total_(total) {
  if (parts <= 0 || total < 0) throw std::invalid_argument("RowPartition: parts must be > 0 and total >= 0");
  counts_.resize(parts);
  offsets_.resize(parts);
  const std::int64_t base = total / parts;
  const std::int64_t extra = total % parts;
  std::int64_t offset = 0;
  for (int p = 0; p < parts; ++p) {
    counts_[p] = base + (p < extra ? 1 : 0);
    offsets_[p] = offset;
    offset += counts_[p];
  }
}

RowPartition::RowPartition(std::int64_t total, const std::vector<double>& weights) : total_(total) {
  const int parts = static_cast<int>(weights.size());
  if (parts == 0 || total < 0) throw std::invalid_argument("RowPartition: need weights and total >= 0");
  double sum = 0;
  for (double w : weights) {
    if (!(w >= 0) || !std::isfinite(w)) throw std::invalid_argument("RowPartition: weights must be finite and >= 0");
    sum += w;
  }
  if (sum <= 0) throw std::invalid_argument("RowPartition: weights sum to zero");
  counts_.assign(parts, 0);
  offsets_.assign(parts, 0);
  // Largest remainder: floor shares first, then one more row to the largest remainders (ties
  // to the lower index), so the result is deterministic and sums to total.
  std::vector<double> remainder(parts);
  std::int64_t assigned = 0;
  for (int p = 0; p < parts; ++p) {
    const double exact = static_cast<double>(total) * weights[p] / sum;
    counts_[p] = static_cast<std::int64_t>(std::floor(exact));
    remainder[p] = exact - static_cast<double>(counts_[p]);
    assigned += counts_[p];
  }
  std::vector<int> order(parts);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return remainder[a] > remainder[b]; });
  for (std::int64_t i = 0; assigned < total; ++i, ++assigned) counts_[order[i % parts]] += 1;
  std::int64_t offset = 0;
  for (int p = 0; p < parts; ++p) {
    offsets_[p] = offset;
    offset += counts_[p];
  }
}

std::vector<std::int64_t> RowPartition::counts_times(std::int64_t row_length) const {
  std::vector<std::int64_t> out(counts_);
  for (auto& c : out) c *= row_length;
  return out;
}

std::vector<std::int64_t> RowPartition::offsets_times(std::int64_t row_length) const {
  std::vector<std::int64_t> out(offsets_);
  for (auto& o : out) o *= row_length;
  return out;
}

}  // namespace scalebench
