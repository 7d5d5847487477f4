// The gemm run's ScaLAPACK peer and its record section (scalapack_peer_section.hpp).
//
// What is compared. "Pre-distributed": PDGEMM on inputs already in the block-cyclic layout, against
// the run's multiply on inputs already in its own layout (summa2d: its panel broadcasts plus
// compute; row1d: compute, B's broadcast being part of its distribution). "End to end": from rank
// 0's row-major A and B to rank 0's row-major C, against the run's end_to_end phase.
#include "gemm/scalapack_peer_section.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "scalebench/base/checked_size.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/base/phases.hpp"
#include "scalebench/mpi/mpi.hpp"

namespace scalebench {
namespace {

// The slowest rank's seconds per repeat as min / median / max over repeats.
nlohmann::json seconds_json(const std::vector<double>& per_repeat) {
  return {{"min_s", *std::min_element(per_repeat.begin(), per_repeat.end())},
          {"median_s", median_of(per_repeat)},
          {"max_s", *std::max_element(per_repeat.begin(), per_repeat.end())}};
}

std::vector<double> end_to_end(const ScalapackPeerTimes& t) {
  std::vector<double> out(t.multiply.size());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = t.scatter[i] + t.multiply[i] + t.gather[i];
  return out;
}

double ratio(double run, double peer) { return peer > 0 ? run / peer : 0.0; }

nlohmann::json variant_json(const ScalapackPeerResult& r, const std::string& k_step_source, double flops,
                            double run_pre_s, double run_e2e_s) {
  const double pre = median_of(r.times.multiply);
  const double e2e = median_of(end_to_end(r.times));
  return {{"k_step", r.k_step_used},
          {"k_step_source", k_step_source},
          {"pilaenv_calls", r.pilaenv_calls},
          {"pre_distributed", seconds_json(r.times.multiply)},
          {"scatter", seconds_json(r.times.scatter)},
          {"gather", seconds_json(r.times.gather)},
          {"end_to_end", seconds_json(end_to_end(r.times))},
          {"gflops", pre > 0 ? flops / pre / 1e9 : 0.0},
          {"ratio_run_vs_peer", ratio(run_pre_s, pre)},
          {"ratio_end_to_end_run_vs_peer", ratio(run_e2e_s, e2e)},
          {"verification",
           {{"method", "freivalds"}, {"ok", r.ok}, {"rows_failed", r.rows_failed}, {"worst_ratio", r.worst_ratio}}}};
}

std::string variant_line(const std::string& name, const nlohmann::json& v) {
  return fmt::format("peer scalapack {:<7}: k-step {:>4}  pre-distributed {:.6f} s ({:.2f} GFLOP/s), end to end "
                     "{:.6f} s -> run/peer = {:.3f}x, end to end {:.3f}x; freivalds {}\n",
                     name, v["k_step"].get<int>(), v["pre_distributed"]["median_s"].get<double>(),
                     v["gflops"].get<double>(), v["end_to_end"]["median_s"].get<double>(),
                     v["ratio_run_vs_peer"].get<double>(), v["ratio_end_to_end_run_vs_peer"].get<double>(),
                     v["verification"]["ok"].get<bool>() ? "PASSED" : "FAILED");
}

}  // namespace

std::int64_t scalapack_peer_host_bytes(const GemmConfig& cfg, int ranks, int rank) {
  if (cfg.peer_library != GemmPeerLibrary::scalapack) return 0;
  const auto& s = cfg.shape;
  const auto e = static_cast<std::int64_t>(host_element_bytes(cfg.precision));
  const std::int64_t limit = kInt64Max;
  const std::string bits = "64 bits";
  const std::int64_t a = product_within("bytes of the peer's A", {s.m, s.k, e}, limit, bits);
  const std::int64_t b = product_within("bytes of the peer's B", {s.k, s.n, e}, limit, bits);
  const std::int64_t c = product_within("bytes of the peer's C", {s.m, s.n, e}, limit, bits);
  // Every rank: about its share of the three (block-cyclic pieces); rank 0: the packed copies and C.
  const std::int64_t share = a / ranks + b / ranks + c / ranks + 3 * e;
  return rank == 0 ? sum_within("host bytes of the peer on rank 0", {share, a, b, c, c}, limit, bits) : share;
}

namespace {

// The peer's square block: summa2d's k-panel (--panel-width); row1d has none, and the default 512
// on a Px1 grid leaves the processes past ceil(m / 512) without a row of A and C (the ratio would
// compare the run on P ranks with the peer on fewer), so row1d's peer takes m / P rows a block, at
// most 512: every process holds at least one block of rows (row1d runs only with ranks <= m).
std::int64_t peer_block_width(const GemmConfig& cfg, const ProcessGrid& grid) {
  if (cfg.algorithm == GemmAlgorithm::summa2d) return cfg.panel_width;
  return std::clamp<std::int64_t>(cfg.shape.m / std::max(1, grid.rows), 1, kDefaultPanelWidth);
}

// The shipped variant's settings for this run on `grid` (the tuned one sets k_step).
ScalapackPeerSettings peer_settings(const GemmConfig& cfg, const GemmTestHooks& hooks, const ProcessGrid& grid) {
  ScalapackPeerSettings s;
  s.shape = cfg.shape;
  s.precision = cfg.precision;
  s.grid_rows = grid.rows;
  s.grid_cols = grid.cols;
  s.block_width = peer_block_width(cfg, grid);
  s.warmup = cfg.warmup;
  s.reps = cfg.reps;
  s.mpi_chunk = hooks.mpi_chunk;
  return s;
}

}  // namespace

void check_scalapack_peer_run(const GemmConfig& cfg, const ProcessGrid& grid) {
  if (cfg.peer_library != GemmPeerLibrary::scalapack) return;
  check_scalapack_peer(peer_settings(cfg, {}, grid), grid.size());
}

ScalapackPeerRun run_scalapack_peer(const GemmConfig& cfg, const GemmTestHooks& hooks, const Communicator& comm,
                                    const HostMatrices& whole, const ProcessGrid& grid, const std::vector<double>& x) {
  require_scalapack();
  // Every rank must know that rank 0 holds A and B before the peer's collectives start.
  int held = comm.is_root() && whole.a != nullptr && whole.b != nullptr ? 1 : 0;
  SCALEBENCH_MPI(MPI_Bcast(&held, 1, MPI_INT, 0, comm.get()));
  if (held == 0) throw UsageError("--peer scalapack starts from rank 0's A and B, which this run keeps on no host");
  ScalapackPeerRun run;
  run.grid = grid;
  ScalapackPeerSettings s = peer_settings(cfg, hooks, grid);
  run.block_width = s.block_width;
  run.shipped = time_scalapack_peer(s, comm, whole.a, whole.b, x);
  s.k_step = static_cast<int>(std::min<std::int64_t>(s.block_width, cfg.shape.k));
  run.tuned = time_scalapack_peer(s, comm, whole.a, whole.b, x);
  return run;
}

nlohmann::json scalapack_peer_json(const ScalapackPeerRun& run, const GemmConfig& cfg, const PhaseList& timed,
                                   const nlohmann::json& distribution) {
  const auto& sh = cfg.shape;
  const double flops = 2.0 * static_cast<double>(sh.m) * static_cast<double>(sh.n) * static_cast<double>(sh.k);
  const bool summa = cfg.algorithm == GemmAlgorithm::summa2d;
  // Summa2D's broadcast + compute as one interval (the slowest rank's sum, per repeat), as the
  // peer's pre-distributed multiply is timed; row1d's compute phase.
  const double run_pre = summa ? distribution.at("panel_schedule").at("panels_s").get<double>()
                               : phase_median(timed, phase::compute);
  const double run_e2e = phase_median(timed, phase::end_to_end);
  return {{"library", scalapack_library_text()},
          {"call", cfg.precision == Precision::fp64 ? "pdgemm" : "psgemm"},
          {"grid", {run.grid.rows, run.grid.cols}},
          {"grid_source", summa ? "the run's summa2d grid" : "Px1: row1d's grid (rows of A and C over the ranks)"},
          {"block_width", run.block_width},
          {"block_width_source", summa ? "--panel-width (summa2d's k-panel)"
                                       : "row1d: m / ranks rows, at most 512, so that every rank holds rows of A "
                                         "and C"},
          {"layout", "block-cyclic square blocks from process (0,0), inputs scattered from rank 0 before timing"},
          {"repeats", cfg.reps},
          {"warmup", cfg.warmup},
          {"run_pre_distributed_s", run_pre},
          {"run_pre_distributed_phases",
           summa ? nlohmann::json{phase::broadcast, phase::compute} : nlohmann::json{phase::compute}},
          {"run_pre_distributed_what", summa ? "the slowest rank's broadcast + compute, per repeat, as one interval "
                                               "(distribution.panel_schedule.panels_s)"
                                             : "the compute phase's median"},
          {"run_end_to_end_s", run_e2e},
          {"variants",
           {{"shipped", variant_json(run.shipped, "the library's PILAENV", flops, run_pre, run_e2e)},
            {"tuned", variant_json(run.tuned, "PILAENV interposed: the block width", flops, run_pre, run_e2e)}}}};
}

std::vector<std::string> scalapack_peer_warnings(const nlohmann::json& section) {
  if (section["variants"]["tuned"]["pilaenv_calls"].get<std::int64_t>() > 0) return {};
  return {"--peer scalapack: the library never asked PILAENV during the tuned multiplies, so its k-step was not set "
          "(the tuned variant ran as shipped)"};
}

std::string scalapack_peer_lines(const nlohmann::json& record) {
  if (!record.contains("peers") || !record["peers"].contains("scalapack")) return "";
  const auto& p = record["peers"]["scalapack"];
  std::string phases;
  for (const auto& name : p["run_pre_distributed_phases"]) {
    phases += (phases.empty() ? "" : " + ") + name.get<std::string>();
  }
  std::string out = fmt::format("peer scalapack: {} on a {}x{} grid, blocks {} block-cyclic; the run {:.6f} s "
                                "pre-distributed ({}), {:.6f} s end to end\n",
                                p["call"].get<std::string>(), p["grid"][0].get<int>(), p["grid"][1].get<int>(),
                                p["block_width"].get<std::int64_t>(), p["run_pre_distributed_s"].get<double>(), phases,
                                p["run_end_to_end_s"].get<double>());
  out += variant_line("shipped", p["variants"]["shipped"]);
  out += variant_line("tuned", p["variants"]["tuned"]);
  return out;
}

std::vector<std::string> scalapack_peer_failures(const ScalapackPeerRun& run) {
  std::vector<std::string> out;
  for (const auto* v : {&run.shipped, &run.tuned}) {
    if (v->ok) continue;
    out.push_back(fmt::format("verification failed: the ScaLAPACK peer ({}) gave {} wrong row(s) of C; worst "
                              "error/tolerance {:.3g}",
                              v == &run.shipped ? "shipped" : "tuned", v->rows_failed, v->worst_ratio));
  }
  return out;
}

}  // namespace scalebench
