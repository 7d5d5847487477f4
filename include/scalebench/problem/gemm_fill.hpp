#pragma once
// The GEMM inputs A and B as pure functions of (seed, matrix, element index): counter-based, so
// any range of either matrix can be made by any thread, rank or device without drawing the
// elements before it. Rank 0 fills A and B on the host with this (on the CPUs it may run on), and
// `--resident` makes the same values on the device (src/workloads/gemm/cuda/gemm_kernels.cu
// `generate_kernel`, with the keys from gemm_input_key): host-generated and device-generated
// inputs are bit-identical.
//
//   key     = seed · 0x9e3779b97f4a7c15 + 0x41 (A) or + 0x42 (B)              (mod 2^64)
//   element e (0-based, row-major over the whole matrix; A's rows numbered globally):
//     h     = mix64(key + (e + 1) · 0x9e3779b97f4a7c15)  (the splitmix64 finaliser)
//     integer fill: r = h mod 8; v = r − 4 if r < 4, else r − 3     (−4..−1, 1..4: never 0)
//     uniform fill: v = 2 · (h >> 11) · 2^−53 − 1 ∈ [−1, 1), with 0 replaced by 0.5
//   stored as double (fp64), float(v) (fp32, tf32) or the nearest bf16 of float(v) (bf16, kept
//   in a float on the host).
//
// CUDA-free and C++17-clean (the GEMM workload's CUDA code includes it).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <vector>

#include "scalebench/problem/gemm.hpp"

namespace scalebench {

enum class GemmInput { a, b };

inline constexpr std::uint64_t kGemmFillGolden = 0x9e3779b97f4a7c15ULL;  // 2^64 / golden ratio

// The splitmix64 finaliser: a bijective mix of 64 bits.
constexpr std::uint64_t gemm_fill_mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// The key of matrix `which` for `seed` (0x41, 0x42: 'A', 'B').
constexpr std::uint64_t gemm_input_key(std::uint64_t seed, GemmInput which) {
  return seed * kGemmFillGolden + (which == GemmInput::a ? 0x41ULL : 0x42ULL);
}

// The value of element `index` of the matrix with `key`, before storage (exact in double; see
// the top of this file for how it is stored per precision).
inline double gemm_input_value(std::uint64_t key, std::uint64_t index, Fill fill) {
  const std::uint64_t h = gemm_fill_mix64(key + (index + 1) * kGemmFillGolden);
  if (fill == Fill::integer) {
    const int r = static_cast<int>(h % 8);
    return r < 4 ? r - 4 : r - 3;
  }
  const double v = 2.0 * (static_cast<double>(h >> 11) * 0x1p-53) - 1.0;
  return v == 0.0 ? 0.5 : v;
}

// dst[i] = the stored value of element first_index + i, for i in [0, count), on `threads`
// threads (contiguous ranges; fewer threads when count is small). The result depends only on
// (count, first_index, key, fill, precision), never on `threads`. The double overload is for
// fp64; the float overload stores float(v), rounded to bf16 when p is bf16. Returns the number
// of threads used.
int fill_matrix(double* dst, std::int64_t count, std::int64_t first_index, std::uint64_t key, Fill fill, Precision p,
                int threads);
int fill_matrix(float* dst, std::int64_t count, std::int64_t first_index, std::uint64_t key, Fill fill, Precision p,
                int threads);

// dst[i] = 0 for i in [0, count), on `threads` threads (the same ranges as fill_matrix).
void fill_zero(double* dst, std::int64_t count, int threads);
void fill_zero(float* dst, std::int64_t count, int threads);

// Host matrices of at least this many bytes are placed on 2 MiB boundaries and asked to be backed
// by huge pages (madvise MADV_HUGEPAGE, where the kernel's transparent huge pages are "madvise"):
// their first touch faults and zeroes 512 times fewer pages, and page-locking them for the GPU
// (cudaHostRegister) walks 512 times fewer. Best effort: a kernel without it keeps small pages.
inline constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;
inline constexpr std::size_t kHugePagesFrom = std::size_t{64} << 20;
// The advice for [p, p + bytes), p on a kHugePageBytes boundary; errors are ignored (advice only).
void advise_huge_pages(void* p, std::size_t bytes) noexcept;

// An allocator whose resize() leaves new elements uninitialised: the host matrices (GiBs each)
// are then first written by the threads that fill them, in parallel, instead of being zeroed by
// one thread first — and their pages land where those threads run. Large ones are on huge pages
// (kHugePagesFrom above).
template <class T>
struct UninitializedAllocator : std::allocator<T> {
  using value_type = T;
  template <class U>
  struct rebind {
    using other = UninitializedAllocator<U>;
  };
  UninitializedAllocator() = default;
  template <class U>
  UninitializedAllocator(const UninitializedAllocator<U>&) noexcept {}
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
  T* allocate(std::size_t n) {
    if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
    if (n * sizeof(T) < kHugePagesFrom) return std::allocator<T>::allocate(n);
    void* p = ::operator new (n * sizeof(T), std::align_val_t{kHugePageBytes});
    advise_huge_pages(p, n * sizeof(T));
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t n) noexcept {
    if (n * sizeof(T) < kHugePagesFrom) {
      std::allocator<T>::deallocate(p, n);
      return;
    }
    ::operator delete (p, std::align_val_t{kHugePageBytes});
  }
};
template <class T, class U>
bool operator==(const UninitializedAllocator<T>&, const UninitializedAllocator<U>&) noexcept {
  return true;
}
template <class T>
using HostMatrix = std::vector<T, UninitializedAllocator<T>>;

}  // namespace scalebench
