#pragma once
// One check per GPU library. The macros only capture the call text, file and line; the logic
// lives in check_*() (cuda_check.cpp). A failure throws a scalebench::Error that owns its
// one-line message: out-of-memory is a ResourceError, anything else a RuntimeLibraryError.
// Sticky CUDA errors (illegal address, launch failure, ...) leave the context unusable, so they
// print one line and end the job (MPI_Abort when MPI is running) instead of unwinding.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <curand.h>
#include <nccl.h>

namespace scalebench::gpu {

void check_cuda(cudaError_t rc, const char* call, const char* file, int line);
void check_cublas(cublasStatus_t rc, const char* call, const char* file, int line);
void check_curand(curandStatus_t rc, const char* call, const char* file, int line);
// `comm` (may be null) adds NCCL's last error text for that communicator.
void check_nccl(ncclResult_t rc, const char* call, const char* file, int line, ncclComm_t comm = nullptr);

// True for errors after which the CUDA context cannot be used again.
bool is_sticky(cudaError_t rc) noexcept;

const char* cublas_status_name(cublasStatus_t rc) noexcept;
const char* curand_status_name(curandStatus_t rc) noexcept;

}  // namespace scalebench::gpu

#define SCALEBENCH_CUDA_CHECK(call) ::scalebench::gpu::check_cuda((call), #call, __FILE__, __LINE__)
#define SCALEBENCH_CUBLAS_CHECK(call) ::scalebench::gpu::check_cublas((call), #call, __FILE__, __LINE__)
#define SCALEBENCH_CURAND_CHECK(call) ::scalebench::gpu::check_curand((call), #call, __FILE__, __LINE__)
#define SCALEBENCH_NCCL_CHECK(call) ::scalebench::gpu::check_nccl((call), #call, __FILE__, __LINE__)
#define SCALEBENCH_NCCL_CHECK_COMM(call, comm) ::scalebench::gpu::check_nccl((call), #call, __FILE__, __LINE__, (comm))
