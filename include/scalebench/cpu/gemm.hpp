#pragma once
// The host multiply backends: the newcomer's triple loop and OpenBLAS, and the bare library call
// they are compared with.
#include <memory>

#include "scalebench/problem/gemm.hpp"

namespace scalebench {

// naive (the newcomer's triple loop, one thread) or openblas with `threads` threads.
std::unique_ptr<LocalGemm> make_cpu_gemm(GemmBackendKind kind, int threads);
// A bare library call (cblas_?gemm) on the same block: the peer the backend is compared with.
double time_bare_cblas(const GemmShape& local, Precision p, const void* a, const void* b, void* c);

}  // namespace scalebench
