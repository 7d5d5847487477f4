// The distributed multiply: rank 0 generates A and B; row blocks of A are scattered, B is
// broadcast whole, each rank multiplies its block on its backend, C is gathered to rank 0, and
// every repeat is verified (Freivalds by rows, plus a check that the gathered C is the blocks
// the ranks computed). Phases are timed per repeat; warm-up repeats are dropped.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "algorithms/node_shared.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/base/host.hpp"
#include "scalebench/base/output_file.hpp"
#include "scalebench/base/partition.hpp"
#include "scalebench/base/phases.hpp"
#include "scalebench/base/verify.hpp"
#include "scalebench/cpu/gemm.hpp"
#include "scalebench/cpu/gemm_fill.hpp"
#include "scalebench/gpu/gpu.hpp"
#include "scalebench/mpi/mpi.hpp"
#include "scalebench/mpi/network.hpp"
#include "scalebench/mpi/repeats.hpp"
#include "scalebench/workloads/distributed_gemm.hpp"
#include "scalebench/workloads/model.hpp"
#include "scalebench/workloads/rank_setup.hpp"
#include "scalebench/workloads/run_record.hpp"

namespace scalebench {
namespace {

std::int64_t mem_available_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::int64_t kb = 0;
  std::string unit;
  while (in >> key >> kb >> unit) {
    if (key == "MemAvailable:") return kb * 1024;
  }
  return -1;
}

std::string gib(double bytes) { return fmt::format("{:.2f} GiB", bytes / (1 << 30)); }

// The verdict over all repeats: every repeat must pass; the first failure is the one reported.
void merge(GemmCheck& overall, const GemmCheck& v) {
  overall.ok = overall.ok && v.ok;
  overall.rows_failed = std::max(overall.rows_failed, v.rows_failed);
  overall.worst_ratio = std::max(overall.worst_ratio, v.worst_ratio);
  overall.gather_ok = overall.gather_ok && v.gather_ok;
  if (overall.first_failed_rank < 0 && v.first_failed_rank >= 0) {
    overall.first_failed_rank = v.first_failed_rank;
    overall.first_failed_row = v.first_failed_row;
  }
}

// FNV-1a (64 bits) of C's bytes on rank 0: runs that must give bit-identical C (another algorithm,
// rank count or host count on integer fill) compare this one field.
std::string c_digest(const void* c, std::size_t bytes) {
  std::uint64_t h = 14695981039346656037ull;
  const auto* p = static_cast<const unsigned char*>(c);
  for (std::size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return fmt::format("fnv1a64:{:016x}", h);
}

// The record's "config": the configuration as resolved on every rank.
nlohmann::json config_json(const GemmConfig& cfg, int threads, int generate_threads, const nlohmann::json& grid) {
  const auto& s = cfg.shape;
  nlohmann::json c = {{"m", s.m},
                      {"n", s.n},
                      {"k", s.k},
                      {"precision", to_string(cfg.precision)},
                      {"backend", to_string(cfg.backend)},
                      {"threads_per_rank", threads},
                      {"threads_source", cfg.threads_source},
                      {"reps", cfg.reps},
                      {"warmup", cfg.warmup},
                      {"seed", cfg.seed},
                      {"fill", to_string(cfg.fill)},
                      {"generate_threads", generate_threads},
                      {"verify", to_string(cfg.verify)},
                      {"transport", to_string(cfg.transport)},
                      {"resident", cfg.resident},
                      {"overlap", cfg.overlap},
                      {"algorithm", to_string(cfg.algorithm)},
                      {"distribution", to_string(cfg.distribution)},
                      {"grid", grid},
                      {"mpi_chunk", cfg.mpi_chunk > 0 ? cfg.mpi_chunk : kMaxMpiCount}};
  if (cfg.algorithm == GemmAlgorithm::summa2d) c["panel_width"] = cfg.panel_width;
  return c;
}

// The run's table up to the algorithm's own lines: the configuration, the phases, the rates, the
// peers.
std::string human_table(const GemmConfig& cfg, const Communicator& comm, const nlohmann::json& record,
                        const PhaseList& setup_phases, const PhaseList& phases) {
  const auto& s = cfg.shape;
  const auto& grid = record["distribution"]["grid"];
  const auto& c = record["config"];
  std::string out = fmt::format("scalebench gemm  {}x{}x{} {} {}  {} {}x{}  ranks={} threads/rank={} ({})  reps={} "
                                "warm-up={}\n",
                                s.m, s.n, s.k, to_string(cfg.precision), to_string(cfg.backend),
                                to_string(cfg.algorithm), grid[0].get<int>(), grid[1].get<int>(), comm.size(),
                                c["threads_per_rank"].get<int>(), cfg.threads_source, cfg.reps, cfg.warmup);
  out += phase_table(setup_phases, phases);
  const auto& rates = record["rates"];
  out += fmt::format("compute {:.2f} GFLOP/s, end-to-end {:.2f} GFLOP/s\n", rates["compute_gflops"].get<double>(),
                     rates["end_to_end_gflops"].get<double>());
  const auto& peer = record["peer"];
  if (!peer.is_null()) {
    out += fmt::format("peer: bare {} on the same block {:.6f} s median -> backend/bare = {:.3f}x\n",
                       peer["what"].get<std::string>(), peer[phase::compute]["median_s"].get<double>(),
                       peer["ratio_backend_vs_bare"].get<double>());
    if (peer.contains(phase::pinned_copy)) {
      out += fmt::format("peer: pinned copy {:.2f} GB/s; h2d {:.2f} GB/s -> h2d/pinned = {:.3f}x\n",
                         peer[phase::pinned_copy]["GBps"].get<double>(), peer["h2d_GBps"].get<double>(),
                         peer["ratio_h2d_vs_pinned_copy"].get<double>());
      if (comm.size() > 1) {
        out += fmt::format("peer: every GPU copying at once {:.2f} GB/s; aggregate h2d {:.2f} GB/s -> aggregate "
                           "h2d/pinned = {:.3f}x\n",
                           peer[phase::pinned_copy]["aggregate_GBps"].get<double>(),
                           peer["aggregate_h2d_GBps"].get<double>(),
                           peer["ratio_aggregate_h2d_vs_pinned_copy"].get<double>());
      }
    }
  }
  return out;
}

template <class T>
int run_typed(const GemmConfig& cfg, const Communicator& comm, LocalGemm& backend, DistributedGemm& alg,
              GemmResult& result, nlohmann::json& record_out, PlacementReport& placement) {
  const auto& s = cfg.shape;
  PhaseRecorder setup;
  alg.prepare(setup);
  setup.next_repeat();
  const auto x = freivalds_vector(cfg.seed, s.n);
  const double u = unit_roundoff(cfg.precision);

  PhaseRecorder rec;
  GemmCheck overall;
  const RepeatLoop loop("gemm", cfg.warmup, cfg.reps, comm, cfg.quiet);
  const int total_reps = loop.total();
  for (int rep = 0; rep < total_reps; ++rep) {
    const double t0 = loop.begin(rep, rec);
    alg.multiply(rec);
    rec.add(phase::end_to_end, wall_seconds() - t0);
    GemmCheck v;
    {
      ScopedPhase t(rec, phase::verify);
      v = alg.verify(x);
    }
    rec.next_repeat();
    merge(overall, v);
    loop.end(rep);
  }
  const HostMatrices whole = alg.full();
  const int generate_threads = comm.is_root() && whole.a != nullptr ? host_fill_threads() : 0;

  // --verify full: the last C against a reference product in double, on rank 0.
  nlohmann::json full = nullptr;
  if (cfg.verify == VerifyMode::full) {
    int full_ok = 1;
    double worst = 0;
    if (comm.is_root()) {
      const RowCheck rc = full_check(static_cast<const T*>(whole.a), static_cast<const T*>(whole.b),
                                     static_cast<const T*>(whole.c), s.m, s.n, s.k, u);
      full_ok = rc.rows_failed == 0 ? 1 : 0;
      worst = rc.worst_ratio;
    }
    SCALEBENCH_MPI(MPI_Bcast(&full_ok, 1, MPI_INT, 0, comm.get()));
    overall.ok = overall.ok && full_ok == 1;
    full = {{"ok", full_ok == 1}, {"worst_ratio", worst}, {"tolerance", full_tolerance_text()}};
  }

  // The peers: the bare library call on the same block with the same threads (the algorithm's
  // network peers too).
  nlohmann::json peer = nullptr;
  PhaseRecorder peer_rec;
  alg.time_peers(loop, peer_rec);

  const PhaseList phases = summarize_phases(rec, comm);
  const PhaseList setup_phases = summarize_phases(setup, comm);
  const PhaseList peer_phases = summarize_phases(peer_rec, comm);
  const double flops = 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k);
  const double compute_s = phase_median(phases, phase::compute);
  const double e2e_s = phase_median(phases, phase::end_to_end);
  if (!peer_phases.empty()) {
    const double bare = peer_phases.front().second.median;
    peer = {{"what", alg.peer_call_name()},
            {"on", "the same row block, same threads, same process"},
            {phase::compute, to_json(peer_phases.front().second)},
            {"gflops", bare > 0 ? flops / bare / 1e9 : 0.0},
            {"ratio_backend_vs_bare", compute_s > 0 ? bare / compute_s : 0.0}};
  }

  const int threads = backend.describe().value("threads", 1);
  nlohmann::json rank_info = {{"threads", threads}};
  rank_info.update(alg.rank_info(placement));
  rank_info["placement"] = placement.to_json();
  RunRecord run("gemm", comm, rank_info, rank_warnings(comm, threads, "BLAS threads", placement));
  const bool ok = overall.ok;
  result.ok = ok;
  if (cfg.keep_c && comm.is_root()) {
    const auto* c = static_cast<const T*>(whole.c);
    result.c.assign(c, c + s.m * s.n);
  }
  // Collective: the algorithm's sections (distribution, partition, network, gpu) on rank 0.
  nlohmann::json& record = run.json();
  record["peer"] = peer;
  if (!cfg.choice.is_null()) record["choice"] = cfg.choice;  // `auto`: the alternatives (choice.hpp)
  alg.add_to_record(record, phases, peer_phases);
  if (!comm.is_root()) return RunRecord::exit_code(ok);
  // The algorithm's own warning (--distribution shared that fell back to replicated).
  if (record["distribution"].contains("warning")) run.warn(record["distribution"]["warning"].get<std::string>());

  RunSections sections{config_json(cfg, threads, generate_threads, record["distribution"]["grid"]),
                       backend.describe(),
                       {{"flops_per_multiply", flops},
                        {"compute_gflops", compute_s > 0 ? flops / compute_s / 1e9 : 0.0},
                        {"end_to_end_gflops", e2e_s > 0 ? flops / e2e_s / 1e9 : 0.0}},
                       {{"method", "freivalds"},
                        {"repeats_checked", total_reps},
                        {"rows_failed", overall.rows_failed},
                        {"worst_ratio", overall.worst_ratio},
                        {"gathered_c_matches_blocks", overall.gather_ok},
                        {"tolerance", freivalds_tolerance_text()},
                        {"unit_roundoff", u},
                        {"full", full}},
                       ok};
  sections.verification["c_digest"] =
      whole.c != nullptr ? nlohmann::json(c_digest(whole.c, static_cast<std::size_t>(s.m * s.n) * sizeof(T))) : nullptr;
  if (overall.first_failed_rank >= 0) {
    sections.verification["first_failed"] = {{"rank", overall.first_failed_rank}, {"row", overall.first_failed_row}};
  }
  run.finish(setup_phases, phases, std::move(sections));
  record_out = record;

  if (!cfg.quiet) {
    std::string out = human_table(cfg, comm, record, setup_phases, phases) + alg.table_lines(record);
    out += fmt::format("verification: freivalds {} over {} repeats (worst error/tolerance {:.3g}; gathered C {})\n",
                       ok ? "PASSED" : "FAILED", total_reps, overall.worst_ratio,
                       overall.gather_ok ? "matches the blocks" : "DOES NOT match the blocks");
    if (!full.is_null()) out += fmt::format("verification: full {}\n", full["ok"].get<bool>() ? "PASSED" : "FAILED");
    out += warning_lines(run.warnings());
    std::fputs(out.c_str(), stdout);
    std::fflush(stdout);
  }
  if (!ok) {
    std::fprintf(stderr,
                 "scalebench: error: verification failed: %lld row(s) of C wrong (first: rank %d, row %lld); "
                 "worst error/tolerance %.3g\n",
                 static_cast<long long>(overall.rows_failed), overall.first_failed_rank,
                 static_cast<long long>(overall.first_failed_row), overall.worst_ratio);
  }
  return RunRecord::exit_code(ok);
}

// Host bytes this rank needs for its share under the configured algorithm.
std::int64_t rank_host_bytes(const GemmConfig& cfg, const Communicator& comm) {
  if (cfg.algorithm == GemmAlgorithm::summa2d) {
    return summa_host_bytes(cfg, resolve_grid(cfg, comm.size()), comm.rank());
  }
  if (cfg.distribution == GemmDistribution::shared) return shared_host_bytes(cfg, comm);
  const RowPartition rows(cfg.shape.m, comm.size());
  return host_bytes_per_rank(cfg, rows.block(comm.rank()).count, comm.is_root());
}

// What a rank holds, for the memory lines of --dry-run and the memory error; `fallback`: why
// --distribution shared will run as replicated (shared_windows_refusal), if it will.
std::string held_text(const GemmConfig& cfg, const std::string& fallback) {
  if (cfg.algorithm == GemmAlgorithm::summa2d) {
    return "A_ij + B_ij + C_ij + a panel of A and of B; rank 0 also holds A, B and C";
  }
  if (cfg.distribution == GemmDistribution::shared && fallback.empty()) {
    return fmt::format("one A, B and C per node in shared windows, charged to the ranks whose rows they hold, B to the "
                       "node's leader{}; rank 0's node holds A and C whole",
                       cfg.peer ? ", + peer C_i per rank" : "");
  }
  return fmt::format("A_i + B + C_i{}; rank 0 also holds A and C{}", cfg.peer ? " + peer C_i" : "",
                     fallback.empty() ? "" : ": --distribution shared falls back to replicated: " + fallback);
}

// Why this run's --distribution shared will fall back to replicated (empty: it will not, or it is
// not asked for). Collective.
std::string shared_fallback(const GemmConfig& cfg, const Communicator& comm) {
  const bool shared = cfg.algorithm == GemmAlgorithm::row1d && cfg.distribution == GemmDistribution::shared;
  return shared ? shared_windows_refusal(cfg, comm) : std::string();
}

// Rank r's share in words: its rows (Row1D) or its block of C (Summa2D).
std::string share_text(const GemmConfig& cfg, const Communicator& comm, int r) {
  if (cfg.algorithm == GemmAlgorithm::summa2d) {
    const ProcessGrid g = resolve_grid(cfg, comm.size());
    const RowPartition rows(cfg.shape.m, g.rows), cols(cfg.shape.n, g.cols);
    return fmt::format("grid ({},{}) C block {:>6} x {:<6}", r / g.cols, r % g.cols, rows.block(r / g.cols).count,
                       cols.block(r % g.cols).count);
  }
  return fmt::format("rows {:>8}", RowPartition(cfg.shape.m, comm.size()).block(r).count);
}

void check_algorithm(const GemmConfig& cfg, const Communicator& comm) {
  if (cfg.algorithm == GemmAlgorithm::row1d && cfg.grid_rows > 0 &&
      (cfg.grid_rows != comm.size() || cfg.grid_cols != 1)) {
    // row1d is the P x 1 grid (a row block of A and C per rank); any other --grid is summa2d's.
    throw UsageError(fmt::format("--grid {}x{} needs --algorithm summa2d (row1d runs on {}x1)", cfg.grid_rows,
                                 cfg.grid_cols, comm.size()));
  }
  if (cfg.algorithm == GemmAlgorithm::summa2d) {
    if (cfg.overlap || cfg.resident) {
      // Summa2D broadcasts a panel, then multiplies it: a double-buffered pipeline (panel p+1 in
      // flight while p multiplies) would need a second stream and events in the device layer.
      throw UsageError(fmt::format("--algorithm summa2d has no {} schedule (those are row1d's); drop {} (summa2d "
                                   "keeps its blocks on the GPUs with --transport nccl)",
                                   cfg.overlap ? "--overlap" : "--resident", cfg.overlap ? "--overlap" : "--resident"));
    }
    resolve_grid(cfg, comm.size());
  }
}

}  // namespace

