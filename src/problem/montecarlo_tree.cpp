// The fixed binary tree over chunk indices that makes option sums independent of how the chunks
// were shared out (ranks, threads, GPU blocks).
#include <cstring>

#include <fmt/format.h>

#include "scalebench/base/error.hpp"
#include "scalebench/problem/montecarlo.hpp"

namespace scalebench {

McSums combine(const McSums& left, const McSums& right) {
  McSums out = left;
  out += right;
  return out;
}

void ChunkTree::push(const TreeNode& node) {
  if (node.level < 0 || node.level > 62 || node.index < 0) {
    throw Error(ExitCode::internal, fmt::format("chunk tree: bad node (level {}, index {})", node.level, node.index));
  }
  if (!stack_.empty() && stack_.back().end() != node.first()) {
    throw Error(ExitCode::internal, fmt::format("chunk tree: node at chunk {} pushed after a range ending at {}",
                                                node.first(), stack_.back().end()));
  }
  stack_.push_back(node);
  // Merge while the two top nodes are the left and right child of one parent.
  while (stack_.size() >= 2) {
    const TreeNode& right = stack_[stack_.size() - 1];
    const TreeNode& left = stack_[stack_.size() - 2];
    if (left.level != right.level || left.index % 2 != 0 || right.index != left.index + 1) break;
    const TreeNode parent{left.level + 1, left.index / 2, combine(left.sums, right.sums)};
    stack_.pop_back();
    stack_.back() = parent;
  }
}

McSums ChunkTree::total() const {
  if (stack_.empty()) return {};
  if (stack_.front().first() != 0) {
    throw Error(ExitCode::internal, "chunk tree: total() of a range that does not start at chunk 0");
  }
  // From chunk 0 the stack is the binary decomposition of [0, chunks): strictly shrinking aligned
  // blocks. Padding the tree with zero chunks makes each block's parent equal to the block (x + 0
  // is exact), so the root is B0 + (B1 + (B2 + ...)).
  McSums acc = stack_.back().sums;
  for (std::size_t i = stack_.size() - 1; i-- > 0;) acc = combine(stack_[i].sums, acc);
  return acc;
}

std::vector<std::pair<std::int64_t, int>> dyadic_blocks(std::int64_t first, std::int64_t last, int max_level) {
  std::vector<std::pair<std::int64_t, int>> out;
  std::int64_t p = first;
  while (p < last) {
    int level = 0;
    while (level < max_level) {
      const std::int64_t size = std::int64_t{2} << level;
      if (p % size != 0 || p + size > last) break;
      ++level;
    }
    out.emplace_back(p, level);
    p += std::int64_t{1} << level;
  }
  return out;
}

namespace {
struct WireNode {
  std::int64_t level;
  std::int64_t index;
  double v[kSumCount];
};
}  // namespace

std::string serialize_nodes(const std::vector<TreeNode>& nodes) {
  std::string bytes(nodes.size() * sizeof(WireNode), '\0');
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    WireNode w{nodes[i].level, nodes[i].index, {}};
    for (int k = 0; k < kSumCount; ++k) w.v[k] = nodes[i].sums.v[k];
    std::memcpy(bytes.data() + i * sizeof(WireNode), &w, sizeof(WireNode));
  }
  return bytes;
}

std::vector<TreeNode> deserialize_nodes(const std::string& bytes) {
  if (bytes.size() % sizeof(WireNode) != 0) throw Error(ExitCode::internal, "chunk tree: truncated node message");
  std::vector<TreeNode> nodes(bytes.size() / sizeof(WireNode));
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    WireNode w{};
    std::memcpy(&w, bytes.data() + i * sizeof(WireNode), sizeof(WireNode));
    nodes[i].level = static_cast<int>(w.level);
    nodes[i].index = w.index;
    for (int k = 0; k < kSumCount; ++k) nodes[i].sums.v[k] = w.v[k];
  }
  return nodes;
}

}  // namespace scalebench
