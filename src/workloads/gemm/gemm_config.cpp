// GEMM's run configuration (gemm_config.hpp): its words, its checks that need no machine, the
// options left to `auto` as words and the host bytes a rank's share needs.
#include "scalebench/workloads/gemm/gemm_config.hpp"

#include <cblas.h>

#include <cstdint>
#include <limits>
#include <string>

#include <fmt/format.h>

#include "scalebench/base/checked_size.hpp"
#include "scalebench/base/error.hpp"

namespace scalebench {

std::string to_string(GemmDistribution d) { return d == GemmDistribution::replicated ? "replicated" : "shared"; }

std::string to_string(GemmPeerLibrary p) { return p == GemmPeerLibrary::scalapack ? "scalapack" : "none"; }

GemmPeerLibrary parse_gemm_peer_library(const std::string& s) {
  if (s == "none") return GemmPeerLibrary::none;
  if (s == "scalapack") return GemmPeerLibrary::scalapack;
  throw UsageError(fmt::format("unknown --peer '{}'; use scalapack or none", s));
}

GemmDistribution parse_gemm_distribution(const std::string& s) {
  if (s == "replicated") return GemmDistribution::replicated;
  if (s == "shared") return GemmDistribution::shared;
  throw UsageError(fmt::format("unknown --distribution '{}'; use replicated or shared", s));
}
std::string to_string(GemmAlgorithm a) { return a == GemmAlgorithm::row1d ? "row1d" : "summa2d"; }

namespace {

// The most k-panels a summa2d run (and its prediction) lays out.
constexpr std::int64_t kMaxSummaPanels = std::int64_t{1} << 20;

// Every dimension must fit the integer of the library that multiplies (OpenBLAS's blasint, 32
// or 64 bits; cuBLAS's int), and every matrix's bytes a 64-bit count (size_t is as wide). MPI
// counts above 2^31 are sent in chunks (mpi.hpp).
void check_sizes(const GemmConfig& cfg) {
  static_assert(sizeof(std::size_t) >= sizeof(std::int64_t), "byte counts are 64-bit");
  const auto& s = cfg.shape;
  const bool gpu = cfg.backend == GemmBackendKind::cublas;
  const std::int64_t dim_max = gpu ? kInt32Max : blas_int_max();
  const std::string lib = gpu ? std::string("the largest dimension cuBLAS's int holds")
                              : fmt::format("the largest dimension OpenBLAS's {}-bit blasint holds",
                                            8 * sizeof(blasint));
  value_within("--n", s.n, dim_max, lib, "; use a smaller size");  // first: --n sets m and k too
  value_within("--m", s.m, dim_max, lib, "; use a smaller size");
  value_within("--k", s.k, dim_max, lib, "; use a smaller size");
  host_bytes_per_rank(cfg, s.m, true);  // the largest share: throws if its bytes do not fit
}

// --peer scalapack: what PDGEMM and PSGEMM can be compared with.
void check_peer_library(const GemmConfig& cfg) {
  if (cfg.peer_library != GemmPeerLibrary::scalapack) return;
  if (cfg.precision != Precision::fp64 && cfg.precision != Precision::fp32) {
    throw UsageError(fmt::format("--peer scalapack times PDGEMM (fp64) or PSGEMM (fp32); ScaLAPACK has no {}: "
                                 "use --precision fp64 or fp32, or drop --peer",
                                 to_string(cfg.precision)));
  }
  if (cfg.resident) {
    throw UsageError("--peer scalapack starts from rank 0's A and B on the host, but --resident keeps them on the "
                     "device; drop --resident or --peer");
  }
}

// row1d has neither a k-panel nor a lookahead: either given is refused whatever its value (the
// default's value too), with one message (under --algorithm auto the row1d alternative is refused
// instead).
void check_summa_options(const GemmConfig& cfg) {
  if (cfg.algorithm != GemmAlgorithm::row1d || cfg.autos.algorithm) return;
  if (cfg.panel_width_given || cfg.panel_width != kDefaultPanelWidth) {
    throw UsageError(fmt::format("--panel-width is the k-panel of --algorithm summa2d; row1d has none (got "
                                 "--panel-width {}): add --algorithm summa2d or drop --panel-width",
                                 cfg.panel_width));
  }
  if (cfg.lookahead_given || cfg.lookahead != kDefaultLookahead) {
    throw UsageError(fmt::format("--lookahead is the panel pipeline of --algorithm summa2d; row1d has none (got "
                                 "--lookahead {}): add --algorithm summa2d, or drop --lookahead (or give it as auto)",
                                 cfg.lookahead));
  }
}

}  // namespace

void validate(const GemmConfig& cfg) {
  const auto& s = cfg.shape;
  if (s.m <= 0 || s.n <= 0 || s.k <= 0) throw UsageError("matrix sizes must be > 0; e.g. --n 4096");
  check_sizes(cfg);
  check_repeats(cfg.reps, cfg.warmup);
  if (cfg.threads < 0) throw UsageError(fmt::format("--threads must be >= 1 (got {})", cfg.threads));
  if (cfg.panel_width < 1) throw UsageError(fmt::format("--panel-width must be >= 1 (got {})", cfg.panel_width));
  if (cfg.algorithm == GemmAlgorithm::summa2d) {
    // Every k-panel is a pair of broadcasts and a record in the layout: k / width panels must
    // stay countable (width 1 on k = 1e9 once asked for 1e9 panels' memory).
    const std::int64_t panels = s.k / cfg.panel_width + (s.k % cfg.panel_width != 0 ? 1 : 0);
    if (panels > kMaxSummaPanels) {
      throw UsageError(
          fmt::format("--k {} cut in k-panels of --panel-width {} makes {} panels, more than summa2d's {}; "
                      "use a wider --panel-width (at least {})",
                      s.k, cfg.panel_width, panels, kMaxSummaPanels, (s.k + kMaxSummaPanels - 1) / kMaxSummaPanels));
    }
  }
  check_peer_library(cfg);
  if (cfg.lookahead < 0 || cfg.lookahead > kMaxLookahead) {
    throw UsageError(fmt::format("--lookahead {} is out of range; give 0 (blocking broadcasts) to {}, or auto",
                                 cfg.lookahead, kMaxLookahead));
  }
  check_summa_options(cfg);
  if (cfg.algorithm == GemmAlgorithm::summa2d && cfg.overlap && cfg.lookahead == 0) {
    throw UsageError("--overlap with summa2d is its lookahead, but --lookahead 0 turns it off; drop one of them");
  }
  if (cfg.distribution == GemmDistribution::shared && cfg.algorithm != GemmAlgorithm::row1d) {
    throw UsageError("--distribution shared is row1d's node-shared scheme; drop it or use --algorithm row1d");
  }
  if (cfg.distribution == GemmDistribution::shared && cfg.resident) {
    throw UsageError("--resident keeps A, B and C on the device: there is no host copy to share; drop "
                     "--distribution shared or --resident");
  }
  if (cfg.backend != GemmBackendKind::cublas &&
      (cfg.precision == Precision::tf32 || cfg.precision == Precision::bf16)) {
    throw UsageError(fmt::format("--precision {} needs --backend cublas; {} supports fp64 and fp32",
                                 to_string(cfg.precision), to_string(cfg.backend)));
  }
  // Summa2D's --overlap is its lookahead, on every backend.
  const bool row1d_overlap = cfg.overlap && cfg.algorithm == GemmAlgorithm::row1d;
  if (cfg.backend != GemmBackendKind::cublas && (cfg.transport == Transport::nccl || cfg.resident || row1d_overlap)) {
    throw UsageError("--transport nccl, --resident and --overlap need --backend cublas");
  }
  if (cfg.share_gpu && cfg.backend != GemmBackendKind::cublas) {
    throw UsageError(
        fmt::format("--share-gpu needs --backend cublas ({} runs on the host's cores)", to_string(cfg.backend)));
  }
  if (cfg.overlap && cfg.resident) {
    throw UsageError("--overlap pipelines the transfers, but --resident has none; use one or the other");
  }
  if (row1d_overlap && cfg.precision == Precision::bf16) {
    throw UsageError("--overlap supports fp64, fp32 and tf32 (bf16 inputs are converted on the device); "
                     "drop --overlap for bf16");
  }
  if (cfg.fill == Fill::integer && cfg.precision != Precision::fp64 && s.k > (1 << 20)) {
    throw UsageError("--fill integer with fp32 data needs k <= 2^20 to stay exact");
  }
  if (cfg.verify == VerifyMode::full &&
      static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k) > 0x1p33) {
    throw UsageError(
        fmt::format("--verify full is for small sizes (m*n*k <= 2^33; got {}x{}x{}); use --verify freivalds", s.m, s.n,
                    s.k));
  }
  if (cfg.backend == GemmBackendKind::naive && !cfg.force) {
    // The triple loop runs at about 1 GFLOP/s: refuse runs that would take minutes.
    const double flops = 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k) *
                         static_cast<double>(cfg.reps + cfg.warmup);
    if (flops > 120e9) {
      throw UsageError(fmt::format("--backend naive on {}x{}x{} with {} repeats would take minutes (about {:.0f} s at "
                                   "1 GFLOP/s); use --n 1024 or less, fewer --reps, or --force",
                                   s.m, s.n, s.k, cfg.reps + cfg.warmup, flops / 1e9));
    }
  }
}

