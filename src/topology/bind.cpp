// apply_placement(): binds the calling process to its share of the machine (CPUs with hwloc,
// memory with an hwloc membind policy) and checks with the OS that the binding took effect.
#include <hwloc.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "hwloc_util.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/base/host.hpp"
#include "scalebench/topology/placement.hpp"

namespace scalebench {
namespace {

std::string domains_text(const std::vector<int>& d) { return d.empty() ? "none" : format_cpu_list(d); }

void bind_cpus(const Topology& t, PlacementReport& report) {
  const auto set = detail::bitmap_of(report.placement.cpus);
  // PROCESS: every thread of the process, those already started (MPI progress, BLAS pool) too.
  if (hwloc_set_cpubind(t.handle(), set.get(), HWLOC_CPUBIND_PROCESS) != 0) {
    report.warnings.push_back(
        fmt::format("CPU binding to PUs {} failed: {}", format_cpu_list(report.placement.cpus), std::strerror(errno)));
    return;
  }
  report.cpu_binding_applied = true;
}

void bind_memory(const Topology& t, PlacementReport& report) {
  const auto& domains = report.placement.numa_domains;
  const auto nodes = detail::bitmap_of(domains);
  // No PROCESS/THREAD flag: hwloc uses what the OS offers (on Linux the calling thread's policy,
  // which threads created later inherit). Buffers first touched after this land on `domains`.
  if (hwloc_set_membind(t.handle(), nodes.get(), HWLOC_MEMBIND_BIND, HWLOC_MEMBIND_BYNODESET) != 0) {
    report.warnings.push_back(
        fmt::format("memory binding to NUMA domain(s) {} failed: {}", domains_text(domains), std::strerror(errno)));
    report.memory_policy = "first-touch";
    return;
  }
  report.memory_binding_applied = true;
  report.memory_policy = "bind";

  // Verify: the policy the OS now reports.
  auto got = detail::make_bitmap();
  hwloc_membind_policy_t policy = HWLOC_MEMBIND_DEFAULT;
  if (hwloc_get_membind(t.handle(), got.get(), &policy, HWLOC_MEMBIND_BYNODESET) == 0 &&
      (policy != HWLOC_MEMBIND_BIND || !hwloc_bitmap_isequal(got.get(), nodes.get()))) {
    report.warnings.push_back(fmt::format("memory binding did not take effect: asked for NUMA domain(s) {}, the OS "
                                          "reports domain(s) {}",
                                          domains_text(domains), domains_text(detail::cpus_of(got.get()))));
  }
}

}  // namespace

bool launcher_binding_is_default() {
  const auto set = [](const char* name) {
    const char* v = std::getenv(name);
    return v != nullptr && *v != '\0';
  };
  if (!set("OMPI_MCA_orte_bound_at_launch")) return false;
  for (const char* asked : {"OMPI_MCA_hwloc_base_binding_policy", "OMPI_MCA_rmaps_base_mapping_policy",
                            "OMPI_MCA_hwloc_base_cpu_set", "OMPI_MCA_hwloc_base_cpu_list"}) {
    if (set(asked)) return false;
  }
  return true;
}

PlacementReport apply_placement(const PlacementRequest& request) {
  const Topology topology = Topology::load();
  return apply_placement(topology, request);
}

PlacementReport apply_placement(const Topology& topology, const PlacementRequest& request) {
  if (!topology.is_this_machine()) {
    throw UsageError(fmt::format("placement binds this machine, but the topology comes from {}; unset HWLOC_XMLFILE "
                                 "(or set HWLOC_THISSYSTEM=1 if it is an export of this very machine)",
                                 topology.source()));
  }
  PlacementReport report;
  report.requested = request.pin;
  report.affinity_before = allowed_cpus();
  report.placement = decide_rank_placement(topology, request, report.affinity_before);
  const RankPlacement& p = report.placement;
  report.warnings = p.warnings;
  report.memory_policy = p.pin == PinPolicy::none ? "default" : "first-touch";

  if (p.pin != PinPolicy::none && !p.launcher_bound) bind_cpus(topology, report);
  if (p.pin != PinPolicy::none && p.bind_memory && !p.numa_domains.empty()) bind_memory(topology, report);

  // Verify with the OS, not with hwloc: what the scheduler will actually use.
  report.affinity_after = allowed_cpus();
  if ((report.cpu_binding_applied || p.launcher_bound) && report.affinity_after != p.cpus) {
    report.warnings.push_back(fmt::format("CPU binding did not take effect: asked for PUs {}, the OS reports {}",
                                          format_cpu_list(p.cpus), format_cpu_list(report.affinity_after)));
  }
  return report;
}

void PlacementReport::record_buffer(const std::string& name, const void* p, std::size_t bytes) {
  const std::vector<int> nodes = numa_nodes_of(p, bytes);
  nlohmann::json entry{{"bytes", bytes}, {"numa_nodes", nodes}};
  const auto& mine = placement.numa_domains;
  if (nodes.empty()) {
    entry["note"] = "no page touched yet, or the kernel reports no NUMA placement";
  } else if (!mine.empty() && !std::includes(mine.begin(), mine.end(), nodes.begin(), nodes.end())) {
    warnings.push_back(fmt::format("buffer {} has pages on NUMA node(s) {}, not only on this rank's domain(s) {}", name,
                                   format_cpu_list(nodes), domains_text(mine)));
  }
  buffers_[name] = std::move(entry);
}

nlohmann::json PlacementReport::to_json() const {
  nlohmann::json j = placement.to_json();
  j.erase("warnings");
  j["requested"] = pin_policy_name(requested);
  j["binding"] = placement.pin == PinPolicy::none ? "none"
                 : placement.launcher_bound       ? "launcher"
                 : cpu_binding_applied            ? "scalebench"
                                                  : "failed";
  j["memory"] = memory_policy;
  j["affinity_before"] = format_cpu_list(affinity_before);
  j["affinity_os"] = format_cpu_list(affinity_after);
  j["buffers"] = buffers_;
  j["warnings"] = warnings;
  return j;
}

}  // namespace scalebench
