// The sharded Monte Carlo run: [0, samples) is cut into fixed chunks, each rank takes a contiguous
// chunk range and computes its share on its backend; π hits are summed as integers, option sums
// are gathered as fixed-tree nodes and folded on rank 0, so the estimate is the same to the bit
// for any rank count. Every repeat is reduced and must give the same estimate; the last one is
// checked against the closed form. A user of the per-rank harness (harness.hpp).
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>

#include <fmt/format.h>

#include "harness.hpp"
#include "montecarlo/gpu_montecarlo.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/base/host.hpp"
#include "scalebench/base/output_file.hpp"
#include "scalebench/base/partition.hpp"
#include "scalebench/base/phases.hpp"
#include "scalebench/cpu/montecarlo.hpp"
#include "scalebench/gpu/gpu.hpp"
#include "scalebench/mpi/mpi.hpp"
#include "scalebench/mpi/network.hpp"
#include "scalebench/mpi/repeats.hpp"
#include "scalebench/workloads/distributed_montecarlo.hpp"
#include "scalebench/workloads/model.hpp"
#include "scalebench/workloads/prediction.hpp"
#include "scalebench/workloads/rank_setup.hpp"
#include "scalebench/workloads/run_record.hpp"

namespace scalebench {
namespace {

McOutcome reduce_partial(const MonteCarloConfig& cfg, const Communicator& comm, const McPartial& part) {
  if (cfg.problem == McProblem::pi) return estimate_pi(comm.sum(part.hits), cfg.samples);
  McSums total;
  if (cfg.backend == McBackendKind::naive || cfg.backend == McBackendKind::curand) {
    // The newcomer's reduction: MPI sums doubles in whatever order it likes.
    for (int k = 0; k < kSumCount; ++k) total.v[k] = comm.sum(part.plain.v[k]);
  } else {
    const auto gathered = comm.gather_strings(serialize_nodes(part.nodes));
    if (comm.is_root()) {
      ChunkTree tree;
      for (const auto& bytes : gathered) {
        for (const auto& node : deserialize_nodes(bytes)) tree.push(node);
      }
      total = tree.total();
    }
    bcast(total.v.data(), kSumCount, 0, comm);
  }
  return estimate_option(cfg, total, cfg.samples);
}

// The option that asked for a GPU, for messages ("--backend curand").
std::string backend_option(McBackendKind b) { return "--backend " + to_string(b); }

bool same_bits(double a, double b) { return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b); }

nlohmann::json estimate_json(const McEstimate& e) {
  return {{"estimate", e.estimate},
          {"std_error", e.std_error},
          {"ci95", {e.estimate - kZ95 * e.std_error, e.estimate + kZ95 * e.std_error}},
          {"closed_form", e.closed_form},
          {"z", e.z}};
}

nlohmann::json config_json(const MonteCarloConfig& cfg, std::int64_t chunks) {
  nlohmann::json c = {{"problem", to_string(cfg.problem)},
                      {"backend", to_string(cfg.backend)},
                      {"samples", cfg.samples},
                      {"chunk_size", cfg.chunk_size},
                      {"chunks", chunks},
                      {"seed", cfg.seed},
                      {"threads_per_rank", cfg.threads},
                      {"threads_source", cfg.threads_source},
                      {"reps", cfg.reps},
                      {"warmup", cfg.warmup},
                      {"share_gpu", cfg.share_gpu}};
  if (cfg.problem != McProblem::pi) {
    const auto& m = cfg.market;
    c["option"] = to_string(cfg.option);
    c["spot"] = m.spot;
    c["strike"] = m.strike;
    c["rate"] = m.rate;
    c["sigma"] = m.sigma;
    c["maturity"] = m.maturity;
  }
  if (cfg.problem == McProblem::asian) {
    c["steps"] = cfg.steps;
    c["control_variate"] = to_string(cfg.control_variate);
  }
  return c;
}

// The record's "partition": chunks and samples per rank (naive ignores chunks: an even split).
nlohmann::json partition_json(const MonteCarloConfig& cfg, int ranks, std::int64_t chunks) {
  if (cfg.backend == McBackendKind::naive) {
    return {{"chunks_per_rank", nullptr}, {"samples_per_rank", RowPartition(cfg.samples, ranks).counts()}};
  }
  std::vector<std::int64_t> chunks_per_rank, samples_per_rank;
  for (int r = 0; r < ranks; ++r) {
    const ChunkRange cr = rank_chunks(chunks, r, ranks);
    chunks_per_rank.push_back(cr.last - cr.first);
    samples_per_rank.push_back(
        std::max<std::int64_t>(std::min(cr.last * cfg.chunk_size, cfg.samples) - cr.first * cfg.chunk_size, 0));
  }
  return {{"chunks_per_rank", chunks_per_rank}, {"samples_per_rank", samples_per_rank}};
}

// The record's "rates": samples per second over compute (in all, per rank, per core on CPUs),
// end to end, and normals per second for Asian paths.
nlohmann::json rates_json(const MonteCarloConfig& cfg, int ranks, const PhaseList& phases) {
  const double compute_s = phase_median(phases, phase::compute);
  const double e2e_s = phase_median(phases, phase::end_to_end);
  const auto n = static_cast<double>(cfg.samples);
  nlohmann::json rates = {{"samples_per_s", compute_s > 0 ? n / compute_s : 0.0},
                          {"samples_per_s_per_rank", compute_s > 0 ? n / compute_s / ranks : 0.0},
                          {"end_to_end_samples_per_s", e2e_s > 0 ? n / e2e_s : 0.0}};
  if (!uses_gpu(cfg.backend)) {
    rates["samples_per_s_per_core"] = compute_s > 0 ? n / compute_s / (ranks * cfg.threads) : 0.0;
  }
  if (cfg.problem == McProblem::asian) rates["normals_per_s"] = compute_s > 0 ? n * cfg.steps / compute_s : 0.0;
  return rates;
}

// The record's "result": the estimate, its quantity, and for Asian options the checked geometric
// estimate and the control variate's effect.
nlohmann::json result_json(const MonteCarloConfig& cfg, const McOutcome& outcome) {
  nlohmann::json res = estimate_json(outcome.main);
  res["samples"] = cfg.samples;
  res["quantity"] = cfg.problem == McProblem::pi ? "pi"
                    : cfg.problem == McProblem::european
                        ? fmt::format("European {} price", to_string(cfg.option))
                        : fmt::format("arithmetic-average Asian {} price", to_string(cfg.option));
  if (cfg.problem == McProblem::asian) {
    res["closed_form_of"] = outcome.checked_quantity;
    res["geometric"] = estimate_json(outcome.checked);
    if (outcome.plain) {
      res["control_variate"] = {{"kind", "geometric"},
                                {"beta", outcome.cv_beta},
                                {"without", estimate_json(*outcome.plain)},
                                {"std_error_ratio",
                                 outcome.main.std_error > 0 ? outcome.plain->std_error / outcome.main.std_error : 0.0}};
    }
  }
  return res;
}

std::string problem_title(const MonteCarloConfig& cfg) {
  const auto& m = cfg.market;
  switch (cfg.problem) {
    case McProblem::pi: return "pi (quarter-circle hits)";
    case McProblem::european:
      return fmt::format("European {} S={} K={} r={} sigma={} T={}", to_string(cfg.option), m.spot, m.strike, m.rate,
                         m.sigma, m.maturity);
    case McProblem::asian:
      return fmt::format("arithmetic Asian {} S={} K={} r={} sigma={} T={} steps={} control variate {}",
                         to_string(cfg.option), m.spot, m.strike, m.rate, m.sigma, m.maturity, cfg.steps,
                         to_string(cfg.control_variate));
  }
  return "?";
}

void print_dry_run(const MonteCarloConfig& cfg, const Communicator& comm, std::int64_t chunks) {
  const auto per_rank = comm.gather_strings(host_name());
  if (!comm.is_root()) return;
  std::string out = fmt::format(
      "scalebench montecarlo --dry-run: nothing is computed\n  {}\n  backend {}  samples {}  {} chunks of {}  seed {}\n"
      "  ranks {}  threads/rank {} ({})  reps {}  warm-up {}\n  json {}\n  chunks per rank:\n",
      problem_title(cfg), to_string(cfg.backend), cfg.samples, chunks, cfg.chunk_size, cfg.seed, comm.size(),
      cfg.threads, cfg.threads_source, cfg.reps, cfg.warmup, cfg.json_path.value_or("(none)"));
  for (int r = 0; r < comm.size(); ++r) {
    const ChunkRange cr = rank_chunks(chunks, r, comm.size());
    const std::int64_t first = cr.first * cfg.chunk_size, last = std::min(cr.last * cfg.chunk_size, cfg.samples);
    out += fmt::format("    rank {:>4}  {:<20} chunks [{}, {})  samples {}\n", r, per_rank[r], cr.first, cr.last,
                       std::max<std::int64_t>(last - first, 0));
  }
  std::fputs(out.c_str(), stdout);
  std::fflush(stdout);
}

std::string human_table(const MonteCarloConfig& cfg, const Communicator& comm, const McOutcome& o,
                        const PhaseList& setup_phases, const PhaseList& phases, const nlohmann::json& rates,
                        std::int64_t chunks, const nlohmann::json& warnings) {
  std::string out = fmt::format("scalebench montecarlo  {}\n  backend {}  samples {}  {} chunks of {}  ranks {}  "
                                "threads/rank {} ({})  reps {}  warm-up {}  seed {}\n",
                                problem_title(cfg), to_string(cfg.backend), cfg.samples, chunks, cfg.chunk_size,
                                comm.size(), cfg.threads, cfg.threads_source, cfg.reps, cfg.warmup, cfg.seed);
  const auto line = [](const char* what, const McEstimate& e) {
    return fmt::format("{:<22}{:.10f} +- {:.3g} (std error)  95% CI [{:.10f}, {:.10f}]\n", what, e.estimate,
                       e.std_error, e.estimate - kZ95 * e.std_error, e.estimate + kZ95 * e.std_error);
  };
  out += line("estimate", o.main);
  if (o.plain) {
    out += line("without control var.", *o.plain);
    out += fmt::format("{:<22}std error {:.1f}x smaller (beta {:.4f})\n", "control variate",
                       o.main.std_error > 0 ? o.plain->std_error / o.main.std_error : 0.0, o.cv_beta);
  }
  if (cfg.problem == McProblem::asian) out += line("geometric (check)", o.checked);
  out += fmt::format("{:<22}{:.10f} ({})  z = {:.2f}  verification {} (|z| <= {})\n", "closed form",
                     o.checked.closed_form, o.checked_quantity, o.checked.z, o.ok ? "PASSED" : "FAILED", kZLimit);
  out += phase_table(setup_phases, phases);
  out += fmt::format("compute {:.4g} samples/s ({:.4g} per rank", rates["samples_per_s"].get<double>(),
                     rates["samples_per_s_per_rank"].get<double>());
  if (rates.contains("samples_per_s_per_core")) {
    out += fmt::format(", {:.4g} per core", rates["samples_per_s_per_core"].get<double>());
  }
  out += fmt::format("), end-to-end {:.4g} samples/s\n", rates["end_to_end_samples_per_s"].get<double>());
  out += warning_lines(warnings);
  return out;
}

// The samples of this rank's share (naive ignores chunks: an even split).
std::int64_t rank_samples(const MonteCarloConfig& cfg, const ChunkRange& mine, int rank, int ranks) {
  if (cfg.backend == McBackendKind::naive) return RowPartition(cfg.samples, ranks).block(rank).count;
  return std::max<std::int64_t>(std::min(mine.last * cfg.chunk_size, cfg.samples) - mine.first * cfg.chunk_size, 0);
}

}  // namespace

