#include <cuda_runtime.h>

#include <utility>

#include <fmt/format.h>

#include "scalebench/base/error.hpp"
#include "scalebench/gpu/gpu.hpp"

namespace scalebench {

HostMemoryPin::HostMemoryPin(void* data, std::size_t bytes) {
  if (data == nullptr || bytes == 0) return;
  const cudaError_t rc = cudaHostRegister(data, bytes, cudaHostRegisterDefault);
  if (rc != cudaSuccess) {
    cudaGetLastError();
    throw ResourceError(fmt::format("cannot page-lock {:.2f} GiB of host memory for GPU copies (cudaHostRegister: {}); "
                                    "use a smaller size or raise the locked-memory limit (ulimit -l)",
                                    static_cast<double>(bytes) / (1 << 30), cudaGetErrorString(rc)));
  }
  ptr_ = data;
}

HostMemoryPin::~HostMemoryPin() { release(); }

HostMemoryPin::HostMemoryPin(HostMemoryPin&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)) {}

HostMemoryPin& HostMemoryPin::operator=(HostMemoryPin&& o) noexcept {
  if (this != &o) {
    release();
    ptr_ = std::exchange(o.ptr_, nullptr);
  }
  return *this;
}

void HostMemoryPin::release() noexcept {
  if (ptr_ != nullptr) cudaHostUnregister(ptr_);
  ptr_ = nullptr;
}

}  // namespace scalebench
