#include "curand_generator.hpp"

#include <fmt/format.h>

#include "cuda_check.hpp"

namespace scalebench::gpu {

void destroy_curand(curandGenerator_t g) noexcept { curandDestroyGenerator(g); }

CurandGenerator::CurandGenerator(curandRngType_t type, std::uint64_t seed, cudaStream_t stream) {
  curandGenerator_t g = nullptr;
  SCALEBENCH_CURAND_CHECK(curandCreateGenerator(&g, type));
  g_ = Owned<curandGenerator_t, destroy_curand>(g);  // released if what follows throws
  SCALEBENCH_CURAND_CHECK(curandSetStream(g, stream));
  SCALEBENCH_CURAND_CHECK(curandSetPseudoRandomGeneratorSeed(g, seed));
}

void CurandGenerator::seek(std::uint64_t offset) const {
  SCALEBENCH_CURAND_CHECK(curandSetGeneratorOffset(get(), static_cast<unsigned long long>(offset)));
}
void CurandGenerator::uniform(double* out, std::size_t n) const {
  SCALEBENCH_CURAND_CHECK(curandGenerateUniformDouble(get(), out, n));
}
void CurandGenerator::uniform(float* out, std::size_t n) const {
  SCALEBENCH_CURAND_CHECK(curandGenerateUniform(get(), out, n));
}
void CurandGenerator::normal(double* out, std::size_t n) const {
  SCALEBENCH_CURAND_CHECK(curandGenerateNormalDouble(get(), out, n, 0.0, 1.0));
}

std::string curand_version_string() {
  int v = 0;
  if (curandGetVersion(&v) != CURAND_STATUS_SUCCESS) return "unknown";
  return fmt::format("{}.{}.{}", v / 1000, (v % 1000) / 100, v % 100);
}

}  // namespace scalebench::gpu