// The prediction `scalebench predict montecarlo` answers with (montecarlo_command.cpp).
PredictedWorkload montecarlo_prediction(const MonteCarloConfig& cfg, const Profile& p, const MachineLayout& m);

namespace {

// The run of one Monte Carlo configuration on this rank, as the harness asks for it.
class MonteCarloRun final : public RankWorkload, public RunReport {
 public:
  MonteCarloRun(const MonteCarloConfig& cfg, const Communicator& comm) : cfg_(cfg), comm_(comm) {
    resolve_defaults(cfg_);
  }

  HarnessSettings settings() const {
    return {"montecarlo", cfg_.warmup, cfg_.reps,      cfg_.quiet,
            cfg_.dry_run, false,       cfg_.json_path, scalebench::configuration_fields(cfg_)};
  }
  RunReport& report() override { return *this; }
  void check(const Communicator& comm) override {
    validate(cfg_);
    if (cfg_.json_path && comm.is_root()) check_output_path(*cfg_.json_path);
  }

  // Placement (--pin) and threads, as for gemm: a GPU rank binds near its GPU.
  RankSetup place(const Communicator& comm) override {
    RankSetup placed = setup_rank(comm, cfg_.pin, cfg_.threads,
                                  uses_gpu(cfg_.backend) && !cfg_.dry_run ? backend_option(cfg_.backend) : "",
                                  cfg_.share_gpu, {"OMP_NUM_THREADS"});
    if (cfg_.backend == McBackendKind::cpu) {
      cfg_.threads = placed.threads;
      cfg_.threads_source = placed.threads_source;
    } else {
      cfg_.threads = 1;
      cfg_.threads_source = cfg_.backend == McBackendKind::naive ? "naive is one thread"
                                                                 : "one host thread drives the GPU";
    }
    chunks_ = chunk_count(cfg_);
    mine_ = rank_chunks(chunks_, comm.rank(), comm.size());
    my_samples_ = rank_samples(cfg_, mine_, comm.rank(), comm.size());
    return placed;
  }

