#pragma once
// Move-only owner of a cuBLAS handle bound to one stream, with an explicit workspace so that
// the device memory it uses is known in advance.
#include <cublas_v2.h>

#include <cstddef>
#include <string>
#include <utility>

#include "device_memory.hpp"
#include "scalebench/gpu/gpu.hpp"

namespace scalebench::gpu {

class CublasHandle {
 public:
  static constexpr std::size_t kWorkspaceBytes = static_cast<std::size_t>(kBlasWorkspaceBytes);

  explicit CublasHandle(cudaStream_t stream);
  ~CublasHandle();
  CublasHandle(CublasHandle&& o) noexcept : h_(std::exchange(o.h_, nullptr)), workspace_(std::move(o.workspace_)) {}
  CublasHandle& operator=(CublasHandle&& o) noexcept {
    if (this != &o) {
      release();
      h_ = std::exchange(o.h_, nullptr);
      workspace_ = std::move(o.workspace_);
    }
    return *this;
  }
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;

  cublasHandle_t get() const noexcept { return h_; }

 private:
  void release() noexcept;
  cublasHandle_t h_ = nullptr;
  DeviceBuffer workspace_;
};

// Version of the cuBLAS library loaded, "13.0.2".
std::string cublas_version_string();

}  // namespace scalebench::gpu
