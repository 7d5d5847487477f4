// The counter-based GEMM input generator (scalebench/problem/gemm_fill.hpp): known answers, the value sets
// of both fills at every host storage precision, and results that do not depend on the thread
// count or on filling a range in pieces.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "scalebench/base/host.hpp"
#include "scalebench/problem/gemm_fill.hpp"

using namespace scalebench;

namespace {

// Known answers, computed independently of this code with Python integers (3.x):
//   G = 0x9e3779b97f4a7c15; M = 2**64 - 1
//   mix(z): z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & M; z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & M;
//           return z ^ (z >> 31)
//   key = (seed * G + 0x41 (A) | 0x42 (B)) & M;  h = mix((key + (e + 1) * G) & M)
//   integer: r = h % 8; r - 4 if r < 4 else r - 3
//   uniform: v = 2.0 * ((h >> 11) * 2.0**-53) - 1.0 (0.0 -> 0.5), printed with float.hex(v)
//   fp32: struct.unpack('<f', struct.pack('<f', v))[0]; bf16: the fp32 bits b -> (b + 0x7fff + ((b >> 16) & 1))
//         & 0xffff0000
// (mix(G) = 0xe220a8397b1dcdaf, the first splitmix64 output for state 0, checks the mix.)
struct Known {
  std::uint64_t seed;
  GemmInput which;
  std::int64_t index;
  std::uint64_t h;
  int integer;
  double uniform;
  float fp32;
  float bf16;
};

const Known kKnown[] = {
    {42, GemmInput::a, 0, 0xdac6f6c053607516ULL, 3, 0x1.6b1bdb014d81cp-1, 0x1.6b1bdcp-1f, 0x1.6cp-1f},
    {42, GemmInput::a, 1, 0xbb325c07462b8eb2ULL, -2, 0x1.d992e03a315c4p-2, 0x1.d992ep-2f, 0x1.dap-2f},
    {42, GemmInput::a, 7, 0x23a74f9113d3c0e6ULL, 3, -0x1.7162c1bbb0b10p-1, -0x1.7162c2p-1f, -0x1.72p-1f},
    {42, GemmInput::a, 12345, 0x1e4cf3c50c1926f4ULL, 1, -0x1.86cc30ebcf9b8p-1, -0x1.86cc3p-1f, -0x1.86p-1f},
    {42, GemmInput::a, (std::int64_t{1} << 33) + 5, 0x48f1303b17cd4fb0ULL, -4, -0x1.b8767e274195cp-2, -0x1.b8767ep-2f,
     -0x1.b8p-2f},
    {42, GemmInput::b, 0, 0x49bf7a24b9595e8eULL, 3, -0x1.b2042eda35354p-2, -0x1.b2042ep-2f, -0x1.b2p-2f},
    {42, GemmInput::b, 1, 0x5efd4332dbe2ff3bULL, -1, -0x1.0815e66920e84p-2, -0x1.0815e6p-2f, -0x1.08p-2f},
    {42, GemmInput::b, 12345, 0x085dc980c37acb33ULL, -1, -0x1.de88d9fcf214ep-1, -0x1.de88dap-1f, -0x1.dep-1f},
    {0xdeadbeefcafef00dULL, GemmInput::a, 1, 0xce7f37f82579a187ULL, 4, 0x1.39fcdfe095e68p-1, 0x1.39fce0p-1f,
     0x1.3ap-1f},
    {0xdeadbeefcafef00dULL, GemmInput::b, 0, 0x846833295d70a4b9ULL, -3, 0x1.1a0cca575c280p-5, 0x1.1a0ccap-5f,
     0x1.1ap-5f},
    {0xdeadbeefcafef00dULL, GemmInput::b, 7, 0xe0247194ddd5fa66ULL, 3, 0x1.8091c6537757ep-1, 0x1.8091c6p-1f, 0x1.8p-1f},
    {0xdeadbeefcafef00dULL, GemmInput::b, (std::int64_t{1} << 33) + 5, 0x3513dc9f93fc2458ULL, -4, -0x1.2bb08d81b00f8p-1,
     -0x1.2bb08ep-1f, -0x1.2cp-1f},
};

std::uint32_t bits(float v) {
  std::uint32_t b = 0;
  std::memcpy(&b, &v, 4);
  return b;
}

template <class T>
std::vector<T> filled(std::int64_t count, std::int64_t first, std::uint64_t key, Fill fill, Precision p, int threads,
                      int* used = nullptr) {
  std::vector<T> v(static_cast<std::size_t>(count), T(-99));
  const int t = fill_matrix(v.data(), count, first, key, fill, p, threads);
  if (used) *used = t;
  return v;
}

template <class T>
bool same_bits(const std::vector<T>& x, const std::vector<T>& y) {
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(T)) == 0;
}

