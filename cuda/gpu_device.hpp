#pragma once
// What cuda/ implements of the device seam (scalebench/gpu/device.hpp), as the CUDA device
// (cuda_device.cpp) calls it. Elsewhere the vendor-neutral functions of gpu.hpp stand for these.
#include <cstddef>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "scalebench/cpu/gemm.hpp"
#include "scalebench/cpu/montecarlo.hpp"
#include "scalebench/gpu/gpu.hpp"

namespace scalebench {

class Communicator;
class GpuGemm;
class GpuTransport;
class BufferTransport;

// Monte Carlo kernels (montecarlo_cuda.cu, montecarlo_curand.cu), the NCCL transport
// (nccl_transport.cpp) and the GPU micro-benchmarks (calibrate_gpu.cpp).
std::unique_ptr<McKernel> make_cuda_montecarlo(const MonteCarloConfig& cfg, const Communicator& comm);
std::unique_ptr<McKernel> make_curand_montecarlo(const MonteCarloConfig& cfg, const Communicator& comm);
std::unique_ptr<GpuTransport> make_nccl_transport(const Communicator& comm, int max_ctas);
std::unique_ptr<BufferTransport> make_nccl_buffer_transport(const Communicator& comm, DeviceStream stream,
                                                            int max_ctas);
nlohmann::json calibrate_cuda(bool quick);

}  // namespace scalebench

namespace scalebench::gpu {

// Seconds the first select_for_rank() of this process spent on driver initialisation and
// context creation (0 before any): reported as set-up "gpu_context", whoever selected first.
double first_context_seconds();

// GPU selection and description (gpu_device.cpp): the contracts of visible_gpu_count,
// gpu_absence_reason, select_gpu_for_rank and gpu_info in gpu.hpp.
int device_count();
std::string absence_reason();
int select_for_rank(const Communicator& comm, bool share_gpu, const std::string& asked_by);
nlohmann::json device_info(int device);

// The cuBLAS GEMM backend (cublas_gemm.cpp).
std::unique_ptr<GpuGemm> make_cublas_gemm(const GemmConfig& cfg, const Communicator& comm);

// cudaHostRegister / cudaHostUnregister (host_memory_pin.cpp).
void pin_host(void* data, std::size_t bytes);
void unpin_host(void* data) noexcept;
// cudaMalloc (ResourceError-style CudaError when it cannot) / cudaFree (device_memory.cpp).
void* allocate(std::size_t bytes);
void free(void* data) noexcept;

}  // namespace scalebench::gpu
