#pragma once
// The exact product of the integer matrices `--fill integer` generates, computed independently
// of the driver: regenerate A and B from the seed the way rank 0 does and multiply in 64-bit
// integers. Used by the CPU and GPU rank-count tests. The generator is written out here rather
// than taken from scalebench/problem/gemm_fill.hpp, so that a change there cannot pass unnoticed:
// element e of a matrix (row-major) is h = splitmix64-finaliser(key + (e + 1)·0x9e3779b97f4a7c15)
// with key = seed·0x9e3779b97f4a7c15 + 0x41 (A) or 0x42 (B); r = h mod 8; value r − 4 if r < 4,
// else r − 3.
#include <cstdint>
#include <vector>

#include "scalebench/mpi/mpi.hpp"
#include "scalebench/workloads/gemm/distributed_gemm.hpp"
#include "scalebench/workloads/gemm/gemm_config.hpp"

// run_distributed_gemm with the gathered C kept (rank 0's result.c), plus any other test hooks.
inline scalebench::GemmResult run_gemm_keeping_c(const scalebench::GemmConfig& cfg,
                                                 const scalebench::Communicator& comm,
                                                 scalebench::GemmTestHooks hooks = {}) {
  hooks.keep_c = true;
  return scalebench::run_distributed_gemm(cfg, comm, hooks);
}

// The configuration of the exact tests: integer fill (C is exact), one repeat, no warm-up, one
// thread, no peer (run_gemm_keeping_c keeps C for comparison).
inline scalebench::GemmConfig exact_gemm_config(const scalebench::GemmShape& shape, scalebench::Precision p,
                                                std::uint64_t seed) {
  scalebench::GemmConfig cfg;
  cfg.shape = shape;
  cfg.precision = p;
  cfg.fill = scalebench::Fill::integer;
  cfg.reps = 1;
  cfg.warmup = 0;
  cfg.threads = 1;
  cfg.quiet = true;
  cfg.peer = false;
  cfg.seed = seed;
  return cfg;
}

inline std::vector<double> exact_integer_product(const scalebench::GemmShape& s, std::uint64_t seed) {
  constexpr std::uint64_t golden = 0x9e3779b97f4a7c15ULL;
  auto element = [&](std::uint64_t key, std::int64_t e) {
    std::uint64_t z = key + (static_cast<std::uint64_t>(e) + 1) * golden;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    const auto r = static_cast<int>(z % 8);
    return static_cast<std::int64_t>(r < 4 ? r - 4 : r - 3);
  };
  const std::uint64_t key_a = seed * golden + 0x41, key_b = seed * golden + 0x42;
  std::vector<std::int64_t> a(s.m * s.k), b(s.k * s.n);
  for (std::int64_t e = 0; e < s.m * s.k; ++e) a[e] = element(key_a, e);
  for (std::int64_t e = 0; e < s.k * s.n; ++e) b[e] = element(key_b, e);
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
