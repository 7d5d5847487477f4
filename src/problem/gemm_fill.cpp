// Rank 0's host generation of the GEMM inputs (scalebench/problem/gemm_fill.hpp): every element is a pure
// function of its index, so [0, count) is cut into contiguous ranges, one per thread.
#include "scalebench/problem/gemm_fill.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <type_traits>
#include <vector>

#include "scalebench/base/parallel.hpp"

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
  return for_each_range(count, threads, kMinElementsPerThread,
                        [work](int, std::int64_t begin, std::int64_t end) { work(begin, end); });
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

void advise_huge_pages(void* p, std::size_t bytes) noexcept {
#ifdef MADV_HUGEPAGE
  (void)madvise(p, bytes, MADV_HUGEPAGE);
#else
  (void)p;
  (void)bytes;
#endif
}

void fill_zero(double* dst, std::int64_t count, int threads) { zero_parallel(dst, count, threads); }
void fill_zero(float* dst, std::int64_t count, int threads) { zero_parallel(dst, count, threads); }

}  // namespace scalebench
