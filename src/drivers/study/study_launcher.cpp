#include "study/study_launcher.hpp"
#include "scalebench/base/host.hpp"

#include <algorithm>
#include <cstdlib>
#include <initializer_list>

#include <fmt/format.h>

#include "results/files.hpp"

namespace scalebench::study {
using results::self_binary;

namespace {

bool names_option(const std::vector<std::string>& args, std::initializer_list<const char*> options) {
  return std::any_of(args.begin(), args.end(), [&](const std::string& a) {
    return std::any_of(options.begin(), options.end(), [&](const char* o) { return a == o; });
  });
}

}  // namespace

std::vector<std::string> StudyLauncher::argv(const StudyRun& r) const {
  const LaunchSetup& s = setup;
  std::vector<std::string> a = {s.program};
  const std::string k = std::to_string(r.ranks_per_node);
  if (s.launcher == "mpirun") {
    a.insert(a.end(), {"-np", std::to_string(r.ranks)});
    if (r.placed || !s.hosts.empty()) {
      if (!names_option(s.extra, {"--map-by", "-map-by", "--npernode", "-npernode"})) {
        a.insert(a.end(), {"--map-by", fmt::format("ppr:{}:node", k)});
      }
      if (!names_option(s.extra, {"--bind-to", "-bind-to"})) a.insert(a.end(), {"--bind-to", "none"});
      const auto h = host_args(s, r.nodes, r.ranks_per_node);
      a.insert(a.end(), h.begin(), h.end());
    }
  } else {
    a.insert(a.end(), {"-n", std::to_string(r.ranks), fmt::format("--nodes={}", r.nodes),
                       fmt::format("--ntasks-per-node={}", k)});
  }
  a.insert(a.end(), s.extra.begin(), s.extra.end());
  a.push_back(binary);
  a.insert(a.end(), r.workload_argv.begin(), r.workload_argv.end());
  return a;
}

std::string StudyLauncher::limit(const StudyRun& r) const {
  const LaunchSetup& s = setup;
  if (r.nodes > s.nodes) return fmt::format("needs {} nodes; {} gives {}", r.nodes, s.nodes_from, s.nodes);
  const bool local = s.launcher == "srun" || s.hosts.empty();
  if (local && cpus_per_node > 0 && r.ranks_per_node > cpus_per_node &&
      !names_option(s.extra, {"--oversubscribe", "-oversubscribe", "--overcommit", "-O"})) {
    return fmt::format("{} ranks per node but {} gives {} CPUs per node (add --oversubscribe to mpirun_args to "
                       "run them anyway)",
                       r.ranks_per_node, s.nodes_from, cpus_per_node);
  }
  return "";
}

StudyLauncher make_launcher(const StudyOptions& o, const StudySpec& spec) {
  LaunchRequest request;
  request.launcher = o.launcher;
  const bool cli_hosts = !o.hosts.empty() || !o.hostfile.empty();
  request.hosts = cli_hosts ? o.hosts : spec.hosts;
  request.hostfile = cli_hosts ? o.hostfile : spec.hostfile;
  request.hostfile_origin = cli_hosts ? "--hostfile" : fmt::format("hostfile of {}", spec.file);
  request.mpirun_args = spec.mpirun_args;
  request.srun_args = spec.srun_args;
  request.dry_run = o.dry_run;
  StudyLauncher l{&spec, resolve_launch(request), o.binary.empty() ? self_binary() : o.binary, 0};
  l.cpus_per_node = allocation_cpus(std::getenv("SLURM_CPUS_ON_NODE"), std::getenv("SLURM_JOB_CPUS_PER_NODE"),
                                    static_cast<int>(allowed_cpus().size()));
  return l;
}

}  // namespace scalebench::study
