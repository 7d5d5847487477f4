// Streams, events and copies of the device seam (gpu.hpp) on the CUDA runtime. Streams are
// non-blocking (no implicit sync with the legacy stream); events keep timing on.
#include <cuda_runtime.h>

#include "cuda_check.hpp"
#include "gpu_device.hpp"

namespace scalebench::gpu {
namespace {

cudaStream_t stream_of(void* s) { return static_cast<cudaStream_t>(s); }
cudaEvent_t event_of(void* e) { return static_cast<cudaEvent_t>(e); }

cudaMemcpyKind kind_of(CopyKind k) {
  switch (k) {
    case CopyKind::host_to_device: return cudaMemcpyHostToDevice;
    case CopyKind::device_to_host: return cudaMemcpyDeviceToHost;
    case CopyKind::device_to_device: return cudaMemcpyDeviceToDevice;
  }
  return cudaMemcpyDefault;
}

}  // namespace

void* create_stream(bool high_priority) {
  cudaStream_t s = nullptr;
  if (!high_priority) {
    SCALEBENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    return s;
  }
  int least = 0, greatest = 0;
  SCALEBENCH_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  SCALEBENCH_CUDA_CHECK(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, greatest));
  return s;
}

void destroy_stream(void* stream) noexcept { cudaStreamDestroy(stream_of(stream)); }

void synchronize_stream(void* stream) { SCALEBENCH_CUDA_CHECK(cudaStreamSynchronize(stream_of(stream))); }

void* create_event() {
  cudaEvent_t e = nullptr;
  SCALEBENCH_CUDA_CHECK(cudaEventCreate(&e));
  return e;
}

void destroy_event(void* event) noexcept { cudaEventDestroy(event_of(event)); }

void record_event(void* event, void* stream) {
  SCALEBENCH_CUDA_CHECK(cudaEventRecord(event_of(event), stream_of(stream)));
}

void synchronize_event(void* event) { SCALEBENCH_CUDA_CHECK(cudaEventSynchronize(event_of(event))); }

double event_seconds(void* start, void* end) {
  float ms = 0;
  SCALEBENCH_CUDA_CHECK(cudaEventElapsedTime(&ms, event_of(start), event_of(end)));
  return static_cast<double>(ms) * 1e-3;
}

void wait_event(void* stream, void* event) {
  SCALEBENCH_CUDA_CHECK(cudaStreamWaitEvent(stream_of(stream), event_of(event), 0));
}

void copy(void* dst, const void* src, std::size_t bytes, CopyKind kind, void* stream) {
  SCALEBENCH_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kind_of(kind), stream_of(stream)));
}

void copy_strided(const StridedCopy& c, CopyKind kind, void* stream) {
  SCALEBENCH_CUDA_CHECK(
      cudaMemcpy2DAsync(c.dst, c.dst_pitch, c.src, c.src_pitch, c.row_bytes, c.rows, kind_of(kind), stream_of(stream)));
}

}  // namespace scalebench::gpu
