#pragma once
// The run record every workload writes (docs/output.md), built in one place: the sections all
// workloads share — subcommand, context (versions, hosts, per-rank info, environment), node
// counts, config, backend, phases, rates, verification, ok / status / exit_code, warnings of
// every rank, the prediction (model.hpp) and the finish time — are filled here, once; a workload
// adds only its own sections (peer, distribution, partition, result, …) to `json()`.
// Also the parts of the human table every run prints (the phase lines, the warnings).
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "scalebench/mpi/timing.hpp"
#include "scalebench/workloads/model.hpp"

namespace scalebench {

class Communicator;
class PlacementReport;

// This rank's warnings every workload checks: more threads than the CPUs the rank may use
// (`threads_what`: "BLAS threads", "threads"; skipped when `threads` is 0) and the placement's
// own warnings, each prefixed with the rank.
std::vector<std::string> rank_warnings(const Communicator& comm, int threads, std::string_view threads_what,
                                       const PlacementReport& placement);

// What a workload supplies for the shared sections when it finishes.
struct RunSections {
  nlohmann::json config;        // the resolved configuration
  nlohmann::json backend;       // what the backend says of itself
  nlohmann::json rates;         // the workload's rates (GFLOP/s, samples/s)
  nlohmann::json verification;  // how the result was checked; "ok" is set from `ok`
  bool ok = false;              // the verdict (the same on every rank)
  // The model's prediction of the configuration that ran (attach_prediction, model.hpp); none:
  // the record says no prediction is available.
  RecordPredictor predict;
};

class RunRecord {
 public:
  // Collective: the run context with `rank_info` merged into each rank's entry and every rank's
  // `my_warnings`, gathered to rank 0.
  RunRecord(std::string_view subcommand, const Communicator& comm, const nlohmann::json& rank_info,
            const std::vector<std::string>& my_warnings);

  // The record: on rank 0 the context and whatever was added; on other ranks an empty object
  // (collective sections may be added on every rank; only rank 0's are kept).
  nlohmann::json& json() noexcept { return record_; }
  // A run-wide warning (rank 0; ignored elsewhere).
  void warn(std::string text);
  const nlohmann::json& warnings() const noexcept { return warnings_; }

  // Fills the shared sections (rank 0; a no-op elsewhere): config, backend, phases (set-up ones as
  // "setup_<name>"), rates, node counts, verification, ok / status / exit_code, the prediction
  // (of `predict` against the measured phases; it may add a warning), warnings, finished_at.
  void finish(const PhaseList& setup, const PhaseList& timed, RunSections sections);

  // The exit code of a run with verdict `ok`: 0, or ExitCode::verification_failed.
  static int exit_code(bool ok) noexcept;

 private:
  bool root_;
  nlohmann::json record_ = nlohmann::json::object();
  nlohmann::json warnings_ = nlohmann::json::array();
};

// The phase lines of a run's table: a header, the set-up phases ("setup_<name>", median only),
// then the timed phases (median, min, max over repeats; imbalance over ranks).
std::string phase_table(const PhaseList& setup, const PhaseList& timed);
// "warning: …" lines, one per warning.
std::string warning_lines(const nlohmann::json& warnings);

}  // namespace scalebench
