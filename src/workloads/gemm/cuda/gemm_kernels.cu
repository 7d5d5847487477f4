#include "gemm_kernels.hpp"

#include <algorithm>

#include "cuda_check.hpp"

namespace scalebench::gpu {
namespace {

constexpr int kThreads = 256;

__device__ inline double to_double(double v) { return v; }
__device__ inline double to_double(float v) { return static_cast<double>(v); }
__device__ inline double to_double(__nv_bfloat16 v) { return static_cast<double>(__bfloat162float(v)); }

// Block-wide sum of one double per thread (kThreads threads); the result is valid in thread 0.
__device__ double block_sum(double v, double* shared) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  v = threadIdx.x < kThreads / 32 ? shared[threadIdx.x] : 0.0;
  if (warp == 0) {
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  }
  __syncthreads();
  return v;
}

// One block per row (grid-strided over rows); threads walk the row with a stride of the block
// so that loads are coalesced.
template <class T>
__global__ void row_dots_kernel(const T* __restrict__ m, std::int64_t rows, std::int64_t cols,
                                const double* __restrict__ w, const double* __restrict__ wabs, double* __restrict__ y,
                                double* __restrict__ yabs) {
  __shared__ double shared[kThreads / 32];
  for (std::int64_t i = blockIdx.x; i < rows; i += gridDim.x) {
    const T* row = m + i * cols;
    double s = 0, sa = 0;
    for (std::int64_t j = threadIdx.x; j < cols; j += kThreads) {
      const double v = to_double(row[j]);
      s += v * w[j];
      if (yabs != nullptr) sa += fabs(v) * wabs[j];
    }
    s = block_sum(s, shared);
    if (yabs != nullptr) sa = block_sum(sa, shared);
    if (threadIdx.x == 0) {
      y[i] = s;
      if (yabs != nullptr) yabs[i] = sa;
    }
  }
}

// The splitmix64 finaliser: a bijective mix of 64 bits.
__device__ inline std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

__device__ inline void store(double* p, double v) { *p = v; }
__device__ inline void store(float* p, double v) { *p = static_cast<float>(v); }
__device__ inline void store(__nv_bfloat16* p, double v) { *p = __float2bfloat16_rn(static_cast<float>(v)); }

template <class T>
__global__ void generate_kernel(T* __restrict__ dst, std::int64_t count, std::int64_t first_index, std::uint64_t key,
                                bool integer) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    const auto e = static_cast<std::uint64_t>(first_index + i);
    const std::uint64_t h = mix64(key + (e + 1) * 0x9e3779b97f4a7c15ULL);
    double v;
    if (integer) {
      const int r = static_cast<int>(h % 8);
      v = r < 4 ? r - 4 : r - 3;
    } else {
      v = 2.0 * (static_cast<double>(h >> 11) * 0x1p-53) - 1.0;
      if (v == 0.0) v = 0.5;
    }
    store(dst + i, v);
  }
}

int grid_for(std::int64_t work) {
  // Enough blocks to fill the GPU several times; kernels are grid-strided beyond that.
  return static_cast<int>(std::clamp<std::int64_t>(work, 1, 65535));
}

template <class T>
void launch_generate(T* dst, std::int64_t count, std::int64_t first_index, std::uint64_t key, bool integer,
                     cudaStream_t s) {
  if (count <= 0) return;
  generate_kernel<T>
      <<<grid_for((count + kThreads - 1) / kThreads), kThreads, 0, s>>>(dst, count, first_index, key, integer);
  SCALEBENCH_CUDA_CHECK(cudaGetLastError());
}

template <class T>
void launch_row_dots(const T* m, std::int64_t rows, std::int64_t cols, const double* w, const double* wabs, double* y,
                     double* yabs, cudaStream_t s) {
  if (rows <= 0) return;
  row_dots_kernel<T><<<grid_for(rows), kThreads, 0, s>>>(m, rows, cols, w, wabs, y, yabs);
  SCALEBENCH_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void row_dots(const double* m, std::int64_t rows, std::int64_t cols, const double* w, const double* wabs, double* y,
              double* yabs, cudaStream_t s) {
  launch_row_dots(m, rows, cols, w, wabs, y, yabs, s);
}
void row_dots(const float* m, std::int64_t rows, std::int64_t cols, const double* w, const double* wabs, double* y,
              double* yabs, cudaStream_t s) {
  launch_row_dots(m, rows, cols, w, wabs, y, yabs, s);
}
void row_dots(const __nv_bfloat16* m, std::int64_t rows, std::int64_t cols, const double* w, const double* wabs,
              double* y, double* yabs, cudaStream_t s) {
  launch_row_dots(m, rows, cols, w, wabs, y, yabs, s);
}

void generate_matrix(double* dst, std::int64_t count, std::int64_t first_index, std::uint64_t key, bool integer,
                     cudaStream_t s) {
  launch_generate(dst, count, first_index, key, integer, s);
}
void generate_matrix(float* dst, std::int64_t count, std::int64_t first_index, std::uint64_t key, bool integer,
                     cudaStream_t s) {
  launch_generate(dst, count, first_index, key, integer, s);
}
void generate_matrix(__nv_bfloat16* dst, std::int64_t count, std::int64_t first_index, std::uint64_t key, bool integer,
                     cudaStream_t s) {
  launch_generate(dst, count, first_index, key, integer, s);
}

}  // namespace scalebench::gpu
