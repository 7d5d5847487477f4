// Linked when scalebench is built without CUDA: every GPU entry point says so.
#include "scalebench/base/error.hpp"
#include "scalebench/gpu/gpu.hpp"

namespace scalebench {

bool gpu_support_built() { return false; }
int visible_gpu_count() { return 0; }
std::string gpu_absence_reason() { return "this scalebench was built without CUDA"; }

int select_gpu_for_rank(const Communicator&, bool, const std::string& asked_by) { throw NoCudaError(asked_by); }
nlohmann::json gpu_info(int) { return nlohmann::json::object(); }

std::unique_ptr<LocalGemm> make_cublas_gemm(const GemmConfig&, const Communicator&) {
  throw NoCudaError("--backend cublas");
}
std::unique_ptr<GpuGemm> make_gpu_gemm(const GemmConfig&, const Communicator&) {
  throw NoCudaError("--backend cublas");
}
std::unique_ptr<GpuTransport> make_nccl_transport(const Communicator&, int) { throw NoCudaError("--transport nccl"); }
std::unique_ptr<BufferTransport> make_nccl_buffer_transport(const Communicator&, DeviceStream, int) {
  throw NoCudaError("--transport nccl");
}

DeviceArray::DeviceArray(std::size_t) { throw NoCudaError("device memory"); }
DeviceArray::~DeviceArray() = default;
DeviceArray::DeviceArray(DeviceArray&&) noexcept = default;
DeviceArray& DeviceArray::operator=(DeviceArray&&) noexcept = default;
void DeviceArray::release() noexcept {}

HostMemoryPin::HostMemoryPin(void*, std::size_t) { throw NoCudaError("pinned host memory"); }
HostMemoryPin::~HostMemoryPin() { release(); }
HostMemoryPin::HostMemoryPin(HostMemoryPin&&) noexcept = default;
HostMemoryPin& HostMemoryPin::operator=(HostMemoryPin&&) noexcept = default;
void HostMemoryPin::release() noexcept { ptr_ = nullptr; }

}  // namespace scalebench
