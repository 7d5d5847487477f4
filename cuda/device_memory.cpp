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

namespace scalebench {

// The CUDA-free owner of gpu.hpp: a DeviceBuffer's allocation, seen as bytes.
DeviceArray::DeviceArray(std::size_t bytes) : bytes_(bytes) {
  if (bytes > 0) SCALEBENCH_CUDA_CHECK(cudaMalloc(&ptr_, bytes));
}
DeviceArray::~DeviceArray() { release(); }
DeviceArray::DeviceArray(DeviceArray&& o) noexcept
    : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
DeviceArray& DeviceArray::operator=(DeviceArray&& o) noexcept {
  if (this != &o) {
    release();
    ptr_ = std::exchange(o.ptr_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
  }
  return *this;
}
void DeviceArray::release() noexcept {
  if (ptr_ != nullptr) cudaFree(ptr_);
  ptr_ = nullptr;
  bytes_ = 0;
}

}  // namespace scalebench
