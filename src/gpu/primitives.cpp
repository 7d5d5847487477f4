// The device's primitives of gpu.hpp (streams, events, copies): each goes to the registered
// device; without one they say that this build has none.
#include <string>
#include <utility>

#include "scalebench/gpu/device.hpp"
#include "scalebench/gpu/gpu.hpp"

namespace scalebench {
namespace {

const std::string& what() {
  static const std::string text = "device streams and events";
  return text;
}

// The device that runs GPU work (a pointer: see HostMemoryPin in device.cpp).
const DeviceBackend* device() { return &device_backend(what()); }

// The device that made a handle, for releasing it: none registered means nothing was made.
const DeviceBackend* maker() noexcept { return gpu_support_built() ? &device_backend(what()) : nullptr; }

}  // namespace

OwnedStream::OwnedStream(Priority p)
    : handle_(device()->acquire(p == Priority::high ? DeviceHandle::high_priority_stream : DeviceHandle::stream, 0,
                                nullptr)) {}

OwnedStream::~OwnedStream() { release(); }

OwnedStream::OwnedStream(OwnedStream&& o) noexcept : handle_(std::exchange(o.handle_, nullptr)) {}

OwnedStream& OwnedStream::operator=(OwnedStream&& o) noexcept {
  if (this != &o) {
    release();
    handle_ = std::exchange(o.handle_, nullptr);
  }
  return *this;
}

void OwnedStream::synchronize() const { device()->synchronize(DeviceHandle::stream, handle_); }

void OwnedStream::release() noexcept {
  if (handle_ != nullptr) {
    if (const DeviceBackend* d = maker(); d != nullptr) d->release(DeviceHandle::stream, handle_);
  }
  handle_ = nullptr;
}

DeviceEvent::DeviceEvent() : handle_(device()->acquire(DeviceHandle::event, 0, nullptr)) {}

DeviceEvent::~DeviceEvent() { release(); }

DeviceEvent::DeviceEvent(DeviceEvent&& o) noexcept : handle_(std::exchange(o.handle_, nullptr)) {}

DeviceEvent& DeviceEvent::operator=(DeviceEvent&& o) noexcept {
  if (this != &o) {
    release();
    handle_ = std::exchange(o.handle_, nullptr);
  }
  return *this;
}

void DeviceEvent::record(DeviceStream s) const { device()->record_event(handle_, s.handle); }

void DeviceEvent::synchronize() const { device()->synchronize(DeviceHandle::event, handle_); }

double DeviceEvent::seconds_since(const DeviceEvent& start) const {
  return device()->event_seconds(start.handle_, handle_);
}

void DeviceEvent::make_wait(DeviceStream s) const { device()->wait_event(s.handle, handle_); }

void DeviceEvent::release() noexcept {
  if (handle_ != nullptr) {
    if (const DeviceBackend* d = maker(); d != nullptr) d->release(DeviceHandle::event, handle_);
  }
  handle_ = nullptr;
}

void copy_async(void* dst, const void* src, std::size_t bytes, CopyKind kind, DeviceStream s) {
  device()->copy({dst, bytes, src, bytes, bytes, 1}, kind, s.handle);
}

void copy_strided_async(const StridedCopy& c, CopyKind kind, DeviceStream s) { device()->copy(c, kind, s.handle); }

}  // namespace scalebench
