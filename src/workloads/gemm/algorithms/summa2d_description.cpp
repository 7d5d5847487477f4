// Summa2D as the run sees it before it starts (algorithm_description.hpp): a PR x PC grid, a
// block of A, B and C per rank and lookahead + 1 panels of A and of B (one in use, the rest in flight).
#include <fmt/format.h>

#include "algorithm_description.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/base/partition.hpp"

namespace scalebench {
namespace {

class Summa2dDescription final : public AlgorithmDescription {
 public:
  void check(const GemmConfig& cfg, int ranks) const override {
    if (cfg.resident) {
      // Summa2D's inputs start on rank 0's host and go out in blocks: nothing to generate on the devices.
      throw UsageError("--algorithm summa2d has no --resident schedule (row1d's); drop --resident (summa2d keeps its "
                       "blocks on the GPUs with --transport nccl)");
    }
    resolve_grid(cfg, ranks);
  }

  ProcessGrid grid(const GemmConfig& cfg, int ranks) const override { return resolve_grid(cfg, ranks); }

  std::string shared_fallback(const GemmConfig& /*cfg*/, const Communicator& /*comm*/) const override { return {}; }

  std::int64_t host_bytes(const GemmConfig& cfg, const Communicator& comm,
                          const std::string& /*fallback*/) const override {
    return summa_host_bytes(cfg, resolve_grid(cfg, comm.size()), comm.rank());
  }

  std::string held_text(const GemmConfig& /*cfg*/, const std::string& /*fallback*/) const override {
    return "A_ij + B_ij + C_ij + lookahead + 1 panels of A and of B; rank 0 also holds A, B and C";
  }

  std::string share_text(const GemmConfig& cfg, int ranks, int r) const override {
    const ProcessGrid g = resolve_grid(cfg, ranks);
    const RowPartition rows(cfg.shape.m, g.rows), cols(cfg.shape.n, g.cols);
    return fmt::format("grid ({},{}) C block {:>6} x {:<6}", r / g.cols, r % g.cols, rows.block(r / g.cols).count,
                       cols.block(r % g.cols).count);
  }

  std::string settings_text(const GemmConfig& cfg) const override {
    return fmt::format("  panel width {}, lookahead {}", cfg.panel_width, cfg.lookahead);
  }
  void add_config(const GemmConfig& cfg, nlohmann::json& config) const override {
    config["panel_width"] = cfg.panel_width;
    config["lookahead"] = cfg.lookahead;
  }
};

}  // namespace

const AlgorithmDescription& summa2d_description() {
  static const Summa2dDescription d;
  return d;
}

}  // namespace scalebench