constexpr std::int64_t kCount = 1'000'003;  // enough for 8 threads of at least 2^15 elements each

}  // namespace

TEST(GemmFill, KeysAreTheDeviceGeneratorsKeys) {
  EXPECT_EQ(gemm_input_key(42, GemmInput::a), 0xf519f86ee2385bb3ULL);
  EXPECT_EQ(gemm_input_key(42, GemmInput::b), 0xf519f86ee2385bb4ULL);
  EXPECT_EQ(gemm_input_key(0xdeadbeefcafef00dULL, GemmInput::a), 0x5e3e952bf9f1fd52ULL);
  EXPECT_EQ(gemm_input_key(0xdeadbeefcafef00dULL, GemmInput::b), 0x5e3e952bf9f1fd53ULL);
  EXPECT_EQ(gemm_fill_mix64(0x9e3779b97f4a7c15ULL), 0xe220a8397b1dcdafULL);
}

TEST(GemmFill, KnownAnswers) {
  for (const Known& k : kKnown) {
    const std::uint64_t key = gemm_input_key(k.seed, k.which);
    const auto e = static_cast<std::uint64_t>(k.index);
    SCOPED_TRACE(testing::Message() << "seed " << k.seed << " matrix " << (k.which == GemmInput::a ? 'A' : 'B')
                                    << " element " << k.index);
    EXPECT_EQ(gemm_fill_mix64(key + (e + 1) * kGemmFillGolden), k.h);
    EXPECT_EQ(gemm_input_value(key, e, Fill::integer), k.integer);
    EXPECT_EQ(gemm_input_value(key, e, Fill::uniform), k.uniform);
    // Through the fill, at every host storage precision.
    EXPECT_EQ(filled<double>(1, k.index, key, Fill::integer, Precision::fp64, 1)[0], k.integer);
    EXPECT_EQ(filled<float>(1, k.index, key, Fill::integer, Precision::bf16, 1)[0], static_cast<float>(k.integer));
    EXPECT_EQ(filled<double>(1, k.index, key, Fill::uniform, Precision::fp64, 1)[0], k.uniform);
    EXPECT_EQ(filled<float>(1, k.index, key, Fill::uniform, Precision::fp32, 1)[0], k.fp32);
    EXPECT_EQ(filled<float>(1, k.index, key, Fill::uniform, Precision::tf32, 1)[0], k.fp32);
    EXPECT_EQ(filled<float>(1, k.index, key, Fill::uniform, Precision::bf16, 1)[0], k.bf16);
  }
}

TEST(GemmFill, ZeroIsReplacedByOneHalf) {
  // The one element of A (seed 42) whose h is 2^63, so 2·(h >> 11)·2^-53 − 1 = 0: found by
  // inverting the mix in Python (each xor-shift and multiply of splitmix64 is invertible), then
  // e + 1 = (mix^-1(2^63) − key) · G^-1 mod 2^64.
  const std::uint64_t key = gemm_input_key(42, GemmInput::a);
  const std::uint64_t e = 0x43d6f45bf20a0dcaULL;
  ASSERT_EQ(gemm_fill_mix64(key + (e + 1) * kGemmFillGolden), std::uint64_t{1} << 63);
  EXPECT_EQ(gemm_input_value(key, e, Fill::uniform), 0.5);
  EXPECT_EQ(gemm_input_value(key, e, Fill::integer), -4);
  const auto first = static_cast<std::int64_t>(e) - 2;
  const auto v = filled<double>(5, first, key, Fill::uniform, Precision::fp64, 1);
  EXPECT_EQ(v[2], 0.5);
  EXPECT_EQ(filled<float>(5, first, key, Fill::uniform, Precision::bf16, 1)[2], 0.5f);
}

