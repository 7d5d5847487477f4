#pragma once
// ScaLAPACK's distributed multiply (PDGEMM, PSGEMM) as a peer of a gemm run: the same ranks, a
// BLACS grid of the run's shape, the same values, block-cyclic with a given block width, the way
// ScaLAPACK users run it (docs/output.md, "peers").
//
// One repeat: rank 0's row-major A and B are packed into each rank's column-major block-cyclic
// pieces and scattered ("scatter"), PDGEMM runs on inputs already in place ("multiply", after a
// barrier), the pieces of C come back to rank 0 and are unpacked row-major ("gather"). The last
// repeat's C is checked by Freivalds' test by rows on rank 0 (base/verify.hpp), as the run's own.
//
// The k-step. The reference PBLAS multiplies k in steps of PILAENV's answer, whatever the block
// width; Debian's PILAENV answers 32. A tuned variant sets the step (`k_step` > 0): this library
// defines the Fortran symbol `pilaenv_` itself, so the executable's definition interposes the
// shared library's; it answers `k_step` while a tuned multiply runs and otherwise passes the call
// to the library's own (found with dlsym(RTLD_NEXT)). Every call is counted and its answer kept,
// so a run shows which step PDGEMM used.
//
// A build without ScaLAPACK links a stub: scalapack_available() is false and time_scalapack_peer
// throws a ResourceError saying so (exit 3).
#include <cstdint>
#include <string>
#include <vector>

#include "scalebench/problem/gemm.hpp"

namespace scalebench {

class Communicator;

// True when this build links ScaLAPACK.
bool scalapack_available() noexcept;
// Throws the ResourceError of a build without ScaLAPACK (exit 3); nothing where it has one.
void require_scalapack();
// The shared library PDGEMM comes from (its file), or why there is none.
std::string scalapack_library_text();

struct ScalapackPeerSettings {
  GemmShape shape;
  Precision precision = Precision::fp64;  // fp64 (PDGEMM) or fp32 (PSGEMM)
  int grid_rows = 1, grid_cols = 1;       // BLACS grid, row-major over the communicator's ranks
  std::int64_t block_width = 64;          // square blocks, block-cyclic from process (0, 0)
  int k_step = 0;                         // 0: the library's own PILAENV; > 0: PILAENV answers this
  int warmup = 0, reps = 1;
  std::int64_t mpi_chunk = 0;  // largest element count per MPI call of the redistribution; 0 = MPI's
};

// Seconds of each phase per timed repeat, the slowest rank's.
struct ScalapackPeerTimes {
  std::vector<double> scatter, multiply, gather;
};

struct ScalapackPeerResult {
  ScalapackPeerTimes times;
  bool ok = false;  // Freivalds by rows on the last C (the same on every rank)
  std::int64_t rows_failed = 0;
  double worst_ratio = 0;
  std::int64_t pilaenv_calls = 0;  // calls of PILAENV during the timed multiplies (this rank)
  int k_step_used = 0;             // PILAENV's last answer during them (0: never called)
  std::vector<double> c;           // rank 0: the last C, row-major, as doubles, when asked (tests)
};

// What time_scalapack_peer would refuse, checked without communicating (the same verdict on every
// rank): the ResourceError of a build without ScaLAPACK; UsageError for a grid that is not `ranks`
// ranks, a block width or repeat count below 1, a dimension or one rank's block-cyclic piece beyond
// ScaLAPACK's integer.
void check_scalapack_peer(const ScalapackPeerSettings& settings, int ranks);

// Collective over `comm` (grid_rows × grid_cols ranks). `a`, `b`: rank 0's row-major A (m×k) and
// B (k×n) of the precision (ignored elsewhere); `x`: Freivalds' vector (n entries, every rank).
// Throws what check_scalapack_peer throws, and RuntimeLibraryError when BLACS or DESCINIT fail.
ScalapackPeerResult time_scalapack_peer(const ScalapackPeerSettings& settings, const Communicator& comm, const void* a,
                                        const void* b, const std::vector<double>& x, bool keep_c = false);

}  // namespace scalebench
