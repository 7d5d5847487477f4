// `scalebench topology`: the machine as hwloc sees it (or a saved XML export of another one) and
// the placement plan of every mode, with the launcher options that realise it. Needs no MPI.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "commands.hpp"
#include "run_support.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/base/host.hpp"
#include "scalebench/base/json_field.hpp"
#include "scalebench/base/output_file.hpp"
#include "scalebench/base/parse.hpp"
#include "scalebench/topology/placement.hpp"
#include "scalebench/topology/topology.hpp"

namespace scalebench::app {
namespace {

struct TopologyOptions {
  std::string xml;
  std::string export_xml;
  bool json = false;
  std::string nodes;  // empty: the Slurm allocation's node count, else 1
};

int allocation_nodes() {
  const char* n = std::getenv("SLURM_JOB_NUM_NODES");
  const int v = n != nullptr ? std::atoi(n) : 0;
  return v > 0 ? v : 1;
}

std::string gib(std::uint64_t bytes) { return fmt::format("{:.1f} GiB", static_cast<double>(bytes) / (1ull << 30)); }

std::string domains_text(const std::vector<int>& d) { return d.empty() ? "-" : format_cpu_list(d); }

void print_machine(const Topology& t) {
  std::printf("topology: %s%s\n", t.source().c_str(),
              t.host().empty() ? "" : fmt::format(" (host {})", t.host()).c_str());
  std::printf("  %zu package(s), %zu NUMA domain(s), %zu core(s), %zu PU(s), %zu GPU(s)\n", t.packages().size(),
              t.numa_domains().size(), t.cores().size(), t.cpus().size(), t.gpus().size());
  for (const auto& p : t.packages()) {
    std::printf("  package %d: %s; %d cores, PUs %s; NUMA %s\n", p.os_index,
                p.cpu_model.empty() ? "unknown CPU" : p.cpu_model.c_str(), p.cores, format_cpu_list(p.cpus).c_str(),
                domains_text(p.numa_domains).c_str());
  }
  for (const auto& d : t.numa_domains()) {
    std::printf("  NUMA %d: %d cores, PUs %s, %s\n", d.os_index, d.cores,
                d.cpus.empty() ? "none (memory only)" : format_cpu_list(d.cpus).c_str(),
                gib(d.local_memory_bytes).c_str());
  }
  for (const auto& g : t.gpus()) {
    std::string devs;
    for (const auto& o : g.os_devices) devs += (devs.empty() ? "" : ",") + o;
    std::printf("  GPU %d: %s at %s%s; nearest NUMA %s, local PUs %s\n", g.index, g.model.c_str(), g.pci_bus_id.c_str(),
                devs.empty() ? "" : fmt::format(" ({})", devs).c_str(),
                g.numa_domain >= 0 ? std::to_string(g.numa_domain).c_str() : "unknown",
                format_cpu_list(g.local_cpus).c_str());
  }
  if (t.gpus().empty()) std::printf("  no NVIDIA GPU\n");
  if (!t.gpus_note().empty()) std::printf("  %s: the plans below count those\n", t.gpus_note().c_str());
}

void print_plan(const PlacementPlan& plan) {
  if (!plan.possible) {
    std::printf("  %-13s not possible here: %s\n", std::string(mode_name(plan.mode)).c_str(), plan.reason.c_str());
    return;
  }
  std::printf("  %-13s %d node(s) x %d rank(s), --pin %s%s\n", std::string(mode_name(plan.mode)).c_str(), plan.nodes,
              plan.ranks_per_node, std::string(pin_policy_name(plan.pin)).c_str(),
              plan.mode == Mode::multinode ? fmt::format(" ({} layout on each node)", mode_name(plan.layout)).c_str()
                                           : "");
  for (const auto& r : plan.ranks) {
    std::printf("    rank %d: PUs %s (%d core(s), %d thread(s)), NUMA %s%s%s\n", r.local_rank,
                format_cpu_list(r.cpus).c_str(), r.cores, r.threads, domains_text(r.numa_domains).c_str(),
                r.bind_memory ? " bound" : " first-touch",
                r.gpu ? fmt::format(", GPU {} ({})", r.gpu->index, r.gpu->pci_bus_id).c_str() : "");
    for (const auto& w : r.warnings) std::printf("      warning: %s\n", w.c_str());
  }
  for (Launcher l : {Launcher::mpirun, Launcher::srun}) {
    const LaunchArgs a = launch_args(plan, l);
    std::printf("    %-6s %s scalebench <workload> %s\n", l == Launcher::mpirun ? "mpirun" : "srun",
                join_args(a.launcher_args).c_str(), join_args(a.program_args).c_str());
    for (const auto& n : a.notes) std::printf("           note: %s\n", n.c_str());
  }
}

int run_topology(const TopologyOptions& o) {
  try {
    if (!o.export_xml.empty()) check_output_path(o.export_xml, "--export-xml");  // before any work
    const Topology t = o.xml.empty() ? Topology::load(IoDiscovery::gpu_libraries) : Topology::load_xml(o.xml);
    if (!o.export_xml.empty()) {
      t.export_xml(o.export_xml);
      std::fprintf(stderr, "scalebench: wrote the topology of %s to %s\n", t.source().c_str(), o.export_xml.c_str());
    }
    PlanOptions plan_options;
    plan_options.nodes = o.nodes.empty() ? allocation_nodes()
                                         : static_cast<int>(parse_integer("--nodes", o.nodes, 1, 1 << 20));
    const auto plans = plan_all_modes(t, plan_options);
    if (o.json) {
      nlohmann::json j = t.to_json();
      j["plans"] = nlohmann::json::array();
      for (const auto& p : plans) j["plans"].push_back(p.to_json());
      std::printf("%s\n", json_text(j, 2).c_str());
    } else {
      print_machine(t);
      std::printf("placement plans (%d node(s); docs/placement.md defines the modes):\n", plan_options.nodes);
      for (const auto& p : plans) print_plan(p);
    }
    std::fflush(stdout);
    return 0;
  } catch (const Error& e) {
    print_error(e.what());
    return static_cast<int>(e.code());
  }
}

}  // namespace

Subcommand register_topology(CLI::App& root) {
  auto* app =
      root.add_subcommand("topology",
                          "Show the machine (packages, NUMA domains, cores, PUs, GPUs with their locality) and the "
                          "placement plan of every mode, with the mpirun and srun options that realise it");
  auto o = std::make_shared<TopologyOptions>();
  app->add_option("--xml", o->xml,
                  "Read a saved hwloc XML export instead of this machine (HWLOC_XMLFILE does the same)");
  app->add_option("--export-xml", o->export_xml,
                  "Write the topology, I/O devices (GPUs, NICs) included, as hwloc XML to this file");
  app->add_flag("--json", o->json, "Print JSON instead of text");
  app->add_option("--nodes", o->nodes,
                  "Nodes of the allocation for the multinode plan (default: SLURM_JOB_NUM_NODES, else 1)");
  return {app, [o] { return run_topology(*o); }};
}

}  // namespace scalebench::app
