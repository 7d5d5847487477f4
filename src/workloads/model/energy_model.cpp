// Joules of a predicted job from the profile's watts (docs/model.md, "Energy"): the predicted
// end-to-end at idle power, plus the compute phase's excess at the kernel's power.
#include <algorithm>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "scalebench/base/error.hpp"
#include "scalebench/workloads/model.hpp"

namespace scalebench {
namespace {

std::optional<double> find_watts(const std::map<std::string, double>& m, const std::string& key) {
  const auto it = m.find(key);
  if (it == m.end()) return std::nullopt;
  return it->second;
}

// One node's CPU watts at full load for the kernel (every core of the node, as calibrated), or
// the reason there are none. Kernels without their own figure use BLAS's, and a note says so.
std::optional<double> cpu_kernel_watts(const CpuPower& c, const EnergyKernel& k, std::vector<std::string>& notes,
                                       std::string& why) {
  if (k.kind == "montecarlo") {
    if (const auto w = find_watts(c.montecarlo_w, k.key)) return w;
    if (const auto w = find_watts(c.blas_w, "fp64")) {
      notes.push_back(fmt::format("the Monte Carlo {} kernel's power was not calibrated: its compute is counted at "
                                  "BLAS fp64's watts",
                                  k.key));
      return w;
    }
    why = fmt::format("no CPU watts for the Monte Carlo {} kernel or BLAS fp64 in the profile", k.key);
    return std::nullopt;
  }
  if (const auto w = find_watts(c.blas_w, k.key)) {
    if (k.kind == "naive") {
      notes.push_back(
          "the triple loop's power was not calibrated: its busy cores are counted at BLAS's watts per core");
    }
    return w;
  }
  why = fmt::format("no CPU watts for BLAS {} in the profile", k.key);
  return std::nullopt;
}

std::optional<double> gpu_kernel_watts(const GpuPower& g, const EnergyKernel& k, std::vector<std::string>& notes,
                                       std::string& why) {
  if (k.kind == "montecarlo") {
    if (const auto w = find_watts(g.gemm_w, "fp32")) {
      notes.push_back(fmt::format(
          "the GPU Monte Carlo {} kernel's power was not calibrated: its compute is counted at the fp32 GEMM's watts",
          k.key));
      return w;
    }
    why = "no GPU watts for the fp32 GEMM in the profile (the Monte Carlo kernels are counted at its watts)";
    return std::nullopt;
  }
  if (const auto w = find_watts(g.gemm_w, k.key)) return w;
  why = fmt::format("no GPU watts for the {} GEMM in the profile", k.key);
  return std::nullopt;
}

EnergyPrediction unavailable(std::string why) {
  EnergyPrediction e;
  e.reason = "no power data in the profile (" + std::move(why) + ")";
  return e;
}

}  // namespace

EnergyPrediction predict_energy(const Profile& p, const Prediction& pred, const EnergyKernel& kernel,
                                const MachineLayout& m, int threads, int repeats) {
  const PowerProfile& w = p.power;
  if (!w.recorded) {
    return unavailable("it was calibrated before calibrate read power counters; run `scalebench calibrate` again");
  }
  const bool on_gpu = kernel.device == PowerDevice::gpu;
  if (!on_gpu && !w.cpu.present) return unavailable("CPU: " + w.cpu.reason);
  if (on_gpu && !w.gpu.present) return unavailable("GPU: " + w.gpu.reason);
  EnergyPrediction e;
  std::string why;
  const std::optional<double> kernel_w = on_gpu ? gpu_kernel_watts(w.gpu, kernel, e.notes, why)
                                                : cpu_kernel_watts(w.cpu, kernel, e.notes, why);
  if (!kernel_w) return unavailable(why);

  const double e2e = pred.end_to_end;
  const double compute = std::clamp(pred.phase("compute"), 0.0, e2e);
  const double nodes = m.nodes;
  e.cpu_counted = w.cpu.present;
  e.gpu_counted = w.gpu.present && m.gpus_per_node > 0;
  double node_j = 0;  // one node over one end-to-end
  if (e.cpu_counted) {
    e.cpu_idle_w = w.cpu.idle_w;
    e.cpu_compute_w = w.cpu.idle_w;
    if (!on_gpu) {
      // The kernel was calibrated on every core; fewer busy cores draw their share above idle.
      const double cores = p.cores;
      const double busy = std::min(cores, static_cast<double>(m.ranks_per_node) * std::max(1, threads));
      e.cpu_compute_w = w.cpu.idle_w + (*kernel_w - w.cpu.idle_w) * busy / cores;
    }
    node_j += e.cpu_idle_w * (e2e - compute) + e.cpu_compute_w * compute;
  } else {
    e.notes.push_back("CPU energy not counted: " + w.cpu.reason);
  }
  if (e.gpu_counted) {
    e.gpu_idle_w = w.gpu.idle_w;
    e.gpu_compute_w = on_gpu ? *kernel_w : w.gpu.idle_w;
    e.gpus_computing = on_gpu ? std::min(m.gpus_per_node, m.ranks_per_node) : 0;
    const double gpus = m.gpus_per_node;
    node_j += gpus * e.gpu_idle_w * e2e + e.gpus_computing * (e.gpu_compute_w - e.gpu_idle_w) * compute;
  } else if (m.gpus_per_node > 0) {
    e.notes.push_back("GPU energy not counted: " + w.gpu.reason);
  }
  e.available = true;
  e.repeats = std::max(1, repeats);
  e.run_j = nodes * node_j;
  e.job_j = e.run_j * e.repeats;
  e.kwh = e.job_j / kJoulesPerKwh;
  if (!std::isfinite(e.run_j) || e.run_j < 0) {
    throw Error(ExitCode::internal, fmt::format("the energy model gave {} J for one run (a bug)", e.run_j));
  }
  return e;
}

}  // namespace scalebench
