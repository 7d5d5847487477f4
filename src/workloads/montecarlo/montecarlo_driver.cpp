// The sharded Monte Carlo run: [0, samples) is cut into fixed chunks, each rank takes a contiguous
// chunk range and computes its share on its backend; π hits are summed as integers, option sums
// are gathered as fixed-tree nodes and folded on rank 0, so the estimate is the same to the bit
// for any rank count. Every repeat is reduced and must give the same estimate; the last one is
// checked against the closed form.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>

#include <fmt/format.h>

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
#include "scalebench/workloads/model.hpp"
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

}  // namespace

MonteCarloResult run_distributed_montecarlo(const MonteCarloConfig& cfg_in, const Communicator& comm) {
  MonteCarloConfig cfg = cfg_in;
  resolve_defaults(cfg);
  agree_on_configuration(comm, "montecarlo", configuration_fields(cfg));
  agree(comm, [&] {
    validate(cfg);
    if (cfg.json_path && comm.is_root()) check_output_path(*cfg.json_path);
  });
  // Placement (--pin) and threads, as for gemm: a GPU rank binds near its GPU.
  RankSetup placed = setup_rank(comm, cfg.pin, cfg.threads,
                                uses_gpu(cfg.backend) && !cfg.dry_run ? backend_option(cfg.backend) : "", cfg.share_gpu,
                                {"OMP_NUM_THREADS"});
  if (cfg.backend == McBackendKind::cpu) {
    cfg.threads = placed.threads;
    cfg.threads_source = placed.threads_source;
  } else {
    cfg.threads = 1;
    cfg.threads_source = cfg.backend == McBackendKind::naive ? "naive is one thread" : "one host thread drives the GPU";
  }
  const std::int64_t chunks = chunk_count(cfg);
  const ChunkRange mine = rank_chunks(chunks, comm.rank(), comm.size());
  const std::int64_t my_samples =
      cfg.backend == McBackendKind::naive
          ? RowPartition(cfg.samples, comm.size()).block(comm.rank()).count
          : std::max<std::int64_t>(std::min(mine.last * cfg.chunk_size, cfg.samples) - mine.first * cfg.chunk_size, 0);

  MonteCarloResult result;
  if (cfg.dry_run) {
    if (uses_gpu(cfg.backend)) check_gpu_ranks_dry_run(comm, cfg.share_gpu, backend_option(cfg.backend));
    print_dry_run(cfg, comm, chunks);
    result.ok = true;
    return result;
  }

  std::unique_ptr<McKernel> kernel;
  PhaseRecorder setup;
  agree(comm, [&] {
    switch (cfg.backend) {
      case McBackendKind::naive: kernel = make_naive_montecarlo(comm.rank(), comm.size()); break;
      case McBackendKind::cpu: kernel = make_cpu_montecarlo(cfg.threads); break;
      case McBackendKind::cuda: kernel = make_device_montecarlo(cfg, comm); break;
      case McBackendKind::curand: kernel = make_device_library_montecarlo(cfg, comm); break;
    }
  });
  agree(comm, [&] { kernel->prepare(cfg, mine, setup); });
  setup.next_repeat();

  PhaseRecorder rec;
  McOutcome outcome;
  bool repeats_identical = true;
  const RepeatLoop loop("montecarlo", cfg.warmup, cfg.reps, comm, cfg.quiet);
  const int total_reps = loop.total();
  for (int rep = 0; rep < total_reps; ++rep) {
    const double t0 = loop.begin(rep, rec);
    const McPartial part = kernel->run(rec);
    McOutcome o;
    {
      ScopedPhase t(rec, phase::reduce);
      o = reduce_partial(cfg, comm, part);
    }
    rec.add(phase::end_to_end, wall_seconds() - t0);
    rec.next_repeat();
    if (rep > 0 &&
        !(same_bits(o.main.estimate, outcome.main.estimate) && same_bits(o.main.std_error, outcome.main.std_error))) {
      repeats_identical = false;
    }
    outcome = std::move(o);
    loop.end(rep);
  }
  if (!repeats_identical) {
    outcome.failures.push_back(
        "repeats of the same run gave different estimates: the computation is not deterministic");
    outcome.ok = false;
  }

  const PhaseList phases = summarize_phases(rec, comm);
  const PhaseList setup_phases = summarize_phases(setup, comm);
  const nlohmann::json rates = rates_json(cfg, comm.size(), phases);

  // This rank's own rate.
  const double my_compute_s = median_of(rec.samples(phase::compute));
  const nlohmann::json backend_info = kernel->describe();
  nlohmann::json rank_info = {{"threads", cfg.threads},
                              {"chunks", cfg.backend == McBackendKind::naive ? nlohmann::json(nullptr)
                                                                             : nlohmann::json({mine.first, mine.last})},
                              {"samples", my_samples},
                              {"compute_median_s", my_compute_s},
                              {"samples_per_s",
                               my_compute_s > 0 ? static_cast<double>(my_samples) / my_compute_s : 0.0},
                              {"placement", placed.report.to_json()}};
  if (backend_info.contains("gpu")) rank_info["gpu"] = backend_info["gpu"];
  RunRecord run("montecarlo", comm, rank_info,
                rank_warnings(comm, cfg.backend == McBackendKind::cpu ? cfg.threads : 0, "threads", placed.report));
  result.outcome = outcome;
  result.ok = outcome.ok;
  if (!comm.is_root()) {
    result.ok = comm.all(result.ok);
    return result;
  }

  if (cfg.backend == McBackendKind::naive && comm.size() > 1) {
    run.warn("naive: one std::mt19937 per rank seeded with seed + rank, so the estimate changes with the "
             "rank count; use --backend cpu for rank-independent results");
  }
  if (chunks < comm.size() && cfg.backend != McBackendKind::naive) {
    run.warn(fmt::format("{} chunks for {} ranks: {} rank(s) have no work", chunks, comm.size(), comm.size() - chunks));
  }

  nlohmann::json& record = run.json();
  record["partition"] = partition_json(cfg, comm.size(), chunks);
  record["result"] = result_json(cfg, outcome);
  run.finish(setup_phases, phases,
             {config_json(cfg, chunks),
              backend_info,
              rates,
              {{"method", "z-score of the estimate against its closed form"},
               {"checked_quantity", outcome.checked_quantity},
               {"z", outcome.checked.z},
               {"z_limit", kZLimit},
               {"false_alarm_probability", 6.3e-5},
               {"repeats_identical", repeats_identical},
               {"failures", outcome.failures}},
              outcome.ok});
  result.record = record;

  if (!cfg.quiet) {
    const std::string out = human_table(cfg, comm, outcome, setup_phases, phases, rates, chunks, run.warnings());
    std::fputs(out.c_str(), stdout);
    std::fflush(stdout);
  }
  for (const auto& f : outcome.failures) {
    std::fprintf(stderr, "scalebench: error: verification failed: %s\n", f.c_str());
  }
  if (cfg.json_path) write_json_atomic(*cfg.json_path, record);
  result.ok = comm.all(result.ok);
  return result;
}

}  // namespace scalebench
