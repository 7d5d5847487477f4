#pragma once
// CPU Monte Carlo kernels: pure functions of (seed, sample range) that follow the layout in
// scalebench/problem/montecarlo.hpp. They are the reference the GPU kernels are tested against.
#include <array>
#include <cstdint>

#include "scalebench/problem/montecarlo.hpp"

namespace scalebench::mc {

using PhiloxCounter = std::array<std::uint32_t, 4>;
using PhiloxKey = std::array<std::uint32_t, 2>;

// Random123's philox4x32 with 10 rounds (the library's function, unchanged).
PhiloxCounter philox4x32_10(const PhiloxCounter& counter, const PhiloxKey& key);
// The same function in the lane formulation the π kernel vectorises (tested equal to the above).
PhiloxCounter philox4x32_10_lanes(const PhiloxCounter& counter, const PhiloxKey& key);
inline PhiloxKey philox_key(std::uint64_t seed) {
  return {static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)};
}
// Block (a, b, tag) = counter words (a mod 2^32, a div 2^32, b, tag).
inline PhiloxCounter philox_block(std::uint64_t a, std::uint32_t b, std::uint32_t tag) {
  return {static_cast<std::uint32_t>(a), static_cast<std::uint32_t>(a >> 32), b, tag};
}

// A π point (x, y) is a hit when x² + y² < 2^64, exactly: no carry out of the 64-bit sum.
inline bool pi_hit(std::uint32_t x, std::uint32_t y) {
  const std::uint64_t a = std::uint64_t{x} * x;
  const std::uint64_t b = std::uint64_t{y} * y;
  return a + b >= a;
}

// Hits among points [first, last) (any range), one thread. The loop over Philox blocks is written
// for the compiler's vectoriser (see docs/montecarlo.md).
std::uint64_t pi_hits(std::uint64_t seed, std::int64_t first, std::int64_t last);
// The same count one block at a time through Random123: the reference for pi_hits.
std::uint64_t pi_hits_reference(std::uint64_t seed, std::int64_t first, std::int64_t last);

// Box–Muller on the block's pairs (w0,w1), (w2,w3), in double.
std::array<double, 4> normals_from_block(const PhiloxCounter& words);

// Derived model constants, computed once per run.
struct GbmModel {
  double spot = 0, strike = 0;
  bool call = true;
  double drift = 0;  // European: (r - σ²/2)·T;  Asian: (r - σ²/2)·Δt
  double vol = 0;    // European: σ·√T;          Asian: σ·√Δt
  int steps = 1;
};
GbmModel european_model(const MarketParams& m, OptionKind o);
GbmModel asian_model(const MarketParams& m, OptionKind o, int steps);

// Payoff sums (undiscounted) over paths [first, last), summed in path order. `first` must be a
// multiple of 4 for European (paths share Philox blocks by four).
McSums european_sums(const GbmModel& model, std::uint64_t seed, std::int64_t first, std::int64_t last);
McSums asian_sums(const GbmModel& model, std::uint64_t seed, std::int64_t first, std::int64_t last);

// Sums of one chunk of an option problem (dispatch on cfg.problem).
McSums option_chunk_sums(const MonteCarloConfig& cfg, const GbmModel& model, std::int64_t chunk);
GbmModel model_for(const MonteCarloConfig& cfg);

}  // namespace scalebench::mc
