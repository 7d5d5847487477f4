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

// --- π: the sample stream of the CPU (Philox block (a, 0, kTagPi), words (0,1) and (2,3) the two
// points), counted with fewer integer multiplies. The decision is pi_hit's, x² + y² < 2^64, and
// so is every bit of the count; what changes is only where the work runs.

// Philox4x32-10's round keys, key + r·W (what Random123's bumps give), made once on the host and
// passed as a kernel parameter: the loop reads them as constants instead of adding them.
struct PiKeys {
  u32 k0[10], k1[10];
};

__host__ __device__ inline PiKeys pi_keys(u32 key0, u32 key1) {
  PiKeys k{};
  for (u32 r = 0; r < 10; ++r) {
    k.k0[r] = key0 + r * static_cast<u32>(PHILOX_W32_0);
    k.k1[r] = key1 + r * static_cast<u32>(PHILOX_W32_1);
  }
  return k;
}

// Philox4x32-10 (Random123's rounds, unchanged) for the counters (lo, hi, 0, kTagPi) of one high
// word `hi`: round 1 multiplies counter word 2, which is 0, by M1 (nothing to do), and round 2's
// first product, M0·(hi ^ k0), is the same for every lo (made once here). A block then costs 18
// wide multiplies (Random123's general form: 20).
struct PiPhilox {
  const PiKeys& k;
  u32 q_hi, q_lo;  // M0·(hi ^ k0[0]), its high and low words
};

__device__ __forceinline__ u32 mul_hi_lo(u32 a, u32 b, u32& lo) {
  const u64 p = static_cast<u64>(a) * b;
  lo = static_cast<u32>(p);
  return static_cast<u32>(p >> 32);
}

__device__ __forceinline__ PiPhilox pi_philox(const PiKeys& keys, u32 hi) {
  PiPhilox s{keys, 0, 0};
  s.q_hi = mul_hi_lo(static_cast<u32>(PHILOX_M4x32_0), hi ^ keys.k0[0], s.q_lo);
  // Opaque to the compiler, which would otherwise recompute the product inside the loop.
  asm("" : "+r"(s.q_hi), "+r"(s.q_lo));
  return s;
}

// The four words of block (hi·2^32 + lo, 0, kTagPi): bit-identical to philox_block().
__device__ __forceinline__ void pi_block(const PiPhilox& s, u32 lo, u32 w[4]) {
  constexpr u32 m0 = PHILOX_M4x32_0, m1 = PHILOX_M4x32_1;
  u32 p_lo;
  // Round 1 on (lo, hi, 0, tag): M1·0 = 0.
  const u32 p_hi = mul_hi_lo(m0, lo, p_lo);
  const u32 c2 = p_hi ^ kTagPi ^ s.k.k1[0];
  // Round 2 on (hi ^ k0, 0, c2, p_lo): M0·(hi ^ k0) precomputed.
  u32 r_lo;
  const u32 r_hi = mul_hi_lo(m1, c2, r_lo);
  u32 c[4] = {r_hi ^ s.k.k0[1], r_lo, s.q_hi ^ p_lo ^ s.k.k1[1], s.q_lo};
#pragma unroll
  for (int r = 2; r < 10; ++r) {
    u32 lo0, lo1;
    const u32 hi0 = mul_hi_lo(m0, c[0], lo0);
    const u32 hi1 = mul_hi_lo(m1, c[2], lo1);
    const u32 n0 = hi1 ^ c[1] ^ s.k.k0[r];
    const u32 n2 = hi0 ^ c[3] ^ s.k.k1[r];
    c[0] = n0;
    c[1] = lo1;
    c[2] = n2;
    c[3] = lo0;
  }
  for (int k = 0; k < 4; ++k) w[k] = c[k];
}

// x² + y² - 2^64 in fp32, from x, y rounded to fp32, squared and added with one rounding each:
// four roundings of relative error at most 2^-24 each, so the result d is (x² + y²)(1 + δ) - 2^64
// with -2^-22 <= δ <= 2^-21.9 (the subtraction is exact near 2^64: Sterbenz). Hence |d| >= 2^44 =
// 2^64·2^-20 decides the point exactly (d < 0: a hit) and |d| < 2^44 (about 1.5e-6 of the points)
// is left to the integer test. The fp32 work runs beside the Philox multiplies instead of on their
// pipe.
__device__ __forceinline__ float pi_distance(u32 x, u32 y) {
  const float fx = __uint2float_rn(x), fy = __uint2float_rn(y);
  return __fadd_rn(__fmaf_rn(fx, fx, __fmul_rn(fy, fy)), -0x1p64f);
}
constexpr float kPiUndecided = 0x1p44f;

