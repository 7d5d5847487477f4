#pragma once
// What the run needs to know of a distributed-multiply algorithm before it makes one (its checks,
// its grid, the host memory of a rank, the words of --dry-run and of the memory error, its config
// fields), one description per algorithm beside its factory: the driver never tests which
// algorithm runs.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "scalebench/workloads/gemm/distributed_gemm.hpp"

namespace scalebench {

class AlgorithmDescription {
 public:
  virtual ~AlgorithmDescription() = default;
  // The options this algorithm refuses on `ranks` ranks (UsageError), after validate().
  virtual void check(const GemmConfig& cfg, int ranks) const = 0;
  // The process grid it runs on.
  virtual ProcessGrid grid(const GemmConfig& cfg, int ranks) const = 0;
  // Why --distribution shared will run as replicated (shared_windows_refusal); empty when it will
  // not or is not asked for. Collective.
  virtual std::string shared_fallback(const GemmConfig& cfg, const Communicator& comm) const = 0;
  // Host bytes this rank needs; `fallback` as shared_fallback() answered. Collective.
  virtual std::int64_t host_bytes(const GemmConfig& cfg, const Communicator& comm,
                                  const std::string& fallback) const = 0;
  // What a rank holds, for --dry-run and the memory error.
  virtual std::string held_text(const GemmConfig& cfg, const std::string& fallback) const = 0;
  // Rank r's share in words (its rows, or its block of C).
  virtual std::string share_text(const GemmConfig& cfg, int ranks, int r) const = 0;
  // Its settings beyond the grid, as --dry-run's line ("  panel width 512") and the record's
  // config fields.
  virtual std::string settings_text(const GemmConfig& cfg) const = 0;
  virtual void add_config(const GemmConfig& cfg, nlohmann::json& config) const = 0;
};

// Row1D's (row1d_description.cpp) and Summa2D's (summa2d_description.cpp).
const AlgorithmDescription& row1d_description();
const AlgorithmDescription& summa2d_description();
// The description of `cfg.algorithm`.
const AlgorithmDescription& describe_algorithm(const GemmConfig& cfg);

// The run's rules for its schedule options on `ranks` ranks, in one place: validate(), the
// algorithm's own check, the transports' (--overlap on several ranks moves blocks with NCCL) and
// --resident's (the check on the device). Throws UsageError. The driver's check and `auto`'s
// refusal of an alternative both call it, so `auto` never takes what the run would refuse.
void check_gemm_options(const GemmConfig& cfg, int ranks);

}  // namespace scalebench
