#include "curand_device_stream.hpp"

#include <cuda_runtime.h>
#include <curand_kernel.h>

#include <stdexcept>
#include <string>

namespace {

__global__ void curand_words(const PhiloxBlock* blocks, int n, std::uint64_t seed, std::uint32_t* words,
                             float* normals) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= n) return;
  const PhiloxBlock blk = blocks[i];
  const unsigned long long subsequence = (static_cast<unsigned long long>(blk.tag) << 32) | blk.b;
  curandStatePhilox4_32_10_t st;
  curand_init(seed, subsequence, 4 * blk.a, &st);
  for (int k = 0; k < 4; ++k) words[4 * i + k] = curand(&st);
  curand_init(seed, subsequence, 4 * blk.a, &st);
  const float4 z = curand_normal4(&st);
  normals[4 * i + 0] = z.x;
  normals[4 * i + 1] = z.y;
  normals[4 * i + 2] = z.z;
  normals[4 * i + 3] = z.w;
}

void check(cudaError_t rc, const char* what) {
  if (rc != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(rc));
}

}  // namespace

void curand_device_stream(const std::vector<PhiloxBlock>& blocks, std::uint64_t seed, std::vector<std::uint32_t>& words,
                          std::vector<float>& normals) {
  const int n = static_cast<int>(blocks.size());
  PhiloxBlock* d_blocks = nullptr;
  std::uint32_t* d_words = nullptr;
  float* d_normals = nullptr;
  check(cudaMalloc(&d_blocks, n * sizeof(PhiloxBlock)), "cudaMalloc");
  check(cudaMalloc(&d_words, 4 * n * sizeof(std::uint32_t)), "cudaMalloc");
  check(cudaMalloc(&d_normals, 4 * n * sizeof(float)), "cudaMalloc");
  check(cudaMemcpy(d_blocks, blocks.data(), n * sizeof(PhiloxBlock), cudaMemcpyHostToDevice), "cudaMemcpy");
  curand_words<<<1, 64>>>(d_blocks, n, seed, d_words, d_normals);
  check(cudaDeviceSynchronize(), "curand_words");
  words.resize(4 * n);
  normals.resize(4 * n);
  check(cudaMemcpy(words.data(), d_words, words.size() * sizeof(std::uint32_t), cudaMemcpyDeviceToHost), "cudaMemcpy");
  check(cudaMemcpy(normals.data(), d_normals, normals.size() * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy");
  cudaFree(d_blocks);
  cudaFree(d_words);
  cudaFree(d_normals);
}
