#pragma once
// Move-only owners of a CUDA stream and a CUDA event, and a device-side phase timer.
#include <cuda_runtime.h>

#include <string>

#include "owned.hpp"

namespace scalebench {
class PhaseRecorder;
}

namespace scalebench::gpu {

void destroy_stream(cudaStream_t s) noexcept;
void destroy_event(cudaEvent_t e) noexcept;

// A non-blocking stream on the current device (no implicit sync with the legacy stream).
class Stream {
 public:
  // high: the device's greatest priority — its blocks are scheduled first when SMs free up
  // (for communication that must not wait behind a long multiply).
  enum class Priority { normal, high };
  explicit Stream(Priority p = Priority::normal);

  cudaStream_t get() const noexcept { return s_.get(); }
  void synchronize() const;

 private:
  Owned<cudaStream_t, destroy_stream> s_;
};

class Event {
 public:
  Event();

  cudaEvent_t get() const noexcept { return e_.get(); }
  void record(cudaStream_t s) const;
  void synchronize() const;
  // Seconds from `start` to this event (both recorded and complete).
  double seconds_since(const Event& start) const;

 private:
  Owned<cudaEvent_t, destroy_event> e_;
};

// Times work enqueued on one stream with a pair of events: start() records the first, stop()
// records the second, waits for it and returns the device-measured seconds.
// start_gated() first holds the stream with a kernel that waits for the host (released by
// stop()): the first event and the work behind it then run back to back on the GPU, so time
// the host spends between start and the last launch (launch overhead, the thread being
// descheduled on a busy core) is not counted. Only for work that is enqueued without waiting on
// the stream in between (a library call, a kernel): anything that synchronises would wait for
// the gate (the gate gives up after about a second rather than hang).
class DeviceTimer {
 public:
  explicit DeviceTimer(cudaStream_t s) : s_(s) {}
  ~DeviceTimer();
  DeviceTimer(const DeviceTimer&) = delete;
  DeviceTimer& operator=(const DeviceTimer&) = delete;

  void start() { begin_.record(s_); }
  void start_gated();
  double stop();
  // stop() and add the seconds to `phase` of `rec`.
  void stop_into(PhaseRecorder& rec, const std::string& phase);

 private:
  cudaStream_t s_;
  Event begin_, end_;
  int* gate_ = nullptr;         // pinned, device-visible; 0 holds the stream, 1 releases it
  int* gate_device_ = nullptr;  // the device's address of *gate_
  bool gated_ = false;
};

}  // namespace scalebench::gpu
