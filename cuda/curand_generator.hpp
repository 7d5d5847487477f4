#pragma once
// Move-only owner (owned.hpp) of a cuRAND host-API generator that writes device memory on one
// stream: the cuRAND baseline of Monte Carlo and the GPU calibration's matrices use it.
#include <cuda_runtime.h>
#include <curand.h>

#include <cstdint>
#include <string>

#include "owned.hpp"

namespace scalebench::gpu {

void destroy_curand(curandGenerator_t g) noexcept;

class CurandGenerator {
 public:
  CurandGenerator(curandRngType_t type, std::uint64_t seed, cudaStream_t stream);

  curandGenerator_t get() const noexcept { return g_.get(); }
  // Positions the stream: the next numbers generated start `offset` values into it.
  void seek(std::uint64_t offset) const;
  // `n` uniform doubles (floats) in (0, 1] / standard normal doubles (n even) into device memory.
  void uniform(double* out, std::size_t n) const;
  void uniform(float* out, std::size_t n) const;
  void normal(double* out, std::size_t n) const;

 private:
  Owned<curandGenerator_t, destroy_curand> g_;
};

// Version of the cuRAND library loaded, "10.4.0".
std::string curand_version_string();

}  // namespace scalebench::gpu
