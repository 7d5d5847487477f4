// The CUDA implementation of the device seam (scalebench/gpu/device.hpp): each operation is the
// cuda/ function that does it. register_cuda_device() adds it to the registry.
#include <string>

#include "gpu_device.hpp"
#include "scalebench/gpu/device.hpp"
#include "scalebench/gpu/gpu.hpp"

namespace scalebench {
namespace {

class CudaDevice final : public DeviceBackend {
 public:
  CudaDevice() : DeviceBackend("cuda") {}
  Visibility visibility() const override {
    const int count = gpu::device_count();
    return {count, count > 0 ? std::string() : gpu::absence_reason()};
  }
  int select_for_rank(const Communicator& comm, bool share_gpu, const std::string& asked_by) const override {
    return gpu::select_for_rank(comm, share_gpu, asked_by);
  }
  nlohmann::json info(int device) const override { return gpu::device_info(device); }
  nlohmann::json library_versions() const override { return gpu::library_versions(); }
  std::unique_ptr<BufferTransport> make_buffer_transport(const Communicator& comm, DeviceStream stream,
                                                         int max_ctas) const override {
    return make_nccl_buffer_transport(comm, stream, max_ctas);
  }
  void* acquire(DeviceHandle kind, std::size_t bytes, void* host) const override {
    switch (kind) {
      case DeviceHandle::memory: return gpu::allocate(bytes);
      case DeviceHandle::stream: return gpu::create_stream(false);
      case DeviceHandle::high_priority_stream: return gpu::create_stream(true);
      case DeviceHandle::event: return gpu::create_event();
      case DeviceHandle::host_pin: gpu::pin_host(host, bytes); return host;
    }
    return nullptr;
  }
  void release(DeviceHandle kind, void* handle) const noexcept override {
    switch (kind) {
      case DeviceHandle::memory: gpu::free(handle); return;
      case DeviceHandle::stream:
      case DeviceHandle::high_priority_stream: gpu::destroy_stream(handle); return;
      case DeviceHandle::event: gpu::destroy_event(handle); return;
      case DeviceHandle::host_pin: gpu::unpin_host(handle); return;
    }
  }
  void synchronize(DeviceHandle kind, void* handle) const override {
    if (kind == DeviceHandle::event) {
      gpu::synchronize_event(handle);
    } else {
      gpu::synchronize_stream(handle);
    }
  }
  void record_event(void* event, void* stream) const override { gpu::record_event(event, stream); }
  void wait_event(void* stream, void* event) const override { gpu::wait_event(stream, event); }
  double event_seconds(void* start, void* end) const override { return gpu::event_seconds(start, end); }
  // One row is a plain copy; more, a 2D one.
  void copy(const StridedCopy& c, CopyKind kind, void* stream) const override {
    if (c.rows == 1) {
      gpu::copy(c.dst, c.src, c.row_bytes, kind, stream);
    } else {
      gpu::copy_strided(c, kind, stream);
    }
  }
  nlohmann::json calibrate(bool quick) const override { return calibrate_cuda(quick); }
};

}  // namespace

void register_cuda_device() { register_device_backend(std::make_unique<CudaDevice>()); }

}  // namespace scalebench
