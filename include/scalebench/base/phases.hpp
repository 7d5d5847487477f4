#pragma once
// The phases a run times, named once. They are the keys of a record's "phases" (docs/output.md
// defines each) and what the drivers' tables, the model and the report add up, so every recorder,
// reader and table uses these names, never a string of its own.
#include <string_view>

namespace scalebench::phase {

// Timed every repeat.
inline constexpr const char* scatter = "scatter";        // rank 0 sends each rank its part of A
inline constexpr const char* broadcast = "broadcast";    // B (or panels of A and B) to the ranks
inline constexpr const char* h2d = "h2d";                // host to device copies
inline constexpr const char* compute = "compute";        // the local multiply or the sampling kernels
inline constexpr const char* d2h = "d2h";                // device to host copies
inline constexpr const char* gather = "gather";          // the ranks' parts of C back to rank 0
inline constexpr const char* allgather = "allgather";    // --distribution shared on GPUs: B's slices
inline constexpr const char* reduce = "reduce";          // Monte Carlo: the partial sums combined
inline constexpr const char* verify = "verify";          // the check of the repeat's result
inline constexpr const char* end_to_end = "end_to_end";  // the whole repeat (verification excluded)
// Parts of another phase, reported beside it.
inline constexpr const char* fill = "fill";                    // --overlap: before the first multiply starts
inline constexpr const char* drain = "drain";                  // --overlap: after the last multiply ends
inline constexpr const char* generate = "generate";            // random numbers into device arrays (curand),
                                                               // or rank 0's inputs (a set-up phase)
inline constexpr const char* kernel = "kernel";                // curand: the kernel over those arrays
inline constexpr const char* device_reduce = "device_reduce";  // curand: CUB's sums over those arrays
// Peers: the bare library calls timed beside the run.
inline constexpr const char* bare_compute = "bare_compute";
inline constexpr const char* pinned_copy = "pinned_copy";
inline constexpr const char* bare_scatterv = "bare_scatterv";  // the network peer: one MPI_Scatterv of A
inline constexpr const char* bare_bcast = "bare_bcast";        // and one MPI_Bcast of B
// Set-up steps, timed once before the repeats (recorded under setup_prefix; `generate` too).
inline constexpr const char* prepare = "prepare";                      // CPU Monte Carlo: the rank's work units
inline constexpr const char* gpu_context = "gpu_context";              // GPU selection and context creation
inline constexpr const char* gpu_alloc = "gpu_alloc";                  // GPU Monte Carlo: streams and buffers
inline constexpr const char* cublas_handle = "cublas_handle";          // the cuBLAS handle and its workspace
inline constexpr const char* nccl_comm = "nccl_comm";                  // the NCCL communicator(s)
inline constexpr const char* pin_host = "pin_host";                    // page-locking the host matrices
inline constexpr const char* shared_windows = "shared_windows";        // the node's windows, their pages faulted in
inline constexpr const char* device_alloc = "device_alloc";            // GEMM: device buffers
inline constexpr const char* cublas_first_call = "cublas_first_call";  // the real shape once

// Set-up phases (timed once, before the repeats) are recorded as "setup_<name>".
inline constexpr std::string_view setup_prefix = "setup_";

// What a phase is, for the tables' compute / communication / transfer split.
enum class Kind { computation, communication, transfer, other };

constexpr Kind kind_of(std::string_view name) noexcept {
  if (name == compute) return Kind::computation;
  if (name == scatter || name == broadcast || name == allgather || name == gather || name == reduce) {
    return Kind::communication;
  }
  if (name == h2d || name == d2h) return Kind::transfer;
  return Kind::other;
}

// Seconds of phases summed by kind.
struct KindSums {
  double computation = 0, communication = 0, transfer = 0;
  constexpr void add(std::string_view name, double seconds) noexcept {
    switch (kind_of(name)) {
      case Kind::computation: computation += seconds; break;
      case Kind::communication: communication += seconds; break;
      case Kind::transfer: transfer += seconds; break;
      case Kind::other: break;
    }
  }
};

}  // namespace scalebench::phase
