// The cuBLAS backend on one rank: it matches OpenBLAS on odd shapes at every precision within
// that precision's tolerance, its device Freivalds check catches one wrong element, its host
// paths (pinned, pageable, chunked, bf16 conversion) all give the same C, --resident inputs
// depend only on (seed, row), and memory that does not fit is refused with both numbers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "gpu_skip.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/base/verify.hpp"
#include "scalebench/cpu/gemm.hpp"
#include "scalebench/gpu/gpu.hpp"
#include "scalebench/mpi/mpi.hpp"
#include "scalebench/mpi/timing.hpp"
#include "workloads/gemm/device_gemm.hpp"

using namespace scalebench;

namespace {

template <class T>
std::vector<T> random_matrix(std::int64_t count, std::uint64_t seed, Precision p) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<T> v(static_cast<std::size_t>(count));
  for (auto& x : v) {
    x = static_cast<T>(u(gen));
    if constexpr (std::is_same_v<T, float>) {
      if (p == Precision::bf16) x = round_to_bf16(x);
    }
  }
  return v;
}

GemmConfig gpu_config(Precision p) {
  GemmConfig cfg;
  cfg.backend = GemmBackendKind::cublas;
  cfg.precision = p;
  return cfg;
}

struct Shape {
  std::int64_t m, n, k;
};
const Shape kOddShapes[] = {{1, 1, 1}, {7, 13, 5}, {33, 17, 65}, {129, 65, 31}, {257, 127, 511}};

// |C_gpu - C_ref|_ij <= (2k + 4)·u·(|A||B|)_ij: u of the precision, the reference's own error
// (OpenBLAS in fp32 for the fp32-storage precisions) within the same bound.
template <class T>
void expect_matches_openblas(Precision p) {
  const auto comm = Communicator::world();
  const double u = unit_roundoff(p);
  const Precision ref_precision = p == Precision::fp64 ? Precision::fp64 : Precision::fp32;
  for (const auto& s : kOddShapes) {
    const GemmShape shape{s.m, s.n, s.k};
    const auto a = random_matrix<T>(s.m * s.k, 11, p), b = random_matrix<T>(s.k * s.n, 12, p);
    std::vector<T> c_gpu(static_cast<std::size_t>(s.m * s.n)), c_ref(c_gpu.size());
    PhaseRecorder rec;
    auto gpu = make_device_gemm(gpu_config(p), comm);
    gpu->prepare(shape, p, rec);
    gpu->multiply(a.data(), b.data(), c_gpu.data(), rec);
    auto cpu = make_cpu_gemm(GemmBackendKind::openblas, 1);
    cpu->prepare(shape, ref_precision, rec);
    cpu->multiply(a.data(), b.data(), c_ref.data(), rec);

    double worst = 0;
    for (std::int64_t i = 0; i < s.m; ++i) {
      for (std::int64_t j = 0; j < s.n; ++j) {
        double mag = 0;
        for (std::int64_t l = 0; l < s.k; ++l) {
          mag += std::fabs(static_cast<double>(a[i * s.k + l])) * std::fabs(static_cast<double>(b[l * s.n + j]));
        }
        const double tol = static_cast<double>(2 * s.k + 4) * u * mag + DBL_MIN;
        const double diff = std::fabs(static_cast<double>(c_gpu[i * s.n + j]) -
                                      static_cast<double>(c_ref[i * s.n + j]));
        worst = std::max(worst, diff / tol);
      }
    }
    EXPECT_LE(worst, 1.0) << to_string(p) << " " << s.m << "x" << s.n << "x" << s.k;
    // The same product against a reference in double, through the project's full check.
    const RowCheck full = full_check(a.data(), b.data(), c_gpu.data(), s.m, s.n, s.k, u);
    EXPECT_EQ(full.rows_failed, 0) << to_string(p) << " " << s.m << "x" << s.n << "x" << s.k;
    EXPECT_TRUE(rec.phases().size() >= 3);
  }
}

}  // namespace

