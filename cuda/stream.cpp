#include "stream.hpp"

#include "cuda_check.hpp"
#include "device_kernels.hpp"
#include "scalebench/mpi/timing.hpp"

namespace scalebench::gpu {

Stream::Stream(Priority p) {
  if (p == Priority::normal) {
    SCALEBENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking));
    return;
  }
  int least = 0, greatest = 0;
  SCALEBENCH_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  SCALEBENCH_CUDA_CHECK(cudaStreamCreateWithPriority(&s_, cudaStreamNonBlocking, greatest));
}
Stream::~Stream() { release(); }
void Stream::release() noexcept {
  if (s_ != nullptr) cudaStreamDestroy(s_);
  s_ = nullptr;
}
void Stream::synchronize() const { SCALEBENCH_CUDA_CHECK(cudaStreamSynchronize(s_)); }

Event::Event() { SCALEBENCH_CUDA_CHECK(cudaEventCreate(&e_)); }
Event::~Event() { release(); }
void Event::release() noexcept {
  if (e_ != nullptr) cudaEventDestroy(e_);
  e_ = nullptr;
}
void Event::record(cudaStream_t s) const { SCALEBENCH_CUDA_CHECK(cudaEventRecord(e_, s)); }
void Event::synchronize() const { SCALEBENCH_CUDA_CHECK(cudaEventSynchronize(e_)); }
double Event::seconds_since(const Event& start) const {
  float ms = 0;
  SCALEBENCH_CUDA_CHECK(cudaEventElapsedTime(&ms, start.e_, e_));
  return static_cast<double>(ms) * 1e-3;
}

namespace {
// About a second at Hopper clocks: far beyond any launch, short enough not to look like a hang.
constexpr long long kGateTimeoutCycles = 2'000'000'000LL;
}  // namespace

DeviceTimer::~DeviceTimer() {
  if (gate_ != nullptr) {
    *reinterpret_cast<volatile int*>(gate_) = 1;
    cudaStreamSynchronize(s_);
    cudaFreeHost(gate_);
  }
}

void DeviceTimer::start_gated() {
  if (gate_ == nullptr) {
    SCALEBENCH_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&gate_), sizeof(int), cudaHostAllocMapped));
    // Load the gate kernel now, released: loading a module later could wait on a held stream.
    *reinterpret_cast<volatile int*>(gate_) = 1;
    SCALEBENCH_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&gate_device_), gate_, 0));
    wait_for_host_flag(gate_device_, kGateTimeoutCycles, s_);
    SCALEBENCH_CUDA_CHECK(cudaStreamSynchronize(s_));
  }
  *reinterpret_cast<volatile int*>(gate_) = 0;
  wait_for_host_flag(gate_device_, kGateTimeoutCycles, s_);
  gated_ = true;
  begin_.record(s_);
}

double DeviceTimer::stop() {
  end_.record(s_);
  if (gated_) {
    *reinterpret_cast<volatile int*>(gate_) = 1;
    gated_ = false;
  }
  end_.synchronize();
  return end_.seconds_since(begin_);
}

void DeviceTimer::stop_into(PhaseRecorder& rec, const std::string& phase) { rec.add(phase, stop()); }

}  // namespace scalebench::gpu
