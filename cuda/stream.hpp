#pragma once
// Move-only owners of a CUDA stream and a CUDA event, and a device-side phase timer.
#include <cuda_runtime.h>

#include <string>
#include <utility>

namespace scalebench {
class PhaseRecorder;
}

namespace scalebench::gpu {

// A non-blocking stream on the current device (no implicit sync with the legacy stream).
class Stream {
 public:
  Stream();
  ~Stream();
  Stream(Stream&& o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
  Stream& operator=(Stream&& o) noexcept {
    if (this != &o) {
      release();
      s_ = std::exchange(o.s_, nullptr);
    }
    return *this;
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  cudaStream_t get() const noexcept { return s_; }
  void synchronize() const;

 private:
  void release() noexcept;
  cudaStream_t s_ = nullptr;
};

class Event {
 public:
  Event();
  ~Event();
  Event(Event&& o) noexcept : e_(std::exchange(o.e_, nullptr)) {}
  Event& operator=(Event&& o) noexcept {
    if (this != &o) {
      release();
      e_ = std::exchange(o.e_, nullptr);
    }
    return *this;
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  cudaEvent_t get() const noexcept { return e_; }
  void record(cudaStream_t s) const;
  void synchronize() const;
  // Seconds from `start` to this event (both recorded and complete).
  double seconds_since(const Event& start) const;

 private:
  void release() noexcept;
  cudaEvent_t e_ = nullptr;
};

// Times work enqueued on one stream with a pair of events: start() records the first, stop()
// records the second, waits for it and returns the device-measured seconds.
class DeviceTimer {
 public:
  explicit DeviceTimer(cudaStream_t s) : s_(s) {}
  void start() { begin_.record(s_); }
  double stop() {
    end_.record(s_);
    end_.synchronize();
    return end_.seconds_since(begin_);
  }
  // stop() and add the seconds to `phase` of `rec`.
  void stop_into(PhaseRecorder& rec, const std::string& phase);

 private:
  cudaStream_t s_;
  Event begin_, end_;
};

}  // namespace scalebench::gpu