TEST(GemmFill, IntegerFillIsSmallNonZeroIntegersInEqualShares) {
  const std::uint64_t key = gemm_input_key(7, GemmInput::b);
  const auto d = filled<double>(kCount, 0, key, Fill::integer, Precision::fp64, 4);
  std::map<double, std::int64_t> counts;
  for (const double x : d) ++counts[x];
  ASSERT_EQ(counts.size(), 8u);
  for (const double x : {-4.0, -3.0, -2.0, -1.0, 1.0, 2.0, 3.0, 4.0}) {
    ASSERT_TRUE(counts.count(x)) << x;
    // Expected kCount/8 = 125000 each, standard deviation about 331: ±3000 is 9 of them.
    EXPECT_NEAR(static_cast<double>(counts[x]), kCount / 8.0, 3000.0) << x;
  }
  for (const Precision p : {Precision::fp32, Precision::tf32, Precision::bf16}) {
    const auto f = filled<float>(kCount, 0, key, Fill::integer, p, 4);
    for (std::size_t i = 0; i < f.size(); ++i) {
      ASSERT_EQ(static_cast<double>(f[i]), d[i]) << "precision " << to_string(p) << " element " << i;
    }
  }
}

TEST(GemmFill, UniformFillIsInMinusOneOneNeverZeroAndBf16Exact) {
  const std::uint64_t key = gemm_input_key(2024, GemmInput::a);
  const auto d = filled<double>(kCount, 3, key, Fill::uniform, Precision::fp64, 4);
  double lo = 1, hi = -1, sum = 0;
  for (const double x : d) {
    ASSERT_GE(x, -1.0);
    ASSERT_LT(x, 1.0);
    ASSERT_NE(x, 0.0);
    lo = std::min(lo, x);
    hi = std::max(hi, x);
    sum += x;
  }
  EXPECT_LT(lo, -0.999);
  EXPECT_GT(hi, 0.999);
  // Mean of U(-1, 1): 0, standard deviation of the mean about 5.8e-4.
  EXPECT_NEAR(sum / static_cast<double>(d.size()), 0.0, 5e-3);
  // Quarters hold a quarter each (standard deviation about 433 of 250000).
  std::int64_t quarter[4] = {};
  for (const double x : d) ++quarter[std::min(3, static_cast<int>((x + 1.0) * 2.0))];
  for (const std::int64_t q : quarter) EXPECT_NEAR(static_cast<double>(q), kCount / 4.0, 4000.0);

  const auto f = filled<float>(kCount, 3, key, Fill::uniform, Precision::fp32, 4);
  const auto b = filled<float>(kCount, 3, key, Fill::uniform, Precision::bf16, 4);
  for (std::size_t i = 0; i < d.size(); ++i) {
    // fp32: float(v), which may round up to ±1; never 0.
    ASSERT_EQ(f[i], static_cast<float>(d[i])) << i;
    ASSERT_TRUE(f[i] >= -1.0f && f[i] <= 1.0f && f[i] != 0.0f) << i;
    // bf16: representable (low 16 bits clear), the nearest to float(v), never 0.
    ASSERT_EQ(bits(b[i]) & 0xffffu, 0u) << i;
    ASSERT_EQ(b[i], round_to_bf16(f[i])) << i;
    ASSERT_LE(std::abs(b[i] - f[i]), std::abs(f[i]) * 0x1p-8f) << i;  // half a bf16 ulp (8-bit significand)
    ASSERT_TRUE(b[i] >= -1.0f && b[i] <= 1.0f && b[i] != 0.0f) << i;
  }
}

TEST(GemmFill, SameResultForAnyThreadCount) {
  const std::uint64_t key = gemm_input_key(42, GemmInput::a);
  for (const Fill fill : {Fill::uniform, Fill::integer}) {
    int used = 0;
    const auto d1 = filled<double>(kCount, 11, key, fill, Precision::fp64, 1, &used);
    EXPECT_EQ(used, 1);
    for (const int t : {3, 8}) {
      EXPECT_TRUE(same_bits(filled<double>(kCount, 11, key, fill, Precision::fp64, t, &used), d1)) << t << " threads";
      EXPECT_EQ(used, t);
    }
    for (const Precision p : {Precision::fp32, Precision::bf16}) {
      const auto f1 = filled<float>(kCount, 11, key, fill, p, 1);
      for (const int t : {3, 8}) {
        EXPECT_TRUE(same_bits(filled<float>(kCount, 11, key, fill, p, t, &used), f1))
            << t << " threads, " << to_string(p);
        EXPECT_EQ(used, t);
      }
    }
  }
  // Small fills use fewer threads (at least 2^15 elements each), and nothing for no elements.
  int used = 0;
  filled<double>(5, 0, key, Fill::uniform, Precision::fp64, 8, &used);
  EXPECT_EQ(used, 1);
  filled<double>(3 * (1 << 15), 0, key, Fill::uniform, Precision::fp64, 8, &used);
  EXPECT_EQ(used, 3);
  double untouched = -99;
  fill_matrix(&untouched, 0, 0, key, Fill::uniform, Precision::fp64, 8);
  EXPECT_EQ(untouched, -99);
}

