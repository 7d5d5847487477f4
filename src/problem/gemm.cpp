#include <cblas.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "scalebench/base/checked_size.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/problem/gemm.hpp"

namespace scalebench {

std::string to_string(Precision p) {
  switch (p) {
    case Precision::fp64: return "fp64";
    case Precision::fp32: return "fp32";
    case Precision::tf32: return "tf32";
    case Precision::bf16: return "bf16";
  }
  return "?";
}
std::string to_string(GemmBackendKind b) {
  switch (b) {
    case GemmBackendKind::naive: return "naive";
    case GemmBackendKind::openblas: return "openblas";
    case GemmBackendKind::cublas: return "cublas";
  }
  return "?";
}
std::string to_string(Fill f) { return f == Fill::uniform ? "uniform" : "integer"; }
std::string to_string(VerifyMode v) { return v == VerifyMode::freivalds ? "freivalds" : "full"; }
std::string to_string(Transport t) { return t == Transport::mpi ? "mpi" : "nccl"; }
Precision parse_precision(const std::string& s) {
  if (s == "fp64") return Precision::fp64;
  if (s == "fp32") return Precision::fp32;
  if (s == "tf32") return Precision::tf32;
  if (s == "bf16") return Precision::bf16;
  throw UsageError(fmt::format("unknown --precision '{}'; use fp64, fp32, tf32 or bf16", s));
}

GemmBackendKind parse_gemm_backend(const std::string& s) {
  if (s == "naive") return GemmBackendKind::naive;
  if (s == "openblas") return GemmBackendKind::openblas;
  if (s == "cublas") return GemmBackendKind::cublas;
  throw UsageError(fmt::format("unknown --backend '{}'; use naive, openblas or cublas", s));
}

std::size_t host_element_bytes(Precision p) { return p == Precision::fp64 ? 8 : 4; }

double unit_roundoff(Precision p) {
  switch (p) {
    case Precision::fp64: return 0x1p-53;
    case Precision::fp32: return 0x1p-24;
    case Precision::tf32: return 0x1p-11;
    // bf16 inputs are exact (generated bf16-representable, or bf16 on the device) and their
    // products are exact in fp32; only the fp32 accumulation rounds.
    case Precision::bf16: return 0x1p-24;
  }
  return 0x1p-53;
}

float round_to_bf16(float v) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &v, 4);
  bits += 0x7fffU + ((bits >> 16) & 1U);
  bits &= 0xffff0000U;
  std::memcpy(&v, &bits, 4);
  return v;
}

std::int64_t blas_int_max() { return std::numeric_limits<blasint>::max(); }

void LocalGemm::add_panel_rows(const void*, const void*, std::int64_t, std::int64_t, std::int64_t, PhaseRecorder&) {
  throw std::logic_error(name() + " cannot multiply a panel in pieces of rows (adds_panel_rows() is false)");
}

}  // namespace scalebench
