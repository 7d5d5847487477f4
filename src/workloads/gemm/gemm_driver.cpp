// The distributed multiply as a user of the per-rank harness (harness.hpp): rank 0 generates A
// and B, the algorithm (distributed_gemm.hpp, described by algorithm_description.hpp) moves the
// blocks and multiplies them on the backend, C is gathered to rank 0, and every repeat is
// verified (Freivalds by rows, plus a check that the gathered C is the blocks the ranks computed).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "gemm/algorithms/algorithm_description.hpp"
#include "gemm/device_gemm.hpp"
#include "gemm/gemm_bound.hpp"
#include "gemm/scalapack_peer_section.hpp"
#include "harness.hpp"
#include "scalebench/base/digest.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/base/host.hpp"
#include "scalebench/base/output_file.hpp"
#include "scalebench/base/partition.hpp"
#include "scalebench/base/phases.hpp"
#include "scalebench/base/verify.hpp"
#include "scalebench/cpu/gemm.hpp"
#include "scalebench/gpu/gpu.hpp"
#include "scalebench/mpi/mpi.hpp"
#include "scalebench/mpi/network.hpp"
#include "scalebench/mpi/repeats.hpp"
#include "scalebench/problem/gemm_fill.hpp"
#include "scalebench/workloads/gemm/distributed_gemm.hpp"
#include "scalebench/workloads/model.hpp"
#include "scalebench/workloads/prediction.hpp"
#include "scalebench/workloads/rank_setup.hpp"
#include "scalebench/workloads/run_record.hpp"

namespace scalebench {
namespace {

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

// The record's "config": the configuration as resolved on every rank.
nlohmann::json config_json(const GemmConfig& cfg, const GemmTestHooks& hooks, int threads, int generate_threads,
                           const nlohmann::json& grid) {
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
                      {"peer_library", to_string(cfg.peer_library)},
                      {"grid", grid},
                      {"mpi_chunk", hooks.mpi_chunk > 0 ? hooks.mpi_chunk : kMaxMpiCount}};
  describe_algorithm(cfg).add_config(cfg, c);
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

}  // namespace

// The prediction `scalebench predict gemm` answers with (gemm_command.cpp).
PredictedWorkload gemm_prediction(const GemmConfig& cfg, const Profile& p, const MachineLayout& m);

namespace {

// The verification lines of the table and the failure line for stderr.
std::string verification_lines(const GemmCheck& overall, int repeats, const nlohmann::json& full) {
  std::string out =
      fmt::format("verification: freivalds {} over {} repeats (worst error/tolerance {:.3g}; gathered C {})\n",
                  overall.ok ? "PASSED" : "FAILED", repeats, overall.worst_ratio,
                  overall.gather_ok ? "matches the blocks" : "DOES NOT match the blocks");
  if (!full.is_null()) out += fmt::format("verification: full {}\n", full["ok"].get<bool>() ? "PASSED" : "FAILED");
  return out;
}

// --verify full: the last C against a reference product in double, on rank 0. Collective.
template <class T>
nlohmann::json full_verification(const GemmConfig& cfg, const Communicator& comm, const HostMatrices& whole) {
  const auto& s = cfg.shape;
  int full_ok = 1;
  double worst = 0;
  if (comm.is_root()) {
    const RowCheck rc = full_check(static_cast<const T*>(whole.a), static_cast<const T*>(whole.b),
                                   static_cast<const T*>(whole.c), s.m, s.n, s.k, unit_roundoff(cfg.precision),
                                   host_threads());
    full_ok = rc.rows_failed == 0 ? 1 : 0;
    worst = rc.worst_ratio;
  }
  SCALEBENCH_MPI(MPI_Bcast(&full_ok, 1, MPI_INT, 0, comm.get()));
  return {{"ok", full_ok == 1}, {"worst_ratio", worst}, {"tolerance", full_tolerance_text()}};
}

template <class T>
std::vector<double> copy_of_c(const HostMatrices& whole, const GemmShape& s) {
  const auto* c = static_cast<const T*>(whole.c);
  return {c, c + s.m * s.n};
}

// The run of one gemm configuration on this rank, as the harness asks for it.
class GemmRun final : public RankWorkload, public RunReport {
 public:
  GemmRun(const GemmConfig& cfg, const GemmTestHooks& hooks, const Communicator& comm, bool agreed)
      : cfg_(cfg), hooks_(hooks), comm_(comm), alg_desc_(describe_algorithm(cfg)), agreed_(agreed) {}

  HarnessSettings settings() const {
    return {"gemm",         cfg_.warmup,
            cfg_.reps,      cfg_.quiet,
            cfg_.dry_run,   agreed_,
            cfg_.json_path, scalebench::configuration_fields(cfg_) + test_hook_fields(hooks_)};
  }
  RunReport& report() override { return *this; }

