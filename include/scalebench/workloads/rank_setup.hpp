#pragma once
// What every workload rank does first: bind itself per --pin (docs/placement.md) and decide how
// many worker threads it runs. Shared by gemm and montecarlo so both place ranks identically.
#include <string>

#include "scalebench/topology/placement.hpp"

namespace scalebench {

class Communicator;

struct RankSetup {
  PlacementReport report;
  int threads = 1;
  std::string threads_source;  // "--threads", "OPENBLAS_NUM_THREADS", "cores owned (--pin core)", ...
  std::string gpu_pci_bus_id;  // the GPU this rank drives, as CUDA names it; empty for a CPU rank
};

// Collective over `comm` (finds the node-local rank); failures on any rank become an AgreedError
// on every rank. threads_requested 0 means: OPENBLAS_NUM_THREADS / OMP_NUM_THREADS if set, else
// the cores the placement gives this rank (or the CPUs it may use with --pin none).
// `thread_env` lists the environment variables that may set the thread count, in precedence order.
// A GPU rank (gpu_option: the option that asked for the GPU, e.g. "--backend cuda"; empty for a
// CPU rank) first selects its GPU (select_gpu_for_rank, collective) and binds near it.
RankSetup setup_rank(const Communicator& comm, PinPolicy pin, int threads_requested, const std::string& gpu_option,
                     bool share_gpu,
                     const std::vector<std::string>& thread_env = {"OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"});

// --dry-run of a GPU run on a machine with several GPUs visible: the rank-count check the real
// run makes (more ranks on a node than GPUs needs --share-gpu), without creating a context, so a
// study's check sees it. Nothing when fewer than two GPUs are visible (none: the plan may be for
// elsewhere; one: each rank may see its own). A build without CUDA: NoCudaError naming
// `gpu_option`. Collective; the error is agreed.
void check_gpu_ranks_dry_run(const Communicator& comm, bool share_gpu, const std::string& gpu_option);

}  // namespace scalebench
