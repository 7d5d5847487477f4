// The steps the GEMM's GPU schedules share (gpu.hpp, after GpuGemm), written over
// GpuGemm's operations and the device's primitives: nothing here knows the vendor.
#include <algorithm>
#include <cstring>

#include "scalebench/base/error.hpp"
#include "scalebench/gpu/gpu.hpp"

namespace scalebench {
namespace {

std::size_t bytes_of(const BufferView& v) { return static_cast<std::size_t>(v.count) * element_bytes(v.type); }

// Waits until what is enqueued on `s` so far is done.
void wait_for(DeviceStream s) {
  const DeviceEvent done;
  done.record(s);
  done.synchronize();
}

// Adds `amount` to the element at `at` of type T in device memory, through the host.
template <class T>
void add_through_host(void* at, double amount, DeviceStream s) {
  T value{};
  copy_async(&value, at, sizeof(T), CopyKind::device_to_host, s);
  wait_for(s);
  value = static_cast<T>(static_cast<double>(value) + amount);
  copy_async(at, &value, sizeof(T), CopyKind::host_to_device, s);
  wait_for(s);
}

}  // namespace

void upload(GpuGemm& g, const void* a, std::int64_t rows, const void* b, PhaseRecorder& rec) {
  const auto v = g.device_views();
  g.convert_copy(a, v.a.data, rows * v.shape.k, CopyKind::host_to_device, rec);
  g.convert_copy(b, v.b.data, v.shape.k * v.shape.n, CopyKind::host_to_device, rec);
}

void compute(GpuGemm& g, PhaseRecorder& rec) {
  const auto v = g.device_views();
  const GemmShape& s = v.shape;
  g.multiply_block({s.m, s.n, s.k, v.a.data, s.k, v.b.data, s.n, v.c.data, s.n, false}, &rec);
}

void download(GpuGemm& g, void* c, std::int64_t rows, PhaseRecorder& rec) {
  const auto v = g.device_views();
  g.convert_copy(v.c.data, c, rows * v.shape.n, CopyKind::device_to_host, rec);
}

void add_device_panel(GpuGemm& g, const void* a, const void* b, std::int64_t width, PhaseRecorder& rec) {
  const auto v = g.device_views();
  const GemmShape& s = v.shape;
  g.multiply_block({s.m, s.n, width, a, width, b, s.n, v.c.data, s.n, true}, &rec);
}

void corrupt_c(GpuGemm& g, std::int64_t index, double amount) {
  const auto v = g.device_views();
  if (index < 0 || index >= v.c.count) {
    throw Error(ExitCode::internal, "corrupt_c: element outside the C the device holds");
  }
  char* at = static_cast<char*>(v.c.data) + static_cast<std::size_t>(index) * element_bytes(v.c.type);
  if (v.c.type == ElementType::f64) {
    add_through_host<double>(at, amount, g.stream());
  } else {
    add_through_host<float>(at, amount, g.stream());
  }
}

double PinnedCopyPeer::bandwidth(GpuGemm& g, std::int64_t bytes) {
  const auto v = g.device_views();
  bytes = std::min<std::int64_t>(bytes, static_cast<std::int64_t>(bytes_of(v.c)));
  if (bytes <= 0) return 0.0;
  if (static_cast<std::int64_t>(host_.size()) < bytes) {
    pin_ = HostMemoryPin();
    host_.assign(static_cast<std::size_t>(bytes), 0);
    pin_ = HostMemoryPin(host_.data(), host_.size());
  }
  const double seconds = time_on_device(g.stream(), [&] {
    copy_async(v.c.data, host_.data(), static_cast<std::size_t>(bytes), CopyKind::host_to_device, g.stream());
  });
  return seconds > 0 ? static_cast<double>(bytes) / seconds : 0.0;
}

}  // namespace scalebench
