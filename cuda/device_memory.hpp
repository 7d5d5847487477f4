#pragma once
// Move-only owners of device memory and page-locked ("pinned") host memory (owned.hpp).
#include <cuda_runtime.h>

#include <cstddef>

#include "owned.hpp"

namespace scalebench::gpu {

// Bytes at an address, as the owners below hold them.
struct Bytes {
  void* ptr = nullptr;
  std::size_t size = 0;
  bool operator==(const Bytes& o) const noexcept { return ptr == o.ptr && size == o.size; }
};
void free_device(Bytes b) noexcept;
void free_pinned(Bytes b) noexcept;

// cudaMalloc'd bytes on the current device.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes);

  void* get() const noexcept { return b_.get().ptr; }
  template <class T>
  T* as() const noexcept {
    return static_cast<T*>(get());
  }
  std::size_t bytes() const noexcept { return b_.get().size; }
  bool empty() const noexcept { return get() == nullptr; }

 private:
  Owned<Bytes, free_device> b_;
};

// cudaMallocHost'd bytes: host memory the copy engines read and write at full bus speed.
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(std::size_t bytes);

  void* get() const noexcept { return b_.get().ptr; }
  template <class T>
  T* as() const noexcept {
    return static_cast<T*>(get());
  }
  std::size_t bytes() const noexcept { return b_.get().size; }

 private:
  Owned<Bytes, free_pinned> b_;
};

// True when `p` points into page-locked host memory (cudaMallocHost or cudaHostRegister).
bool is_pinned(const void* p) noexcept;

}  // namespace scalebench::gpu
