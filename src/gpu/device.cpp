// The device registry and the vendor-neutral GPU entry points of gpu.hpp: each goes to the
// registered device, or says that this build has none.
#include "scalebench/gpu/device.hpp"

#include <utility>

#include "scalebench/base/error.hpp"
#include "scalebench/gpu/gpu.hpp"
#include "scalebench/gpu/gpu_calibrate.hpp"

namespace scalebench {
namespace {

std::vector<std::unique_ptr<DeviceBackend>>& registry() {
  static std::vector<std::unique_ptr<DeviceBackend>> devices;
  return devices;
}

const DeviceBackend* registered() { return registry().empty() ? nullptr : registry().front().get(); }

}  // namespace

void register_device_backend(std::unique_ptr<DeviceBackend> device) {
  for (const auto& d : registry()) {
    if (d->name() == device->name()) return;
  }
  registry().push_back(std::move(device));
}

const DeviceBackend& device_backend(const std::string& asked_by) {
  if (registered() == nullptr) throw NoCudaError(asked_by);
  return *registered();
}

bool gpu_support_built() { return registered() != nullptr; }

int visible_gpu_count() { return registered() != nullptr ? registered()->visibility().count : 0; }

std::string gpu_absence_reason() {
  return registered() != nullptr ? registered()->visibility().absence_reason : "this scalebench was built without CUDA";
}

int select_gpu_for_rank(const Communicator& comm, bool share_gpu, const std::string& asked_by) {
  return device_backend(asked_by).select_for_rank(comm, share_gpu, asked_by);
}

nlohmann::json gpu_info(int device) {
  return registered() != nullptr ? registered()->info(device) : nlohmann::json::object();
}

nlohmann::json gpu_library_versions() {
  return registered() != nullptr ? registered()->library_versions() : nlohmann::json::object();
}

std::unique_ptr<BufferTransport> make_device_buffer_transport(const Communicator& comm, DeviceStream stream,
                                                              int max_ctas) {
  return device_backend("--transport nccl").make_buffer_transport(comm, stream, max_ctas);
}

nlohmann::json calibrate_gpu(bool quick) { return device_backend("GPU calibration").calibrate(quick); }

HostMemoryPin::HostMemoryPin(void* data, std::size_t bytes) {
  // A pointer, not a reference: GCC 13 takes a reference bound to a call with a string argument
  // for one to a temporary (-Wdangling-reference).
  const DeviceBackend* device = &device_backend("pinned host memory");
  if (data == nullptr || bytes == 0) return;
  device->acquire(DeviceHandle::host_pin, bytes, data);
  ptr_ = data;
}

HostMemoryPin::~HostMemoryPin() { release(); }

HostMemoryPin::HostMemoryPin(HostMemoryPin&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)) {}

HostMemoryPin& HostMemoryPin::operator=(HostMemoryPin&& o) noexcept {
  if (this != &o) {
    release();
    ptr_ = std::exchange(o.ptr_, nullptr);
  }
  return *this;
}

DeviceArray::DeviceArray(std::size_t bytes) : bytes_(bytes) {
  const DeviceBackend* device = &device_backend("device memory");  // a pointer: see HostMemoryPin
  if (bytes > 0) ptr_ = device->acquire(DeviceHandle::memory, bytes, nullptr);
}

DeviceArray::~DeviceArray() { release(); }

DeviceArray::DeviceArray(DeviceArray&& o) noexcept
    : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}

DeviceArray& DeviceArray::operator=(DeviceArray&& o) noexcept {
  if (this != &o) {
    release();
    ptr_ = std::exchange(o.ptr_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
  }
  return *this;
}

void DeviceArray::release() noexcept {
  if (ptr_ != nullptr && registered() != nullptr) registered()->release(DeviceHandle::memory, ptr_);
  ptr_ = nullptr;
  bytes_ = 0;
}

void HostMemoryPin::release() noexcept {
  if (ptr_ != nullptr && registered() != nullptr) registered()->release(DeviceHandle::host_pin, ptr_);
  ptr_ = nullptr;
}

}  // namespace scalebench
