// The ScaLAPACK peer (--peer scalapack): PDGEMM/PSGEMM on every grid of the rank count, uneven
// block-cyclic pieces, against the exact integer product; the k-step PBLAS really used, shipped and
// tuned (the interposed PILAENV's answer, counted: no timing involved); the gemm record's section.
// Skipped, saying why, in a build without ScaLAPACK.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "gemm_reference.hpp"
#include "mpi_test_util.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/base/verify.hpp"
#include "scalebench/mpi/mpi.hpp"
#include "scalebench/peers/scalapack.hpp"
#include "scalebench/workloads/gemm/distributed_gemm.hpp"

using namespace scalebench;

namespace {

#define SKIP_WITHOUT_SCALAPACK()                                                   \
  if (!scalapack_available())                                                      \
  GTEST_SKIP() << "this build has no ScaLAPACK (install libscalapack-openmpi-dev " \
                  "and rebuild)"

// Small integers (-4..3) as A and B: every product and sum is exact in fp32 and fp64.
template <class T>
std::vector<T> integer_matrix(std::int64_t rows, std::int64_t cols, int salt) {
  std::vector<T> v(static_cast<std::size_t>(rows * cols));
  for (std::int64_t e = 0; e < rows * cols; ++e)
    v[static_cast<std::size_t>(e)] = static_cast<T>((e * 7 + salt) % 8 - 4);
  return v;
}

template <class T>
std::vector<double> exact_product(const std::vector<T>& a, const std::vector<T>& b, const GemmShape& s) {
  std::vector<double> c(static_cast<std::size_t>(s.m * s.n));
  for (std::int64_t i = 0; i < s.m; ++i) {
    for (std::int64_t j = 0; j < s.n; ++j) {
      std::int64_t sum = 0;
      for (std::int64_t l = 0; l < s.k; ++l) {
        sum += static_cast<std::int64_t>(a[i * s.k + l]) * static_cast<std::int64_t>(b[l * s.n + j]);
      }
      c[static_cast<std::size_t>(i * s.n + j)] = static_cast<double>(sum);
    }
  }
  return c;
}

template <class T>
void expect_exact_on_every_grid(Precision p, const GemmShape& shape, std::int64_t block) {
  const auto comm = Communicator::world();
  const auto a = integer_matrix<T>(shape.m, shape.k, 1), b = integer_matrix<T>(shape.k, shape.n, 5);
  const auto exact = comm.is_root() ? exact_product(a, b, shape) : std::vector<double>();
  const auto x = freivalds_vector(7, shape.n);
  for (int rows = 1; rows <= comm.size(); ++rows) {
    if (comm.size() % rows != 0) continue;
    for (const int k_step : {0, static_cast<int>(block)}) {
      ScalapackPeerSettings s;
      s.shape = shape;
      s.precision = p;
      s.grid_rows = rows;
      s.grid_cols = comm.size() / rows;
      s.block_width = block;
      s.k_step = k_step;
      s.reps = 2;
      s.mpi_chunk = 5;  // the redistribution in many MPI calls, as a count over 2^31 would be
      const ScalapackPeerResult r = time_scalapack_peer(s, comm, a.data(), b.data(), x, true);
      const std::string what = to_string(p) + " " + std::to_string(shape.m) + "x" + std::to_string(shape.n) + "x" +
                               std::to_string(shape.k) + " grid " + std::to_string(rows) + "x" +
                               std::to_string(s.grid_cols) + " block " + std::to_string(block) + " k-step " +
                               std::to_string(k_step);
      EXPECT_TRUE(all_ranks(r.ok)) << "Freivalds failed: " << what;
      EXPECT_TRUE(all_ranks(!comm.is_root() || r.c == exact)) << "C differs from the exact product: " << what;
      EXPECT_TRUE(all_ranks(r.times.multiply.size() == 2 && r.times.scatter.size() == 2)) << what;
    }
  }
}

}  // namespace

TEST(ScalapackPeer, MatchesTheExactProductOnEveryGridWithUnevenBlocks) {
  SKIP_WITHOUT_SCALAPACK();
  expect_exact_on_every_grid<double>(Precision::fp64, {37, 29, 41}, 8);
  expect_exact_on_every_grid<double>(Precision::fp64, {64, 48, 80}, 16);
  expect_exact_on_every_grid<float>(Precision::fp32, {33, 40, 27}, 5);
}

