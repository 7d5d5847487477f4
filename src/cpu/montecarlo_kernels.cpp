// CPU Monte Carlo kernels. Every number drawn is a pure function of (seed, sample, word): see the
// layout in scalebench/problem/montecarlo.hpp.
#include "montecarlo_kernels.hpp"

#include <Random123/philox.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numbers>

namespace scalebench::mc {
namespace {

using u32 = std::uint32_t;
using u64 = std::uint64_t;
constexpr u64 kLow32 = 0xffffffffULL;

// Philox4x32-10 on words held in the low halves of 64-bit lanes. Each 32x32->64 product is then a
// plain 64-bit multiply of a zero-extended word, which the vectoriser maps to whole vector lanes
// without the shuffles that splitting 64-bit products back into 32-bit lanes costs. The high
// halves of the lanes carry garbage between rounds: words are masked before each multiply and
// when read. m0, m1 are Philox's multipliers (PHILOX_M4x32_0/1). Bit-identical to Random123's
// philox4x32 (tested).
inline void philox_lanes(u64& c0, u64& c1, u64& c2, u64& c3, u64 k0, u64 k1, u64 m0, u64 m1) {
  for (int round = 0; round < 10; ++round) {
    const u64 p0 = (c0 & kLow32) * m0;
    const u64 p1 = (c2 & kLow32) * m1;
    const u64 n0 = (p1 >> 32) ^ c1 ^ k0;
    const u64 n2 = (p0 >> 32) ^ c3 ^ k1;
    c0 = n0;
    c1 = p1;
    c2 = n2;
    c3 = p0;
    k0 += PHILOX_W32_0;  // only the low 32 bits matter
    k1 += PHILOX_W32_1;
  }
}

inline u64 lane_hit(u64 x, u64 y) {
  x &= kLow32;
  y &= kLow32;
  const u64 a = x * x, b = y * y;
  return (a + b) >= a ? 1 : 0;
}

// On compilers that honour it, ask for the widest vectors (AVX-512 where the build targets it;
// GCC's default for AVX-512 targets is 256 bits). Ignored where no wider vectors exist.
#if defined(__GNUC__) && !defined(__clang__)
#define SCALEBENCH_WIDE_VECTORS __attribute__((noinline, target("prefer-vector-width=512")))
#else
#define SCALEBENCH_WIDE_VECTORS
#endif

// Hits of the 2n points in blocks (hi·2^32 + lo + j, 0, tag π), j < n; lo + n <= 2^32.
SCALEBENCH_WIDE_VECTORS u64 hits_in_blocks(u64 k0, u64 k1, u32 hi, u32 lo, u32 n) {
  // The multipliers are hidden from the optimiser: as known constants GCC expands each 64-bit
  // vector multiply into a chain of shifts and adds (AVX2 has no 64-bit vector multiply), which
  // measured 25% slower than its generic vector multiply for unknown values.
  u64 m0 = PHILOX_M4x32_0, m1 = PHILOX_M4x32_1;
  asm("" : "+r"(m0), "+r"(m1));
  u64 hits = 0;
  for (u32 j = 0; j < n; ++j) {
    u64 c0 = u64{lo} + j, c1 = hi, c2 = 0, c3 = kPhiloxTagPi;
    philox_lanes(c0, c1, c2, c3, k0, k1, m0, m1);
    hits += lane_hit(c0, c1) + lane_hit(c2, c3);
  }
  return hits;
}

inline double payoff(double s, double strike, bool call) {
  return call ? std::max(s - strike, 0.0) : std::max(strike - s, 0.0);
}

}  // namespace

PhiloxCounter philox4x32_10(const PhiloxCounter& counter, const PhiloxKey& key) {
  const r123::Philox4x32::ctr_type c = {{counter[0], counter[1], counter[2], counter[3]}};
  const r123::Philox4x32::key_type k = {{key[0], key[1]}};
  const auto r = r123::Philox4x32_R<10>()(c, k);
  return {r.v[0], r.v[1], r.v[2], r.v[3]};
}

PhiloxCounter philox4x32_10_lanes(const PhiloxCounter& counter, const PhiloxKey& key) {
  u64 c0 = counter[0], c1 = counter[1], c2 = counter[2], c3 = counter[3];
  philox_lanes(c0, c1, c2, c3, key[0], key[1], PHILOX_M4x32_0, PHILOX_M4x32_1);
  return {static_cast<u32>(c0), static_cast<u32>(c1), static_cast<u32>(c2), static_cast<u32>(c3)};
}

std::uint64_t pi_hits(std::uint64_t seed, std::int64_t first, std::int64_t last) {
  if (last <= first) return 0;
  const PhiloxKey key = philox_key(seed);
  u64 hits = 0;
  std::int64_t i = first;
  if (i % 2 != 0) {  // an odd first point uses words 2, 3 of its block
    const auto w = philox4x32_10(philox_block(static_cast<u64>(i / 2), 0, kPhiloxTagPi), key);
    hits += pi_hit(w[2], w[3]) ? 1 : 0;
    ++i;
  }
  u64 b = static_cast<u64>(i / 2);
  const u64 b_end = static_cast<u64>(last / 2);
  while (b < b_end) {
    const u32 lo = static_cast<u32>(b);
    const u64 n = std::min<u64>({b_end - b, (u64{1} << 32) - lo, u64{1} << 30});
    hits += hits_in_blocks(key[0], key[1], static_cast<u32>(b >> 32), lo, static_cast<u32>(n));
    b += n;
  }
  if (last % 2 != 0 && last - 1 >= i) {  // an odd last point uses words 0, 1 of its block
    const auto w = philox4x32_10(philox_block(static_cast<u64>(last / 2), 0, kPhiloxTagPi), key);
    hits += pi_hit(w[0], w[1]) ? 1 : 0;
  }
  return hits;
}

std::uint64_t pi_hits_reference(std::uint64_t seed, std::int64_t first, std::int64_t last) {
  const PhiloxKey key = philox_key(seed);
  u64 hits = 0;
  for (std::int64_t i = first; i < last; ++i) {
    const auto w = philox4x32_10(philox_block(static_cast<u64>(i / 2), 0, kPhiloxTagPi), key);
    const int pair = static_cast<int>(i % 2) * 2;
    hits += pi_hit(w[pair], w[pair + 1]) ? 1 : 0;
  }
  return hits;
}

std::array<double, 4> normals_from_block(const PhiloxCounter& w) {
  std::array<double, 4> z{};
  for (std::size_t p = 0; p < 2; ++p) {
    const double u = (static_cast<double>(w[2 * p]) + 0.5) * 0x1p-32;  // in (0, 1)
    const double r = std::sqrt(-2.0 * std::log(u));
    const double theta = static_cast<double>(static_cast<std::int32_t>(w[2 * p + 1])) * (std::numbers::pi * 0x1p-31);
    z[2 * p] = r * std::cos(theta);
    z[2 * p + 1] = r * std::sin(theta);
  }
  return z;
}

GbmModel european_model(const MarketParams& m, OptionKind o) {
  GbmModel g;
  g.spot = m.spot;
  g.strike = m.strike;
  g.call = o == OptionKind::call;
  g.drift = (m.rate - 0.5 * m.sigma * m.sigma) * m.maturity;
  g.vol = m.sigma * std::sqrt(m.maturity);
  g.steps = 1;
  return g;
}

GbmModel asian_model(const MarketParams& m, OptionKind o, int steps) {
  GbmModel g;
  const double dt = m.maturity / steps;
  g.spot = m.spot;
  g.strike = m.strike;
  g.call = o == OptionKind::call;
  g.drift = (m.rate - 0.5 * m.sigma * m.sigma) * dt;
  g.vol = m.sigma * std::sqrt(dt);
  g.steps = steps;
  return g;
}

McSums european_sums(const GbmModel& m, std::uint64_t seed, std::int64_t first, std::int64_t last) {
  const PhiloxKey key = philox_key(seed);
  double y = 0, yy = 0;
  for (std::int64_t b = first / 4; 4 * b < last; ++b) {
    const auto z = normals_from_block(philox4x32_10(philox_block(static_cast<u64>(b), 0, kPhiloxTagEuropean), key));
    for (int k = 0; k < 4; ++k) {
      const std::int64_t i = 4 * b + k;
      if (i < first || i >= last) continue;
      const double p = payoff(m.spot * std::exp(m.drift + m.vol * z[k]), m.strike, m.call);
      y += p;
      yy += p * p;
    }
  }
  McSums s;
  s.v[kSumY] = y;
  s.v[kSumYY] = yy;
  return s;
}

McSums asian_sums(const GbmModel& m, std::uint64_t seed, std::int64_t first, std::int64_t last) {
  const PhiloxKey key = philox_key(seed);
  McSums s;
  auto& v = s.v;
  for (std::int64_t i = first; i < last; ++i) {
    double x = 0, sum_e = 0, sum_x = 0;  // log(S_t/S_0), Σ S_t/S_0, Σ log(S_t/S_0)
    for (int j0 = 0; j0 < m.steps; j0 += 4) {
      const auto z = normals_from_block(
          philox4x32_10(philox_block(static_cast<u64>(i), static_cast<u32>(j0 / 4), kPhiloxTagAsian), key));
      const int n = std::min(4, m.steps - j0);
      for (int k = 0; k < n; ++k) {
        x += m.drift + m.vol * z[k];
        sum_e += std::exp(x);
        sum_x += x;
      }
    }
    const double arithmetic = m.spot * (sum_e / m.steps);
    const double geometric = m.spot * std::exp(sum_x / m.steps);
    const double py = payoff(arithmetic, m.strike, m.call);
    const double px = payoff(geometric, m.strike, m.call);
    v[kSumY] += py;
    v[kSumYY] += py * py;
    v[kSumX] += px;
    v[kSumXX] += px * px;
    v[kSumXY] += px * py;
  }
  return s;
}

GbmModel model_for(const MonteCarloConfig& cfg) {
  return cfg.problem == McProblem::asian ? asian_model(cfg.market, cfg.option, cfg.steps)
                                         : european_model(cfg.market, cfg.option);
}

McSums option_chunk_sums(const MonteCarloConfig& cfg, const GbmModel& model, std::int64_t chunk) {
  const std::int64_t first = chunk * cfg.chunk_size;
  const std::int64_t last = std::min(first + cfg.chunk_size, cfg.samples);
  return cfg.problem == McProblem::asian ? asian_sums(model, cfg.seed, first, last)
                                         : european_sums(model, cfg.seed, first, last);
}

}  // namespace scalebench::mc