  void dry_run(const Communicator& comm) override {
    if (uses_gpu(cfg_.backend)) check_gpu_ranks_dry_run(comm, cfg_.share_gpu, backend_option(cfg_.backend));
    print_dry_run(cfg_, comm, chunks_);
  }

  void make_backend(const Communicator& comm) override {
    switch (cfg_.backend) {
      case McBackendKind::naive: kernel_ = make_naive_montecarlo(comm.rank(), comm.size()); break;
      case McBackendKind::cpu: kernel_ = make_cpu_montecarlo(cfg_.threads); break;
      case McBackendKind::cuda: kernel_ = make_gpu_montecarlo(cfg_, comm); break;
      case McBackendKind::curand: kernel_ = make_gpu_library_montecarlo(cfg_, comm); break;
    }
  }
  void prepare(PhaseRecorder& setup) override {
    agree(comm_, [&] { kernel_->prepare(cfg_, mine_, setup); });
  }

  // One estimate: this rank's share, then the reduction to the estimate on every rank.
  void repeat(PhaseRecorder& rec) override {
    const McPartial part = kernel_->run(rec);
    ScopedPhase t(rec, phase::reduce);
    last_ = reduce_partial(cfg_, comm_, part);
  }
  // Every repeat must give the estimate of the first to the bit.
  void check_repeat(int rep, PhaseRecorder& /*rec*/) override {
    if (rep > 0 && !(same_bits(last_.main.estimate, outcome_.main.estimate) &&
                     same_bits(last_.main.std_error, outcome_.main.std_error))) {
      repeats_identical_ = false;
    }
    outcome_ = std::move(last_);
  }
  void after_repeats(const RepeatLoop& /*loop*/, PhaseRecorder& rec) override;