GemmResult run_distributed_gemm(const GemmConfig& cfg_in, const Communicator& comm) {
  GemmConfig cfg = cfg_in;
  const auto& s = cfg.shape;
  std::unique_ptr<LocalGemm> backend;
  agree_on_configuration(comm, "gemm", configuration_fields(cfg));
  agree(comm, [&] {
    validate(cfg);
    check_algorithm(cfg, comm);
    if (cfg.algorithm == GemmAlgorithm::row1d && comm.size() > s.m) {
      throw UsageError(fmt::format("{} ranks but only {} rows of A: every rank needs at least one row; "
                                   "use at most {} ranks or a larger --m/--n",
                                   comm.size(), s.m, s.m));
    }
    if (cfg.json_path && comm.is_root()) check_output_path(*cfg.json_path);
    if (cfg.overlap && cfg.transport == Transport::mpi && comm.size() > 1) {
      throw UsageError(fmt::format("--overlap moves blocks between GPUs with NCCL; with {} ranks add --transport nccl",
                                   comm.size()));
    }
    if (cfg.resident && cfg.verify == VerifyMode::full) {
      throw UsageError("--verify full compares on the host, but --resident keeps A, B and C on the device; "
                       "use --verify freivalds (computed on the device)");
    }
  });
  agree(comm, [&] {
    const std::string fallback = shared_fallback(cfg, comm);  // charged as replicated (rank_host_bytes)
    const std::int64_t mine = rank_host_bytes(cfg, comm);
    const Communicator node = comm.split_shared();
    // Summed as doubles: many ranks' shares may exceed 64 bits together.
    const double node_need = node.sum(static_cast<double>(mine));
    const std::int64_t avail = mem_available_bytes();
    if (avail > 0 && node_need > static_cast<double>(avail)) {
      throw ResourceError(fmt::format("{}x{}x{} {} needs {} of host memory on {} ({}) but only {} is available; use a "
                                      "smaller size or more nodes",
                                      s.m, s.n, s.k, to_string(cfg.precision), gib(node_need), host_name(),
                                      held_text(cfg, fallback), gib(static_cast<double>(avail))));
    }
  });
  // Placement (--pin) and BLAS threads: the rank binds before it allocates, so its buffers are
  // first-touched where it runs. A GPU rank binds near its GPU.
  RankSetup placed = setup_rank(comm, cfg.pin, cfg.threads,
                                cfg.backend == GemmBackendKind::cublas && !cfg.dry_run ? "--backend cublas" : "",
                                cfg.share_gpu);
  cfg.threads = cfg.backend == GemmBackendKind::naive ? 1 : placed.threads;
  cfg.threads_source = cfg.backend == GemmBackendKind::naive ? "naive is one thread" : placed.threads_source;

  GemmResult result;
  if (cfg.dry_run) {
    if (cfg.backend == GemmBackendKind::cublas) check_gpu_ranks_dry_run(comm, cfg.share_gpu, "--backend cublas");
    const std::string fallback = shared_fallback(cfg, comm);
    const std::int64_t mine = rank_host_bytes(cfg, comm);
    const auto per_rank = comm.gather_strings(fmt::format("{} {} {}", comm.rank(), host_name(), mine));
    if (comm.is_root()) {
      std::string out = fmt::format(
          "scalebench gemm --dry-run: nothing is computed\n  C({}x{}) = A({}x{}) * B({}x{})  precision {}  backend {}\n"
          "  ranks {}  threads/rank {} ({})  reps {}  warm-up {}  seed {}  fill {}  verify {}  peer {}\n"
          "  algorithm {}  grid {}{}\n  json {}\n  host memory per rank ({}):\n",
          s.m, s.n, s.m, s.k, s.k, s.n, to_string(cfg.precision), to_string(cfg.backend), comm.size(), cfg.threads,
          cfg.threads_source, cfg.reps, cfg.warmup, cfg.seed, to_string(cfg.fill), to_string(cfg.verify),
          cfg.peer ? "on" : "off", to_string(cfg.algorithm),
          cfg.algorithm == GemmAlgorithm::summa2d ? to_string(resolve_grid(cfg, comm.size()))
                                                  : fmt::format("{}x1", comm.size()),
          cfg.algorithm == GemmAlgorithm::summa2d ? fmt::format("  panel width {}", cfg.panel_width) : std::string(),
          cfg.json_path.value_or("(none)"), held_text(cfg, fallback));
      for (int r = 0; r < comm.size(); ++r) {
        int rank = 0;
        char host[256] = {};
        long long bytes = 0;
        std::sscanf(per_rank[r].c_str(), "%d %255s %lld", &rank, host, &bytes);
        out += fmt::format("    rank {:>4}  {:<20} {}  {}\n", rank, host, share_text(cfg, comm, r),
                           gib(static_cast<double>(bytes)));
      }
      std::fputs(out.c_str(), stdout);
    }
    result.ok = true;
    return result;
  }

  // The local multiply, then the algorithm that distributes the blocks and calls it.
  GpuGemm* gpu = nullptr;
  agree(comm, [&] {
    if (cfg.backend == GemmBackendKind::cublas) {
      auto g = make_gpu_gemm(cfg, comm);
      gpu = g.get();
      backend = std::move(g);
    } else {
      backend = make_cpu_gemm(cfg.backend, cfg.threads);
    }
  });
  const auto alg = make_distributed_gemm(cfg, comm, *backend, gpu);

  nlohmann::json record;
  if (cfg.precision == Precision::fp64) {
    run_typed<double>(cfg, comm, *backend, *alg, result, record, placed.report);
  } else {
    run_typed<float>(cfg, comm, *backend, *alg, result, record, placed.report);
  }
  result.record = std::move(record);
  if (comm.is_root() && cfg.json_path) {
    write_json_atomic(*cfg.json_path, result.record);
  }
  // Every rank learns the verdict (rank 0 may have written the record).
  result.ok = comm.all(result.ok);
  return result;
}

}  // namespace scalebench
