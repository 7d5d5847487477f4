#pragma once
// How a study launches its runs: the launch (launcher, hosts, extra arguments), this binary, and
// what this host or allocation can hold.
#include <string>
#include <vector>

#include "scalebench/drivers/launch.hpp"
#include "scalebench/drivers/study.hpp"

namespace scalebench::study {

struct StudyLauncher {
  const StudySpec* spec;
  LaunchSetup setup;
  std::string binary;
  int cpus_per_node = 0;  // what this host or allocation gives (0: unknown)

  // A run's launch command, without --json or --dry-run. With nodes, ranks per node or hosts,
  // mpirun places ranks_per_node ranks on each node (--map-by ppr:K:node) and leaves the binding
  // to the ranks (--pin), unless mpirun_args say otherwise; srun always says how many nodes.
  std::vector<std::string> argv(const StudyRun& r) const;
  // Why the launch cannot hold a run (more nodes than given, more ranks per node than the CPUs of
  // this host or allocation without --oversubscribe); empty when it can.
  std::string limit(const StudyRun& r) const;
};

// The launch of the study's file, with the command line's hosts and launcher over the file's.
StudyLauncher make_launcher(const StudyOptions& o, const StudySpec& spec);

}  // namespace scalebench::study
