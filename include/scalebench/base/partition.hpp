#pragma once
// Splitting an index range [0, total) into contiguous parts that need not be equal.
#include <cstdint>
#include <vector>

namespace scalebench {

struct Block {
  std::int64_t offset = 0;
  std::int64_t count = 0;
};

class RowPartition {
 public:
  // Even split: the first (total % parts) parts get one extra row.
  RowPartition(std::int64_t total, int parts);
  // Weighted split: part p gets about total*w_p/sum(w) rows (largest remainder), in order.
  RowPartition(std::int64_t total, const std::vector<double>& weights);

  int parts() const noexcept { return static_cast<int>(counts_.size()); }
  std::int64_t total() const noexcept { return total_; }
  Block block(int part) const { return {offsets_.at(part), counts_.at(part)}; }
  const std::vector<std::int64_t>& counts() const noexcept { return counts_; }
  const std::vector<std::int64_t>& offsets() const noexcept { return offsets_; }
  // Counts and offsets scaled by a row length (elements per row).
  std::vector<std::int64_t> counts_times(std::int64_t row_length) const;
  std::vector<std::int64_t> offsets_times(std::int64_t row_length) const;

 private:
  std::int64_t total_;
  std::vector<std::int64_t> counts_;
  std::vector<std::int64_t> offsets_;
};

}  // namespace scalebench
