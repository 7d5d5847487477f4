#include "scalebench/base/digest.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "scalebench/base/parallel.hpp"

namespace scalebench {
namespace {

constexpr std::uint64_t kOffset = 14695981039346656037ULL;
constexpr std::uint64_t kPrime = 1099511628211ULL;
constexpr std::size_t kChunkBytes = std::size_t{1} << 20;
constexpr int kLanes = 4;

constexpr std::uint64_t fold(std::uint64_t h, std::uint64_t word) { return (h ^ word) * kPrime; }

std::uint64_t chunk_value(const unsigned char* p, std::size_t bytes) {
  std::array<std::uint64_t, kLanes> lane{kOffset, kOffset, kOffset, kOffset};
  const std::size_t words = bytes / 8;
  std::size_t i = 0;
  for (; i + kLanes <= words; i += kLanes) {
    std::uint64_t w[kLanes];
    std::memcpy(w, p + i * 8, sizeof w);
    for (int l = 0; l < kLanes; ++l) lane[l] = fold(lane[l], w[l]);
  }
  for (; i < words; ++i) {
    std::uint64_t w = 0;
    std::memcpy(&w, p + i * 8, 8);
    lane[i % kLanes] = fold(lane[i % kLanes], w);
  }
  for (std::size_t b = words * 8; b < bytes; ++b) lane[0] = fold(lane[0], p[b]);
  std::uint64_t h = kOffset;
  for (const std::uint64_t v : lane) h = fold(h, v);
  return h;
}

}  // namespace

std::string bytes_digest(const void* data, std::size_t bytes, int threads) {
  const auto* p = static_cast<const unsigned char*>(data);
  const auto chunks = static_cast<std::int64_t>((bytes + kChunkBytes - 1) / kChunkBytes);
  std::vector<std::uint64_t> value(static_cast<std::size_t>(chunks));
  for_each_range(chunks, threads, 1, [&](int, std::int64_t begin, std::int64_t end) {
    for (std::int64_t c = begin; c < end; ++c) {
      const std::size_t first = static_cast<std::size_t>(c) * kChunkBytes;
      value[static_cast<std::size_t>(c)] = chunk_value(p + first, std::min(kChunkBytes, bytes - first));
    }
  });
  std::uint64_t h = kOffset;
  for (const std::uint64_t v : value) h = fold(h, v);
  h = fold(h, static_cast<std::uint64_t>(bytes));
  return fmt::format("fnv1a64w:{:016x}", h);
}

}  // namespace scalebench
