#pragma once
// GEMM's run configuration: the algorithms and distributions, the options left to `auto`, every
// setting of a run (GemmConfig) and what only tests set (GemmTestHooks), with the checks that need
// no machine (validate). The problem it computes is problem/gemm.hpp; the algorithms that run it,
// distributed_gemm.hpp.
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "scalebench/problem/gemm.hpp"
#include "scalebench/topology/placement.hpp"

namespace scalebench {

// How the matrices are distributed over the ranks (distributed_gemm.hpp).
enum class GemmAlgorithm { row1d, summa2d };
// Where Row1D's matrices live on a node: a copy per rank (replicated: A_i, B and C_i in each
// rank's memory, B broadcast to every rank), or once per node in MPI-3 shared windows (shared:
// rows cross nodes through the node leaders, B once per node on lanes; ranks read A and B and
// write C in place).
enum class GemmDistribution { replicated, shared };
// A distributed-multiply library timed beside the run on the same ranks and values (--peer):
// none, or ScaLAPACK's PDGEMM/PSGEMM (docs/output.md, "peers").
enum class GemmPeerLibrary { none, scalapack };

std::string to_string(GemmAlgorithm a);
std::string to_string(GemmDistribution d);
GemmDistribution parse_gemm_distribution(const std::string& s);  // throws UsageError
std::string to_string(GemmPeerLibrary p);
GemmPeerLibrary parse_gemm_peer_library(const std::string& s);  // throws UsageError

// Summa2D's default k-panel: wide enough for the local multiply to run near its peak, narrow
// enough that the panel buffers stay small (docs/architecture.md, "Distributed algorithms").
inline constexpr std::int64_t kDefaultPanelWidth = 512;

// Summa2D's lookahead (--lookahead): panels on their way while one multiplies; 0 is the blocking
// broadcasts. A configuration holds kDefaultLookahead until a lookahead is chosen (row1d keeps it:
// it has none); when not given, `auto` chooses among 0..kMaxAutoLookahead (choice.hpp: by the
// measured figures of the profile, else the stated rule).
inline constexpr int kDefaultLookahead = 1;
inline constexpr int kMaxLookahead = 16;
inline constexpr int kMaxAutoLookahead = 2;

// The schedule options, one flag each (docs/model.md, "auto: the model decides").
struct GemmScheduleOptions {
  bool algorithm = false, grid = false, distribution = false, transport = false, overlap = false, lookahead = false;
  bool any() const noexcept { return algorithm || grid || distribution || transport || overlap || lookahead; }
};

// The options left to `auto`: given as `auto`, or not given at all (then `auto` is their default).
// The configuration's value of each is a placeholder until choose_gemm (choice.hpp)
// resolves it, on rank 0, identically for every rank. An option given a value is pinned.
struct GemmAutoOptions {
  bool algorithm = false, grid = false, distribution = false, transport = false, overlap = false, lookahead = false;
  // Testing (hidden --auto-memory-per-node): host bytes per node the choice assumes free; 0 = what
  // the nodes report (the run) or unknown (predict).
  std::int64_t host_bytes_per_node = 0;
  // Of the options above, those the user gave as `auto`; the others were not given (defaulted).
  GemmScheduleOptions asked;
  bool any() const noexcept { return algorithm || grid || distribution || transport || overlap || lookahead; }
};

struct GemmConfig {
  GemmShape shape{4096, 4096, 4096};
  Precision precision = Precision::fp64;
  GemmBackendKind backend = GemmBackendKind::openblas;
  int threads = 0;                       // BLAS threads per rank; 0 = resolve (see setup_rank)
  PinPolicy pin = PinPolicy::automatic;  // --pin (docs/placement.md)
  std::string threads_source;            // which setting decided `threads`
  int reps = 5;
  int warmup = 1;
  std::uint64_t seed = 42;
  Fill fill = Fill::uniform;
  VerifyMode verify = VerifyMode::freivalds;
  bool force = false;  // allow naive on sizes that take minutes
  bool dry_run = false;
  bool peer = true;                                      // also time the bare library call on the same block
  GemmPeerLibrary peer_library = GemmPeerLibrary::none;  // --peer: a library's distributed multiply beside the run
  bool quiet = false;                                    // no progress lines
  std::optional<std::string> json_path;
  // GPU options (used by --backend cublas)
  Transport transport = Transport::mpi;
  bool resident = false;   // generate inputs on the device: no host→device phase
  bool share_gpu = false;  // allow several ranks per GPU
  bool overlap = false;    // pipeline transfers and multiplies (OverlapPlan in gpu.hpp)
  // Distribution (distributed_gemm.hpp)
  GemmAlgorithm algorithm = GemmAlgorithm::row1d;
  int grid_rows = 0, grid_cols = 0;               // --grid PRxPC for summa2d; 0 = the most square grid
  std::int64_t panel_width = kDefaultPanelWidth;  // summa2d: widest k-panel broadcast at once
  int lookahead = kDefaultLookahead;              // summa2d: panels in flight while one multiplies
  // --panel-width and --lookahead given as numbers: summa2d's, so row1d refuses them whatever the
  // value (the default's value included; `--lookahead auto`, or none given, is not "given").
  bool panel_width_given = false, lookahead_given = false;
  GemmDistribution distribution = GemmDistribution::replicated;  // row1d: --distribution
  GemmAutoOptions autos;                                         // options left to the model (`auto`)
  nlohmann::json choice;  // rank 0: the record's "choice" once `auto` was resolved (null otherwise)
};
// What only tests set (hidden options --mpi-chunk, --inject-error-rank, --delay-rank and
// --delay-seconds), given to the run beside
// its configuration so that the configuration holds only what a user chooses. All ranks must
// pass the same hooks (they join the configuration agreement); the record's config shows mpi_chunk.
struct GemmTestHooks {
  std::int64_t mpi_chunk = 0;      // largest element count per MPI call; 0 = the largest MPI count
  int inject_error_rank = -1;      // corrupt one element of C on this rank after the multiply
  bool keep_c = false;             // return the gathered C in GemmResult (rank 0)
  int delay_rank = -1;             // Summa2D: this rank sleeps delay_seconds before each panel's multiply
  double delay_seconds = 0;        // (counted as compute): a slow rank made on purpose
  double check_delay_seconds = 0;  // every rank sleeps this long in each repeat's check: a slow check
  std::int64_t piece_rows = 0;     // Summa2D's host ring: rows per piece of a panel's multiply; 0 = its rule
};

// The hooks that change what ranks do, as configuration words (agreed with the configuration).
inline std::string test_hook_fields(const GemmTestHooks& h) {
  return " mpi_chunk=" + std::to_string(h.mpi_chunk) + " inject_error_rank=" + std::to_string(h.inject_error_rank) +
         " delay_rank=" + std::to_string(h.delay_rank) + " delay_seconds=" + std::to_string(h.delay_seconds) +
         " check_delay_seconds=" + std::to_string(h.check_delay_seconds) +
         " piece_rows=" + std::to_string(h.piece_rows);
}

// The options of `autos` as words ("algorithm,distribution"; "" when none); the ones the user
// asked as `auto`, and the ones left to it by default (not given).
std::string auto_option_names(const GemmAutoOptions& a);
std::string asked_option_names(const GemmAutoOptions& a);
std::string defaulted_option_names(const GemmAutoOptions& a);

// Throws UsageError for values that can never work, whatever the machine, sizes included: every
// dimension must fit the multiplying library's integer (blas_int_max(), cuBLAS's int) and every
// byte count 64 bits; the message gives the exact figures.
void validate(const GemmConfig& cfg);
// "name=value" words of every setting all ranks must share (agree_on_configuration in mpi.hpp);
// per-rank settings (threads, pin, json, quiet) are left out.
std::string configuration_fields(const GemmConfig& cfg);

// Bytes one rank needs on the host for its share (A_i + B + C_i, plus full A and C on rank 0);
// UsageError with the exact figure when it does not fit in 64 bits.
std::int64_t host_bytes_per_rank(const GemmConfig& cfg, std::int64_t rows, bool is_root);

}  // namespace scalebench
