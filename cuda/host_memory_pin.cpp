// Page-locking host memory in place for the CUDA device (HostMemoryPin in gpu.hpp).
#include <cuda_runtime.h>

#include <fmt/format.h>

#include "gpu_device.hpp"
#include "scalebench/base/error.hpp"

namespace scalebench::gpu {

void pin_host(void* data, std::size_t bytes) {
  const cudaError_t rc = cudaHostRegister(data, bytes, cudaHostRegisterDefault);
  if (rc != cudaSuccess) {
    cudaGetLastError();
    throw ResourceError(fmt::format("cannot page-lock {:.2f} GiB of host memory for GPU copies (cudaHostRegister: {}); "
                                    "use a smaller size or raise the locked-memory limit (ulimit -l)",
                                    static_cast<double>(bytes) / (1 << 30), cudaGetErrorString(rc)));
  }
}

void unpin_host(void* data) noexcept { cudaHostUnregister(data); }

}  // namespace scalebench::gpu
