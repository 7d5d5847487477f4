// The sharded Monte Carlo as a workload: `scalebench montecarlo` (its options, configuration and
// prediction in montecarlo_command.cpp, run by run_distributed_montecarlo in
// montecarlo_driver.cpp), sized by its samples, rated in samples/s. The contrast runs its pi
// problem.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "scalebench/workloads/command.hpp"
#include "scalebench/workloads/distributed_montecarlo.hpp"
#include "scalebench/workloads/workload.hpp"

namespace scalebench {

std::shared_ptr<WorkloadCommand> add_montecarlo_command(CLI::App& app);  // montecarlo_command.cpp

namespace {

class MonteCarloWorkload final : public Workload {
 public:
  std::string_view name() const override { return "montecarlo"; }
  std::string_view description() const override {
    return "Sharded Monte Carlo: pi, European and Asian options under GBM; the same estimate to the bit for any "
           "number of ranks, threads or GPUs (not --backend naive or curand); checked against closed forms";
  }
  std::string_view predict_description() const override {
    return "Predict `scalebench montecarlo` with these options (--json writes the prediction)";
  }
  std::shared_ptr<WorkloadCommand> add_command(CLI::App& app) const override { return add_montecarlo_command(app); }
  std::string_view size_key() const override { return "samples"; }
  double work_per_repeat(double samples) const override { return samples; }
  std::string size_text(const std::string& size) const override { return size + " samples"; }

  RunFigures figures(const nlohmann::json& record) const override {
    RunFigures f = common_figures(record, {"cuda", "curand"});
    f.compute_rate = record_number(record, {"rates", "samples_per_s"});
    f.rate = record_number(record, {"rates", "end_to_end_samples_per_s"});
    if (f.rate <= 0) f.rate = f.compute_rate;
    f.rate_unit = "samples/s";
    return f;
  }

  // `gpu-naive` runs the cuRAND backend (arrays of library random numbers, then a kernel and a
  // reduction) beside the fused `gpu` row, on the same GPU.
  std::vector<GpuRow> gpu_rows() const override {
    return {{"", GpuSpan::one}, {"gpu-naive", GpuSpan::one}, {"multi-gpu", GpuSpan::every}};
  }

  std::vector<std::string> contrast_args(const ContrastRun& run) const override {
    const std::string backend = run.mode == Mode::naive ? "naive"
                                : run.gpu               ? (run.label == "gpu-naive" ? "curand" : "cuda")
                                                        : "cpu";
    return {"montecarlo",
            "--problem",
            "pi",
            "--samples",
            run.size,
            "--backend",
            backend,
            "--reps",
            std::to_string(run.reps),
            "--warmup",
            std::to_string(run.warmup)};
  }

  // The naive generator runs 5e7 samples in about 0.6 s.
  ContrastSizing contrast_sizing() const override {
    return {1e7,
            1e9,
            "1e8",
            "5e7",
            {"--samples",
             "Monte Carlo pi samples of the CPU rows [measured: single-core takes about 0.5 s x cores a repeat "
             "(6..15 s)]"},
            {"--gpu-samples",
             "Monte Carlo pi samples of the GPU rows [--samples when given, else measured: the fastest GPU row "
             "takes about 0.5 s a repeat]"},
            {"--naive-samples", "Samples for the naive Monte Carlo (~0.6 s) [5e7]"},
            ""};
  }

  // Two significant digits ("25e8"), 1e6..1e12 (time grows as the samples).
  std::string scaled_size(double probe_samples, double probe_s, double seconds) const override {
    const double s = probe_s > 0 ? probe_samples * seconds / probe_s : probe_samples;
    const double clamped = std::clamp(s, 1e6, 1e12);
    int exponent = static_cast<int>(std::floor(std::log10(clamped))) - 1;
    auto mantissa = static_cast<long>(std::floor(clamped / std::pow(10.0, exponent)));
    if (mantissa % 10 == 0) {
      mantissa /= 10;
      ++exponent;
    }
    return fmt::format("{}e{}", mantissa, exponent);
  }

  // No option of Monte Carlo is left to the model.
};

}  // namespace

const Workload& montecarlo_workload() {
  static const MonteCarloWorkload w;
  return w;
}

}  // namespace scalebench