TEST(GemmFill, FillingInPiecesWithOffsetsGivesTheWhole) {
  const std::uint64_t key = gemm_input_key(5, GemmInput::b);
  const std::int64_t base = 1000;  // the whole range is elements [base, base + kCount)
  const std::vector<std::int64_t> cuts = {0, 1, 777, 40000, 500001, kCount - 1, kCount};
  for (const Fill fill : {Fill::uniform, Fill::integer}) {
    const auto whole = filled<double>(kCount, base, key, fill, Precision::fp64, 3);
    std::vector<double> pieces(static_cast<std::size_t>(kCount), -99);
    const auto whole_bf16 = filled<float>(kCount, base, key, fill, Precision::bf16, 3);
    std::vector<float> pieces_bf16(static_cast<std::size_t>(kCount), -99);
    for (std::size_t c = 0; c + 1 < cuts.size(); ++c) {
      const std::int64_t from = cuts[c], n = cuts[c + 1] - cuts[c];
      fill_matrix(pieces.data() + from, n, base + from, key, fill, Precision::fp64, static_cast<int>(c % 4) + 1);
      fill_matrix(pieces_bf16.data() + from, n, base + from, key, fill, Precision::bf16, 8);
    }
    EXPECT_TRUE(same_bits(pieces, whole));
    EXPECT_TRUE(same_bits(pieces_bf16, whole_bf16));
    // Element i of the fill is value(base + i), wherever it was made.
    for (const std::int64_t i : {std::int64_t{0}, std::int64_t{776}, std::int64_t{500000}, kCount - 1}) {
      EXPECT_EQ(whole[static_cast<std::size_t>(i)], gemm_input_value(key, static_cast<std::uint64_t>(base + i), fill));
    }
  }
}

TEST(GemmFill, HostThreadsAreTheAllowedCpus) {
  const int t = host_threads();
  EXPECT_GE(t, 1);
  EXPECT_EQ(static_cast<std::size_t>(t), std::max<std::size_t>(1, allowed_cpus().size()));
}

namespace {

// The smaps fields of the mapping that holds `p` (this process's /proc/self/smaps).
std::map<std::string, std::string> smaps_of(const void* p) {
  std::ifstream in("/proc/self/smaps");
  std::map<std::string, std::string> fields;
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    unsigned long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2 && line.find(':') > line.find(' ')) {
      inside = lo <= at && at < hi;
      continue;
    }
    if (!inside) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const auto value = line.find_first_not_of(' ', colon + 1);
    fields[line.substr(0, colon)] = value == std::string::npos ? "" : line.substr(value);
  }
  return fields;
}

std::string thp_mode() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  std::getline(in, line);
  const auto b = line.find('['), e = line.find(']');
  return b == std::string::npos || e == std::string::npos ? "" : line.substr(b + 1, e - b - 1);
}

}  // namespace

// Host matrices of kHugePagesFrom bytes and more start on a 2 MiB boundary and are advised as huge
// pages (smaps: "hg" in VmFlags); smaller ones are left to the plain allocator. Where the kernel
// has transparent huge pages in "madvise" or "always" mode, the mapping is then eligible for them.
TEST(GemmFill, LargeHostMatricesAreOnHugePageBoundariesAndAdvised) {
  HostMatrix<double> big;
  big.resize(kHugePagesFrom / sizeof(double));
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(big.data()) % kHugePageBytes, 0U);
  fill_zero(big.data(), static_cast<std::int64_t>(big.size()), 1);
  const auto fields = smaps_of(big.data());
  ASSERT_TRUE(fields.count("VmFlags")) << "no smaps entry for the matrix";
  const std::string mode = thp_mode();
  if (mode != "madvise" && mode != "always") {
    GTEST_SKIP() << "transparent huge pages are '" << mode << "' here: the advice cannot be seen";
  }
  EXPECT_NE(fields.at("VmFlags").find("hg"), std::string::npos) << "VmFlags: " << fields.at("VmFlags");
  if (fields.count("THPeligible")) {
    EXPECT_EQ(fields.at("THPeligible"), "1");
  }
  HostMatrix<float> small;
  small.resize(1000);
  const auto small_fields = smaps_of(small.data());
  ASSERT_TRUE(small_fields.count("VmFlags"));
  EXPECT_EQ(small_fields.at("VmFlags").find("hg"), std::string::npos) << "a small matrix was advised";
}
