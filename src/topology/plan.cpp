// plan_placement(): every rank of a mode on one node, by the same rule the ranks apply at run
// time (decide_rank_placement), or the reason the mode cannot run here.
#include <fmt/format.h>

#include "scalebench/base/error.hpp"
#include "scalebench/topology/placement.hpp"

namespace scalebench {
namespace {

Mode default_node_layout(const Topology& t, bool gpus_usable) {
  if (gpus_usable && !t.visible_gpus().empty()) return Mode::gpu;
  if (t.cpu_numa_domains().size() > 1) return Mode::numa;
  return Mode::multi_thread;
}

void fill(PlacementPlan& plan, const Topology& t, PinPolicy pin, int ranks, int threads) {
  const auto unbound = t.cpus();  // plans describe ranks the launcher did not bind
  for (int r = 0; r < ranks; ++r) {
    PlacementRequest request;
    request.pin = pin;
    request.local_rank = r;
    request.local_size = ranks;
    request.threads = threads;
    plan.ranks.push_back(decide_rank_placement(t, request, unbound));
  }
  plan.possible = true;
  plan.pin = pin;
  plan.ranks_per_node = ranks;
  plan.fixed_threads = threads;
}

}  // namespace

PlacementPlan plan_placement(const Topology& topology, Mode mode, const PlanOptions& options) {
  if (options.nodes < 1) throw UsageError(fmt::format("--nodes {} must be at least 1", options.nodes));
  PlacementPlan plan;
  plan.mode = mode;
  plan.layout = mode;
  plan.numa_domains_per_node = static_cast<int>(topology.cpu_numa_domains().size());
  switch (mode) {
    case Mode::naive:
    case Mode::single_core: fill(plan, topology, PinPolicy::core, 1, 1); break;
    case Mode::multi_thread: fill(plan, topology, PinPolicy::core, 1, 0); break;
    case Mode::numa: {
      const int domains = static_cast<int>(topology.cpu_numa_domains().size());
      if (domains < 2) {
        plan.reason = "one NUMA domain: same as multi-thread";
      } else {
        fill(plan, topology, PinPolicy::numa, domains, 0);
      }
      break;
    }
    case Mode::gpu:
      // The GPUs a process started here sees (CUDA_VISIBLE_DEVICES), one rank each.
      if (topology.visible_gpus().empty()) {
        plan.reason = topology.gpus().empty() ? "no GPU" : "no GPU visible: " + topology.gpus_note();
      } else {
        fill(plan, topology, PinPolicy::gpu, static_cast<int>(topology.visible_gpus().size()), 0);
      }
      break;
    case Mode::multinode: {
      const Mode layout = options.node_layout.value_or(default_node_layout(topology, options.gpus_usable));
      if (layout != Mode::multi_thread && layout != Mode::numa && layout != Mode::gpu) {
        throw UsageError(fmt::format("multinode runs the multi-thread, numa or gpu layout on every node, not {}",
                                     mode_name(layout)));
      }
      plan.layout = layout;
      if (options.nodes < 2) {
        plan.reason = "one node";
        break;
      }
      PlacementPlan node = plan_placement(topology, layout);
      if (!node.possible) {
        plan.reason = fmt::format("{} layout: {}", mode_name(layout), node.reason);
        break;
      }
      plan = std::move(node);
      plan.mode = Mode::multinode;
      plan.layout = layout;
      plan.nodes = options.nodes;
      break;
    }
  }
  return plan;
}

std::vector<PlacementPlan> plan_all_modes(const Topology& topology, const PlanOptions& options) {
  std::vector<PlacementPlan> plans;
  for (Mode m : all_modes()) plans.push_back(plan_placement(topology, m, options));
  return plans;
}

nlohmann::json PlacementPlan::to_json() const {
  nlohmann::json j{{"mode", mode_name(mode)}, {"possible", possible}};
  if (!possible) {
    j["reason"] = reason;
    return j;
  }
  j["layout"] = mode_name(layout);
  j["pin"] = pin_policy_name(pin);
  j["nodes"] = nodes;
  j["ranks_per_node"] = ranks_per_node;
  j["total_ranks"] = total_ranks();
  j["threads"] = fixed_threads > 0 ? nlohmann::json(fixed_threads) : nlohmann::json("cores owned");
  j["ranks"] = nlohmann::json::array();
  for (const auto& r : ranks) j["ranks"].push_back(r.to_json());
  for (Launcher l : {Launcher::mpirun, Launcher::srun}) {
    const LaunchArgs a = launch_args(*this, l);
    nlohmann::json lj{{"launcher_args", a.launcher_args}, {"program_args", a.program_args}};
    if (!a.notes.empty()) lj["notes"] = a.notes;
    j[l == Launcher::mpirun ? "mpirun" : "srun"] = lj;
  }
  return j;
}

}  // namespace scalebench
