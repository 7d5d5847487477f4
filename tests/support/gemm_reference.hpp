#pragma once
// The exact product of the integer matrices `--fill integer` generates, computed independently
// of the driver: regenerate A and B from the seed the way rank 0 does and multiply in 64-bit
// integers. Used by the CPU and GPU rank-count tests.
#include <cstdint>
#include <random>
#include <vector>

#include "scalebench/gemm.hpp"

inline std::vector<double> exact_integer_product(const scalebench::GemmShape& s, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  auto next = [&] {
    const auto r = static_cast<int>(gen() % 8);
    return static_cast<std::int64_t>(r < 4 ? r - 4 : r - 3);
  };
  std::vector<std::int64_t> a(s.m * s.k), b(s.k * s.n);
  for (auto& v : a) v = next();
  for (auto& v : b) v = next();
  std::vector<double> c(s.m * s.n);
  for (std::int64_t i = 0; i < s.m; ++i) {
    for (std::int64_t j = 0; j < s.n; ++j) {
      std::int64_t sum = 0;
      for (std::int64_t l = 0; l < s.k; ++l) sum += a[i * s.k + l] * b[l * s.n + j];
      c[i * s.n + j] = static_cast<double>(sum);
    }
  }
  return c;
}
