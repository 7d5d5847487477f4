// decide_rank_placement(): the one rule that gives a rank its CPUs, NUMA domains, GPU and
// threads. Pure: reads only the topology's description.
#include <algorithm>
#include <iterator>
#include <set>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "scalebench/base/error.hpp"
#include "scalebench/base/host.hpp"
#include "scalebench/topology/placement.hpp"

namespace scalebench {
namespace {

using CoreList = std::vector<const CoreInfo*>;

// Block `part` of `parts` over [0, n): sizes differ by at most one, larger blocks first.
std::pair<int, int> block(int n, int parts, int part) {
  const int base = n / parts, extra = n % parts;
  const int begin = part * base + std::min(part, extra);
  return {begin, begin + base + (part < extra ? 1 : 0)};
}

// Fills cpus, cores, numa_domains from a set of cores.
void take_cores(RankPlacement& p, const CoreList& cores) {
  std::set<int> cpus, domains;
  for (const CoreInfo* c : cores) {
    cpus.insert(c->pus.begin(), c->pus.end());
    if (c->numa_domain >= 0) domains.insert(c->numa_domain);
  }
  p.cpus.assign(cpus.begin(), cpus.end());
  p.numa_domains.assign(domains.begin(), domains.end());
  p.cores = static_cast<int>(cores.size());
}

// Rank `position` of `sharers` takes its block of `cores`; with more sharers than cores the
// ranks wrap around and share cores (warned).
CoreList share_of(const CoreList& cores, int sharers, int position, const std::string& what,
                  std::vector<std::string>& warnings) {
  const int n = static_cast<int>(cores.size());
  if (sharers <= n) {
    auto [b, e] = block(n, sharers, position);
    return CoreList(cores.begin() + b, cores.begin() + e);
  }
  warnings.push_back(fmt::format("oversubscribed: {} ranks share the {} core(s) of {}", sharers, n, what));
  return CoreList{cores[static_cast<std::size_t>(position % n)]};
}

CoreList cores_of_domain(const Topology& t, int domain) {
  CoreList out;
  for (const auto& c : t.cores()) {
    if (c.numa_domain == domain) out.push_back(&c);
  }
  return out;
}

CoreList all_cores(const Topology& t) {
  CoreList out;
  for (const auto& c : t.cores()) out.push_back(&c);
  return out;
}

// The node's GPUs its ranks drive, in placement order: by nearest NUMA domain, then PCI bus id.
// Consecutive local ranks then land on the same domain, as `--map-by ppr:G:numa` places them.
// The GPUs CUDA_VISIBLE_DEVICES leaves when it leaves several, or one for one rank (the ranks
// share that setting); every GPU on the bus when it shows each of several ranks one GPU (one GPU
// per task: each rank's own) or none.
std::vector<GpuInfo> gpus_in_placement_order(const Topology& t, const PlacementRequest& r) {
  const auto& visible = t.visible_gpus();
  const bool one_each = visible.size() == 1 && r.local_size > 1;
  std::vector<GpuInfo> g = visible.empty() || one_each ? t.gpus() : visible;
  std::stable_sort(g.begin(), g.end(), [](const GpuInfo& a, const GpuInfo& b) {
    return a.numa_domain != b.numa_domain ? a.numa_domain < b.numa_domain : a.pci_bus_id < b.pci_bus_id;
  });
  return g;
}

PinPolicy resolve_auto(const Topology& t, const PlacementRequest& r) {
  if (!r.gpu_pci_bus_id.empty()) return PinPolicy::gpu;
  if (r.local_size == 1) return PinPolicy::core;
  const auto domains = static_cast<int>(t.cpu_numa_domains().size());
  if (domains > 1 && r.local_size % domains == 0) return PinPolicy::numa;
  return PinPolicy::core;
}

void place_core(const Topology& t, const PlacementRequest& r, RankPlacement& p) {
  CoreList mine = share_of(all_cores(t), r.local_size, r.local_rank, "this node", p.warnings);
  if (r.threads > 0 && r.threads < static_cast<int>(mine.size())) mine.resize(static_cast<std::size_t>(r.threads));
  take_cores(p, mine);
}

void place_numa(const Topology& t, const PlacementRequest& r, RankPlacement& p) {
  const auto domains = t.cpu_numa_domains();
  const int nd = static_cast<int>(domains.size());
  if (nd == 0) throw ResourceError("--pin numa: hwloc reports no NUMA domain holding cores; use --pin core");
  // Consecutive ranks on the same domain; with fewer ranks than domains, rank r takes domain r.
  int domain_index = r.local_rank, sharers = 1, position = 0;
  if (r.local_size > nd) {
    for (int d = 0; d < nd; ++d) {
      auto [b, e] = block(r.local_size, nd, d);
      if (r.local_rank >= b && r.local_rank < e) {
        domain_index = d;
        sharers = e - b;
        position = r.local_rank - b;
      }
    }
  }
  const auto& domain = domains[static_cast<std::size_t>(domain_index)];
  CoreList mine = share_of(cores_of_domain(t, domain.os_index), sharers, position,
                           fmt::format("NUMA domain {}", domain.os_index), p.warnings);
  if (r.threads > 0 && r.threads < static_cast<int>(mine.size())) mine.resize(static_cast<std::size_t>(r.threads));
  take_cores(p, mine);
  p.numa_domains = {domain.os_index};
  p.bind_memory = true;
}

std::string bus_ids(const std::vector<GpuInfo>& gpus) {
  std::string s;
  for (const auto& g : gpus) s += (s.empty() ? "" : ", ") + g.pci_bus_id;
  return s;
}

// The GPU of every local rank: rank i drives GPU i % G in placement order, except the calling
// rank when it named its GPU.
std::vector<GpuInfo> gpus_of_local_ranks(const Topology& t, const PlacementRequest& r) {
  const auto gpus = gpus_in_placement_order(t, r);
  if (gpus.empty()) {
    throw ResourceError("--pin gpu: this machine's topology shows no NVIDIA GPU; use --pin core or numa");
  }
  std::vector<GpuInfo> used;
  for (int i = 0; i < r.local_size; ++i) used.push_back(gpus[static_cast<std::size_t>(i) % gpus.size()]);
  if (!r.gpu_pci_bus_id.empty()) {
    const GpuInfo* named = t.gpu_by_pci_bus_id(r.gpu_pci_bus_id);
    if (named == nullptr) {
      throw ResourceError(fmt::format("--pin gpu: GPU {} is not in this machine's topology (its GPUs: {})",
                                      r.gpu_pci_bus_id, bus_ids(gpus)));
    }
    used[static_cast<std::size_t>(r.local_rank)] = *named;
  }
  return used;
}

void place_gpu(const Topology& t, const PlacementRequest& r, RankPlacement& p) {
  const std::vector<GpuInfo> used = gpus_of_local_ranks(t, r);
  const int ng = static_cast<int>(t.gpus().size());
  const GpuInfo& mine = used[static_cast<std::size_t>(r.local_rank)];
  if (r.local_size > ng) {
    p.warnings.push_back(fmt::format("{} ranks on this node share its {} GPU(s)", r.local_size, ng));
  }
  // The ranks whose GPU sits on the same domain split that domain's cores, in local rank order.
  int sharers = 0, position = 0;
  for (int i = 0; i < r.local_size; ++i) {
    if (used[static_cast<std::size_t>(i)].numa_domain != mine.numa_domain) continue;
    if (i == r.local_rank) position = sharers;
    ++sharers;
  }
  CoreList pool = mine.numa_domain >= 0 ? cores_of_domain(t, mine.numa_domain) : all_cores(t);
  if (mine.numa_domain < 0) {
    p.warnings.push_back(
        fmt::format("GPU {} has no known NUMA locality; its rank shares the whole node", mine.pci_bus_id));
  }
  CoreList cores = share_of(pool, sharers, position,
                            mine.numa_domain >= 0 ? fmt::format("NUMA domain {}", mine.numa_domain) : "this node",
                            p.warnings);
  if (r.threads > 0 && r.threads < static_cast<int>(cores.size())) cores.resize(static_cast<std::size_t>(r.threads));
  take_cores(p, cores);
  if (mine.numa_domain >= 0) {
    p.numa_domains = {mine.numa_domain};
    p.bind_memory = true;
  }
  p.gpu = mine;
}

void place_launcher_bound(const Topology& t, const std::vector<int>& affinity, RankPlacement& p) {
  const CoreList cores = t.cores_in(affinity);
  take_cores(p, cores);
  p.cpus = affinity;  // exactly what the launcher gave, even a partial core
  p.launcher_bound = true;
}

}  // namespace

RankPlacement decide_rank_placement(const Topology& topology, const PlacementRequest& request,
                                    const std::vector<int>& current_affinity) {
  if (request.local_size < 1 || request.local_rank < 0 || request.local_rank >= request.local_size) {
    throw UsageError(
        fmt::format("local rank {} of {} is not a valid placement request", request.local_rank, request.local_size));
  }
  if (request.threads < 0) throw UsageError(fmt::format("--threads {} must be 0 (auto) or positive", request.threads));
  if (topology.cores().empty()) throw ResourceError("hwloc reports no usable core on this machine");

  RankPlacement p;
  p.local_rank = request.local_rank;
  p.pin = request.pin == PinPolicy::automatic ? resolve_auto(topology, request) : request.pin;

  const auto machine = topology.cpus();
  std::vector<int> affinity = current_affinity;
  std::sort(affinity.begin(), affinity.end());
  // Only the machine's PUs count: a mask wider than the topology (offline CPUs) is not a binding.
  std::vector<int> within;
  std::set_intersection(affinity.begin(), affinity.end(), machine.begin(), machine.end(), std::back_inserter(within));
  const bool narrower = !within.empty() && within.size() < machine.size();
  const bool bound_by_launcher = narrower && !request.launcher_default;
  if (narrower && request.launcher_default && p.pin != PinPolicy::none) p.replaced_default = within;

  if (p.pin == PinPolicy::none) {
    place_launcher_bound(topology, within.empty() ? machine : within, p);
    p.launcher_bound = bound_by_launcher;
  } else if (bound_by_launcher) {
    // The launcher chose; keep its CPUs. A GPU rank still drives its GPU and binds memory near it.
    place_launcher_bound(topology, within, p);
    if (p.pin == PinPolicy::gpu) {
      p.gpu = gpus_of_local_ranks(topology, request)[static_cast<std::size_t>(request.local_rank)];
    }
    p.bind_memory = p.pin == PinPolicy::numa || p.pin == PinPolicy::gpu;
  } else if (p.pin == PinPolicy::core) {
    place_core(topology, request, p);
  } else if (p.pin == PinPolicy::numa) {
    place_numa(topology, request, p);
  } else {
    place_gpu(topology, request, p);
  }

  p.threads = request.threads > 0 ? request.threads : std::max(1, p.cores);
  if (p.threads > p.cores) {
    p.warnings.push_back(
        fmt::format("oversubscribed: {} threads on {} core(s) (PUs {})", p.threads, p.cores, format_cpu_list(p.cpus)));
  }
  return p;
}

nlohmann::json RankPlacement::to_json() const {
  nlohmann::json j{
      {"local_rank", local_rank}, {"pin", pin_policy_name(pin)},     {"cpus", format_cpu_list(cpus)},
      {"cores", cores},           {"numa_domains", numa_domains},    {"memory", bind_memory ? "bind" : "first-touch"},
      {"threads", threads},       {"launcher_bound", launcher_bound}};
  j["gpu"] = gpu ? nlohmann::json{{"pci_bus_id", gpu->pci_bus_id},
                                  {"model", gpu->model},
                                  {"numa_domain",
                                   gpu->numa_domain >= 0 ? nlohmann::json(gpu->numa_domain) : nlohmann::json()}}
                 : nlohmann::json();
  if (!replaced_default.empty()) j["replaced_launcher_default"] = format_cpu_list(replaced_default);
  if (!warnings.empty()) j["warnings"] = warnings;
  return j;
}

}  // namespace scalebench
