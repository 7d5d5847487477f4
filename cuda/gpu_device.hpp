#pragma once
// What cuda/ implements of the device seam (scalebench/gpu/device.hpp), as the CUDA device
// (cuda_device.cpp) calls it. Elsewhere the vendor-neutral functions of gpu.hpp stand for these;
// a workload's CUDA code (src/workloads/<name>/cuda/) also reads first_context_seconds() from
// here.
#include <cstddef>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "scalebench/gpu/gpu.hpp"

namespace scalebench {

class Communicator;
class BufferTransport;

// The NCCL transport (nccl_transport.cpp) and the GPU micro-benchmarks (calibrate_gpu.cpp).
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
// The CUDA libraries this process loaded and the driver: the contract of gpu_library_versions()
// in gpu.hpp. Creates no context.
nlohmann::json library_versions();

// cudaHostRegister / cudaHostUnregister (host_memory_pin.cpp).
void pin_host(void* data, std::size_t bytes);
void unpin_host(void* data) noexcept;
// cudaMalloc (ResourceError-style CudaError when it cannot) / cudaFree (device_memory.cpp).
void* allocate(std::size_t bytes);
void free(void* data) noexcept;

// Streams, events and copies (device_primitives.cpp): the contracts of OwnedStream, DeviceEvent,
// copy_async and copy_strided_async in gpu.hpp, on opaque handles (cudaStream_t, cudaEvent_t).
void* create_stream(bool high_priority);
void destroy_stream(void* stream) noexcept;
void synchronize_stream(void* stream);
void* create_event();
void destroy_event(void* event) noexcept;
void record_event(void* event, void* stream);
void synchronize_event(void* event);
double event_seconds(void* start, void* end);
void wait_event(void* stream, void* event);
void copy(void* dst, const void* src, std::size_t bytes, CopyKind kind, void* stream);
void copy_strided(const StridedCopy& c, CopyKind kind, void* stream);

}  // namespace scalebench::gpu
