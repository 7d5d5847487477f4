#include "stream.hpp"

#include "cuda_check.hpp"
#include "device_kernels.hpp"
#include "scalebench/mpi/timing.hpp"

namespace scalebench::gpu {

void destroy_stream(cudaStream_t s) noexcept { cudaStreamDestroy(s); }
void destroy_event(cudaEvent_t e) noexcept { cudaEventDestroy(e); }

Stream::Stream(Priority p) {
  cudaStream_t s = nullptr;
  if (p == Priority::normal) {
    SCALEBENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  } else {
    int least = 0, greatest = 0;
    SCALEBENCH_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    SCALEBENCH_CUDA_CHECK(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, greatest));
  }
  s_ = Owned<cudaStream_t, destroy_stream>(s);
}
void Stream::synchronize() const { SCALEBENCH_CUDA_CHECK(cudaStreamSynchronize(get())); }

Event::Event() {
  cudaEvent_t e = nullptr;
  SCALEBENCH_CUDA_CHECK(cudaEventCreate(&e));
  e_ = Owned<cudaEvent_t, destroy_event>(e);
}
void Event::record(cudaStream_t s) const { SCALEBENCH_CUDA_CHECK(cudaEventRecord(get(), s)); }
void Event::synchronize() const { SCALEBENCH_CUDA_CHECK(cudaEventSynchronize(get())); }
double Event::seconds_since(const Event& start) const {
  float ms = 0;
  SCALEBENCH_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), get()));
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