  void check(const Communicator& comm) override {
    check_gemm_options(cfg_, comm.size());
    if (cfg_.json_path && comm.is_root()) check_output_path(*cfg_.json_path);
    check_scalapack_peer_run(cfg_, alg_desc_.grid(cfg_, comm.size()));
  }

  // The node's host memory against what its ranks need; the shared windows' refusal is asked
  // once here and kept (the memory charged and --dry-run's words follow it).
  void check_resources(const Communicator& comm) override {
    const auto& s = cfg_.shape;
    fallback_ = alg_desc_.shared_fallback(cfg_, comm);
    host_bytes_ = alg_desc_.host_bytes(cfg_, comm, fallback_) +
                  scalapack_peer_host_bytes(cfg_, comm.size(), comm.rank());
    const Communicator& node = comm.node();
    // Summed as doubles: many ranks' shares may exceed 64 bits together.
    const double node_need = node.sum(static_cast<double>(host_bytes_));
    const std::int64_t avail = memory_available_bytes();
    if (avail > 0 && node_need > static_cast<double>(avail)) {
      throw ResourceError(fmt::format("{}x{}x{} {} needs {} of host memory on {} ({}) but only {} is available; use a "
                                      "smaller --n (--m, --k) or more nodes",
                                      s.m, s.n, s.k, to_string(cfg_.precision), gib(node_need), host_name(),
                                      alg_desc_.held_text(cfg_, fallback_), gib(static_cast<double>(avail))));
    }
  }

  // Placement (--pin) and BLAS threads: the rank binds before it allocates, so its buffers are
  // first-touched where it runs. A GPU rank binds near its GPU.
  RankSetup place(const Communicator& comm) override {
    const bool gpu = cfg_.backend == GemmBackendKind::cublas;
    RankSetup placed = setup_rank(comm, cfg_.pin, cfg_.threads, gpu && !cfg_.dry_run ? "--backend cublas" : "",
                                  cfg_.share_gpu);
    const bool naive = cfg_.backend == GemmBackendKind::naive;
    cfg_.threads = naive ? 1 : placed.threads;
    cfg_.threads_source = naive ? "naive is one thread" : placed.threads_source;
    return placed;
  }

  void dry_run(const Communicator& comm) override;

  // The local multiply; the algorithm that distributes the blocks and calls it is made in prepare.
  void make_backend(const Communicator& comm) override {
    if (cfg_.backend == GemmBackendKind::cublas) {
      auto g = make_device_gemm(cfg_, comm);
      gpu_ = g.get();
      backend_ = std::move(g);
    } else {
      backend_ = make_cpu_gemm(cfg_.backend, cfg_.threads);
    }
  }

  void prepare(PhaseRecorder& setup) override {
    alg_ = make_distributed_gemm(cfg_, hooks_, comm_, *backend_, gpu_);
    alg_->prepare(setup);
    x_ = freivalds_vector(cfg_.seed, cfg_.shape.n);
    threads_ = backend_->describe().value("threads", 1);
  }

  void repeat(PhaseRecorder& rec) override { alg_->multiply(rec); }

  void check_repeat(int /*rep*/, PhaseRecorder& rec) override {
    GemmCheck v;
    {
      ScopedPhase t(rec, phase::verify);
      v = alg_->verify(x_);
      if (hooks_.check_delay_seconds > 0) {
        std::this_thread::sleep_for(std::chrono::duration<double>(hooks_.check_delay_seconds));
      }
    }
    merge(overall_, v);
  }

  // --verify full on the last C, then the peers: the bare library call on the same block with
  // the same threads (the algorithm's network peers too).
  void after_repeats(const RepeatLoop& loop, PhaseRecorder& peer) override {
    const HostMatrices whole = alg_->full();
    generate_threads_ = comm_.is_root() && whole.a != nullptr ? host_threads() : 0;
    const bool fp64 = cfg_.precision == Precision::fp64;
    if (cfg_.verify == VerifyMode::full) {
      full_ = fp64 ? full_verification<double>(cfg_, comm_, whole) : full_verification<float>(cfg_, comm_, whole);
      overall_.ok = overall_.ok && full_["ok"].get<bool>();
    }
    if (hooks_.keep_c && comm_.is_root())
      c_ = fp64 ? copy_of_c<double>(whole, cfg_.shape) : copy_of_c<float>(whole, cfg_.shape);
    if (comm_.is_root() && whole.c != nullptr) {
      c_digest_ = bytes_digest(whole.c,
                               static_cast<std::size_t>(cfg_.shape.m * cfg_.shape.n) *
                                   host_element_bytes(cfg_.precision),
                               host_threads());
    }
    alg_->time_peers(loop, peer);
    if (cfg_.peer_library == GemmPeerLibrary::scalapack) {
      scalapack_ = run_scalapack_peer(cfg_, hooks_, comm_, whole, alg_desc_.grid(cfg_, comm_.size()), x_);
    }
  }