TEST(CublasGemm, MatchesOpenBlasOnOddShapes) {
  SKIP_WITHOUT_A_GPU();
  expect_matches_openblas<double>(Precision::fp64);
  expect_matches_openblas<float>(Precision::fp32);
  expect_matches_openblas<float>(Precision::tf32);
  expect_matches_openblas<float>(Precision::bf16);
}

TEST(CublasGemm, RecordsDevicePhasesAndSetUpApart) {
  SKIP_WITHOUT_A_GPU();
  const auto comm = Communicator::world();
  const GemmShape shape{64, 48, 32};
  auto gpu = make_device_gemm(gpu_config(Precision::fp64), comm);
  PhaseRecorder setup, rec;
  gpu->prepare(shape, Precision::fp64, setup);
  const auto a = random_matrix<double>(64 * 32, 1, Precision::fp64),
             b = random_matrix<double>(32 * 48, 2, Precision::fp64);
  std::vector<double> c(64 * 48);
  gpu->multiply(a.data(), b.data(), c.data(), rec);
  rec.next_repeat();
  EXPECT_EQ(rec.phases(), (std::vector<std::string>{"h2d", "compute", "d2h"}));
  for (const auto& ph : rec.phases()) EXPECT_GT(rec.samples(ph).at(0), 0.0) << ph;
  bool context = false, handle = false;
  for (const auto& [step, s] : gpu->setup().seconds) {
    context = context || step == "gpu_context";
    handle = handle || step == "cublas_handle";
    EXPECT_GE(s, 0.0);
  }
  EXPECT_TRUE(context && handle);
  const auto& steps = setup.phases();
  EXPECT_NE(std::find(steps.begin(), steps.end(), "device_alloc"), steps.end());
  // A run with a warm-up repeat makes the first call of the real shape there, not in the set-up;
  // with --warmup 0 the set-up makes it.
  EXPECT_EQ(std::find(steps.begin(), steps.end(), "cublas_first_call"), steps.end());
  GemmConfig cold = gpu_config(Precision::fp64);
  cold.warmup = 0;
  auto cold_gpu = make_device_gemm(cold, comm);
  PhaseRecorder cold_setup;
  cold_gpu->prepare(shape, Precision::fp64, cold_setup);
  const auto& cold_steps = cold_setup.phases();
  EXPECT_NE(std::find(cold_steps.begin(), cold_steps.end(), "cublas_first_call"), cold_steps.end());
  const auto& p = gpu->setup().placement;
  EXPECT_FALSE(p.at("gpu").at("pci_bus_id").get<std::string>().empty());
  EXPECT_EQ(p.at("gpu").at("uuid").get<std::string>().rfind("GPU-", 0), 0u);
}

TEST(CublasGemm, DeviceFreivaldsCatchesOneWrongElement) {
  SKIP_WITHOUT_A_GPU();
  const auto comm = Communicator::world();
  for (Precision p : {Precision::fp64, Precision::fp32, Precision::tf32, Precision::bf16}) {
    const GemmShape shape{97, 83, 71};
    auto gpu = make_device_gemm(gpu_config(p), comm);
    PhaseRecorder rec;
    gpu->prepare(shape, p, rec);
    gpu->generate(shape, 0, 7, Fill::uniform);
    compute(*gpu, rec);
    const auto x = freivalds_vector(7, shape.n);
    std::vector<double> cx;
    const RowCheck good = gpu->verify(x, &cx);
    EXPECT_EQ(good.rows_failed, 0) << to_string(p);
    EXPECT_EQ(good.rows_checked, shape.m);
    EXPECT_LE(good.worst_ratio, 1.0) << to_string(p);
    // C·x of the held C is bit-identical to the one the check used.
    EXPECT_EQ(gpu->c_times_x(x, shape.m), cx) << to_string(p);
    // An error of 1 hides below the tf32 and bf16 tolerances: corrupt by what none can hide.
    corrupt_c(*gpu, 40 * shape.n + 17, detectable_corruption(shape, p));
    const RowCheck bad = gpu->verify(x, nullptr);
    EXPECT_EQ(bad.rows_failed, 1) << to_string(p);
    EXPECT_EQ(bad.first_failed_row, 40) << to_string(p);
  }
}

