#pragma once
// The cuRAND side of test_curand_philox_stream.cu, in its own translation unit: cuRAND's and
// Random123's Philox headers both define a global mulhilo32 and cannot share one.
#include <cstdint>
#include <vector>

struct PhiloxBlock {
  std::uint64_t a;
  std::uint32_t b, tag;
};

// On the current GPU, per block: curand_init(seed, tag·2^32 + b, 4a) then four curand() words,
// and, from the same start, curand_normal4's four normals.
void curand_device_stream(const std::vector<PhiloxBlock>& blocks, std::uint64_t seed, std::vector<std::uint32_t>& words,
                          std::vector<float>& normals);
