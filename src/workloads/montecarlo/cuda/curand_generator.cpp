#include "curand_generator.hpp"

#include <fmt/format.h>

#include "cuda_check.hpp"

namespace scalebench::gpu {

CurandGenerator::CurandGenerator(curandRngType_t type, std::uint64_t seed, cudaStream_t stream) {
  SCALEBENCH_CURAND_CHECK(curandCreateGenerator(&g_, type));
  try {
    SCALEBENCH_CURAND_CHECK(curandSetStream(g_, stream));
    SCALEBENCH_CURAND_CHECK(curandSetPseudoRandomGeneratorSeed(g_, seed));
  } catch (...) {
    release();
    throw;
  }
}
CurandGenerator::~CurandGenerator() { release(); }
void CurandGenerator::release() noexcept {
  if (g_ != nullptr) curandDestroyGenerator(g_);
  g_ = nullptr;
}

void CurandGenerator::seek(std::uint64_t offset) const {
  SCALEBENCH_CURAND_CHECK(curandSetGeneratorOffset(g_, static_cast<unsigned long long>(offset)));
}
void CurandGenerator::uniform(double* out, std::size_t n) const {
  SCALEBENCH_CURAND_CHECK(curandGenerateUniformDouble(g_, out, n));
}
void CurandGenerator::normal(double* out, std::size_t n) const {
  SCALEBENCH_CURAND_CHECK(curandGenerateNormalDouble(g_, out, n, 0.0, 1.0));
}

std::string curand_version_string() {
  int v = 0;
  if (curandGetVersion(&v) != CURAND_STATUS_SUCCESS) return "unknown";
  return fmt::format("{}.{}.{}", v / 1000, (v % 1000) / 100, v % 100);
}

}  // namespace scalebench::gpu