TEST(CublasGemm, PinnedPageableAndChunkedCopiesGiveTheSameC) {
  SKIP_WITHOUT_A_GPU();
  const auto comm = Communicator::world();
  // 4099² elements: fp64 crosses the 64 MiB staging chunks three times, bf16's fp32 staging twice.
  const std::int64_t n = 4099;
  const GemmShape shape{n, n, n};
  for (Precision p : {Precision::fp64, Precision::bf16}) {
    auto run = [&](bool pinned) {
      const std::size_t e = host_element_bytes(p);
      std::vector<char> a(static_cast<std::size_t>(n * n) * e), b(a.size()), c(a.size());
      std::mt19937_64 gen(5);
      for (std::size_t i = 0; i < a.size() / e; ++i) {
        // Small integers: exact in every format, so both runs must agree bit for bit.
        const double v = static_cast<double>(static_cast<int>(gen() % 7) - 3);
        if (e == 8) {
          std::memcpy(a.data() + i * 8, &v, 8);
          std::memcpy(b.data() + i * 8, &v, 8);
        } else {
          const float f = static_cast<float>(v);
          std::memcpy(a.data() + i * 4, &f, 4);
          std::memcpy(b.data() + i * 4, &f, 4);
        }
      }
      std::vector<HostMemoryPin> pins;
      if (pinned) {
        pins.emplace_back(a.data(), a.size());
        pins.emplace_back(b.data(), b.size());
        pins.emplace_back(c.data(), c.size());
      }
      auto gpu = make_device_gemm(gpu_config(p), comm);
      PhaseRecorder rec;
      gpu->prepare(shape, p, rec);
      gpu->multiply(a.data(), b.data(), c.data(), rec);
      pins.clear();
      return c;
    };
    const auto pinned = run(true);
    const auto pageable = run(false);
    EXPECT_TRUE(pinned == pageable) << to_string(p);
  }
}

TEST(CublasGemm, ResidentInputsDependOnlyOnSeedAndRow) {
  SKIP_WITHOUT_A_GPU();
  const auto comm = Communicator::world();
  const GemmShape global{50, 30, 20};
  const std::int64_t split = 21;
  auto whole = make_device_gemm(gpu_config(Precision::fp32), comm);
  auto part = make_device_gemm(gpu_config(Precision::fp32), comm);
  PhaseRecorder rec;
  whole->prepare(global, Precision::fp32, rec);
  part->prepare({global.m - split, global.n, global.k}, Precision::fp32, rec);
  whole->generate(global, 0, 99, Fill::integer);
  part->generate(global, split, 99, Fill::integer);
  compute(*whole, rec);
  compute(*part, rec);
  std::vector<float> c_whole(static_cast<std::size_t>(global.m * global.n)),
      c_part(static_cast<std::size_t>((global.m - split) * global.n));
  download(*whole, c_whole.data(), global.m, rec);
  download(*part, c_part.data(), global.m - split, rec);
  EXPECT_TRUE(std::equal(c_part.begin(), c_part.end(), c_whole.begin() + split * global.n));
  // Integer fill: every element of C is a whole number.
  for (float v : c_whole) EXPECT_EQ(v, std::round(v));
}

TEST(CublasGemm, RefusesWhatDoesNotFitNamingBothNumbers) {
  SKIP_WITHOUT_A_GPU();
  const auto comm = Communicator::world();
  auto gpu = make_device_gemm(gpu_config(Precision::fp64), comm);
  PhaseRecorder rec;
  try {
    gpu->prepare({200000, 200000, 200000}, Precision::fp64, rec);
    FAIL() << "a 200000^3 fp64 multiply was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::resource);
    const std::string m = e.what();
    EXPECT_NE(m.find("needs 894."), std::string::npos) << m;  // 3 · 200000² · 8 B + workspace
    EXPECT_NE(m.find("is free"), std::string::npos) << m;
  }
}
