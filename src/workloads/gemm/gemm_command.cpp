// `scalebench gemm`'s options, its configuration from them and the model's prediction of it: the
// command GemmWorkload::add_command returns (command.hpp). One distributed multiply configuration
// per launch, run by run_distributed_gemm (gemm_driver.cpp).
#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "scalebench/base/checked_size.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/base/parse.hpp"
#include "scalebench/mpi/mpi.hpp"
#include "scalebench/topology/placement.hpp"
#include "scalebench/workloads/command.hpp"
#include "scalebench/workloads/gemm/choice.hpp"
#include "scalebench/workloads/gemm/distributed_gemm.hpp"
#include "scalebench/workloads/gemm/gemm_config.hpp"
#include "scalebench/workloads/model.hpp"
#include "scalebench/workloads/prediction.hpp"

namespace scalebench {
namespace {

struct GemmOptions {
  std::string m, n, k;
  std::string precision = "fp64";
  std::string backend = "openblas";
  std::string fill = "uniform";
  std::string verify = "freivalds";
  // The schedule options: "" (not given: `auto` by default), "auto" (asked) or a value (pinned).
  std::string transport;
  std::string algorithm;
  std::string distribution;
  std::string grid;
  std::string lookahead;
  std::string overlap;  // "on" (the bare flag), "off" or "auto"
  std::string panel_width;
  RunOptions run;
  bool force = false, no_peer = false, resident = false;
  std::string peer_library = "none";
  std::string mpi_chunk, auto_memory, piece_rows;
  std::string inject_error_rank = "-1";
  std::string delay_rank = "-1", delay_seconds = "0", check_delay_seconds = "0";
};

// Whether `value` leaves its option to `auto` (not given, or given as auto); records which.
bool left_open(const std::string& value, bool& asked) {
  asked = value == "auto";
  return value.empty() || asked;
}

// The schedule options (docs/model.md, "auto: the model decides"): a value given is pinned;
// `auto`, or nothing, leaves the option to the model (the rules without a profile). An option not
// given is left open only where it has a choice with the options pinned beside it: a CPU backend
// has one transport and no overlap of its own (summa2d's overlap is its lookahead), row1d has no
// grid and no lookahead, summa2d no distribution but replicated and no overlap but its lookahead.
void resolve_schedule_options(const GemmOptions& o, GemmConfig& cfg) {
  GemmAutoOptions& a = cfg.autos;
  GemmScheduleOptions& asked = a.asked;
  const bool gpu = cfg.backend == GemmBackendKind::cublas;
  a.algorithm = left_open(o.algorithm, asked.algorithm);
  if (!a.algorithm) cfg.algorithm = parse_gemm_algorithm(o.algorithm);
  const bool row1d = !a.algorithm && cfg.algorithm == GemmAlgorithm::row1d;
  const bool summa2d = !a.algorithm && cfg.algorithm == GemmAlgorithm::summa2d;
  a.transport = left_open(o.transport, asked.transport) && (gpu || asked.transport);
  if (o.transport == "mpi") {
    cfg.transport = Transport::mpi;
  } else if (o.transport == "nccl") {
    cfg.transport = Transport::nccl;
  } else if (!o.transport.empty() && !asked.transport) {
    throw UsageError(fmt::format("unknown --transport '{}'; use mpi, nccl or auto", o.transport));
  }
  a.distribution = left_open(o.distribution, asked.distribution) && (!summa2d || asked.distribution);
  if (!o.distribution.empty() && !asked.distribution) cfg.distribution = parse_gemm_distribution(o.distribution);
  a.grid = left_open(o.grid, asked.grid) && (!row1d || asked.grid);
  if (!o.grid.empty() && !asked.grid) {
    const ProcessGrid g = parse_grid(o.grid);
    cfg.grid_rows = g.rows;
    cfg.grid_cols = g.cols;
  }
  a.lookahead = left_open(o.lookahead, asked.lookahead) && (!row1d || asked.lookahead);
  if (!o.lookahead.empty() && !asked.lookahead) {
    cfg.lookahead = static_cast<int>(parse_integer("--lookahead", o.lookahead, 0, kMaxLookahead));
    cfg.lookahead_given = true;
  }
  a.overlap = left_open(o.overlap, asked.overlap) && ((gpu && !summa2d) || asked.overlap);
  if (o.overlap == "on" || o.overlap == "off") {
    cfg.overlap = o.overlap == "on";
  } else if (!o.overlap.empty() && !asked.overlap) {
    throw UsageError(
        fmt::format("unknown --overlap '{}'; give --overlap alone (on), --overlap off, or --overlap auto", o.overlap));
  }
}

GemmConfig to_config(const GemmOptions& o, const CLI::App& app) {
  GemmConfig cfg;
  const std::int64_t n = o.n.empty() ? 4096 : parse_positive_count("--n", o.n);
  cfg.shape.n = n;
  cfg.shape.m = o.m.empty() ? n : parse_positive_count("--m", o.m);
  cfg.shape.k = o.k.empty() ? n : parse_positive_count("--k", o.k);
  cfg.precision = parse_precision(o.precision);
  cfg.backend = parse_gemm_backend(o.backend);
  if (o.fill == "uniform") {
    cfg.fill = Fill::uniform;
  } else if (o.fill == "integer") {
    cfg.fill = Fill::integer;
  } else {
    throw UsageError(fmt::format("unknown --fill '{}'; use uniform or integer", o.fill));
  }
  if (o.verify == "freivalds") {
    cfg.verify = VerifyMode::freivalds;
  } else if (o.verify == "full") {
    cfg.verify = VerifyMode::full;
  } else {
    throw UsageError(fmt::format("unknown --verify '{}'; use freivalds or full", o.verify));
  }
  resolve_schedule_options(o, cfg);
  if (!o.panel_width.empty()) {
    cfg.panel_width = parse_positive_count("--panel-width", o.panel_width);
    cfg.panel_width_given = true;
  }
  apply_run_options(o.run, app, cfg);
  cfg.force = o.force;
  cfg.peer = !o.no_peer;
  cfg.peer_library = parse_gemm_peer_library(o.peer_library);
  cfg.resident = o.resident;
  if (!o.auto_memory.empty()) {
    cfg.autos.host_bytes_per_node = parse_integer("--auto-memory-per-node", o.auto_memory, 1, kInt64Max);
  }
  validate(cfg);
  return cfg;
}

// The hidden options only tests give, kept out of the configuration (GemmTestHooks).
GemmTestHooks to_hooks(const GemmOptions& o) {
  GemmTestHooks hooks;
  hooks.mpi_chunk = o.mpi_chunk.empty() ? 0 : parse_integer("--mpi-chunk", o.mpi_chunk, 1, kInt64Max);
  hooks.inject_error_rank = static_cast<int>(parse_integer("--inject-error-rank", o.inject_error_rank, -1, kInt32Max));
  hooks.delay_rank = static_cast<int>(parse_integer("--delay-rank", o.delay_rank, -1, kInt32Max));
  hooks.piece_rows = o.piece_rows.empty() ? 0 : parse_integer("--piece-rows", o.piece_rows, 1, kInt64Max);
  hooks.delay_seconds = parse_real("--delay-seconds", o.delay_seconds);
  if (hooks.delay_seconds < 0 || hooks.delay_seconds > 60) {
    throw UsageError(fmt::format("--delay-seconds {} is out of range [0, 60]", o.delay_seconds));
  }
  hooks.check_delay_seconds = parse_real("--check-delay-seconds", o.check_delay_seconds);
  if (hooks.check_delay_seconds < 0 || hooks.check_delay_seconds > 60) {
    throw UsageError(fmt::format("--check-delay-seconds {} is out of range [0, 60]", o.check_delay_seconds));
  }
  return hooks;
}

}  // namespace

// The prediction `scalebench predict` answers with, and the one a run's record carries (gemm_driver.cpp).
PredictedWorkload gemm_prediction(const GemmConfig& cfg_in, const Profile& p, const MachineLayout& m) {
  GemmConfig cfg = cfg_in;
  if (cfg.backend == GemmBackendKind::naive) cfg.threads = 1;
  if (cfg.threads <= 0) cfg.threads = std::max(1, p.cores / m.ranks_per_node);
  PredictedWorkload w;
  if (cfg.autos.any()) {
    // The machine the profile describes: NCCL where it has figures for it; free memory unknown
    // unless --auto-memory-per-node says.
    ChoiceFacts facts;
    facts.layout = m;
    if (cfg.autos.host_bytes_per_node > 0)
      facts.host_bytes_per_node = static_cast<double>(cfg.autos.host_bytes_per_node);
    const GemmChoice c = choose_gemm(cfg, facts, &p);
    w.choice_text = choice_table(c, cfg.autos);
    w.choice = choice_json(c, cfg.autos);
    const GemmAutoOptions autos = cfg.autos;
    cfg = c.chosen();
    cfg.autos = autos;  // kept in the words below
  }
  const auto& s = cfg.shape;
  w.what = fmt::format("gemm {}x{}x{} {} {}{}{}", s.m, s.n, s.k, to_string(cfg.precision), to_string(cfg.backend),
                       cfg.backend == GemmBackendKind::cublas ? " transport " + to_string(cfg.transport) : "",
                       cfg.overlap    ? " overlap"
                       : cfg.resident ? " resident"
                                      : "") +
           (cfg.autos.any() ? fmt::format(" (auto: {})", alternative_text(cfg, m.ranks())) : std::string());
  w.unit = "GFLOP/s";
  w.work = 2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k) * 1e-9;
  w.gpu = cfg.backend == GemmBackendKind::cublas;
  w.threads = cfg.threads;
  w.repeats = cfg.reps + cfg.warmup;
  w.kernel = {w.gpu ? PowerDevice::gpu : PowerDevice::cpu,
              w.gpu                                   ? "gemm"
              : cfg.backend == GemmBackendKind::naive ? "naive"
                                                      : "blas",
              to_string(cfg.precision)};
  cfg.autos = {};
  w.here = [&p, cfg](const MachineLayout& l) { return predict_gemm(p, cfg, l); };
  const Precision cpu_precision = cfg.precision == Precision::fp64 ? Precision::fp64 : Precision::fp32;
  auto variant = [cfg](GemmBackendKind b, Precision prec, int threads) {
    GemmConfig c = cfg;
    c.backend = b;
    c.precision = prec;
    c.threads = threads;
    c.transport = Transport::mpi;
    c.overlap = c.resident = false;
    return c;
  };
  w.one_core = [&p, c = variant(GemmBackendKind::openblas, cpu_precision, 1)](const MachineLayout& l) {
    return predict_gemm(p, c, l);
  };
  w.one_gpu = [&p, c = variant(GemmBackendKind::cublas, cfg.precision, 1)](const MachineLayout& l) {
    return predict_gemm(p, c, l);
  };
  w.crossover = [&p, variant, cpu_precision, gpu_precision = cfg.precision] {
    auto square = [&](GemmConfig c, double n, int gpus) -> std::optional<double> {
      c.shape = {std::llround(n), std::llround(n), std::llround(n)};
      return try_seconds([&](const MachineLayout& l) { return predict_gemm(p, c, l); }, {1, 1, gpus});
    };
    const auto x = crossover_size(
        64, 65536, [&](double n) { return square(variant(GemmBackendKind::cublas, gpu_precision, 1), n, 1); },
        [&](double n) { return square(variant(GemmBackendKind::openblas, cpu_precision, p.cores), n, 0); });
    return x ? fmt::format("square n >= {} ({}: one GPU with its copies beats one node's {} cores)", std::llround(*x),
                           to_string(gpu_precision), p.cores)
             : std::string("none found for n in [64, 65536] (or no GPU figures in the profile)");
  };
  return w;
}