// One thread's share of the blocks (hi·2^32 + lo0 + j), j = first, first + stride, ... < n, with
// lo0 + n <= 2^32. The fp32 decision counts the hits; a block with an undecided point is noted
// (how many, and the last) and its count replaced by the integer test afterwards: no branch in
// the loop. A thread with two or more such blocks (rare: the points of a 2^20 chunk give one in
// about 60 000 threads) counts its share again with the integer test.
__device__ __forceinline__ u32 pi_hits_exact(const PiPhilox& s, u32 lo, u32 trips, u32 stride) {
  u32 hits = 0;
  for (u32 t = 0; t < trips; ++t, lo += stride) {
    u32 w[4];
    pi_block(s, lo, w);
    hits += hit(w[0], w[1]) + hit(w[2], w[3]);
  }
  return hits;
}

__device__ __forceinline__ u32 pi_hits_run(const PiKeys& keys, u32 hi, u32 lo0, u32 n, u32 first, u32 stride) {
  if (first >= n) return 0;
  const PiPhilox s = pi_philox(keys, hi);
  const u32 trips = (n - first - 1) / stride + 1;
  u32 hits = 0, undecided = 0, undecided_lo = 0;
  u32 lo = lo0 + first;
#pragma unroll 4
  for (u32 t = 0; t < trips; ++t, lo += stride) {
    u32 w[4];
    pi_block(s, lo, w);
    const float d0 = pi_distance(w[0], w[1]), d1 = pi_distance(w[2], w[3]);
    hits += (__float_as_uint(d0) >> 31) + (__float_as_uint(d1) >> 31);  // sign bit: d < 0
    if (fminf(fabsf(d0), fabsf(d1)) < kPiUndecided) {
      ++undecided;
      undecided_lo = lo;
    }
  }
  if (undecided == 1) {
    u32 w[4];
    pi_block(s, undecided_lo, w);
    const float d0 = pi_distance(w[0], w[1]), d1 = pi_distance(w[2], w[3]);
    hits = hits - (__float_as_uint(d0) >> 31) - (__float_as_uint(d1) >> 31) + hit(w[0], w[1]) + hit(w[2], w[3]);
  } else if (undecided > 1) {
    hits = pi_hits_exact(s, lo0 + first, trips, stride);
  }
  return hits;
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

// Budget per Philox block (two points) in the loop, counted from the PTX: 18 wide integer
// multiplies (10 rounds, less round 1's product with the zero counter word and round 2's product
// with the loop-invariant high word), 18 three-way XORs, 4 int-to-float conversions and 7 fp32
// operations for the two decisions, 2 shifts and adds for the count, 2 for the undecided note and
// about 2 for the loop: about 58 instructions, as many as before. The wide multiplies set the rate
// (they share one pipe, at a quarter of the issue rate): before, 19 for Philox and 4 for the
// integer test, 23 in all.
static __global__ void __launch_bounds__(kBlockThreads)
    pi_kernel(DeviceLayout l, PiKeys keys, unsigned long long* hits) {
  const u64 chunk = l.first_chunk + blockIdx.x;
  const u64 first = chunk * l.chunk_size;  // even: chunk_size is a multiple of 4
  const u64 last = min(first + l.chunk_size, l.samples);
  const u64 block0 = first / 2;
  // Whole Philox blocks (two points each) in the loop, with no per-point range test. Their high
  // counter word changes at most once in a chunk (fewer than 2^32 blocks): two runs, each with its
  // own fixed high word. An odd last point is the last chunk's.
  const u32 pairs = static_cast<u32>((last - first) / 2);
  const u32 lo0 = static_cast<u32>(block0), hi0 = static_cast<u32>(block0 >> 32);
  const u64 before_carry = (u64{1} << 32) - lo0;
  const u32 n0 = pairs < before_carry ? pairs : static_cast<u32>(before_carry);
  u32 count = pi_hits_run(keys, hi0, lo0, n0, threadIdx.x, kBlockThreads);
  if (n0 < pairs) count += pi_hits_run(keys, hi0 + 1, 0, pairs - n0, threadIdx.x, kBlockThreads);
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
