#pragma once
// The GEMM workload's choice of its GPU multiply (GpuGemm, gpu.hpp) for the registered device:
// the implementations are the workload's own, not the device seam's. With CUDA the cuBLAS one is
// gemm/cuda/ (a library of its own over cuda/'s owners and checks, scalebench_gemm_cuda); without,
// cublas_gemm_stub.cpp, which throws NoCudaError naming the option (exit 6). CUDA-free.
#include <memory>

#include "scalebench/gpu/gpu.hpp"
#include "scalebench/workloads/gemm/gemm_config.hpp"

namespace scalebench {

class Communicator;

// This rank's GPU multiply for `gemm --backend cublas`, chosen by the registered device's name
// (device.hpp): cuBLAS on "cuda". Selects and initialises this rank's GPU (collective over
// `comm`). No device registered (a build without CUDA): NoCudaError naming "--backend <backend>"
// (exit 6); a device this workload has no multiply for: an internal error naming it.
std::unique_ptr<GpuGemm> make_device_gemm(const GemmConfig& cfg, const Communicator& comm);

// The implementations make_device_gemm chooses among, one per device.
std::unique_ptr<GpuGemm> make_cublas_gemm(const GemmConfig& cfg, const Communicator& comm);

}  // namespace scalebench
