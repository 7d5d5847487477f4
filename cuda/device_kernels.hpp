#pragma once
// The device's own kernels: primitives on device memory that name no workload (a converting copy,
// an in-place affine map, a stream held for the host). Launchers are host functions; all enqueue
// on `s`. A workload's kernels live with it (src/workloads/<name>/cuda/).
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace scalebench::gpu {

// dst[i] = bf16(src[i]) (round to nearest even; exact for bf16-representable floats).
void convert_to_bf16(const float* src, __nv_bfloat16* dst, std::int64_t count, cudaStream_t s);

// x[i] = x[i]·scale + shift, in place: e.g. cuRAND's uniform (0, 1] moved to (-1, 1].
void scale_shift(double* x, std::int64_t count, double scale, double shift, cudaStream_t s);
void scale_shift(float* x, std::int64_t count, float scale, float shift, cudaStream_t s);

// Holds `s` until the host sets *flag (device-visible pinned memory) to non-zero, or until about
// `timeout_cycles` GPU clock cycles have passed (so that a host that never releases cannot hang
// the GPU). Work enqueued behind it then starts back to back, whatever the host did meanwhile.
void wait_for_host_flag(const volatile int* flag, long long timeout_cycles, cudaStream_t s);

}  // namespace scalebench::gpu
