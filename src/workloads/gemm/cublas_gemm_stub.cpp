// The cuBLAS multiply in a build without CUDA: it says so where the backend is asked for
// (NoCudaError naming the option, exit 6), as every GPU entry point does with no device.
// make_device_gemm finds no device first in such a build; this keeps its table one table.
#include "gemm/device_gemm.hpp"

#include "scalebench/base/error.hpp"

namespace scalebench {

std::unique_ptr<GpuGemm> make_cublas_gemm(const GemmConfig& cfg, const Communicator& /*comm*/) {
  throw NoCudaError("--backend " + to_string(cfg.backend));
}

}  // namespace scalebench
