#include "cublas_handle.hpp"

#include <cstdint>

#include <fmt/format.h>

#include "cuda_check.hpp"
#include "scalebench/base/error.hpp"

namespace scalebench::gpu {
namespace {

int as_int(std::int64_t v, const char* what) {
  if (v > INT32_MAX) throw UsageError(fmt::format("{} = {} exceeds what cuBLAS accepts (2^31-1)", what, v));
  return static_cast<int>(v);
}

}  // namespace

void destroy_cublas(cublasHandle_t h) noexcept { cublasDestroy(h); }

CublasHandle::CublasHandle(cudaStream_t stream) : workspace_(kWorkspaceBytes) {
  cublasHandle_t h = nullptr;
  SCALEBENCH_CUBLAS_CHECK(cublasCreate(&h));
  h_ = Owned<cublasHandle_t, destroy_cublas>(h);  // released if what follows throws
  SCALEBENCH_CUBLAS_CHECK(cublasSetStream(h, stream));
  SCALEBENCH_CUBLAS_CHECK(cublasSetWorkspace(h, workspace_.get(), workspace_.bytes()));
  // Scalars live on the host; tensor-core modes are chosen per call by the compute type.
  SCALEBENCH_CUBLAS_CHECK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST));
}

std::string cublas_version_string() {
  int major = 0, minor = 0, patch = 0;
  if (cublasGetProperty(MAJOR_VERSION, &major) != CUBLAS_STATUS_SUCCESS ||
      cublasGetProperty(MINOR_VERSION, &minor) != CUBLAS_STATUS_SUCCESS ||
      cublasGetProperty(PATCH_LEVEL, &patch) != CUBLAS_STATUS_SUCCESS) {
    return "unknown";
  }
  return fmt::format("{}.{}.{}", major, minor, patch);
}

void row_major_gemm(cublasHandle_t h, Precision p, const GpuGemm::BlockGemm& g) {
  if (g.rows == 0 || g.n == 0) return;
  const int m_ = as_int(g.rows, "rows of A"), n_ = as_int(g.n, "n"), k_ = as_int(g.k, "k");
  const int lda = as_int(g.lda, "lda"), ldb = as_int(g.ldb, "ldb"), ldc = as_int(g.ldc, "ldc");
  switch (p) {
    case Precision::fp64: {
      const double one = 1.0, beta = g.accumulate ? 1.0 : 0.0;
      SCALEBENCH_CUBLAS_CHECK(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n_, m_, k_, &one,
                                          static_cast<const double*>(g.b), ldb, static_cast<const double*>(g.a), lda,
                                          &beta, static_cast<double*>(g.c), ldc));
      return;
    }
    case Precision::fp32:
    case Precision::tf32: {
      const float one = 1.0f, beta = g.accumulate ? 1.0f : 0.0f;
      SCALEBENCH_CUBLAS_CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n_, m_, k_, &one, static_cast<const float*>(g.b),
                                          ldb, static_cast<const float*>(g.a), lda, &beta, static_cast<float*>(g.c),
                                          ldc));
      return;
    }
    case Precision::bf16: {
      const float one = 1.0f, beta = g.accumulate ? 1.0f : 0.0f;
      SCALEBENCH_CUBLAS_CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n_, m_, k_, &one, g.b, CUDA_R_16BF, ldb, g.a,
                                           CUDA_R_16BF, lda, &beta, g.c, CUDA_R_32F, ldc, CUBLAS_COMPUTE_32F,
                                           CUBLAS_GEMM_DEFAULT));
      return;
    }
  }
}

void set_math_mode(cublasHandle_t h, Precision p) {
  SCALEBENCH_CUBLAS_CHECK(
      cublasSetMathMode(h, p == Precision::tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));
}

}  // namespace scalebench::gpu