namespace {
// The flags of `o` that `keep` lets through, as words.
template <class Options>
std::string option_names(const Options& o, const GemmScheduleOptions& keep) {
  std::string out;
  auto add = [&out](bool on, const char* name) {
    if (!on) return;
    if (!out.empty()) out += ',';
    out += name;
  };
  add(o.algorithm && keep.algorithm, "algorithm");
  add(o.grid && keep.grid, "grid");
  add(o.distribution && keep.distribution, "distribution");
  add(o.transport && keep.transport, "transport");
  add(o.overlap && keep.overlap, "overlap");
  add(o.lookahead && keep.lookahead, "lookahead");
  return out;
}
constexpr GemmScheduleOptions kEvery{true, true, true, true, true, true};
}  // namespace

std::string auto_option_names(const GemmAutoOptions& a) { return option_names(a, kEvery); }
std::string asked_option_names(const GemmAutoOptions& a) { return option_names(a, a.asked); }
std::string defaulted_option_names(const GemmAutoOptions& a) {
  const GemmScheduleOptions& k = a.asked;
  return option_names(a, {!k.algorithm, !k.grid, !k.distribution, !k.transport, !k.overlap, !k.lookahead});
}

std::string configuration_fields(const GemmConfig& cfg) {
  const auto& s = cfg.shape;
  const GemmAutoOptions& a = cfg.autos;
  // An option left to `auto` is "auto" until resolved (its value is a placeholder), so that two
  // ranks that differ in it are told apart by name.
  auto value = [](bool open, const std::string& v) { return open ? std::string("auto") : v; };
  const std::string autos = a.any() ? " auto=" + auto_option_names(a) : std::string();
  return fmt::format("m={} n={} k={} precision={} backend={} reps={} warmup={} seed={} fill={} verify={} force={} "
                     "dry_run={} peer={} transport={} resident={} share_gpu={} "
                     "overlap={} algorithm={} grid={} panel_width={} lookahead={} distribution={} peer_library={}",
                     s.m, s.n, s.k, to_string(cfg.precision), to_string(cfg.backend), cfg.reps, cfg.warmup, cfg.seed,
                     to_string(cfg.fill), to_string(cfg.verify), cfg.force, cfg.dry_run, cfg.peer,
                     value(a.transport, to_string(cfg.transport)), cfg.resident, cfg.share_gpu,
                     value(a.overlap, cfg.overlap ? "true" : "false"), value(a.algorithm, to_string(cfg.algorithm)),
                     value(a.grid, fmt::format("{}x{}", cfg.grid_rows, cfg.grid_cols)), cfg.panel_width,
                     value(a.lookahead, std::to_string(cfg.lookahead)),
                     value(a.distribution, to_string(cfg.distribution)), to_string(cfg.peer_library)) +
         autos;
}

