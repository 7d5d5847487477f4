#include "device_memory.hpp"

#include "cuda_check.hpp"
#include "scalebench/gpu/gpu.hpp"

namespace scalebench::gpu {

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
  if (bytes > 0) SCALEBENCH_CUDA_CHECK(cudaMalloc(&ptr_, bytes));
}
DeviceBuffer::~DeviceBuffer() { release(); }
void DeviceBuffer::release() noexcept {
  if (ptr_ != nullptr) cudaFree(ptr_);
  ptr_ = nullptr;
  bytes_ = 0;
}

PinnedBuffer::PinnedBuffer(std::size_t bytes) : bytes_(bytes) {
  if (bytes > 0) SCALEBENCH_CUDA_CHECK(cudaMallocHost(&ptr_, bytes));
}
PinnedBuffer::~PinnedBuffer() { release(); }
void PinnedBuffer::release() noexcept {
  if (ptr_ != nullptr) cudaFreeHost(ptr_);
  ptr_ = nullptr;
  bytes_ = 0;
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