  nlohmann::json rank_info(PlacementReport& placement, const PhaseRecorder& timed) override;
  std::vector<std::string> rank_warnings(const Communicator& comm, const PlacementReport& placement) const override {
    return scalebench::rank_warnings(comm, cfg_.backend == McBackendKind::cpu ? cfg_.threads : 0, "threads", placement);
  }
  void add_sections(RunRecord& run, const Summaries& s) override;
  RunSections sections(const Summaries& s) override;
  std::string table(const nlohmann::json& /*record*/, const Summaries& s,
                    const nlohmann::json& warnings) const override {
    return human_table(cfg_, comm_, outcome_, s.setup, s.timed, rates_json(cfg_, comm_.size(), s.timed), chunks_,
                       warnings);
  }
  std::vector<std::string> failure_lines() const override {
    std::vector<std::string> out;
    for (const auto& f : outcome_.failures) out.push_back("verification failed: " + f);
    return out;
  }
  bool ok() const override { return outcome_.ok; }
  EnergyWork energy_work() const override { return {"1e9 samples", static_cast<double>(cfg_.samples) / 1e9}; }
  Prediction predict(const Profile& p, const MachineLayout& m) const override {
    return montecarlo_prediction(cfg_, p, m).here(m);
  }
  const McOutcome& outcome() const noexcept { return outcome_; }

