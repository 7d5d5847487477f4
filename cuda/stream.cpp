#include "stream.hpp"

#include "cuda_check.hpp"
#include "scalebench/timing.hpp"

namespace scalebench::gpu {

Stream::Stream() { SCALEBENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
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

void DeviceTimer::stop_into(PhaseRecorder& rec, const std::string& phase) { rec.add(phase, stop()); }

}  // namespace scalebench::gpu