namespace {

std::shared_ptr<const GemmOptions> add_gemm_options(CLI::App* app) {
  auto opts = std::make_shared<GemmOptions>();
  app->add_option("--n", opts->n, "Matrix size n (C is m x n); sets m and k too unless given [4096]");
  app->add_option("--m", opts->m, "Rows of A and C [n]");
  app->add_option("--k", opts->k, "Columns of A, rows of B [n]");
  app->add_option("--precision", opts->precision, "fp64 | fp32 (CPU and GPU); tf32 | bf16 (cublas only) [fp64]");
  app->add_option("--backend", opts->backend, "naive (the triple loop, one thread) | openblas | cublas [openblas]");
  add_run_options(app, opts->run,
                  {"BLAS threads per rank [OPENBLAS_NUM_THREADS, else OMP_NUM_THREADS, else the cores this rank "
                   "owns (--pin) or may use]",
                   "Seed for A, B and the verification vector [42]",
                   "Print the resolved configuration and per-rank memory; compute nothing",
                   "GPU runs: allow several ranks per GPU"});
  app->add_option("--fill", opts->fill,
                  "uniform (values in [-1,1)) | integer (small non-zero integers: exact C) [uniform]");
  app->add_option(
      "--verify", opts->verify,
      "freivalds (every repeat, by rows) | full (also compare with a reference product; small sizes) [freivalds]");
  app->add_flag("--force", opts->force, "Allow --backend naive on sizes that take minutes");
  app->add_flag("--no-peer", opts->no_peer, "Skip timing the bare library call (cblas/cuBLAS) on the same block");
  app->add_option(
      "--peer", opts->peer_library,
      "scalapack: also time ScaLAPACK's PDGEMM (PSGEMM for fp32) on the same ranks, grid, block width "
      "(--panel-width) and values, as shipped and with its k-step tuned to the block width (docs/output.md, "
      "\"peers\") | none [none]");
  app->add_option("--transport", opts->transport,
                  "GPU runs: mpi (staged through host) | nccl (device to device) | auto (the model decides: "
                  "see --algorithm) [auto]");
  app->add_flag("--resident", opts->resident,
                "GPU runs, row1d: generate inputs on the device (no host-to-device phase)");
  app->add_option("--overlap", opts->overlap,
                  "GPU runs, row1d: pipeline the transfers with the multiply (B in k-panels, A and C in row blocks; "
                  "one rank, or --transport nccl); --overlap off: not; --overlap auto: the model decides "
                  "(summa2d: --overlap is its lookahead) [auto]")
      ->expected(0, 1)
      ->default_str("on");
  app->add_option("--algorithm", opts->algorithm,
                  "row1d (scatter rows of A, broadcast B whole) | summa2d (2D blocks on a PR x PC grid, k-panels "
                  "broadcast along grid rows and columns) | auto. Every schedule option (--algorithm, --grid, "
                  "--distribution, --transport, --overlap, --lookahead) not given, or given as auto, is the "
                  "model's: it ranks every combination this run accepts and takes the fastest predicted (of those "
                  "within 3% of it, the rules' first; without a current profile: stated rules); the record's choice "
                  "section lists them [auto]");
  app->add_option("--distribution", opts->distribution,
                  "row1d: replicated (A_i, B, C_i per rank; B broadcast to every rank) | shared (A, B, C once per "
                  "node in MPI-3 shared windows; B crosses nodes once, on lanes; GPUs copy their own rows) | auto "
                  "[auto]");
  app->add_option("--grid", opts->grid,
                  "summa2d: process grid PRxPC, PR*PC = ranks, or auto [auto; by the rules the most square grid, "
                  "e.g. 2x3 for 6 ranks]");
  app->add_option("--panel-width", opts->panel_width,
                  "summa2d: widest k-panel broadcast at once, cut at block edges [512]");
  app->add_option("--lookahead", opts->lookahead,
                  "summa2d: k-panels on their way (forwarded along grid rows and columns in rings, non-blocking) "
                  "while one multiplies, 0 to 16; 0: one blocking broadcast per panel; auto: the model ranks 0, 1 "
                  "and 2 from what calibrate measured a lookahead hides (without a profile the rule: 1 over NCCL, "
                  "0 on the host) (--overlap means a lookahead for summa2d) [auto]");
  app->add_option("--auto-memory-per-node", opts->auto_memory, "Host bytes per node auto assumes free (testing)")
      ->group("");
  app->add_option("--mpi-chunk", opts->mpi_chunk, "Largest element count per MPI call (testing)")->group("");
  app->add_option("--inject-error-rank", opts->inject_error_rank, "Corrupt one element of C on this rank (testing)")
      ->group("");
  app->add_option("--delay-rank", opts->delay_rank, "summa2d: this rank sleeps before each panel multiply (testing)")
      ->group("");
  app->add_option("--delay-seconds", opts->delay_seconds, "The sleep of --delay-rank per panel (testing)")->group("");
  app->add_option("--piece-rows", opts->piece_rows,
                  "summa2d on the host ring: rows of C_ij per piece of a panel's multiply (testing; a block's rows or "
                  "more: whole)")
      ->group("");
  app->add_option("--check-delay-seconds", opts->check_delay_seconds,
                  "Every rank sleeps this long in each repeat's check (testing)")
      ->group("");

  return opts;
}

// The command: the configuration and, beside it, the test hooks the hidden options set.
class GemmCommand final : public WorkloadCommand {
 public:
  GemmCommand(std::shared_ptr<const GemmOptions> opts, const CLI::App& app) : opts_(std::move(opts)), app_(app) {}
  void configure() override {
    cfg_ = to_config(*opts_, app_);
    hooks_ = to_hooks(*opts_);
  }
  std::optional<std::string> json_path() const override { return cfg_.json_path; }
  // The configuration agreed once (every rank asked for the same run), `auto` options resolved
  // on every rank alike (resolve_gemm_auto), then the run.
  bool run(const Communicator& comm) const override {
    agree_on_configuration(comm, "gemm", configuration_fields(cfg_) + test_hook_fields(hooks_));
    return run_distributed_gemm(resolve_gemm_auto(cfg_, comm), comm, hooks_, /*agreed=*/true).ok;
  }
  PredictedWorkload predict(const Profile& p, const MachineLayout& m) const override {
    return gemm_prediction(cfg_, p, m);
  }

 private:
  std::shared_ptr<const GemmOptions> opts_;
  const CLI::App& app_;
  GemmConfig cfg_;
  GemmTestHooks hooks_;
};

}  // namespace

std::shared_ptr<WorkloadCommand> add_gemm_command(CLI::App& app) {
  auto opts = add_gemm_options(&app);
  return std::make_shared<GemmCommand>(std::move(opts), app);
}

}  // namespace scalebench
