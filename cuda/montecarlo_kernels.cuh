#pragma once
// Device side of the GPU Monte Carlo: fused generate-test-reduce kernels, one block per chunk,
// following the layout in scalebench/problem/montecarlo.hpp (montecarlo_cuda.cu checks the shared
// constants). Random numbers are Random123's Philox4x32-10 compiled for the device and never
// touch memory. π hits are integers (any order); option sums are reduced per chunk in a fixed
// shared-memory tree. Only CUDA and Random123 here, so the kernels can be built on their own; they
// have internal linkage, so a test that includes this header for its generator links beside the
// library's copy.
#include <Random123/philox.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace scalebench::gpu::mc {

using u32 = std::uint32_t;
using u64 = std::uint64_t;

constexpr int kBlockThreads = 256;
// The layout's constants (scalebench/problem/montecarlo.hpp): counter word 3 per problem, sums per chunk.
constexpr u32 kTagPi = 0, kTagEuropean = 1, kTagAsian = 2;
constexpr int kSumY = 0, kSumYY = 1, kSumX = 2, kSumXX = 3, kSumXY = 4, kSumCount = 5;

struct DeviceLayout {
  u64 first_chunk;  // first chunk of this launch
  u64 chunk_size;
  u64 samples;
  u32 key0, key1;
};

struct DeviceModel {
  float spot, strike, drift, vol;
  int steps;
  bool call;
};

__device__ __forceinline__ r123::Philox4x32::ctr_type philox_block(u64 a, u32 b, u32 tag, u32 k0, u32 k1) {
  const r123::Philox4x32::ctr_type c = {{static_cast<u32>(a), static_cast<u32>(a >> 32), b, tag}};
  const r123::Philox4x32::key_type k = {{k0, k1}};
  return r123::Philox4x32_R<10>()(c, k);
}

__device__ __forceinline__ u32 hit(u32 x, u32 y) {
  const u64 a = static_cast<u64>(x) * x;
  const u64 b = static_cast<u64>(y) * y;
  return (a + b) >= a ? 1U : 0U;
}

// `acc` plus 1 if the point (x, y) misses: x² + y² ≥ 2^64 exactly when the 64-bit sum carries
// out. The carry goes straight into the count (add.cc / addc): no compare and no select, which
// the compiler would otherwise put on the integer multiply pipe the Philox rounds saturate.
__device__ __forceinline__ u32 add_miss(u32 x, u32 y, u32 acc) {
  u32 out;
  asm("{\n\t.reg .u64 xx, yy, s;\n\t"
      "mul.wide.u32 xx, %1, %1;\n\t"
      "mul.wide.u32 yy, %2, %2;\n\t"
      "add.cc.u64 s, xx, yy;\n\t"
      "addc.u32 %0, %3, 0;\n\t}"
      : "=r"(out)
      : "r"(x), "r"(y), "r"(acc));
  return out;
}

// Box–Muller as the CPU defines it (u = (w + 1/2)·2^-32, θ = int32(w')·π·2^-31), in fp32.
__device__ __forceinline__ void box_muller(u32 a, u32 b, float& z0, float& z1) {
  const float u = fmaf(static_cast<float>(a), 0x1p-32f, 0x1p-33f);
  const float r = sqrtf(fmaxf(-2.0f * __logf(u), 0.0f));
  const float theta = static_cast<float>(static_cast<int>(b)) * 1.46291807926715968e-9f;  // π·2^-31
  float s, c;
  __sincosf(theta, &s, &c);
  z0 = r * c;
  z1 = r * s;
}

__device__ __forceinline__ void normals4(const r123::Philox4x32::ctr_type& w, float z[4]) {
  box_muller(w.v[0], w.v[1], z[0], z[1]);
  box_muller(w.v[2], w.v[3], z[2], z[3]);
}

__device__ __forceinline__ float payoff(float s, const DeviceModel& m) {
  return m.call ? fmaxf(s - m.strike, 0.0f) : fmaxf(m.strike - s, 0.0f);
}

// Fixed-order tree over the block's threads: the same bits every launch.
template <int N>
__device__ void block_sum_fixed(double (&v)[N], double (*shared)[kBlockThreads]) {
  for (int k = 0; k < N; ++k) shared[k][threadIdx.x] = v[k];
  __syncthreads();
  for (int stride = kBlockThreads / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) {
      for (int k = 0; k < N; ++k) shared[k][threadIdx.x] += shared[k][threadIdx.x + stride];
    }
    __syncthreads();
  }
}

