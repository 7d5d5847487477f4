#include "contrast/contrast_sizing.hpp"

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>

#include "contrast/contrast_steps.hpp"

namespace scalebench::contrast {

double single_core_repeat_s(int cores) { return std::clamp(kFastestRowS * cores, 6.0, 15.0); }

}  // namespace scalebench::contrast

namespace scalebench::contrast {
namespace {

// Sets the sizes left empty from a quick run of the probe's row (contrast_sizing.hpp), aiming at
// `target` seconds a repeat; a GPU probe far below its target runs once more at the scaled size.
// Says so on stderr and returns what it measured, for the report. A probe that fails leaves the
// fallback.
nlohmann::json probe_size(ContrastOptions& o, const StepContext& ctx, const Workload& w, const PlacementPlan& plan,
                          bool gpu, double target) {
  const ContrastSizing sizing = w.contrast_sizing();
  std::string& size = gpu ? o.sizes[name_of(w)].gpu : o.sizes[name_of(w)].cpu;
  double probe = gpu ? sizing.gpu_probe : sizing.cpu_probe;
  nlohmann::json j = {{"target_s", target}, {"probes", nlohmann::json::array()}};
  double t = 0;
  for (int round = 0; round < (gpu ? 2 : 1); ++round) {
    ContrastOptions po = o;
    po.reps = 1;
    po.warmup = 1;
    (gpu ? po.sizes[name_of(w)].gpu : po.sizes[name_of(w)].cpu) = fmt::format("{:.0f}", probe);
    ContrastStep s = make_step(po, ctx, w, plan, "probe-" + std::string(gpu ? "gpu" : mode_name(plan.mode)));
    if (!o.quiet) std::fprintf(stderr, "scalebench contrast: measuring: %s\n", join_args(s.argv).c_str());
    run_step_of(po, s, fmt::format("the {} size probe was stopped; no contrast table was written", w.name()));
    t = s.exit_code == 0 ? s.summary.value("time_s", 0.0) : 0.0;
    j["probes"].push_back({{"probe", join_args(s.argv)}, {"probe_size", probe}, {"probe_s", t}});
    if (t <= 0) {
      j["failed"] = s.reason;
      break;
    }
    if (t >= target / 2) break;
    const double next = std::stod(w.scaled_size(probe, t, target));
    if (next <= probe) break;
    if (round + 1 < (gpu ? 2 : 1)) probe = next;
  }
  size = t > 0 ? w.scaled_size(probe, t, target) : sizing.fallback;
  j["size"] = size;
  if (!o.quiet) {
    std::fprintf(stderr, "scalebench contrast: %s %s rows: %s %s (%s)\n", name_of(w).c_str(), gpu ? "GPU" : "CPU",
                 std::string(w.size_key()).c_str(), size.c_str(),
                 t > 0 ? fmt::format("the probe took {:.3g} s a repeat; aiming at {:.1f} s a repeat", t, target).c_str()
                       : ("the probe failed: " + j.value("failed", std::string())).c_str());
  }
  return j;
}

// The sizes the options and the plan file leave open: measured (contrast_sizing.hpp) unless
// --dry-run; a GPU size follows the CPU size when that was given.
void measure_sizes(ContrastOptions& o, const StepContext& ctx, const std::vector<PlacementPlan>& plans,
                   nlohmann::json& sizing) {
  const auto plan_of = [&](Mode m) -> const PlacementPlan* {
    for (const auto& p : plans) {
      if (p.mode == m && p.possible) return &p;
    }
    return nullptr;
  };
  for (const Workload* w : o.workloads) {
    std::string& cpu = o.sizes[name_of(*w)].cpu;
    std::string& gpu = o.sizes[name_of(*w)].gpu;
    const bool cpu_given = !cpu.empty();
    nlohmann::json& j = sizing[name_of(*w)];
    if (cpu.empty()) {
      const PlacementPlan* single = plan_of(Mode::single_core);
      const PlacementPlan* all = plan_of(Mode::multi_thread);
      const int cores = all != nullptr && !all->ranks.empty() ? all->ranks.front().cores : 1;
      if (single != nullptr && !o.dry_run) {
        j["cpu"] = probe_size(o, ctx, *w, *single, false, contrast::single_core_repeat_s(cores));
      } else {
        cpu = w->contrast_sizing().fallback;
      }
    }
    if (gpu.empty()) {
      const PlacementPlan* every = plan_of(Mode::gpu);
      if (every != nullptr && !o.dry_run && !cpu_given) {
        // The fastest row of these sizes runs on every GPU: kFastestRowS for it.
        j["gpu"] = probe_size(o, ctx, *w, gpu_rows(*w, *every).front().second, true,
                              contrast::kFastestRowS * std::max(1, every->total_ranks()));
      } else {
        gpu = cpu;
      }
    }
  }
}

}  // namespace

nlohmann::json choose_sizes(ContrastOptions& o, const StepContext& ctx, const std::vector<PlacementPlan>& plans,
                            nlohmann::json sizing) {
  measure_sizes(o, ctx, plans, sizing);
  return sizing;
}

}  // namespace scalebench::contrast
