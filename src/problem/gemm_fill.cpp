// Rank 0's host generation of the GEMM inputs (scalebench/problem/gemm_fill.hpp): every element is a pure
// function of its index, so [0, count) is cut into contiguous ranges, one per thread.
#include "scalebench/problem/gemm_fill.hpp"

#include <sched.h>

#include <algorithm>
#include <thread>
#include <type_traits>
#include <vector>

namespace scalebench {
namespace {

// Below this many elements per thread, starting a thread costs more than it saves.
constexpr std::int64_t kMinElementsPerThread = std::int64_t{1} << 15;

template <class T, bool Bf16>
void fill_range(T* dst, std::int64_t begin, std::int64_t end, std::int64_t first_index, std::uint64_t key, Fill fill) {
  const auto first = static_cast<std::uint64_t>(first_index);
  // The fill is decided once per range so that the loops carry no branch on it.
  auto run = [&](auto integer) {
    for (std::int64_t i = begin; i < end; ++i) {
      const double v = gemm_input_value(key, first + static_cast<std::uint64_t>(i),
                                        decltype(integer)::value ? Fill::integer : Fill::uniform);
      if constexpr (std::is_same_v<T, double>) {
        dst[i] = v;
      } else if constexpr (Bf16) {
        dst[i] = round_to_bf16(static_cast<float>(v));
      } else {
        dst[i] = static_cast<float>(v);
      }
    }
  };
  if (fill == Fill::integer) {
    run(std::true_type{});
  } else {
    run(std::false_type{});
  }
}

// Runs work(begin, end) over [0, count) cut into contiguous ranges on up to `threads` threads.
template <class Work>
int split_over_threads(std::int64_t count, int threads, Work work) {
  if (count <= 0) return 1;
  const std::int64_t useful = (count + kMinElementsPerThread - 1) / kMinElementsPerThread;
  const int t = static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(threads, useful)));
  auto piece = [&](int i) { return count / t * i + std::min<std::int64_t>(i, count % t); };
  std::vector<std::thread> workers;
  workers.reserve(static_cast<std::size_t>(t - 1));
  try {
    for (int i = 1; i < t; ++i) workers.emplace_back(work, piece(i), piece(i + 1));
  } catch (...) {
    for (auto& w : workers) w.join();
    throw;
  }
  work(piece(0), piece(1));
  for (auto& w : workers) w.join();
  return t;
}

template <class T, bool Bf16>
int fill_parallel(T* dst, std::int64_t count, std::int64_t first_index, std::uint64_t key, Fill fill, int threads) {
  return split_over_threads(count, threads, [=](std::int64_t begin, std::int64_t end) {
    fill_range<T, Bf16>(dst, begin, end, first_index, key, fill);
  });
}

template <class T>
void zero_parallel(T* dst, std::int64_t count, int threads) {
  split_over_threads(count, threads,
                     [=](std::int64_t begin, std::int64_t end) { std::fill(dst + begin, dst + end, T(0)); });
}

}  // namespace

int fill_matrix(double* dst, std::int64_t count, std::int64_t first_index, std::uint64_t key, Fill fill, Precision,
                int threads) {
  return fill_parallel<double, false>(dst, count, first_index, key, fill, threads);
}

int fill_matrix(float* dst, std::int64_t count, std::int64_t first_index, std::uint64_t key, Fill fill, Precision p,
                int threads) {
  if (p == Precision::bf16) return fill_parallel<float, true>(dst, count, first_index, key, fill, threads);
  return fill_parallel<float, false>(dst, count, first_index, key, fill, threads);
}

void fill_zero(double* dst, std::int64_t count, int threads) { zero_parallel(dst, count, threads); }
void fill_zero(float* dst, std::int64_t count, int threads) { zero_parallel(dst, count, threads); }

int host_fill_threads() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}

}  // namespace scalebench
