#pragma once
// Move-only owner of a cuBLAS handle bound to one stream, with an explicit workspace so that
// the device memory it uses is known in advance; and the row-major multiply on it.
#include <cublas_v2.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "device_memory.hpp"
#include "owned.hpp"
#include "scalebench/gpu/gpu.hpp"

namespace scalebench::gpu {

void destroy_cublas(cublasHandle_t h) noexcept;

class CublasHandle {
 public:
  static constexpr std::size_t kWorkspaceBytes = static_cast<std::size_t>(kBlasWorkspaceBytes);

  explicit CublasHandle(cudaStream_t stream);

  cublasHandle_t get() const noexcept { return h_.get(); }

 private:
  DeviceBuffer workspace_;  // declared first: freed after the handle
  Owned<cublasHandle_t, destroy_cublas> h_;
};

// Version of the cuBLAS library loaded, "13.0.2".
std::string cublas_version_string();

// One row-major multiply C (rows×n) (+)= A (rows×k)·B (k×n) on sub-matrices: leading dimensions
// in elements; `accumulate` adds to C (beta = 1) instead of overwriting it. Row-major C = A·B is
// column-major Cᵀ = Bᵀ·Aᵀ: the same memory, no transposing copies. The classic typed calls where
// they exist (cublasDgemm, cublasSgemm; tf32 is cublasSgemm on a handle in
// CUBLAS_TF32_TENSOR_OP_MATH, see set_math_mode), cublasGemmEx for bf16, which has none: exactly
// what a program that only wants a multiply calls. Whatever multiplies on this device calls it,
// and `scalebench calibrate` times it (calibrate_gpu.cpp): a calibrated rate is the rate of the
// call that runs. UsageError when a dimension exceeds cuBLAS's int. The call is described as the
// device seam's block multiply is (GpuGemm::BlockGemm, gpu.hpp).
void row_major_gemm(cublasHandle_t h, Precision p, const GpuGemm::BlockGemm& call);
// The handle's math mode for `p`: tf32, tensor cores with inputs rounded to tf32; every other
// precision, no tensor-core down-conversion (fp32 stays fp32). Set before the calls of `p`.
void set_math_mode(cublasHandle_t h, Precision p);

}  // namespace scalebench::gpu
