#pragma once
// Host work split over the calling process's CPUs: [0, count) cut into contiguous ranges, one per
// thread, the calling thread taking the first. Each range is numbered, so a caller that combines
// per-range results in range order gets the same answer on any thread count.
#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

namespace scalebench {

// The first index of range `i` of `parts` over [0, count): the first count % parts ranges hold
// one more.
constexpr std::int64_t range_start(std::int64_t count, int parts, int i) noexcept {
  return count / parts * i + std::min<std::int64_t>(i, count % parts);
}

// The ranges work(part, begin, end) will be called with: at most `threads`, each of at least
// `min_per_range` items (one range for a small count).
constexpr int range_count(std::int64_t count, int threads, std::int64_t min_per_range) noexcept {
  if (count <= 0) return 1;
  const std::int64_t useful = (count + std::max<std::int64_t>(1, min_per_range) - 1) /
                              std::max<std::int64_t>(1, min_per_range);
  return static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(std::max(1, threads), useful)));
}

// Calls work(part, begin, end) for each range on its own thread and joins them; returns the
// ranges used. `work` must not throw (a throw on a worker thread ends the process).
template <class Work>
int for_each_range(std::int64_t count, int threads, std::int64_t min_per_range, Work work) {
  const int parts = range_count(count, threads, min_per_range);
  std::vector<std::thread> workers;
  workers.reserve(static_cast<std::size_t>(parts - 1));
  try {
    for (int i = 1; i < parts; ++i) {
      workers.emplace_back(work, i, range_start(count, parts, i), range_start(count, parts, i + 1));
    }
  } catch (...) {
    for (auto& w : workers) w.join();
    throw;
  }
  work(0, range_start(count, parts, 0), range_start(count, parts, 1));
  for (auto& w : workers) w.join();
  return parts;
}

}  // namespace scalebench
