#pragma once
// The GEMM workload's own kernels, what cuBLAS does not do: the sums of Freivalds' check and the
// counter-based generator of --resident inputs. (The bf16 conversion of inputs is the device's:
// cuda/device_kernels.hpp.) Launchers are host functions; all enqueue on `s`.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace scalebench::gpu {

// For a rows×cols row-major matrix M: y[i] = Σ_j M[i,j]·w[j] and, when yabs is not null,
// yabs[i] = Σ_j |M[i,j]|·wabs[j]. Sums in double.
void row_dots(const double* m, std::int64_t rows, std::int64_t cols, const double* w, const double* wabs, double* y,
              double* yabs, cudaStream_t s);
void row_dots(const float* m, std::int64_t rows, std::int64_t cols, const double* w, const double* wabs, double* y,
              double* yabs, cudaStream_t s);
void row_dots(const __nv_bfloat16* m, std::int64_t rows, std::int64_t cols, const double* w, const double* wabs,
              double* y, double* yabs, cudaStream_t s);

// Counter-based matrix generation for --resident: element e of the matrix named by `key` is a
// pure function of (key, first_index + e), so every rank makes its own rows without talking.
// uniform: in [-1, 1) without 0 (as the host generator); integer: one of ±1..±4.
void generate_matrix(double* dst, std::int64_t count, std::int64_t first_index, std::uint64_t key, bool integer,
                     cudaStream_t s);
void generate_matrix(float* dst, std::int64_t count, std::int64_t first_index, std::uint64_t key, bool integer,
                     cudaStream_t s);
void generate_matrix(__nv_bfloat16* dst, std::int64_t count, std::int64_t first_index, std::uint64_t key, bool integer,
                     cudaStream_t s);

}  // namespace scalebench::gpu
