// Row1D as the run sees it before it starts (algorithm_description.hpp): a P x 1 grid, a row
// block of A and C per rank, B whole on every rank or once per node (--distribution shared).
#include <fmt/format.h>

#include "algorithm_description.hpp"
#include "node_shared.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/base/partition.hpp"

namespace scalebench {
namespace {

class Row1dDescription final : public AlgorithmDescription {
 public:
  void check(const GemmConfig& cfg, int ranks) const override {
    if (cfg.grid_rows > 0 && (cfg.grid_rows != ranks || cfg.grid_cols != 1)) {
      // row1d is the P x 1 grid (a row block of A and C per rank); any other --grid is summa2d's.
      throw UsageError(fmt::format("--grid {}x{} needs --algorithm summa2d (row1d runs on {}x1)", cfg.grid_rows,
                                   cfg.grid_cols, ranks));
    }
    if (ranks > cfg.shape.m) {
      throw UsageError(fmt::format("{} ranks but only {} rows of A: every rank needs at least one row; "
                                   "use at most {} ranks or a larger --m/--n",
                                   ranks, cfg.shape.m, cfg.shape.m));
    }
  }

  ProcessGrid grid(const GemmConfig& /*cfg*/, int ranks) const override { return {ranks, 1}; }

  std::string shared_fallback(const GemmConfig& cfg, const Communicator& comm) const override {
    return cfg.distribution == GemmDistribution::shared ? shared_windows_refusal(cfg, comm) : std::string();
  }

  std::int64_t host_bytes(const GemmConfig& cfg, const Communicator& comm, const std::string& fallback) const override {
    if (cfg.distribution == GemmDistribution::shared) return shared_host_bytes(cfg, comm, fallback);
    const RowPartition rows(cfg.shape.m, comm.size());
    return host_bytes_per_rank(cfg, rows.block(comm.rank()).count, comm.is_root());
  }

  std::string held_text(const GemmConfig& cfg, const std::string& fallback) const override {
    if (cfg.distribution == GemmDistribution::shared && fallback.empty()) {
      return fmt::format("one A, B and C per node in shared windows, charged to the ranks whose rows they hold, B to "
                         "the node's leader{}; rank 0's node holds A and C whole",
                         cfg.peer ? ", + peer C_i per rank" : "");
    }
    return fmt::format("A_i + B + C_i{}; rank 0 also holds A and C{}", cfg.peer ? " + peer C_i" : "",
                       fallback.empty() ? "" : ": --distribution shared falls back to replicated: " + fallback);
  }

  std::string share_text(const GemmConfig& cfg, int ranks, int r) const override {
    return fmt::format("rows {:>8}", RowPartition(cfg.shape.m, ranks).block(r).count);
  }

  std::string settings_text(const GemmConfig& /*cfg*/) const override { return {}; }
  void add_config(const GemmConfig& /*cfg*/, nlohmann::json& /*config*/) const override {}
};

}  // namespace

const AlgorithmDescription& row1d_description() {
  static const Row1dDescription d;
  return d;
}

const AlgorithmDescription& describe_algorithm(const GemmConfig& cfg) {
  return cfg.algorithm == GemmAlgorithm::summa2d ? summa2d_description() : row1d_description();
}

void check_gemm_options(const GemmConfig& cfg, int ranks) {
  validate(cfg);
  describe_algorithm(cfg).check(cfg, ranks);
  if (cfg.overlap && cfg.algorithm == GemmAlgorithm::row1d && cfg.transport == Transport::mpi && ranks > 1) {
    throw UsageError(
        fmt::format("--overlap moves blocks between GPUs with NCCL; with {} ranks add --transport nccl", ranks));
  }
  if (cfg.resident && cfg.verify == VerifyMode::full) {
    throw UsageError("--verify full compares on the host, but --resident keeps A, B and C on the device; "
                     "use --verify freivalds (computed on the device)");
  }
}

}  // namespace scalebench
