#pragma once
// GPU micro-benchmarks for `scalebench calibrate` (cuda/calibrate_gpu.cpp; a stub that throws
// NoCudaError without CUDA). CUDA-free.
#include <nlohmann/json.hpp>

namespace scalebench {

// On the current process's visible GPUs: pinned and pageable host<->device copies (latency and
// bandwidth), cuBLAS GEMM GFLOP/s by precision and size, and, with two or more GPUs, NCCL
// broadcast between them (latency and bandwidth). Returns the profile's "gpu" object
// (docs/model.md). `quick`: fewer sizes and repeats.
nlohmann::json calibrate_gpu(bool quick);

}  // namespace scalebench
