#include "device_kernels.hpp"

#include <algorithm>

#include "cuda_check.hpp"

namespace scalebench::gpu {
namespace {

constexpr int kThreads = 256;

__global__ void convert_to_bf16_kernel(const float* __restrict__ src, __nv_bfloat16* __restrict__ dst,
                                       std::int64_t count) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    dst[i] = __float2bfloat16_rn(src[i]);
  }
}

template <class T>
__global__ void scale_shift_kernel(T* __restrict__ x, std::int64_t count, T scale, T shift) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    x[i] = x[i] * scale + shift;
  }
}

__global__ void wait_for_host_flag_kernel(const volatile int* flag, long long timeout_cycles) {
  const long long t0 = clock64();
  while (*flag == 0 && clock64() - t0 < timeout_cycles) __nanosleep(1000);
}

// Blocks for `count` elements, one per thread: enough to fill the GPU several times; the kernels
// are grid-strided beyond that.
int blocks_for(std::int64_t count) {
  return static_cast<int>(std::clamp<std::int64_t>((count + kThreads - 1) / kThreads, 1, 65535));
}

template <class T>
void launch_scale_shift(T* x, std::int64_t count, T scale, T shift, cudaStream_t s) {
  if (count <= 0) return;
  scale_shift_kernel<T><<<blocks_for(count), kThreads, 0, s>>>(x, count, scale, shift);
  SCALEBENCH_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void convert_to_bf16(const float* src, __nv_bfloat16* dst, std::int64_t count, cudaStream_t s) {
  if (count <= 0) return;
  convert_to_bf16_kernel<<<blocks_for(count), kThreads, 0, s>>>(src, dst, count);
  SCALEBENCH_CUDA_CHECK(cudaGetLastError());
}

void scale_shift(double* x, std::int64_t count, double scale, double shift, cudaStream_t s) {
  launch_scale_shift(x, count, scale, shift, s);
}
void scale_shift(float* x, std::int64_t count, float scale, float shift, cudaStream_t s) {
  launch_scale_shift(x, count, scale, shift, s);
}

void wait_for_host_flag(const volatile int* flag, long long timeout_cycles, cudaStream_t s) {
  wait_for_host_flag_kernel<<<1, 1, 0, s>>>(flag, timeout_cycles);
  SCALEBENCH_CUDA_CHECK(cudaGetLastError());
}

}  // namespace scalebench::gpu
