// A placement plan as launcher options (Open MPI 4.x mpirun, Slurm srun) plus the scalebench
// options the ranks run with. The launcher binds where its syntax can express the plan; where it
// cannot (irregular layouts) it does not bind and each rank binds itself with --pin.
#include <algorithm>
#include <map>
#include <string>

#include <fmt/format.h>

#include "scalebench/base/error.hpp"
#include "scalebench/topology/placement.hpp"

namespace scalebench {
namespace {

void require_possible(const PlacementPlan& plan) {
  if (!plan.possible) {
    throw UsageError(
        fmt::format("mode {} cannot run here ({}); it has no launch command", mode_name(plan.mode), plan.reason));
  }
}

std::vector<std::string> program_args(const PlacementPlan& plan) {
  std::vector<std::string> a{"--pin", std::string(pin_policy_name(plan.pin))};
  if (plan.fixed_threads > 0) {
    a.emplace_back("--threads");
    a.push_back(std::to_string(plan.fixed_threads));
  }
  return a;
}

// The common core count of the ranks, or 0 if they differ.
int uniform_cores(const PlacementPlan& plan) {
  const int c = plan.ranks.front().cores;
  for (const auto& r : plan.ranks) {
    if (r.cores != c) return 0;
  }
  return c;
}

int max_cpus(const PlacementPlan& plan) {
  std::size_t m = 0;
  for (const auto& r : plan.ranks) m = std::max(m, r.cpus.size());
  return static_cast<int>(m);
}

// GPU ranks per NUMA domain when every domain holding GPU ranks holds the same number and every
// domain of the node holds some (what `ppr:G:numa` means); 0 otherwise.
int uniform_gpu_ranks_per_domain(const PlacementPlan& plan, int cpu_domains) {
  std::map<int, int> per_domain;
  for (const auto& r : plan.ranks) {
    if (!r.gpu || r.gpu->numa_domain < 0) return 0;
    ++per_domain[r.gpu->numa_domain];
  }
  if (static_cast<int>(per_domain.size()) != cpu_domains) return 0;
  const int g = per_domain.begin()->second;
  for (const auto& [domain, n] : per_domain) {
    if (n != g) return 0;
  }
  return g;
}

}  // namespace

LaunchArgs mpirun_args(const PlacementPlan& plan) {
  require_possible(plan);
  LaunchArgs out;
  out.program_args = program_args(plan);
  auto& a = out.launcher_args;
  a = {"-np", std::to_string(plan.total_ranks())};
  const int cores = uniform_cores(plan);
  switch (plan.layout) {
    case Mode::numa:
      if (cores > 0) {
        a.insert(a.end(), {"--map-by", fmt::format("ppr:1:numa:PE={}", cores), "--bind-to", "core"});
      } else {
        a.insert(a.end(), {"--map-by", "ppr:1:numa", "--bind-to", "numa"});
        out.notes.emplace_back("NUMA domains differ in core count: each rank is bound to its whole domain");
      }
      break;
    case Mode::gpu: {
      // Domains with GPUs each get the same number of ranks only on regular nodes; elsewhere
      // mpirun cannot express the layout and the ranks bind themselves.
      // Across nodes neither: Open MPI 4.1 (with PMIx 5) can put ranks that a remote node's daemon
      // bound in MPI_COMM_TYPE_SHARED groups of their own, and the node's ranks would then not
      // share B or learn their GPUs from MPI's split.
      const int g = uniform_gpu_ranks_per_domain(plan, plan.numa_domains_per_node);
      if (plan.nodes > 1) {
        a.insert(a.end(), {"--map-by", fmt::format("ppr:{}:node", plan.ranks_per_node), "--bind-to", "none"});
        out.notes.emplace_back(
            "GPU ranks across nodes: mpirun does not bind; each rank binds itself near its GPU (--pin gpu)");
      } else if (g > 0 && cores > 0) {
        a.insert(a.end(), {"--map-by", fmt::format("ppr:{}:numa:PE={}", g, cores), "--bind-to", "core"});
      } else {
        a.insert(a.end(), {"--map-by", fmt::format("ppr:{}:node", plan.ranks_per_node), "--bind-to", "none"});
        out.notes.emplace_back(
            "GPUs are not spread evenly over the NUMA domains: mpirun does not bind; each rank binds itself "
            "near its GPU (--pin gpu)");
      }
      break;
    }
    default:  // naive, single-core, multi-thread: one rank per node on `cores` cores
      a.insert(a.end(), {"--map-by", fmt::format("ppr:1:node:PE={}", plan.ranks.front().cores), "--bind-to", "core"});
      break;
  }
  if (plan.nodes > 1) {
    out.notes.push_back(fmt::format("run inside an allocation of {} nodes or add --hostfile", plan.nodes));
  }
  return out;
}

LaunchArgs srun_args(const PlacementPlan& plan) {
  require_possible(plan);
  LaunchArgs out;
  out.program_args = program_args(plan);
  auto& a = out.launcher_args;
  // Slurm counts CPUs as PUs (hardware threads); asking for all PUs of the cores keeps whole cores.
  a = {fmt::format("--nodes={}", plan.nodes), fmt::format("--ntasks={}", plan.total_ranks()),
       fmt::format("--ntasks-per-node={}", plan.ranks_per_node), fmt::format("--cpus-per-task={}", max_cpus(plan)),
       "--distribution=block:block"};
  if (plan.layout == Mode::numa) {
    a.emplace_back("--cpu-bind=ldoms");
    if (uniform_cores(plan) == 0) {
      out.notes.emplace_back("NUMA domains differ in core count: --cpus-per-task is the largest domain's");
    }
  } else {
    a.emplace_back("--cpu-bind=cores");
  }
  if (plan.layout == Mode::gpu) {
    a.emplace_back("--gpus-per-task=1");
    a.emplace_back("--gpu-bind=closest");
  }
  return out;
}

LaunchArgs launch_args(const PlacementPlan& plan, Launcher launcher) {
  return launcher == Launcher::mpirun ? mpirun_args(plan) : srun_args(plan);
}

std::string join_args(const std::vector<std::string>& args) {
  std::string out;
  for (const auto& arg : args) {
    if (!out.empty()) out += ' ';
    const bool plain = !arg.empty() && arg.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                             "0123456789-_=:.,/+@%") == std::string::npos;
    if (plain) {
      out += arg;
    } else {
      out += '\'';
      for (char c : arg) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
      out += '\'';
    }
  }
  return out;
}

}  // namespace scalebench