// The shipped variant is the library's own PILAENV (32 in the reference implementation); the tuned
// one is ours, and PBLAS asked it: the interposition works against the shared library.
TEST(ScalapackPeer, TunedKStepIsTheOnePblasAskedFor) {
  SKIP_WITHOUT_SCALAPACK();
  const auto comm = Communicator::world();
  const GemmShape shape{96, 96, 96};
  const auto a = integer_matrix<double>(shape.m, shape.k, 2), b = integer_matrix<double>(shape.k, shape.n, 3);
  ScalapackPeerSettings s;
  s.shape = shape;
  s.grid_rows = 1;
  s.grid_cols = comm.size();
  s.block_width = 24;
  const auto x = freivalds_vector(1, shape.n);
  const ScalapackPeerResult shipped = time_scalapack_peer(s, comm, a.data(), b.data(), x);
  s.k_step = 24;
  const ScalapackPeerResult tuned = time_scalapack_peer(s, comm, a.data(), b.data(), x);
  EXPECT_TRUE(all_ranks(shipped.pilaenv_calls > 0)) << "PBLAS never called the interposed PILAENV";
  EXPECT_TRUE(all_ranks(shipped.k_step_used == 32)) << "the library's PILAENV answered " << shipped.k_step_used;
  EXPECT_TRUE(all_ranks(tuned.pilaenv_calls > 0));
  EXPECT_TRUE(all_ranks(tuned.k_step_used == 24)) << "tuned answer " << tuned.k_step_used;
  EXPECT_TRUE(all_ranks(shipped.ok && tuned.ok));
}

TEST(ScalapackPeer, GemmRecordHasBothVariantsVerified) {
  SKIP_WITHOUT_SCALAPACK();
  const auto comm = Communicator::world();
  for (const GemmAlgorithm alg : {GemmAlgorithm::row1d, GemmAlgorithm::summa2d}) {
    GemmConfig cfg = exact_gemm_config({40, 36, 44}, Precision::fp64, 11);
    cfg.algorithm = alg;
    cfg.reps = 2;
    if (alg == GemmAlgorithm::summa2d) cfg.panel_width = 12;
    cfg.peer_library = GemmPeerLibrary::scalapack;
    const GemmResult r = run_distributed_gemm(cfg, comm);
    bool fields = true;
    if (comm.is_root()) {
      const auto& p = r.record.at("peers").at("scalapack");
      const auto& grid = r.record.at("distribution").at("grid");
      // row1d has no panel: its peer's blocks are m / ranks rows (at most 512), every rank holding rows.
      const std::int64_t block = alg == GemmAlgorithm::summa2d
                                     ? cfg.panel_width
                                     : std::clamp<std::int64_t>(cfg.shape.m / comm.size(), 1, kDefaultPanelWidth);
      fields = p.at("grid") == grid && p.at("block_width") == block && p.at("call") == "pdgemm" &&
               r.record.at("config").at("peer_library") == "scalapack";
      for (const char* v : {"shipped", "tuned"}) {
        const auto& variant = p.at("variants").at(v);
        fields = fields && variant.at("verification").at("ok") == true &&
                 variant.at("pre_distributed").at("median_s").get<double>() > 0 &&
                 variant.at("end_to_end").at("median_s").get<double>() >=
                     variant.at("pre_distributed").at("min_s").get<double>() &&
                 variant.at("ratio_run_vs_peer").get<double>() > 0;
      }
      fields = fields && p.at("variants").at("tuned").at("k_step") == std::min(block, cfg.shape.k) &&
               p.at("variants").at("shipped").at("k_step") == 32;
    }
    EXPECT_TRUE(all_ranks(r.ok)) << to_string(alg);
    EXPECT_TRUE(all_ranks(fields)) << to_string(alg) << ": " << (comm.is_root() ? r.record.dump() : "");
  }
}

TEST(ScalapackPeer, RefusesAGridThatIsNotTheRanks) {
  SKIP_WITHOUT_SCALAPACK();
  const auto comm = Communicator::world();
  ScalapackPeerSettings s;
  s.shape = {8, 8, 8};
  s.grid_rows = comm.size() + 1;
  const std::vector<double> a(64, 1.0), b(64, 1.0), x(8, 1.0);
  bool refused = false;
  try {
    time_scalapack_peer(s, comm, a.data(), b.data(), x);
  } catch (const UsageError& e) {
    refused = std::string(e.what()).find("grid") != std::string::npos;
  }
  EXPECT_TRUE(all_ranks(refused));
}
