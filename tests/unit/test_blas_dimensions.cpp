// The OpenBLAS backend never hands cblas_?gemm a dimension its integer (blasint) cannot hold:
// such a block is a UsageError naming the dimension, as on the cuBLAS path, not a wrapped size.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "scalebench/base/error.hpp"
#include "scalebench/cpu/gemm.hpp"

using namespace scalebench;

TEST(OpenBlasGemm, RefusesABlockDimensionBlasintCannotHold) {
  if (blas_int_max() == std::numeric_limits<std::int64_t>::max()) {
    GTEST_SKIP() << "this OpenBLAS has a 64-bit blasint: every dimension fits";
  }
  const std::int64_t too_big = blas_int_max() + 1;
  for (const GemmShape shape : {GemmShape{too_big, 1, 1}, GemmShape{1, too_big, 1}, GemmShape{1, 1, too_big}}) {
    auto gemm = make_cpu_gemm(GemmBackendKind::openblas, 1);
    PhaseRecorder rec;
    gemm->prepare(shape, Precision::fp64, rec);
    // No memory is touched: the dimensions are checked before the call.
    try {
      gemm->multiply(nullptr, nullptr, nullptr, rec);
      ADD_FAILURE() << "a dimension of " << too_big << " reached cblas_dgemm";
    } catch (const UsageError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(std::to_string(too_big) + " exceeds the largest dimension OpenBLAS's blasint holds"),
                std::string::npos)
          << what;
    }
  }
}
