#pragma once
// GPU selection internals shared within cuda/ (the public part is in scalebench/gpu/gpu.hpp).

namespace scalebench::gpu {

// Seconds the first select_gpu_for_rank() of this process spent on driver initialisation and
// context creation (0 before any): reported as set-up "gpu_context", whoever selected first.
double first_context_seconds();

}  // namespace scalebench::gpu
