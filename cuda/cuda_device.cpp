// The CUDA implementation of the device seam (scalebench/gpu/device.hpp): each operation is the
// cuda/ function that does it. register_cuda_device() adds it to the registry.
#include "gpu_device.hpp"
#include "scalebench/gpu/device.hpp"
#include "scalebench/gpu/gpu.hpp"

namespace scalebench {
namespace {

class CudaDevice final : public DeviceBackend {
 public:
  std::string name() const override { return "cuda"; }
  int visible_count() const override { return gpu::device_count(); }
  std::string absence_reason() const override { return gpu::absence_reason(); }
  int select_for_rank(const Communicator& comm, bool share_gpu, const std::string& asked_by) const override {
    return gpu::select_for_rank(comm, share_gpu, asked_by);
  }
  nlohmann::json info(int device) const override { return gpu::device_info(device); }
  nlohmann::json library_versions() const override { return gpu::library_versions(); }
  std::unique_ptr<GpuGemm> make_gemm(const GemmConfig& cfg, const Communicator& comm) const override {
    return gpu::make_cublas_gemm(cfg, comm);
  }
  std::unique_ptr<BufferTransport> make_buffer_transport(const Communicator& comm, DeviceStream stream,
                                                         int max_ctas) const override {
    return make_nccl_buffer_transport(comm, stream, max_ctas);
  }
  nlohmann::json describe_buffer_transport(int max_ctas) const override {
    return describe_nccl_buffer_transport(max_ctas);
  }
  void* allocate(std::size_t bytes) const override { return gpu::allocate(bytes); }
  void free(void* data) const noexcept override { gpu::free(data); }
  void* create_stream(bool high_priority) const override { return gpu::create_stream(high_priority); }
  void destroy_stream(void* stream) const noexcept override { gpu::destroy_stream(stream); }
  void synchronize_stream(void* stream) const override { gpu::synchronize_stream(stream); }
  void* create_event() const override { return gpu::create_event(); }
  void destroy_event(void* event) const noexcept override { gpu::destroy_event(event); }
  void record_event(void* event, void* stream) const override { gpu::record_event(event, stream); }
  void synchronize_event(void* event) const override { gpu::synchronize_event(event); }
  double event_seconds(void* start, void* end) const override { return gpu::event_seconds(start, end); }
  void wait_event(void* stream, void* event) const override { gpu::wait_event(stream, event); }
  void copy(void* dst, const void* src, std::size_t bytes, CopyKind kind, void* stream) const override {
    gpu::copy(dst, src, bytes, kind, stream);
  }
  void copy_strided(const StridedCopy& c, CopyKind kind, void* stream) const override {
    gpu::copy_strided(c, kind, stream);
  }
  nlohmann::json calibrate(bool quick) const override { return calibrate_cuda(quick); }
  void pin_host(void* data, std::size_t bytes) const override { gpu::pin_host(data, bytes); }
  void unpin_host(void* data) const noexcept override { gpu::unpin_host(data); }
};

}  // namespace

void register_cuda_device() { register_device_backend(std::make_unique<CudaDevice>()); }

}  // namespace scalebench
