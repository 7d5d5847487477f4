// Does cuRAND's Philox device API reproduce the stream the fused GPU kernels draw? Three-way, for
// blocks (a, b, tag) and seeds whose high words matter: Random123 on the CPU (the reference), the
// fused kernels' philox_block (montecarlo_kernels.cuh) and cuRAND's
// curand_init(seed, subsequence = tag·2^32 + b, offset = 4a) followed by four curand() calls.
// cuRAND's Philox4x32-10 keeps the key (seed mod 2^32, seed div 2^32) and the counter
// (offset/4 as 64 bits, subsequence as 64 bits), which is the layout's counter (a, b, tag): the
// words are the same. The normals are not: curand_normal4 maps the same words through its own
// Box–Muller (θ = 2π(w + 1/2)·2^-32, sine first), not the layout's (θ = int32(w)·π·2^-31).
// docs/montecarlo.md, "cuRAND's device API and the layout". Built with CUDA only; needs a GPU.
#include <gtest/gtest.h>

#include <cuda_runtime.h>
#include <curand_kernel.h>

#include <Random123/philox.h>

#include <cstdint>
#include <vector>

#include "montecarlo_kernels.cuh"
#include "scalebench/gpu.hpp"

namespace {

using u32 = std::uint32_t;
using u64 = std::uint64_t;

struct Block {
  u64 a;
  u32 b, tag;
};

// Four words per block from the fused kernels' generator and from cuRAND; four normals from each.
__global__ void both_streams(const Block* blocks, int n, u64 seed, u32* fused, u32* curand_words, float* fused_normals,
                             float* curand_normals) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= n) return;
  const Block blk = blocks[i];
  const auto w = scalebench::gpu::mc::philox_block(blk.a, blk.b, blk.tag, static_cast<u32>(seed),
                                                   static_cast<u32>(seed >> 32));
  float z[4];
  scalebench::gpu::mc::normals4(w, z);
  curandStatePhilox4_32_10_t st;
  curand_init(seed, (static_cast<u64>(blk.tag) << 32) | blk.b, 4 * blk.a, &st);
  for (int k = 0; k < 4; ++k) {
    fused[4 * i + k] = w.v[k];
    curand_words[4 * i + k] = curand(&st);
    fused_normals[4 * i + k] = z[k];
  }
  curand_init(seed, (static_cast<u64>(blk.tag) << 32) | blk.b, 4 * blk.a, &st);
  const float4 c = curand_normal4(&st);
  curand_normals[4 * i + 0] = c.x;
  curand_normals[4 * i + 1] = c.y;
  curand_normals[4 * i + 2] = c.z;
  curand_normals[4 * i + 3] = c.w;
}

template <class T>
std::vector<T> to_host(const T* d, std::size_t n) {
  std::vector<T> h(n);
  EXPECT_EQ(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
  return h;
}

}  // namespace

TEST(CurandPhiloxStream, DeviceApiGivesTheFusedKernelsWordsButNotTheirNormals) {
  if (scalebench::visible_gpu_count() == 0) GTEST_SKIP() << "no CUDA device visible";
  const std::vector<Block> blocks = {{0, 0, 0},           {1, 0, 0},      {(u64{1} << 32) + 5, 0, 0},
                                     {123'456'789, 17, 2}, {7, 0, 1},      {(u64{1} << 40) + 3, 63, 2}};
  const int n = static_cast<int>(blocks.size());
  for (const u64 seed : {u64{42}, (u64{1} << 40) + 7}) {
    Block* d_blocks = nullptr;
    u32 *d_fused = nullptr, *d_curand = nullptr;
    float *d_fn = nullptr, *d_cn = nullptr;
    ASSERT_EQ(cudaMalloc(&d_blocks, n * sizeof(Block)), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&d_fused, 4 * n * sizeof(u32)), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&d_curand, 4 * n * sizeof(u32)), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&d_fn, 4 * n * sizeof(float)), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&d_cn, 4 * n * sizeof(float)), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(d_blocks, blocks.data(), n * sizeof(Block), cudaMemcpyHostToDevice), cudaSuccess);
    both_streams<<<1, 64>>>(d_blocks, n, seed, d_fused, d_curand, d_fn, d_cn);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const auto fused = to_host(d_fused, 4 * n), cur = to_host(d_curand, 4 * n);
    const auto fn = to_host(d_fn, 4 * n), cn = to_host(d_cn, 4 * n);
    int normals_equal = 0;
    for (int i = 0; i < n; ++i) {
      const Block& blk = blocks[i];
      const r123::Philox4x32::ctr_type c = {{static_cast<u32>(blk.a), static_cast<u32>(blk.a >> 32), blk.b, blk.tag}};
      const r123::Philox4x32::key_type k = {{static_cast<u32>(seed), static_cast<u32>(seed >> 32)}};
      const auto cpu = r123::Philox4x32_R<10>()(c, k);
      for (int j = 0; j < 4; ++j) {
        EXPECT_EQ(fused[4 * i + j], cpu.v[j]) << "fused kernel vs Random123, block " << i << " word " << j;
        EXPECT_EQ(cur[4 * i + j], cpu.v[j]) << "cuRAND device API vs Random123, block " << i << " word " << j
                                            << ", seed " << seed;
        if (fn[4 * i + j] == cn[4 * i + j]) ++normals_equal;
      }
    }
    // Same words, another map to normals: at most a coincidence or two among the 4n normals.
    EXPECT_LT(normals_equal, 2 * n) << "curand_normal4 gave the fused kernels' normals";
    cudaFree(d_blocks);
    cudaFree(d_fused);
    cudaFree(d_curand);
    cudaFree(d_fn);
    cudaFree(d_cn);
  }
}