  nlohmann::json rank_info(PlacementReport& placement, const PhaseRecorder& /*timed*/) override {
    nlohmann::json info = {{"threads", threads_}};
    info.update(alg_->rank_info(placement));
    info["placement"] = placement.to_json();
    return info;
  }
  std::vector<std::string> rank_warnings(const Communicator& comm, const PlacementReport& placement) const override {
    return scalebench::rank_warnings(comm, threads_, "BLAS threads", placement);
  }

  void add_sections(RunRecord& run, const Summaries& s) override;
  RunSections sections(const Summaries& s) override;

  std::string table(const nlohmann::json& record, const Summaries& s, const nlohmann::json& warnings) const override {
    return human_table(cfg_, comm_, record, s.setup, s.timed) + alg_->table_lines(record) +
           comm_bound_lines(record["comm_bound"]) + scalapack_peer_lines(record) +
           verification_lines(overall_, s.repeats, full_) + warning_lines(warnings);
  }

  std::vector<std::string> failure_lines() const override {
    std::vector<std::string> out = scalapack_ ? scalapack_peer_failures(*scalapack_) : std::vector<std::string>{};
    if (overall_.ok) return out;
    out.insert(out.begin(),
               fmt::format("verification failed: {} row(s) of C wrong (first: rank {}, row {}); worst error/tolerance "
                           "{:.3g}",
                           overall_.rows_failed, overall_.first_failed_rank, overall_.first_failed_row,
                           overall_.worst_ratio));
    return out;
  }
  bool ok() const override { return overall_.ok && (!scalapack_ || scalapack_peer_failures(*scalapack_).empty()); }

  // The configuration that ran: its threads as resolved, the scheme its algorithm prepared.
  EnergyWork energy_work() const override {
    const auto& s = cfg_.shape;
    return {"GFLOP", 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k) / 1e9};
  }
  Prediction predict(const Profile& p, const MachineLayout& m) const override {
    GemmConfig ran = cfg_;
    ran.distribution = alg_->scheme();
    return gemm_prediction(ran, p, m).here(m);
  }

  std::vector<double> take_c() { return std::move(c_); }

