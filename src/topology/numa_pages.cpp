// numa_nodes_of(): where the kernel placed a buffer's pages (move_pages query mode).
#include <numaif.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <set>

#include "scalebench/topology/placement.hpp"

namespace scalebench {

std::vector<int> numa_nodes_of(const void* p, std::size_t bytes, int max_samples) {
  if (p == nullptr || bytes == 0 || max_samples < 1) return {};
  const long page_size = sysconf(_SC_PAGESIZE);
  if (page_size <= 0) return {};
  const auto page = static_cast<std::uintptr_t>(page_size);
  const auto begin = reinterpret_cast<std::uintptr_t>(p);
  const std::uintptr_t first = begin / page * page;
  const std::uintptr_t last = (begin + bytes - 1) / page * page;
  const std::uintptr_t pages = (last - first) / page + 1;
  const std::uintptr_t samples = std::min<std::uintptr_t>(pages, static_cast<std::uintptr_t>(max_samples));

  std::vector<void*> addresses(samples);
  for (std::uintptr_t i = 0; i < samples; ++i) {
    const std::uintptr_t index = samples == 1 ? 0 : i * (pages - 1) / (samples - 1);
    addresses[i] = reinterpret_cast<void*>(first + index * page);
  }
  std::vector<int> status(samples, -1);
  // nodes == nullptr: query only; status[i] is the node of page i, or -errno (-ENOENT: not
  // touched yet).
  if (move_pages(0, static_cast<unsigned long>(samples), addresses.data(), nullptr, status.data(), 0) != 0) return {};
  std::set<int> nodes;
  for (int s : status) {
    if (s >= 0) nodes.insert(s);
  }
  return {nodes.begin(), nodes.end()};
}

}  // namespace scalebench