std::int64_t host_bytes_per_rank(const GemmConfig& cfg, std::int64_t rows, bool is_root) {
  const auto e = static_cast<std::int64_t>(host_element_bytes(cfg.precision));
  const auto& s = cfg.shape;
  const std::string limit = "the largest 64-bit byte count";
  const std::string advice = "; use a smaller --n (--m, --k)";
  // A_i + B + C_i; rank 0 holds all of A and C instead (its own rows stay in place).
  const std::int64_t a_rows = is_root ? s.m : rows;
  const std::int64_t a = product_within("bytes of A (rows x k x element size)", {a_rows, s.k, e}, kInt64Max, limit,
                                        advice);
  const std::int64_t b = product_within("bytes of B (k x n x element size)", {s.k, s.n, e}, kInt64Max, limit, advice);
  const std::int64_t c = product_within("bytes of C (rows x n x element size)", {a_rows, s.n, e}, kInt64Max, limit,
                                        advice);
  // the peer's own C_i
  const std::int64_t peer = cfg.peer ? product_within("bytes of the peer's C_i", {rows, s.n, e}, kInt64Max, limit) : 0;
  return sum_within("host bytes of one rank (A + B + C + the peer's C_i)", {a, b, c, peer}, kInt64Max, limit, advice);
}

}  // namespace scalebench
