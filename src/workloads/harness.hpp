#pragma once
// The per-rank run every workload shares, written once (nccl-tests' common harness, one small file
// per operation, is the model). run_rank_harness does, in this order:
//   agree on the configuration → check it (agreed) → check what it needs of the machine (agreed)
//   → place the rank (--pin, threads) → --dry-run and stop, or: make the backend (agreed) →
//   prepare (set-up phases) → warm-up and timed repeats (end to end timed around each repeat,
//   its check after) → after the repeats (final checks, bare peers) → summaries over repeats and
//   ranks → the record (context, the workload's sections, the prediction of the configuration
//   that ran, in memory) → the table → --json → every rank learns the verdict.
// A workload supplies only its own steps, as a RankWorkload (gemm_driver.cpp,
// montecarlo_driver.cpp); the sequence, the agreement and the record are here.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "energy_run.hpp"
#include "scalebench/mpi/repeats.hpp"
#include "scalebench/mpi/timing.hpp"
#include "scalebench/workloads/model.hpp"
#include "scalebench/workloads/rank_setup.hpp"
#include "scalebench/workloads/run_record.hpp"

namespace scalebench {

class Communicator;

// What the harness needs of the configuration itself: data, given beside the workload.
struct HarnessSettings {
  std::string name;  // the subcommand and the record's "subcommand" ("gemm")
  int warmup = 1, reps = 5;
  bool quiet = false, dry_run = false;
  bool agreed = false;  // every rank's configuration already agreed by the caller (not asked again)
  std::optional<std::string> json_path;
  std::string configuration;  // "name=value" words every rank must share (agree_on_configuration)
};

// The phases summarized over repeats (median, min, max) and ranks (imbalance).
struct Summaries {
  PhaseList setup, timed, peer;
  int repeats = 0;  // warm-up + timed repeats run (each checked)
};

// What a run reports once its repeats are done, for the record and table writers: the rank's
// entry, the workload's sections, the table, the verdict and the prediction of what ran.
class RunReport {
 public:
  virtual ~RunReport() = default;
  // This rank's entry in the record's rank_info (may record its pages in `placement`; `timed`:
  // its own timed phases) and its own warnings.
  virtual nlohmann::json rank_info(PlacementReport& placement, const PhaseRecorder& timed) = 0;
  virtual std::vector<std::string> rank_warnings(const Communicator& comm, const PlacementReport& placement) const = 0;
  // The workload's own record sections and run-wide warnings: collective, rank 0's are kept.
  virtual void add_sections(RunRecord& run, const Summaries& s) = 0;
  // The shared sections' contents (rank 0); the harness adds the prediction.
  virtual RunSections sections(const Summaries& s) = 0;
  // The human table with `warnings` (rank 0), and the lines for stderr when the run failed.
  virtual std::string table(const nlohmann::json& record, const Summaries& s, const nlohmann::json& warnings) const = 0;
  virtual std::vector<std::string> failure_lines() const = 0;
  // The verdict, the same on every rank.
  virtual bool ok() const = 0;
  // The model's prediction of the configuration that ran (threads resolved, the scheme that
  // ran), the function `scalebench predict <workload>` answers with.
  virtual Prediction predict(const Profile& p, const MachineLayout& m) const = 0;
  // What one repeat computes, for the energy section's efficiency (GFLOP/J, J per 1e9 samples).
  virtual EnergyWork energy_work() const { return {}; }
};

// A workload's steps on one rank, in the order the harness takes them (harness.cpp): ten
// operations; its settings are data (HarnessSettings) and its reporting is the writers' side
// (RunReport).
class RankWorkload {
 public:
  virtual ~RankWorkload() = default;
  // Checks that need no work: options, sizes against the rank count, the --json path (rank 0).
  // Throws UsageError; the harness agrees on it.
  virtual void check(const Communicator& comm) = 0;
  // Checks of what the run needs of the machine (host memory; may be collective); agreed.
  virtual void check_resources(const Communicator& /*comm*/) {}
  // Binds the rank and resolves its threads (setup_rank). Collective.
  virtual RankSetup place(const Communicator& comm) = 0;
  // --dry-run: the resolved configuration and every rank's share on rank 0. Collective.
  virtual void dry_run(const Communicator& comm) = 0;
  // The backend; agreed. Then its set-up, timed into `setup`. Collective.
  virtual void make_backend(const Communicator& comm) = 0;
  virtual void prepare(PhaseRecorder& setup) = 0;
  // One repeat, end to end timed around it by the harness; records its phases. Collective.
  virtual void repeat(PhaseRecorder& rec) = 0;
  // The repeat's check, after its end to end (may record "verify"). Collective.
  virtual void check_repeat(int rep, PhaseRecorder& rec) = 0;
  // After the repeats: final checks and bare peers (into `peer`). Collective.
  virtual void after_repeats(const RepeatLoop& loop, PhaseRecorder& peer) = 0;
  // What the run reports (the writers' side).
  virtual RunReport& report() = 0;
};

struct HarnessResult {
  bool ok = false;        // the verdict, on every rank
  nlohmann::json record;  // the run record (rank 0; null on the others and after --dry-run)
};

// Runs `w` with `settings` on every rank of `comm` as the header comment says. Throws AgreedError
// (usage, resources) before any work; a run that does not verify returns ok = false (exit code 4).
HarnessResult run_rank_harness(RankWorkload& w, const HarnessSettings& settings, const Communicator& comm);

}  // namespace scalebench
