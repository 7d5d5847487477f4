#include "device_memory.hpp"

#include "cuda_check.hpp"
#include "scalebench/gpu/gpu.hpp"

namespace scalebench::gpu {

void free_device(Bytes b) noexcept {
  if (b.ptr != nullptr) cudaFree(b.ptr);
}
void free_pinned(Bytes b) noexcept {
  if (b.ptr != nullptr) cudaFreeHost(b.ptr);
}

DeviceBuffer::DeviceBuffer(std::size_t bytes) {
  void* p = nullptr;
  if (bytes > 0) SCALEBENCH_CUDA_CHECK(cudaMalloc(&p, bytes));
  b_ = Owned<Bytes, free_device>(Bytes{p, bytes});
}

PinnedBuffer::PinnedBuffer(std::size_t bytes) {
  void* p = nullptr;
  if (bytes > 0) SCALEBENCH_CUDA_CHECK(cudaMallocHost(&p, bytes));
  b_ = Owned<Bytes, free_pinned>(Bytes{p, bytes});
}

bool is_pinned(const void* p) noexcept {
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return attr.type == cudaMemoryTypeHost;
}

}  // namespace scalebench::gpu

namespace scalebench::gpu {

void* allocate(std::size_t bytes) {
  void* p = nullptr;
  SCALEBENCH_CUDA_CHECK(cudaMalloc(&p, bytes));
  return p;
}
void free(void* data) noexcept { cudaFree(data); }

}  // namespace scalebench::gpu
