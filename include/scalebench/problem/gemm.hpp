#pragma once
// The matrix multiply as a problem: its element types, shapes and roundoff, and the per-rank backend
// interface (LocalGemm), shared by the CPU and GPU backends (cpu/gemm.hpp, gpu/gpu.hpp). The run's
// configuration and its algorithms are GEMM's workload's (workloads/gemm/gemm_config.hpp).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scalebench/mpi/timing.hpp"
#include "scalebench/topology/placement.hpp"

namespace scalebench {

class Communicator;

enum class Precision { fp64, fp32, tf32, bf16 };
enum class GemmBackendKind { naive, openblas, cublas };
enum class Fill { uniform, integer };
enum class VerifyMode { freivalds, full };
enum class Transport { mpi, nccl };
std::string to_string(Precision p);
std::string to_string(GemmBackendKind b);
std::string to_string(Fill f);
std::string to_string(VerifyMode v);
std::string to_string(Transport t);
Precision parse_precision(const std::string& s);  // throws UsageError
GemmBackendKind parse_gemm_backend(const std::string& s);
// Bytes per element as stored on the host (fp64: 8; fp32, tf32, bf16: 4 — bf16 values are kept
// as bf16-representable floats on the host).
std::size_t host_element_bytes(Precision p);
// Unit roundoff of the arithmetic the precision implies (fp64 2^-53, fp32 2^-24, tf32 2^-11 —
// the tensor cores round fp32 inputs to tf32 —, bf16 2^-24: bf16 inputs are exact and their
// products exact in fp32, so only the fp32 accumulation rounds); tolerances are derived from it.
double unit_roundoff(Precision p);
// The nearest bf16-representable float (ties to even): bf16 runs start from exact inputs.
float round_to_bf16(float v);

struct GemmShape {
  std::int64_t m = 0, n = 0, k = 0;  // C (m×n) = A (m×k) · B (k×n), row-major
};

// The largest dimension this build's OpenBLAS integer (blasint: 32 or 64 bits) holds.
std::int64_t blas_int_max();

// One rank's multiply C_i = A_i·B on host row-major buffers of the configured precision.
class LocalGemm {
 public:
  virtual ~LocalGemm() = default;
  virtual std::string name() const = 0;
  // Once before the repeats (allocations, handles, contexts); may record set-up phases.
  virtual void prepare(const GemmShape& local, Precision p, PhaseRecorder& rec) = 0;
  // Records "compute" (and "h2d"/"d2h" for device backends).
  virtual void multiply(const void* a, const void* b, void* c, PhaseRecorder& rec) = 0;
  // Library, version, threads, device: goes into the record.
  virtual nlohmann::json describe() const = 0;
  // A sum over k-panels (the panel algorithms): C = Σ_p A_p·B_p with A_p (m × w_p) and B_p (w_p × n)
  // contiguous, w_p at most the prepared k, m and n the prepared ones. begin_sum starts C at
  // zero; add_panel records "compute" (plus "h2d" where the sum is kept on a device); end_sum
  // leaves C in `c` (host, m × n; "d2h" on a device). `c` is the same in all three calls.
  virtual void begin_sum(void* c) = 0;
  virtual void add_panel(const void* a, const void* b, std::int64_t width, PhaseRecorder& rec) = 0;
  virtual void end_sum(void* c, PhaseRecorder& rec) = 0;
  // Whether add_panel_rows works: a host backend, whose panel multiply can be cut into pieces of
  // rows between which the rank drives its transfers (a panel algorithm's host ring).
  virtual bool adds_panel_rows() const { return false; }
  // Rows [row0, row0 + rows) of the sum: C[row0:] += A_p[row0:]·B_p, where `a_rows` points at
  // row row0 of A_p (m × w_p, contiguous) and `b` at B_p. Records "compute".
  virtual void add_panel_rows(const void* a_rows, const void* b, std::int64_t width, std::int64_t row0,
                              std::int64_t rows, PhaseRecorder& rec);
};

}  // namespace scalebench
