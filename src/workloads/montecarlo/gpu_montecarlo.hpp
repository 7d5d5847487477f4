#pragma once
// The Monte Carlo workload's GPU kernels: scalebench's fused generate-test-reduce kernels
// (montecarlo --backend cuda) and the tutorials' pattern over the vendor random number library's
// host API (--backend curand; docs/montecarlo.md). They belong to this workload, not to the device
// seam: with CUDA they are montecarlo/cuda/, a library of their own over cuda/'s owners and checks;
// without, gpu_montecarlo_stub.cpp, whose factories throw NoCudaError naming the option (exit 6).
// This header is CUDA-free.
#include <memory>

#include "scalebench/problem/montecarlo.hpp"

namespace scalebench {

class Communicator;

// Collective over `comm`: each selects this rank's GPU.
std::unique_ptr<McKernel> make_gpu_montecarlo(const MonteCarloConfig& cfg, const Communicator& comm);
std::unique_ptr<McKernel> make_gpu_library_montecarlo(const MonteCarloConfig& cfg, const Communicator& comm);

}  // namespace scalebench
