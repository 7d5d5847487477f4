#pragma once
// Move-only owner of a cuRAND host-API generator that writes device memory on one stream.
#include <cuda_runtime.h>
#include <curand.h>

#include <cstdint>
#include <string>
#include <utility>

namespace scalebench::gpu {

class CurandGenerator {
 public:
  CurandGenerator(curandRngType_t type, std::uint64_t seed, cudaStream_t stream);
  ~CurandGenerator();
  CurandGenerator(CurandGenerator&& o) noexcept : g_(std::exchange(o.g_, nullptr)) {}
  CurandGenerator& operator=(CurandGenerator&& o) noexcept {
    if (this != &o) {
      release();
      g_ = std::exchange(o.g_, nullptr);
    }
    return *this;
  }
  CurandGenerator(const CurandGenerator&) = delete;
  CurandGenerator& operator=(const CurandGenerator&) = delete;

  curandGenerator_t get() const noexcept { return g_; }
  // Positions the stream: the next numbers generated start `offset` values into it.
  void seek(std::uint64_t offset) const;
  // `n` uniform doubles in (0, 1] / standard normal doubles (n even) into device memory.
  void uniform(double* out, std::size_t n) const;
  void normal(double* out, std::size_t n) const;

 private:
  void release() noexcept;
  curandGenerator_t g_ = nullptr;
};

// Version of the cuRAND library loaded, "10.4.0".
std::string curand_version_string();

}  // namespace scalebench::gpu
