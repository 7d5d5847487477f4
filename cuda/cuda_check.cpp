#include "cuda_check.hpp"

#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "scalebench/base/error.hpp"
#include "scalebench/base/host.hpp"

namespace scalebench::gpu {
namespace {

std::string where(const char* call, const char* file, int line) {
  // Only the file name: build paths say nothing to the reader.
  std::string f(file);
  if (const auto slash = f.find_last_of('/'); slash != std::string::npos) f.erase(0, slash + 1);
  return fmt::format("{} failed at {}:{}", call, f, line);
}

[[noreturn]] void abort_job(const std::string& message) {
  int rank = 0, initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  const bool mpi_running = initialized != 0 && finalized == 0;
  if (mpi_running) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::fflush(stdout);
  std::fprintf(stderr, "scalebench: error on %s rank %d: %s\n", host_name().c_str(), rank, message.c_str());
  std::fflush(stderr);
  if (mpi_running) MPI_Abort(MPI_COMM_WORLD, static_cast<int>(ExitCode::runtime));
  std::_Exit(static_cast<int>(ExitCode::runtime));
}

}  // namespace

bool is_sticky(cudaError_t rc) noexcept {
  switch (rc) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
    case cudaErrorContextIsDestroyed: return true;
    default: return false;
  }
}

void check_cuda(cudaError_t rc, const char* call, const char* file, int line) {
  if (rc == cudaSuccess) return;
  const std::string text = fmt::format("{}: {} ({})", where(call, file, line), cudaGetErrorString(rc),
                                       cudaGetErrorName(rc));
  if (is_sticky(rc)) abort_job(text + "; the GPU context is lost, ending the job");
  cudaGetLastError();  // clear the non-sticky error so that the next call does not report it again
  if (rc == cudaErrorMemoryAllocation) {
    throw ResourceError(text + "; use a smaller size or more GPUs (ranks)");
  }
  if (rc == cudaErrorNoDevice || rc == cudaErrorInsufficientDriver) {
    throw ResourceError(text + "; check the NVIDIA driver and CUDA_VISIBLE_DEVICES");
  }
  throw RuntimeLibraryError(text);
}

const char* cublas_status_name(cublasStatus_t rc) noexcept {
  switch (rc) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
  }
  return "unknown cuBLAS status";
}

void check_cublas(cublasStatus_t rc, const char* call, const char* file, int line) {
  if (rc == CUBLAS_STATUS_SUCCESS) return;
  const std::string text = fmt::format("{}: {} ({})", where(call, file, line), cublasGetStatusString(rc),
                                       cublas_status_name(rc));
  if (rc == CUBLAS_STATUS_ALLOC_FAILED) throw ResourceError(text + "; use a smaller size or more GPUs (ranks)");
  // An execution failure usually hides a sticky CUDA error: look, and abort if the context is gone.
  if (rc == CUBLAS_STATUS_EXECUTION_FAILED) {
    const cudaError_t pending = cudaPeekAtLastError();
    if (is_sticky(pending))
      abort_job(text + "; " + cudaGetErrorString(pending) + "; the GPU context is lost, ending the job");
  }
  throw RuntimeLibraryError(text);
}

const char* curand_status_name(curandStatus_t rc) noexcept {
  switch (rc) {
    case CURAND_STATUS_SUCCESS: return "CURAND_STATUS_SUCCESS";
    case CURAND_STATUS_VERSION_MISMATCH: return "CURAND_STATUS_VERSION_MISMATCH";
    case CURAND_STATUS_NOT_INITIALIZED: return "CURAND_STATUS_NOT_INITIALIZED";
    case CURAND_STATUS_ALLOCATION_FAILED: return "CURAND_STATUS_ALLOCATION_FAILED";
    case CURAND_STATUS_TYPE_ERROR: return "CURAND_STATUS_TYPE_ERROR";
    case CURAND_STATUS_OUT_OF_RANGE: return "CURAND_STATUS_OUT_OF_RANGE";
    case CURAND_STATUS_LENGTH_NOT_MULTIPLE: return "CURAND_STATUS_LENGTH_NOT_MULTIPLE";
    case CURAND_STATUS_DOUBLE_PRECISION_REQUIRED: return "CURAND_STATUS_DOUBLE_PRECISION_REQUIRED";
    case CURAND_STATUS_LAUNCH_FAILURE: return "CURAND_STATUS_LAUNCH_FAILURE";
    case CURAND_STATUS_PREEXISTING_FAILURE: return "CURAND_STATUS_PREEXISTING_FAILURE";
    case CURAND_STATUS_INITIALIZATION_FAILED: return "CURAND_STATUS_INITIALIZATION_FAILED";
    case CURAND_STATUS_ARCH_MISMATCH: return "CURAND_STATUS_ARCH_MISMATCH";
    case CURAND_STATUS_INTERNAL_ERROR: return "CURAND_STATUS_INTERNAL_ERROR";
  }
  return "unknown cuRAND status";
}

void check_curand(curandStatus_t rc, const char* call, const char* file, int line) {
  if (rc == CURAND_STATUS_SUCCESS) return;
  const std::string text = fmt::format("{}: {}", where(call, file, line), curand_status_name(rc));
  if (rc == CURAND_STATUS_ALLOCATION_FAILED) throw ResourceError(text + "; use a smaller size or more GPUs (ranks)");
  if (rc == CURAND_STATUS_LAUNCH_FAILURE || rc == CURAND_STATUS_PREEXISTING_FAILURE) {
    const cudaError_t pending = cudaPeekAtLastError();
    if (is_sticky(pending))
      abort_job(text + "; " + cudaGetErrorString(pending) + "; the GPU context is lost, ending the job");
  }
  throw RuntimeLibraryError(text);
}

void check_nccl(ncclResult_t rc, const char* call, const char* file, int line, ncclComm_t comm) {
  if (rc == ncclSuccess || rc == ncclInProgress) return;
  std::string text = fmt::format("{}: {}", where(call, file, line), ncclGetErrorString(rc));
  if (const char* last = ncclGetLastError(comm); last != nullptr && *last != '\0') text += fmt::format(" ({})", last);
  if (rc == ncclUnhandledCudaError) {
    const cudaError_t pending = cudaPeekAtLastError();
    if (is_sticky(pending))
      abort_job(text + "; " + cudaGetErrorString(pending) + "; the GPU context is lost, ending the job");
  }
  throw RuntimeLibraryError(text + "; run with NCCL_DEBUG=WARN for details");
}

}  // namespace scalebench::gpu
