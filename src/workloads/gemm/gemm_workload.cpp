// The distributed GEMM as a workload: `scalebench gemm` (its options, configuration and prediction
// in gemm_command.cpp, run by run_distributed_gemm in gemm_driver.cpp), sized by n, rated in
// GFLOP/s.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "gemm/gemm_calibrate.hpp"
#include "scalebench/workloads/command.hpp"
#include "scalebench/workloads/workload.hpp"

namespace scalebench {

std::shared_ptr<WorkloadCommand> add_gemm_command(CLI::App& app);  // gemm_command.cpp

namespace {

class GemmWorkload final : public Workload {
 public:
  std::string_view name() const override { return "gemm"; }
  std::string_view description() const override {
    return "Distributed matrix multiply C = A*B: distribute A and B (row1d or summa2d), multiply per rank, gather C, "
           "verify, time every phase";
  }
  std::string_view predict_description() const override {
    return "Predict `scalebench gemm` with these options (run-only options such as --pin, --seed, --verify are "
           "accepted and ignored; --json writes the prediction)";
  }
  std::shared_ptr<WorkloadCommand> add_command(CLI::App& app) const override { return add_gemm_command(app); }
  std::string_view size_key() const override { return "n"; }
  double work_per_repeat(double n) const override { return n * n * n; }
  std::string size_text(const std::string& size) const override { return "n=" + size; }

  RunFigures figures(const nlohmann::json& record) const override {
    RunFigures f = common_figures(record, {"cublas"});
    f.rate = record_number(record, {"rates", "end_to_end_gflops"});
    f.compute_rate = record_number(record, {"rates", "compute_gflops"});
    f.rate_unit = "GFLOP/s";
    return f;
  }

  // `gpu` runs on one GPU, `multi-gpu` on every GPU of the node, each with the schedule `auto`
  // picks (choice.hpp); `gpu-staged` moves every byte through the host, unpipelined, on the widest
  // of those placements: the transfer lesson. CPU rows of several ranks leave the algorithm, grid
  // and distribution to `auto` too.
  std::vector<GpuRow> gpu_rows() const override {
    return {{"", GpuSpan::one}, {"multi-gpu", GpuSpan::every}, {"gpu-staged", GpuSpan::widest}};
  }

  std::vector<std::string> contrast_args(const ContrastRun& run) const override {
    const std::string backend = run.mode == Mode::naive ? "naive" : run.gpu ? "cublas" : "openblas";
    std::vector<std::string> a = {"gemm",
                                  "--n",
                                  run.size,
                                  "--precision",
                                  run.precision,
                                  "--backend",
                                  backend,
                                  "--reps",
                                  std::to_string(run.reps),
                                  "--warmup",
                                  std::to_string(run.warmup),
                                  "--no-peer"};
    if (run.mode == Mode::gpu && run.label == "gpu-staged") {
      // Pinned: every byte through the host, unpipelined, each rank its own copy.
      a.insert(a.end(),
               {"--algorithm", "row1d", "--distribution", "replicated", "--transport", "mpi", "--overlap", "off"});
    } else if (run.gpu) {
      // The model (or, without a profile, the rules of docs/model.md) picks the schedule: one rank
      // overlaps its own copies; several move their blocks GPU to GPU with NCCL (between nodes too).
      a.insert(a.end(), {"--algorithm", "auto", "--distribution", "auto", "--transport", "auto", "--overlap", "auto"});
    } else if (run.mode != Mode::naive && run.ranks > 1) {
      a.insert(a.end(), {"--algorithm", "auto", "--grid", "auto", "--distribution", "auto"});
    }
    // The library's own multiply beside the CPU rows (the naive row's size is another problem).
    if (!run.peer.empty() && run.mode != Mode::naive && !run.gpu) a.insert(a.end(), {"--peer", run.peer});
    return a;
  }

  // The triple loop runs at about 1 GFLOP/s: n=768 takes about a second.
  ContrastSizing contrast_sizing() const override {
    return {512,
            4096,
            "2048",
            "768",
            {"--n", "GEMM size of the CPU rows [measured: single-core takes about 0.5 s x cores a repeat (6..15 s), "
                    "from a quick n=512 run]"},
            {"--gpu-n",
             "GEMM size of the GPU rows [--n when given, else measured: the fastest GPU row takes about 0.5 s "
             "a repeat, from a quick n=4096 run on one GPU]"},
            {"--naive-n", "GEMM size for the naive triple loop (about 1 GFLOP/s: ~0.9 s) [768]"},
            "GEMM precision fp64 | fp32; tf32 | bf16 on GPU rows only (--modes gpu,multi-gpu,gpu-staged) [fp64]"};
  }

  // A multiple of 256, 512..32768 (time grows as n^3).
  std::string scaled_size(double probe_n, double probe_s, double seconds) const override {
    const double n = probe_s > 0 ? probe_n * std::cbrt(seconds / probe_s) : probe_n;
    const double rounded = std::floor(n / 256) * 256;
    return fmt::format("{:.0f}", std::clamp(rounded, 512.0, 32768.0));
  }
  void calibrate(Profile& p, const Communicator& comm, const CalibrateOptions& o,
                 const std::function<void(const std::string&)>& say) const override {
    calibrate_gemm_lookahead(p, comm, o, say);
  }
};

}  // namespace

const Workload& gemm_workload() {
  static const GemmWorkload w;
  return w;
}

}  // namespace scalebench
