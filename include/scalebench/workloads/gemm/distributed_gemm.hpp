#pragma once
// The algorithm seam of the distributed multiply. A DistributedGemm owns the data distribution:
// which rank holds which blocks of A, B and C, how they move from rank 0 and back, and how the
// local blocks are multiplied (by a LocalGemm, which only multiplies the blocks it is given).
// The driver (run_distributed_gemm) owns what every algorithm shares: configuration agreement,
// placement, the repeat loop, the verdict, the record and the table.
//
//   Row1D   : row blocks of A scattered, B broadcast whole, C_i = A_i·B, C gathered (its GPU
//             schedules: transport mpi, nccl, --overlap, --resident; docs/gpu.md).
//   Summa2D : a pr × pc process grid; A, B and C in 2D blocks; for each k-panel, the panel of A is
//             broadcast along process rows and the panel of B along process columns, and every
//             rank adds A_panel·B_panel to its block of C (van de Geijn and Watts, SUMMA, 1997).
//
// Blocks move through a BufferTransport (transport.hpp): plain buffer views, host or device, and
// a stream; no backend objects.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "scalebench/mpi/repeats.hpp"
#include "scalebench/mpi/timing.hpp"
#include "scalebench/mpi/transport.hpp"
#include "scalebench/workloads/gemm/gemm_config.hpp"

namespace scalebench {

class Communicator;
class GpuGemm;
class PlacementReport;

GemmAlgorithm parse_gemm_algorithm(const std::string& s);  // throws UsageError

// A pr × pc process grid; rank r sits at row r / cols, column r % cols.
struct ProcessGrid {
  int rows = 1, cols = 1;
  int size() const noexcept { return rows * cols; }
};
// The most square grid of `ranks` ranks (rows <= cols): 4 → 2×2, 6 → 2×3, 7 → 1×7.
ProcessGrid most_square_grid(int ranks);
// "PRxPC" (e.g. 2x3) → grid; UsageError for anything else.
ProcessGrid parse_grid(const std::string& text);
std::string to_string(const ProcessGrid& g);
// The grid a run uses on `ranks` ranks: --grid, or the most square. UsageError when --grid's
// PR*PC differs from `ranks`, or when a grid dimension exceeds the rows (m) or columns (n) of C.
ProcessGrid resolve_grid(const GemmConfig& cfg, int ranks);

// Host bytes rank (row, col) of a Summa2D run holds: A_ij + B_ij + C_ij and lookahead + 1 panel
// buffers of A and of B; rank 0 also A, B and C whole. UsageError when the sum does not fit 64 bits.
std::int64_t summa_host_bytes(const GemmConfig& cfg, const ProcessGrid& grid, int rank);
// Host bytes this rank accounts for under Row1D's --distribution shared: its node's windows
// charged to the ranks whose rows they hold (rank 0's node: all of A and C to rank 0), B to the
// node's leader, the peer's C_i to each rank; a run that will fall back to replicated (the node's
// shared-memory folder cannot hold the windows: `refusal`, as shared_windows_refusal answered,
// not empty) is charged the replicated share. Collective (splits the node). UsageError when a sum
// does not fit 64 bits.
std::int64_t shared_host_bytes(const GemmConfig& cfg, const Communicator& comm, const std::string& refusal);

// ---------------------------------------------------------------------------------------------
// The algorithm seam.

// The verdict of one repeat, the same on every rank.
struct GemmCheck {
  bool ok = true;
  std::int64_t rows_failed = 0;
  double worst_ratio = 0;
  bool gather_ok = true;
  int first_failed_rank = -1;
  std::int64_t first_failed_row = -1;  // global row
};

// Rank 0's whole matrices on the host (host format), null where the run keeps none.
struct HostMatrices {
  const void* a = nullptr;
  const void* b = nullptr;
  const void* c = nullptr;
};

class DistributedGemm {
 public:
  virtual ~DistributedGemm() = default;
  virtual GemmAlgorithm algorithm() const = 0;
  // Where the matrices lived once prepared: --distribution, or replicated where shared fell back.
  virtual GemmDistribution scheme() const { return GemmDistribution::replicated; }
  // Buffers, rank 0's inputs ("generate"), the backend's set-up. Collective.
  virtual void prepare(PhaseRecorder& setup) = 0;
  // One repeat: A and B from rank 0 to their owners, the local multiplies, C back to rank 0.
  // Records "scatter", "broadcast", "compute", "gather" (and "h2d", "d2h" on devices). Collective.
  virtual void multiply(PhaseRecorder& rec) = 0;
  // Freivalds' check of the last repeat's C (tolerance by rows, verify.hpp) and the check that
  // the gathered C is bit for bit the blocks the ranks computed. Collective.
  virtual GemmCheck verify(const std::vector<double>& x) = 0;
  virtual HostMatrices full() const = 0;
  // Bare peers of the same work after the repeats: "bare_compute" into `peer` (the library call
  // on the same block); collective.
  virtual void time_peers(const RepeatLoop& loop, PhaseRecorder& peer) = 0;
  virtual std::string peer_call_name() const = 0;
  // This rank's entry for run_context() (rows, columns, offsets, its GPU); records its buffers'
  // pages in `placement`.
  virtual nlohmann::json rank_info(PlacementReport& placement) const = 0;
  // Record sections of the algorithm (rank 0; collective): "distribution" (algorithm, grid,
  // blocks, bytes per rank per phase), plus what the algorithm adds ("partition", "network",
  // "gpu", "transfers"). `net_peer`: collective time of bare MPI calls, filled before.
  virtual void add_to_record(nlohmann::json& record, const std::vector<std::pair<std::string, PhaseStats>>& phases,
                             const std::vector<std::pair<std::string, PhaseStats>>& peer_phases) = 0;
  // Lines of the human table the algorithm adds (rank 0).
  virtual std::string table_lines(const nlohmann::json& record) const = 0;
};

// Row1D, or Summa2D on resolve_grid(cfg, comm.size()). `gpu` is the same object as `local` when
// the backend is a GPU (Row1D's device schedules use it), else null. Both must outlive the result,
// and so must `cfg` and `hooks`.
std::unique_ptr<DistributedGemm> make_distributed_gemm(const GemmConfig& cfg, const GemmTestHooks& hooks,
                                                       const Communicator& comm, LocalGemm& local, GpuGemm* gpu);

// Outcome of a distributed run, valid on rank 0 (others hold their local view).
struct GemmResult {
  bool ok = false;
  nlohmann::json record;  // the full run record (rank 0)
  std::vector<double> c;  // the gathered C as doubles, when hooks.keep_c (rank 0)
};

// Collective over `comm`: generate, distribute, multiply, gather, verify, time; prints the
// human table on rank 0 unless quiet. Throws scalebench::Error on failures detected before work.
// `agreed`: the caller has already checked that every rank holds the same configuration and hooks.
GemmResult run_distributed_gemm(const GemmConfig& cfg, const Communicator& comm, const GemmTestHooks& hooks = {},
                                bool agreed = false);

}  // namespace scalebench