static __global__ void __launch_bounds__(kBlockThreads) pi_kernel(DeviceLayout l, unsigned long long* hits) {
  const u64 chunk = l.first_chunk + blockIdx.x;
  const u64 first = chunk * l.chunk_size;  // even: chunk_size is a multiple of 4
  const u64 last = min(first + l.chunk_size, l.samples);
  const u64 block0 = first / 2;
  // Whole Philox blocks (two points each) in the loop, with no per-point range test; misses are
  // counted (add_miss) and hits are points minus misses. An odd last point is the last chunk's.
  const u32 pairs = static_cast<u32>((last - first) / 2);
  u32 misses = 0, points = 0;
#pragma unroll 4
  for (u32 j = threadIdx.x; j < pairs; j += kBlockThreads) {
    const auto w = philox_block(block0 + j, 0, kTagPi, l.key0, l.key1);
    misses = add_miss(w.v[0], w.v[1], misses);
    misses = add_miss(w.v[2], w.v[3], misses);
    points += 2;
  }
  u32 count = points - misses;
  if (((last - first) & 1) != 0 && threadIdx.x == 0) {
    const auto w = philox_block(block0 + pairs, 0, kTagPi, l.key0, l.key1);
    count += hit(w.v[0], w.v[1]);
  }
  // Integers: the order of the additions does not matter.
  count = __reduce_add_sync(0xffffffffU, count);
  __shared__ u32 warp_counts[kBlockThreads / 32];
  if (threadIdx.x % 32 == 0) warp_counts[threadIdx.x / 32] = count;
  __syncthreads();
  if (threadIdx.x == 0) {
    u32 total = 0;
    for (int w = 0; w < kBlockThreads / 32; ++w) total += warp_counts[w];
    atomicAdd(hits, static_cast<unsigned long long>(total));
  }
}

static __global__ void __launch_bounds__(kBlockThreads)
    european_kernel(DeviceLayout l, DeviceModel m, double* chunk_sums) {
  const u64 chunk = l.first_chunk + blockIdx.x;
  const u64 first = chunk * l.chunk_size;  // a multiple of 4
  const u64 last = min(first + l.chunk_size, l.samples);
  const u32 blocks = static_cast<u32>((last - first + 3) / 4);
  double v[2] = {0.0, 0.0};
  for (u32 j = threadIdx.x; j < blocks; j += kBlockThreads) {
    const u64 b = first / 4 + j;
    float z[4];
    normals4(philox_block(b, 0, kTagEuropean, l.key0, l.key1), z);
    float y = 0.0f, yy = 0.0f;  // the four paths of this block, then fp64
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      if (4 * b + k < last) {
        const float p = payoff(m.spot * __expf(fmaf(m.vol, z[k], m.drift)), m);
        y += p;
        yy = fmaf(p, p, yy);
      }
    }
    v[0] += y;
    v[1] += yy;
  }
  __shared__ double shared[2][kBlockThreads];
  block_sum_fixed(v, shared);
  if (threadIdx.x == 0) {
    double* out = chunk_sums + static_cast<u64>(blockIdx.x) * kSumCount;
    out[kSumY] = shared[0][0];
    out[kSumYY] = shared[1][0];
    out[kSumX] = out[kSumXX] = out[kSumXY] = 0.0;
  }
}

static __global__ void __launch_bounds__(kBlockThreads)
    asian_kernel(DeviceLayout l, DeviceModel m, double* chunk_sums) {
  const u64 chunk = l.first_chunk + blockIdx.x;
  const u64 first = chunk * l.chunk_size;
  const u64 last = min(first + l.chunk_size, l.samples);
  double v[kSumCount] = {0.0, 0.0, 0.0, 0.0, 0.0};
  for (u64 path = first + threadIdx.x; path < last; path += kBlockThreads) {
    float x = 0.0f;                   // log(S_t / S_0)
    double sum_e = 0.0, sum_x = 0.0;  // Σ S_t/S_0 and Σ log(S_t/S_0), fp64 across blocks of 4 steps
    for (int j0 = 0; j0 < m.steps; j0 += 4) {
      float z[4];
      normals4(philox_block(path, static_cast<u32>(j0 / 4), kTagAsian, l.key0, l.key1), z);
      const int n = min(4, m.steps - j0);
      float e4 = 0.0f, x4 = 0.0f;
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        if (k < n) {
          x += fmaf(m.vol, z[k], m.drift);
          e4 += __expf(x);
          x4 += x;
        }
      }
      sum_e += e4;
      sum_x += x4;
    }
    const float arithmetic = m.spot * static_cast<float>(sum_e / m.steps);
    const float geometric = m.spot * __expf(static_cast<float>(sum_x / m.steps));
    const double py = payoff(arithmetic, m), px = payoff(geometric, m);
    v[kSumY] += py;
    v[kSumYY] += py * py;
    v[kSumX] += px;
    v[kSumXX] += px * px;
    v[kSumXY] += px * py;
  }
  __shared__ double shared[kSumCount][kBlockThreads];
  block_sum_fixed(v, shared);
  if (threadIdx.x == 0) {
    double* out = chunk_sums + static_cast<u64>(blockIdx.x) * kSumCount;
    for (int k = 0; k < kSumCount; ++k) out[k] = shared[k][0];
  }
}

}  // namespace scalebench::gpu::mc