 private:
  GemmConfig cfg_;
  GemmTestHooks hooks_;
  const Communicator& comm_;
  const AlgorithmDescription& alg_desc_;
  bool agreed_ = false;   // the configuration was agreed before the run (by its command)
  std::string fallback_;  // why --distribution shared will run as replicated (empty: it will not)
  std::int64_t host_bytes_ = 0;
  std::unique_ptr<LocalGemm> backend_;
  GpuGemm* gpu_ = nullptr;  // backend_ when it is a GPU's
  std::unique_ptr<DistributedGemm> alg_;
  std::vector<double> x_;  // Freivalds' vector
  GemmCheck overall_;
  nlohmann::json full_ = nullptr, peer_ = nullptr;
  nlohmann::json c_digest_ = nullptr;
  int generate_threads_ = 0, threads_ = 1;
  std::vector<double> c_;                      // the gathered C (hooks_.keep_c, rank 0)
  std::optional<ScalapackPeerRun> scalapack_;  // --peer scalapack: both variants, after the repeats
};

void GemmRun::dry_run(const Communicator& comm) {
  const auto& s = cfg_.shape;
  if (cfg_.backend == GemmBackendKind::cublas) check_gpu_ranks_dry_run(comm, cfg_.share_gpu, "--backend cublas");
  const auto per_rank = comm.gather_strings(fmt::format("{} {} {}", comm.rank(), host_name(), host_bytes_));
  if (!comm.is_root()) return;
  std::string out = fmt::format(
      "scalebench gemm --dry-run: nothing is computed\n  C({}x{}) = A({}x{}) * B({}x{})  precision {}  backend {}\n"
      "  ranks {}  threads/rank {} ({})  reps {}  warm-up {}  seed {}  fill {}  verify {}  peer {}{}\n"
      "  algorithm {}  grid {}{}\n  json {}\n  host memory per rank ({}):\n",
      s.m, s.n, s.m, s.k, s.k, s.n, to_string(cfg_.precision), to_string(cfg_.backend), comm.size(), cfg_.threads,
      cfg_.threads_source, cfg_.reps, cfg_.warmup, cfg_.seed, to_string(cfg_.fill), to_string(cfg_.verify),
      cfg_.peer ? "on" : "off",
      cfg_.peer_library == GemmPeerLibrary::scalapack ? "  --peer scalapack (pdgemm shipped and tuned)" : "",
      to_string(cfg_.algorithm), to_string(alg_desc_.grid(cfg_, comm.size())), alg_desc_.settings_text(cfg_),
      cfg_.json_path.value_or("(none)"), alg_desc_.held_text(cfg_, fallback_));
  for (int r = 0; r < comm.size(); ++r) {
    int rank = 0;
    char host[256] = {};
    long long bytes = 0;
    std::sscanf(per_rank[r].c_str(), "%d %255s %lld", &rank, host, &bytes);
    out += fmt::format("    rank {:>4}  {:<20} {}  {}\n", rank, host, alg_desc_.share_text(cfg_, comm.size(), r),
                       gib(static_cast<double>(bytes)));
  }
  std::fputs(out.c_str(), stdout);
}

// The algorithm's sections (distribution, partition, network, gpu; collective) and the peer; the
// algorithm's own warning (--distribution shared that fell back to replicated).
void GemmRun::add_sections(RunRecord& run, const Summaries& s) {
  const auto& sh = cfg_.shape;
  const double flops = 2.0 * static_cast<double>(sh.m) * static_cast<double>(sh.n) * static_cast<double>(sh.k);
  const double compute_s = phase_median(s.timed, phase::compute);
  if (!s.peer.empty()) {
    const double bare = s.peer.front().second.median;
    peer_ = {{"what", alg_->peer_call_name()},
             {"on", "the same row block, same threads, same process"},
             {phase::compute, to_json(s.peer.front().second)},
             {"gflops", bare > 0 ? flops / bare / 1e9 : 0.0},
             {"ratio_backend_vs_bare", compute_s > 0 ? bare / compute_s : 0.0}};
  }
  nlohmann::json& record = run.json();
  record["peer"] = peer_;
  if (!cfg_.choice.is_null()) record["choice"] = cfg_.choice;  // the `auto` ranking (gemm_auto.cpp)
  alg_->add_to_record(record, s.timed, s.peer);
  if (scalapack_ && comm_.is_root()) {
    record["peers"]["scalapack"] = scalapack_peer_json(*scalapack_, cfg_, s.timed, record["distribution"]);
    for (const auto& w : scalapack_peer_warnings(record["peers"]["scalapack"])) run.warn(w);
  }
  if (comm_.is_root()) record["comm_bound"] = comm_bound_section(cfg_, comm_.size(), record);
  if (comm_.is_root() && record["distribution"].contains("warning")) {
    run.warn(record["distribution"]["warning"].get<std::string>());
  }
}

RunSections GemmRun::sections(const Summaries& s) {
  const auto& sh = cfg_.shape;
  const double flops = 2.0 * static_cast<double>(sh.m) * static_cast<double>(sh.n) * static_cast<double>(sh.k);
  const double compute_s = phase_median(s.timed, phase::compute);
  const double e2e_s = phase_median(s.timed, phase::end_to_end);
  // The grid as the algorithm wrote it (its distribution section).
  const ProcessGrid g = alg_desc_.grid(cfg_, comm_.size());
  RunSections out{config_json(cfg_, hooks_, threads_, generate_threads_, {g.rows, g.cols}),
                  backend_->describe(),
                  {{"flops_per_multiply", flops},
                   {"compute_gflops", compute_s > 0 ? flops / compute_s / 1e9 : 0.0},
                   {"end_to_end_gflops", e2e_s > 0 ? flops / e2e_s / 1e9 : 0.0}},
                  {{"method", "freivalds"},
                   {"repeats_checked", s.repeats},
                   {"rows_failed", overall_.rows_failed},
                   {"worst_ratio", overall_.worst_ratio},
                   {"gathered_c_matches_blocks", overall_.gather_ok},
                   {"tolerance", freivalds_tolerance_text()},
                   {"unit_roundoff", unit_roundoff(cfg_.precision)},
                   {"full", full_}},
                  overall_.ok,
                  {}};
  out.verification["c_digest"] = c_digest_;
  if (overall_.first_failed_rank >= 0) {
    out.verification["first_failed"] = {{"rank", overall_.first_failed_rank}, {"row", overall_.first_failed_row}};
  }
  return out;
}

}  // namespace

GemmResult run_distributed_gemm(const GemmConfig& cfg, const Communicator& comm, const GemmTestHooks& hooks,
                                bool agreed) {
  GemmRun run(cfg, hooks, comm, agreed);
  HarnessResult h = run_rank_harness(run, run.settings(), comm);
  GemmResult result;
  result.ok = h.ok;
  result.record = std::move(h.record);
  result.c = run.take_c();
  return result;
}

}  // namespace scalebench
