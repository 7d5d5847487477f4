#include "cublas_handle.hpp"

#include <fmt/format.h>

#include "cuda_check.hpp"

namespace scalebench::gpu {

CublasHandle::CublasHandle(cudaStream_t stream) : workspace_(kWorkspaceBytes) {
  SCALEBENCH_CUBLAS_CHECK(cublasCreate(&h_));
  try {
    SCALEBENCH_CUBLAS_CHECK(cublasSetStream(h_, stream));
    SCALEBENCH_CUBLAS_CHECK(cublasSetWorkspace(h_, workspace_.get(), workspace_.bytes()));
    // Scalars live on the host; tensor-core modes are chosen per call by the compute type.
    SCALEBENCH_CUBLAS_CHECK(cublasSetPointerMode(h_, CUBLAS_POINTER_MODE_HOST));
  } catch (...) {
    release();
    throw;
  }
}
CublasHandle::~CublasHandle() { release(); }
void CublasHandle::release() noexcept {
  if (h_ != nullptr) cublasDestroy(h_);
  h_ = nullptr;
}

std::string cublas_version_string() {
  int major = 0, minor = 0, patch = 0;
  if (cublasGetProperty(MAJOR_VERSION, &major) != CUBLAS_STATUS_SUCCESS ||
      cublasGetProperty(MINOR_VERSION, &minor) != CUBLAS_STATUS_SUCCESS ||
      cublasGetProperty(PATCH_LEVEL, &patch) != CUBLAS_STATUS_SUCCESS) {
    return "unknown";
  }
  return fmt::format("{}.{}.{}", major, minor, patch);
}

}  // namespace scalebench::gpu
