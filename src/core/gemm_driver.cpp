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

#include "core/gemm_gpu_run.hpp"
#include "scalebench/error.hpp"
#include "scalebench/gemm.hpp"
#include "scalebench/gemm_fill.hpp"
#include "scalebench/model.hpp"
#include "scalebench/gpu.hpp"
#include "scalebench/mpi.hpp"
#include "scalebench/network.hpp"
#include "scalebench/partition.hpp"
#include "scalebench/rank_setup.hpp"
#include "scalebench/record.hpp"
#include "scalebench/repeats.hpp"
#include "scalebench/verify.hpp"

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

struct VerifyOutcome {
  bool ok = true;
  std::int64_t rows_failed = 0;
  double worst_ratio = 0;
  bool gather_ok = true;
  int first_failed_rank = -1;
  std::int64_t first_failed_row = -1;  // global row
};

template <class T>
int run_typed(const GemmConfig& cfg, const Communicator& comm, LocalGemm& backend, GemmResult& result,
              nlohmann::json& record, PlacementReport& placement) {
  const auto& s = cfg.shape;
  const RowPartition rows(s.m, comm.size());
  const Block mine = rows.block(comm.rank());
  const auto a_counts = rows.counts_times(s.k), a_displs = rows.offsets_times(s.k);
  const auto c_counts = rows.counts_times(s.n), c_displs = rows.offsets_times(s.n);
  const std::int64_t chunk = cfg.mpi_chunk > 0 ? cfg.mpi_chunk : kMaxMpiCount;

  PhaseRecorder setup;
  // Rank 0's A, B and C are GiBs at benchmark sizes: allocated uninitialised, then written by
  // every thread this rank may use (HostMatrix, gemm_fill.hpp).
  HostMatrix<T> a_full, c_full, b;
  std::vector<T> a_i, c_i, c_peer;
  // --backend cublas: the GPU steps (gemm_gpu_run.hpp). Declared after the host matrices, so
  // that their page-locking ends before they are freed.
  std::optional<GpuGemmRun> gpu_run;
  if (auto* gpu = dynamic_cast<GpuGemm*>(&backend)) gpu_run.emplace(cfg, comm, *gpu, rows);
  const bool host_matrices = !gpu_run || gpu_run->needs_host_matrices();
  const bool host_moves = !gpu_run || gpu_run->moves_through_host();
  int generate_threads = 0;  // rank 0's host generation; 0 when the inputs are made on the device
  if (host_matrices) {
    ScopedPhase t(setup, "generate");
    if (comm.is_root()) {
      // Counter-based (gemm_fill.hpp): the values --resident makes on the device, on every CPU
      // this rank may run on.
      a_full.resize(static_cast<std::size_t>(s.m * s.k));
      c_full.resize(static_cast<std::size_t>(s.m * s.n));
      b.resize(static_cast<std::size_t>(s.k * s.n));
      generate_threads = host_fill_threads();
      fill_zero(c_full.data(), s.m * s.n, generate_threads);
      fill_matrix(a_full.data(), s.m * s.k, 0, gemm_input_key(cfg.seed, GemmInput::a), cfg.fill, cfg.precision,
                  generate_threads);
      fill_matrix(b.data(), s.k * s.n, 0, gemm_input_key(cfg.seed, GemmInput::b), cfg.fill, cfg.precision,
                  generate_threads);
    } else if (host_moves) {
      // B arrives by broadcast (with transport nccl it goes device to device: no host copy).
      b.resize(static_cast<std::size_t>(s.k * s.n));
      fill_zero(b.data(), s.k * s.n, host_fill_threads());
    }
    // Rank 0 keeps its own rows in A and C (MPI_IN_PLACE): no copy of its block, no extra memory.
    if (!comm.is_root()) {
      a_i.assign(static_cast<std::size_t>(mine.count * s.k), T(0));
      c_i.assign(static_cast<std::size_t>(mine.count * s.n), T(0));
    }
    if (cfg.peer && !gpu_run) c_peer.assign(static_cast<std::size_t>(mine.count * s.n), T(0));
  }
  // This rank's rows of A and C: its own buffers, or (rank 0) its rows inside A and C.
  T* a_mine = comm.is_root() && host_matrices ? a_full.data() + mine.offset * s.k : a_i.data();
  T* c_mine = comm.is_root() && host_matrices ? c_full.data() + mine.offset * s.n : c_i.data();
  const GemmShape local{mine.count, s.n, s.k};
  if (gpu_run) {
    if (host_matrices) {
      auto range = [](auto& v) { return std::pair<void*, std::size_t>(v.data(), v.size() * sizeof(T)); };
      gpu_run->pin({range(a_full), range(c_full), range(a_i), range(b), range(c_i)}, setup);
    }
    gpu_run->prepare(local, setup);
  } else {
    agree(comm, [&] { backend.prepare(local, cfg.precision, setup); });
  }
  setup.next_repeat();

  const auto x = freivalds_vector(cfg.seed, s.n);
  std::vector<double> bx, abs_bx;
  const double u = unit_roundoff(cfg.precision);

  PhaseRecorder rec;
  VerifyOutcome overall;
  const RepeatLoop loop("gemm", cfg.warmup, cfg.reps, comm, cfg.quiet);
  const int total_reps = loop.total();
  for (int rep = 0; rep < total_reps; ++rep) {
    const double t0 = loop.begin(rep, rec);
    if (host_moves) {
      ScopedPhase t(rec, "scatter");
      scatterv(a_full.data(), a_counts, a_displs, a_mine, mine.count * s.k, 0, comm, chunk);
    }
    if (host_moves) {
      ScopedPhase t(rec, "broadcast");
      bcast(b.data(), s.k * s.n, 0, comm, chunk);
    }
    if (gpu_run) {
      gpu_run->multiply(a_full.data(), a_mine, b.data(), c_mine, c_full.data(), rec);
    } else {
      backend.multiply(a_mine, b.data(), c_mine, rec);
      if (cfg.inject_error_rank == comm.rank() && mine.count > 0) {
        c_mine[static_cast<std::size_t>((mine.count / 2) * s.n + s.n / 2)] += T(1);  // test hook
      }
    }
    if (host_moves) {
      ScopedPhase t(rec, "gather");
      gatherv(c_mine, mine.count * s.n, c_full.data(), c_counts, c_displs, 0, comm, chunk);
    }
    rec.add("end_to_end", wall_seconds() - t0);

    VerifyOutcome v;
    {
      ScopedPhase t(rec, "verify");
      RowCheck rc;
      int gather_ok = 1;
      if (gpu_run) {
        // The same check computed on each rank's device (gemm_gpu_run.hpp).
        const auto check = gpu_run->verify(x, c_mine, c_full.data());
        rc = check.rows;
        gather_ok = check.gather_ok ? 1 : 0;
      } else {
        if (bx.empty()) b_times_x(b.data(), s.k, s.n, x, bx, abs_bx);
        std::vector<double> cx;
        rc = freivalds_rows(a_mine, c_mine, mine.count, s.n, s.k, x, bx, abs_bx, u, &cx);
        // The gathered C must be exactly the blocks the ranks computed: compare C·x bit for bit.
        std::vector<double> cx_all(comm.is_root() ? static_cast<std::size_t>(s.m) : 0);
        gatherv(cx.data(), mine.count, cx_all.data(), rows.counts(), rows.offsets(), 0, comm, chunk);
        if (comm.is_root()) {
          std::vector<double> cx_full;
          c_times_x(c_full.data(), s.m, s.n, x, cx_full);
          gather_ok = std::memcmp(cx_full.data(), cx_all.data(), cx_full.size() * sizeof(double)) == 0 ? 1 : 0;
        }
        SCALEBENCH_MPI(MPI_Bcast(&gather_ok, 1, MPI_INT, 0, comm.get()));
      }
      v.gather_ok = gather_ok == 1;
      v.rows_failed = comm.sum(rc.rows_failed);
      v.worst_ratio = comm.max(std::isfinite(rc.worst_ratio) ? rc.worst_ratio : 1e300);
      const int my_fail = rc.rows_failed > 0 ? comm.rank() : comm.size();
      int first = comm.size();
      SCALEBENCH_MPI(MPI_Allreduce(&my_fail, &first, 1, MPI_INT, MPI_MIN, comm.get()));
      if (first < comm.size()) {
        std::int64_t row = rc.first_failed_row + mine.offset;
        SCALEBENCH_MPI(MPI_Bcast(&row, 1, MPI_INT64_T, first, comm.get()));
        v.first_failed_rank = first;
        v.first_failed_row = row;
      }
      v.ok = v.rows_failed == 0 && v.gather_ok;
    }
    rec.next_repeat();
    overall.ok = overall.ok && v.ok;
    overall.rows_failed = std::max(overall.rows_failed, v.rows_failed);
    overall.worst_ratio = std::max(overall.worst_ratio, v.worst_ratio);
    overall.gather_ok = overall.gather_ok && v.gather_ok;
    if (overall.first_failed_rank < 0 && v.first_failed_rank >= 0) {
      overall.first_failed_rank = v.first_failed_rank;
      overall.first_failed_row = v.first_failed_row;
    }
    loop.end(rep);
  }

  // --verify full: the last C against a reference product in double, on rank 0.
  nlohmann::json full = nullptr;
  if (cfg.verify == VerifyMode::full) {
    int full_ok = 1;
    double worst = 0;
    if (comm.is_root()) {
      const RowCheck rc = full_check(a_full.data(), b.data(), c_full.data(), s.m, s.n, s.k, u);
      full_ok = rc.rows_failed == 0 ? 1 : 0;
      worst = rc.worst_ratio;
    }
    SCALEBENCH_MPI(MPI_Bcast(&full_ok, 1, MPI_INT, 0, comm.get()));
    overall.ok = overall.ok && full_ok == 1;
    full = {{"ok", full_ok == 1}, {"worst_ratio", worst}, {"tolerance", full_tolerance_text()}};
  }

  // The peer: the bare library call on the same block with the same threads.
  nlohmann::json peer = nullptr;
  PhaseRecorder peer_rec;
  if (cfg.peer && cfg.backend == GemmBackendKind::openblas) {
    for (int rep = 0; rep < total_reps; ++rep) {
      loop.begin(rep, peer_rec);
      peer_rec.add("bare_compute", time_bare_cblas(local, cfg.precision, a_mine, b.data(), c_peer.data()));
      peer_rec.next_repeat();
    }
  }
  if (cfg.peer && gpu_run) gpu_run->time_peers(peer_rec, loop);
  // The network peer: the bare MPI calls of the scatter's and the broadcast's bytes.
  PhaseRecorder net_rec;
  if (cfg.peer && host_moves && comm.size() > 1) {
    time_bare_collectives(loop, comm, net_rec, a_full.data(), a_counts, a_displs, a_mine, mine.count * s.k, b.data(),
                          s.k * s.n);
  }
  const auto net_phases = summarize_phases(net_rec, comm);

  const auto phases = summarize_phases(rec, comm);
  const auto setup_phases = summarize_phases(setup, comm);
  const auto peer_phases = summarize_phases(peer_rec, comm);
  const double flops = 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k);
  auto median_of_phase = [&](const std::string& name) {
    for (const auto& [n, st] : phases) {
      if (n == name) return st.median;
    }
    return 0.0;
  };
  const double compute_s = median_of_phase("compute");
  const double e2e_s = median_of_phase("end_to_end");
  if (!peer_phases.empty()) {
    const double bare = peer_phases.front().second.median;
    const std::string what = gpu_run ? gpu_run->peer_call_name()
                                     : cfg.precision == Precision::fp64 ? "cblas_dgemm" : "cblas_sgemm";
    peer = {{"what", what},
            {"on", "the same row block, same threads, same process"},
            {"compute", to_json(peer_phases.front().second)},
            {"gflops", bare > 0 ? flops / bare / 1e9 : 0.0},
            {"ratio_backend_vs_bare", compute_s > 0 ? bare / compute_s : 0.0}};
    if (gpu_run) gpu_run->add_copy_peer(peer, phases, peer_phases);
  }

  // Warnings: threads beyond the CPUs a rank may use.
  std::string my_warning;
  const auto cpus = allowed_cpus();
  const int threads = backend.describe().value("threads", 1);
  if (static_cast<std::size_t>(threads) > cpus.size()) {
    my_warning = fmt::format("{} BLAS threads on {} allowed core{} (rank {} on {})", threads, cpus.size(),
                             cpus.size() == 1 ? "" : "s", comm.rank(), host_name());
  }
  for (const auto& w : placement.warnings) {
    if (!my_warning.empty()) my_warning.push_back('\n');
    my_warning.append(fmt::format("rank {}: {}", comm.rank(), w));
  }
  const auto warnings_all = comm.gather_strings(my_warning);

  if (a_mine && mine.count > 0) placement.record_buffer("A_i", a_mine, static_cast<std::size_t>(mine.count * s.k) * sizeof(T));
  if (c_mine && mine.count > 0) placement.record_buffer("C_i", c_mine, static_cast<std::size_t>(mine.count * s.n) * sizeof(T));
  if (!b.empty()) placement.record_buffer("B", b.data(), b.size() * sizeof(T));
  nlohmann::json extra = {{"threads", threads}, {"rows", mine.count}, {"row_offset", mine.offset},
                          {"placement", placement.to_json()}};
  if (gpu_run) extra.update(gpu_run->rank_info());
  nlohmann::json ctx = run_context(comm, extra);
  const nlohmann::json gpu_map = gpu_run ? gpu_run->gather_map() : nlohmann::json();
  const bool ok = overall.ok;
  result.ok = ok;
  if (cfg.keep_c && comm.is_root()) result.c.assign(c_full.begin(), c_full.end());
  if (!comm.is_root()) return ok ? 0 : static_cast<int>(ExitCode::verification_failed);

  nlohmann::json warnings = nlohmann::json::array();
  for (const auto& w : warnings_all) {
    std::size_t start = 0;
    while (start < w.size()) {
      const std::size_t end = std::min(w.find('\n', start), w.size());
      if (end > start) warnings.push_back(w.substr(start, end - start));
      start = end + 1;
    }
  }
  record = ctx;
  record["subcommand"] = "gemm";
  record["config"] = {{"m", s.m},
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
                      {"mpi_chunk", chunk}};
  record["backend"] = backend.describe();
  record["partition"] = {{"rows_per_rank", rows.counts()}};
  nlohmann::json ph = nlohmann::json::object();
  for (const auto& [name, st] : setup_phases) ph["setup_" + name] = to_json(st);
  for (const auto& [name, st] : phases) ph[name] = to_json(st);
  record["phases"] = ph;
  record["rates"] = {{"flops_per_multiply", flops},
                     {"compute_gflops", compute_s > 0 ? flops / compute_s / 1e9 : 0.0},
                     {"end_to_end_gflops", e2e_s > 0 ? flops / e2e_s / 1e9 : 0.0}};
  record["peer"] = peer;
  add_node_counts(record);
  record["network"] = gemm_network(rank_hosts(record), a_counts, c_counts, s.k * s.n, sizeof(T), phases, net_phases);
  if (gpu_run) record["gpu"] = gpu_run->record_section(gpu_map, phases);
  record["verification"] = {{"method", "freivalds"},
                            {"ok", ok},
                            {"repeats_checked", total_reps},
                            {"rows_failed", overall.rows_failed},
                            {"worst_ratio", overall.worst_ratio},
                            {"gathered_c_matches_blocks", overall.gather_ok},
                            {"tolerance", freivalds_tolerance_text()},
                            {"unit_roundoff", u},
                            {"full", full}};
  if (overall.first_failed_rank >= 0) {
    record["verification"]["first_failed"] = {{"rank", overall.first_failed_rank}, {"row", overall.first_failed_row}};
  }
  record["ok"] = ok;
  record["status"] = ok ? "ok" : "verification_failed";
  record["exit_code"] = ok ? 0 : static_cast<int>(ExitCode::verification_failed);
  attach_prediction(record, warnings);  // predicted against measured (model.hpp)
  record["warnings"] = warnings;
  record["finished_at"] = utc_now_iso8601();

  if (!cfg.quiet) {
    std::string out = fmt::format("scalebench gemm  {}x{}x{} {} {}  ranks={} threads/rank={} ({})  reps={} warm-up={}\n",
                                  s.m, s.n, s.k, to_string(cfg.precision), to_string(cfg.backend), comm.size(),
                                  threads, cfg.threads_source, cfg.reps, cfg.warmup);
    out += fmt::format("{:<14}{:>12}{:>12}{:>12}{:>12}\n", "phase", "median s", "min s", "max s", "imbalance");
    for (const auto& [name, st] : phases) {
      out += fmt::format("{:<14}{:>12.6f}{:>12.6f}{:>12.6f}{:>11.1f}%\n", name, st.median, st.min, st.max,
                         100.0 * st.imbalance);
    }
    out += fmt::format("compute {:.2f} GFLOP/s, end-to-end {:.2f} GFLOP/s\n", record["rates"]["compute_gflops"].get<double>(),
                       record["rates"]["end_to_end_gflops"].get<double>());
    if (!peer.is_null()) {
      out += fmt::format("peer: bare {} on the same block {:.6f} s median -> backend/bare = {:.3f}x\n",
                         peer["what"].get<std::string>(), peer["compute"]["median_s"].get<double>(),
                         peer["ratio_backend_vs_bare"].get<double>());
      if (peer.contains("pinned_copy")) {
        out += fmt::format("peer: pinned copy {:.2f} GB/s; h2d {:.2f} GB/s -> h2d/pinned = {:.3f}x\n",
                           peer["pinned_copy"]["GBps"].get<double>(), peer["h2d_GBps"].get<double>(),
                           peer["ratio_h2d_vs_pinned_copy"].get<double>());
      }
    }
    if (gpu_run) {
      out += "set-up (once, never in compute):";
      for (const auto& [name, st] : setup_phases) out += fmt::format(" {} {:.3f} s;", name, st.median);
      out += '\n';
      out += gpu_run->table_lines(record["gpu"]);
    }
    out += fmt::format("verification: freivalds {} over {} repeats (worst error/tolerance {:.3g}; gathered C {})\n",
                       ok ? "PASSED" : "FAILED", total_reps, overall.worst_ratio,
                       overall.gather_ok ? "matches the blocks" : "DOES NOT match the blocks");
    if (!full.is_null()) out += fmt::format("verification: full {}\n", full["ok"].get<bool>() ? "PASSED" : "FAILED");
    for (const auto& w : warnings) out += fmt::format("warning: {}\n", w.get<std::string>());
    std::fputs(out.c_str(), stdout);
    std::fflush(stdout);
  }
  if (!ok) {
    std::fprintf(stderr, "scalebench: error: verification failed: %lld row(s) of C wrong (first: rank %d, row %lld); "
                         "worst error/tolerance %.3g\n",
                 static_cast<long long>(overall.rows_failed), overall.first_failed_rank,
                 static_cast<long long>(overall.first_failed_row), overall.worst_ratio);
  }
  return ok ? 0 : static_cast<int>(ExitCode::verification_failed);
}

}  // namespace

