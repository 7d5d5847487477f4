// CPU multiply backends: the newcomer's triple loop (the baseline every report contrasts against)
// and OpenBLAS (the reference every other backend is tested against).
#include <cblas.h>

#include <cstring>

#include <fmt/format.h>

#include "scalebench/base/checked_size.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/base/phases.hpp"
#include "scalebench/cpu/gemm.hpp"

namespace scalebench {
namespace {

// The seeds' loop as a newcomer writes it: i, j, then the dot product over k (B walked by
// columns). One thread, no blocking: slow by design.
// `accumulate`: C += A·B (the panels of a sum over k-panels), else C = A·B.
template <class T>
void naive_multiply(const T* a, const T* b, T* c, std::int64_t rows, std::int64_t n, std::int64_t k,
                    bool accumulate = false) {
  for (std::int64_t i = 0; i < rows; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      T sum = accumulate ? c[i * n + j] : T(0);
      for (std::int64_t l = 0; l < k; ++l) sum += a[i * k + l] * b[l * n + j];
      c[i * n + j] = sum;
    }
  }
}

void naive_multiply(Precision p, const void* a, const void* b, void* c, std::int64_t rows, std::int64_t n,
                    std::int64_t k, bool accumulate) {
  if (p == Precision::fp64) {
    naive_multiply(static_cast<const double*>(a), static_cast<const double*>(b), static_cast<double*>(c), rows, n, k,
                   accumulate);
  } else {
    naive_multiply(static_cast<const float*>(a), static_cast<const float*>(b), static_cast<float*>(c), rows, n, k,
                   accumulate);
  }
}

// A dimension as OpenBLAS's integer (blasint: 32 or 64 bits), never wrapped: validate() refuses
// such sizes up front, and a block that still does not fit is a UsageError, as for cuBLAS.
blasint as_blasint(std::int64_t v, const char* what) {
  value_within(what, v, blas_int_max(), "the largest dimension OpenBLAS's blasint holds", "; use a smaller size");
  return static_cast<blasint>(v);
}

void blas_multiply(Precision p, const void* a, const void* b, void* c, std::int64_t rows, std::int64_t n,
                   std::int64_t k, bool accumulate = false) {
  if (rows == 0 || n == 0) return;
  const blasint m = as_blasint(rows, "rows of the block"), nn = as_blasint(n, "columns of the block"),
                kk = as_blasint(k, "inner dimension of the block");
  if (p == Precision::fp64) {
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, nn, kk, 1.0, static_cast<const double*>(a), kk,
                static_cast<const double*>(b), nn, accumulate ? 1.0 : 0.0, static_cast<double*>(c), nn);
  } else {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, nn, kk, 1.0f, static_cast<const float*>(a), kk,
                static_cast<const float*>(b), nn, accumulate ? 1.0f : 0.0f, static_cast<float*>(c), nn);
  }
}

// C = 0 for a host sum over panels (begin_sum of both CPU backends).
void zero_c(void* c, const GemmShape& s, Precision p) {
  std::memset(c, 0, static_cast<std::size_t>(s.m * s.n) * host_element_bytes(p));
}

void require_cpu_precision(Precision p, const char* backend) {
  if (p != Precision::fp64 && p != Precision::fp32) {
    throw UsageError(fmt::format("--precision {} needs a GPU backend (--backend cublas); {} supports fp64 and fp32",
                                 to_string(p), backend));
  }
}

// What the host backends share: the block's shape and precision, and the sums over k-panels
// (C zeroed once, then each k-panel added with beta = 1). A backend supplies only its product.
class HostGemm : public LocalGemm {
 public:
  void multiply(const void* a, const void* b, void* c, PhaseRecorder& rec) override {
    ScopedPhase t(rec, phase::compute);
    product(a, b, c, shape_.m, shape_.k, false);
  }
  void begin_sum(void* c) override {
    sum_ = c;
    zero_c(c, shape_, precision_);
  }
  void add_panel(const void* a, const void* b, std::int64_t width, PhaseRecorder& rec) override {
    ScopedPhase t(rec, phase::compute);
    product(a, b, sum_, shape_.m, width, true);
  }
  void end_sum(void*, PhaseRecorder&) override {}
  bool adds_panel_rows() const override { return true; }
  void add_panel_rows(const void* a_rows, const void* b, std::int64_t width, std::int64_t row0, std::int64_t rows,
                      PhaseRecorder& rec) override {
    ScopedPhase t(rec, phase::compute);
    product(a_rows, b,
            static_cast<char*>(sum_) + static_cast<std::size_t>(row0 * shape_.n) * host_element_bytes(precision_), rows,
            width, true);
  }

 protected:
  void set_block(const GemmShape& local, Precision p, const char* backend) {
    require_cpu_precision(p, backend);
    shape_ = local;
    precision_ = p;
  }
  // C (rows x shape_.n) = A (rows x k) * B (k x n), or C += A * B when `accumulate`.
  virtual void product(const void* a, const void* b, void* c, std::int64_t rows, std::int64_t k, bool accumulate) = 0;

  GemmShape shape_;
  Precision precision_ = Precision::fp64;

 private:
  void* sum_ = nullptr;
};

class NaiveGemm final : public HostGemm {
 public:
  std::string name() const override { return "naive"; }
  void prepare(const GemmShape& local, Precision p, PhaseRecorder&) override { set_block(local, p, "naive"); }
  nlohmann::json describe() const override { return {{"library", "none (triple loop)"}, {"threads", 1}}; }

 private:
  void product(const void* a, const void* b, void* c, std::int64_t rows, std::int64_t k, bool accumulate) override {
    naive_multiply(precision_, a, b, c, rows, shape_.n, k, accumulate);
  }
};

class OpenBlasGemm final : public HostGemm {
 public:
  explicit OpenBlasGemm(int threads) : threads_(threads) {}
  std::string name() const override { return "openblas"; }
  void prepare(const GemmShape& local, Precision p, PhaseRecorder&) override {
    set_block(local, p, "openblas");
    openblas_set_num_threads(threads_);
  }
  nlohmann::json describe() const override {
    return {{"library", "OpenBLAS"},
            {"config", openblas_get_config()},
            {"core", openblas_get_corename()},
            {"threads", openblas_get_num_threads()}};
  }

 private:
  void product(const void* a, const void* b, void* c, std::int64_t rows, std::int64_t k, bool accumulate) override {
    blas_multiply(precision_, a, b, c, rows, shape_.n, k, accumulate);
  }

  int threads_;
};

}  // namespace

std::unique_ptr<LocalGemm> make_cpu_gemm(GemmBackendKind kind, int threads) {
  switch (kind) {
    case GemmBackendKind::naive: return std::make_unique<NaiveGemm>();
    case GemmBackendKind::openblas: return std::make_unique<OpenBlasGemm>(threads);
    case GemmBackendKind::cublas: break;
  }
  throw Error(ExitCode::internal, "make_cpu_gemm called for a GPU backend");
}

double time_bare_cblas(const GemmShape& local, Precision p, const void* a, const void* b, void* c) {
  const double t0 = wall_seconds();
  blas_multiply(p, a, b, c, local.m, local.n, local.k);
  return wall_seconds() - t0;
}

}  // namespace scalebench
