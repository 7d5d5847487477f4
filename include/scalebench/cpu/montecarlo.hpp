#pragma once
// The host Monte Carlo kernels: the chunked kernels every count of ranks and threads agrees with to
// the bit, and the newcomer's baseline.
#include <memory>

#include "scalebench/problem/montecarlo.hpp"

namespace scalebench {

// The chunked CPU kernels on `threads` threads.
std::unique_ptr<McKernel> make_cpu_montecarlo(int threads);
// The baseline as a newcomer writes it: one std::mt19937 per rank seeded with seed + rank,
// doubles, one thread, an even split of samples. Its estimate depends on the rank count.
std::unique_ptr<McKernel> make_naive_montecarlo(int rank, int ranks);

}  // namespace scalebench