GemmResult run_distributed_gemm(const GemmConfig& cfg_in, const Communicator& comm) {
  GemmConfig cfg = cfg_in;
  const auto& s = cfg.shape;
  std::unique_ptr<LocalGemm> backend;
  agree_on_configuration(comm, "gemm", configuration_fields(cfg));
  agree(comm, [&] {
    validate(cfg);
    if (comm.size() > s.m) {
      throw UsageError(fmt::format("{} ranks but only {} rows of A: every rank needs at least one row; "
                                   "use at most {} ranks or a larger --m/--n", comm.size(), s.m, s.m));
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
    const RowPartition rows(s.m, comm.size());
    const std::int64_t mine = host_bytes_per_rank(cfg, rows.block(comm.rank()).count, comm.is_root());
    const Communicator node = comm.split_shared();
    // Summed as doubles: many ranks' shares may exceed 64 bits together.
    const double node_need = node.sum(static_cast<double>(mine));
    const std::int64_t avail = mem_available_bytes();
    if (avail > 0 && node_need > static_cast<double>(avail)) {
      throw ResourceError(fmt::format("{}x{}x{} {} needs {} of host memory on {} (A_i + B + C_i per rank, plus A and C "
                                      "on rank 0) but only {} is available; use a smaller size or more nodes",
                                      s.m, s.n, s.k, to_string(cfg.precision), gib(node_need), host_name(), gib(static_cast<double>(avail))));
    }
  });
  // Placement (--pin) and BLAS threads: the rank binds before it allocates, so its buffers are
  // first-touched where it runs. A GPU rank binds near its GPU.
  RankSetup placed = setup_rank(comm, parse_pin_policy(cfg.pin), cfg.threads,
                                cfg.backend == GemmBackendKind::cublas && !cfg.dry_run ? "--backend cublas" : "",
                                cfg.share_gpu);
  cfg.threads = cfg.backend == GemmBackendKind::naive ? 1 : placed.threads;
  cfg.threads_source = cfg.backend == GemmBackendKind::naive ? "naive is one thread" : placed.threads_source;

  GemmResult result;
  if (cfg.dry_run) {
    if (cfg.backend == GemmBackendKind::cublas) check_gpu_ranks_dry_run(comm, cfg.share_gpu, "--backend cublas");
    const RowPartition rows(s.m, comm.size());
    const std::int64_t mine = host_bytes_per_rank(cfg, rows.block(comm.rank()).count, comm.is_root());
    const auto per_rank = comm.gather_strings(fmt::format("{} {} {}", comm.rank(), host_name(), mine));
    if (comm.is_root()) {
      std::string out = fmt::format(
          "scalebench gemm --dry-run: nothing is computed\n  C({}x{}) = A({}x{}) * B({}x{})  precision {}  backend {}\n"
          "  ranks {}  threads/rank {} ({})  reps {}  warm-up {}  seed {}  fill {}  verify {}  peer {}\n"
          "  json {}\n  host memory per rank (A_i + B + C_i{}; rank 0 also holds A and C):\n",
          s.m, s.n, s.m, s.k, s.k, s.n, to_string(cfg.precision), to_string(cfg.backend), comm.size(), cfg.threads,
          cfg.threads_source, cfg.reps, cfg.warmup, cfg.seed, to_string(cfg.fill), to_string(cfg.verify),
          cfg.peer ? "on" : "off", cfg.json_path.value_or("(none)"), cfg.peer ? " + peer C_i" : "");
      for (int r = 0; r < comm.size(); ++r) {
        int rank = 0;
        char host[256] = {};
        long long bytes = 0;
        std::sscanf(per_rank[r].c_str(), "%d %255s %lld", &rank, host, &bytes);
        out += fmt::format("    rank {:>4}  {:<20} rows {:>8}  {}\n", rank, host, rows.block(r).count, gib(static_cast<double>(bytes)));
      }
      std::fputs(out.c_str(), stdout);
    }
    result.ok = true;
    return result;
  }

  agree(comm, [&] {
    backend = cfg.backend == GemmBackendKind::cublas ? make_cublas_gemm(cfg, comm) : make_cpu_gemm(cfg.backend, cfg.threads);
  });

  nlohmann::json record;
  if (cfg.precision == Precision::fp64) {
    run_typed<double>(cfg, comm, *backend, result, record, placed.report);
  } else {
    run_typed<float>(cfg, comm, *backend, result, record, placed.report);
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