 private:
  MonteCarloConfig cfg_;
  const Communicator& comm_;
  std::int64_t chunks_ = 0, my_samples_ = 0;
  ChunkRange mine_{};
  std::unique_ptr<McKernel> kernel_;
  McOutcome last_, outcome_;
  bool repeats_identical_ = true;
};

void MonteCarloRun::after_repeats(const RepeatLoop& /*loop*/, PhaseRecorder& /*peer*/) {
  if (!repeats_identical_) {
    outcome_.failures.push_back(
        "repeats of the same run gave different estimates: the computation is not deterministic");
    outcome_.ok = false;
  }
}

// This rank's own rate.
nlohmann::json MonteCarloRun::rank_info(PlacementReport& placement, const PhaseRecorder& timed) {
  const double my_compute_s = median_of(timed.samples(phase::compute));
  const nlohmann::json backend_info = kernel_->describe();
  nlohmann::json info = {{"threads", cfg_.threads},
                         {"chunks", cfg_.backend == McBackendKind::naive ? nlohmann::json(nullptr)
                                                                         : nlohmann::json({mine_.first, mine_.last})},
                         {"samples", my_samples_},
                         {"compute_median_s", my_compute_s},
                         {"samples_per_s", my_compute_s > 0 ? static_cast<double>(my_samples_) / my_compute_s : 0.0},
                         {"placement", placement.to_json()}};
  if (backend_info.contains("gpu")) info["gpu"] = backend_info["gpu"];
  return info;
}

// Rank 0: the run-wide warnings, the partition and the result.
void MonteCarloRun::add_sections(RunRecord& run, const Summaries& /*s*/) {
  if (!comm_.is_root()) return;
  if (cfg_.backend == McBackendKind::naive && comm_.size() > 1) {
    run.warn("naive: one std::mt19937 per rank seeded with seed + rank, so the estimate changes with the "
             "rank count; use --backend cpu for rank-independent results");
  }
  if (chunks_ < comm_.size() && cfg_.backend != McBackendKind::naive) {
    run.warn(
        fmt::format("{} chunks for {} ranks: {} rank(s) have no work", chunks_, comm_.size(), comm_.size() - chunks_));
  }
  nlohmann::json& record = run.json();
  record["partition"] = partition_json(cfg_, comm_.size(), chunks_);
  record["result"] = result_json(cfg_, outcome_);
}

RunSections MonteCarloRun::sections(const Summaries& s) {
  return {config_json(cfg_, chunks_),
          kernel_->describe(),
          rates_json(cfg_, comm_.size(), s.timed),
          {{"method", "z-score of the estimate against its closed form"},
           {"checked_quantity", outcome_.checked_quantity},
           {"z", outcome_.checked.z},
           {"z_limit", kZLimit},
           {"false_alarm_probability", 6.3e-5},
           {"repeats_identical", repeats_identical_},
           {"failures", outcome_.failures}},
          outcome_.ok,
          {}};
}

}  // namespace

MonteCarloResult run_distributed_montecarlo(const MonteCarloConfig& cfg, const Communicator& comm) {
  MonteCarloRun run(cfg, comm);
  HarnessResult h = run_rank_harness(run, run.settings(), comm);
  MonteCarloResult result;
  result.ok = h.ok;
  result.outcome = run.outcome();
  result.record = std::move(h.record);
  return result;
}

}  // namespace scalebench
