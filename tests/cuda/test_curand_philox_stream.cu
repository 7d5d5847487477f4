// Does cuRAND's Philox device API reproduce the stream the fused GPU kernels draw? Three-way, for
// blocks (a, b, tag) and seeds whose high words matter: Random123 on the CPU (the reference), the
// fused kernels' philox_block (montecarlo_kernels.cuh) and cuRAND's
// curand_init(seed, subsequence = tag·2^32 + b, offset = 4a) followed by four curand() calls
// (curand_device_stream.cu). cuRAND's Philox4x32-10 keys with (seed mod 2^32, seed div 2^32) and
// starts the counter at (offset/4 as 64 bits, subsequence as 64 bits): the layout's counter
// (a, b, tag), so the words are the same. The normals are not: curand_normal4 maps the same words
// through its own Box–Muller (θ = 2π(w + 1/2)·2^-32, sine first), not the layout's
// (θ = int32(w)·π·2^-31, cosine first). docs/montecarlo.md, "cuRAND's device API and the layout".
// Built with CUDA only; needs a GPU.
#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include <Random123/philox.h>

#include <cstdint>
#include <vector>

#include "curand_device_stream.hpp"
#include "gpu_skip.hpp"
#include "montecarlo_kernels.cuh"
#include "scalebench/gpu/gpu.hpp"

namespace {

using u32 = std::uint32_t;
using u64 = std::uint64_t;

__global__ void fused_stream(const PhiloxBlock* blocks, int n, u64 seed, u32* words, float* normals) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= n) return;
  const PhiloxBlock blk = blocks[i];
  const auto w = scalebench::gpu::mc::philox_block(blk.a, blk.b, blk.tag, static_cast<u32>(seed),
                                                   static_cast<u32>(seed >> 32));
  float z[4];
  scalebench::gpu::mc::normals4(w, z);
  for (int k = 0; k < 4; ++k) {
    words[4 * i + k] = w.v[k];
    normals[4 * i + k] = z[k];
  }
}

void fused_device_stream(const std::vector<PhiloxBlock>& blocks, u64 seed, std::vector<u32>& words,
                         std::vector<float>& normals) {
  const int n = static_cast<int>(blocks.size());
  PhiloxBlock* d_blocks = nullptr;
  u32* d_words = nullptr;
  float* d_normals = nullptr;
  ASSERT_EQ(cudaMalloc(&d_blocks, n * sizeof(PhiloxBlock)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&d_words, 4 * n * sizeof(u32)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&d_normals, 4 * n * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(d_blocks, blocks.data(), n * sizeof(PhiloxBlock), cudaMemcpyHostToDevice), cudaSuccess);
  fused_stream<<<1, 64>>>(d_blocks, n, seed, d_words, d_normals);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  words.resize(4 * n);
  normals.resize(4 * n);
  ASSERT_EQ(cudaMemcpy(words.data(), d_words, words.size() * sizeof(u32), cudaMemcpyDeviceToHost), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(normals.data(), d_normals, normals.size() * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(d_blocks);
  cudaFree(d_words);
  cudaFree(d_normals);
}

}  // namespace

TEST(CurandPhiloxStream, DeviceApiGivesTheFusedKernelsWordsButNotTheirNormals) {
  SKIP_WITHOUT_A_GPU();
  const std::vector<PhiloxBlock> blocks = {
      {0, 0, 0}, {1, 0, 0}, {(u64{1} << 32) + 5, 0, 0}, {123'456'789, 17, 2}, {7, 0, 1}, {(u64{1} << 40) + 3, 63, 2}};
  const int n = static_cast<int>(blocks.size());
  for (const u64 seed : {u64{42}, (u64{1} << 40) + 7}) {
    std::vector<u32> fused, cur;
    std::vector<float> fused_normals, curand_normals;
    fused_device_stream(blocks, seed, fused, fused_normals);
    curand_device_stream(blocks, seed, cur, curand_normals);
    int normals_equal = 0;
    for (int i = 0; i < n; ++i) {
      const PhiloxBlock& blk = blocks[i];
      const r123::Philox4x32::ctr_type c = {{static_cast<u32>(blk.a), static_cast<u32>(blk.a >> 32), blk.b, blk.tag}};
      const r123::Philox4x32::key_type k = {{static_cast<u32>(seed), static_cast<u32>(seed >> 32)}};
      const auto cpu = r123::Philox4x32_R<10>()(c, k);
      for (int j = 0; j < 4; ++j) {
        EXPECT_EQ(fused[4 * i + j], cpu.v[j]) << "fused kernel vs Random123, block " << i << " word " << j;
        EXPECT_EQ(cur[4 * i + j], cpu.v[j])
            << "cuRAND device API vs Random123, block " << i << " word " << j << ", seed " << seed;
        if (fused_normals[4 * i + j] == curand_normals[4 * i + j]) ++normals_equal;
      }
    }
    // Same words, another map to normals: at most a coincidence among the 4n normals.
    EXPECT_LT(normals_equal, 2 * n) << "curand_normal4 gave the fused kernels' normals";
  }
}
