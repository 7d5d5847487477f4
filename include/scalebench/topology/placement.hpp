#pragma once
// Where ranks run: the execution modes, the placement plan of a mode on a machine, the launcher
// arguments that realise it, and the run-time binding of one rank with its verification.
// docs/placement.md defines the modes and the pin policies.
//
// One rule decides a rank's CPUs everywhere: decide_rank_placement(). plan_placement() applies it
// to every rank of a mode, apply_placement() to the calling rank, so a plan printed by
// `scalebench topology` is what the ranks of that mode bind to.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "scalebench/topology/topology.hpp"

namespace scalebench {

// Execution modes, in the order the contrast shows them.
enum class Mode { naive, single_core, multi_thread, numa, gpu, multinode };
const std::vector<Mode>& all_modes();
std::string_view mode_name(Mode mode);   // "naive", "single-core", "multi-thread", "numa", "gpu", "multinode"
Mode parse_mode(std::string_view name);  // throws UsageError naming the valid modes

// How a rank binds itself at run time (--pin).
enum class PinPolicy { none, core, numa, gpu, automatic };
std::string_view pin_policy_name(PinPolicy pin);    // "none", "core", "numa", "gpu", "auto"
PinPolicy parse_pin_policy(std::string_view name);  // throws UsageError

// One rank's share of its node.
struct RankPlacement {
  int local_rank = 0;
  PinPolicy pin = PinPolicy::none;    // the policy that produced it (auto resolved)
  std::vector<int> cpus;              // PU OS indices the rank is bound to
  int cores = 0;                      // cores with a PU in `cpus`
  std::vector<int> numa_domains;      // NUMA domains (OS indices) of those cores
  bool bind_memory = false;           // memory bound to `numa_domains` (else first touch)
  std::optional<GpuInfo> gpu;         // the GPU this rank drives
  int threads = 0;                    // worker threads (BLAS, CPU kernels) the rank should run
  bool launcher_bound = false;        // `cpus` is the binding the launcher gave; kept as is
  std::vector<int> replaced_default;  // the launcher's default binding this placement replaced
  std::vector<std::string> warnings;  // oversubscription, shared cores, ...
  nlohmann::json to_json() const;
};

// What one rank asks for at run time.
struct PlacementRequest {
  PinPolicy pin = PinPolicy::automatic;
  int local_rank = 0;          // rank among the ranks of this node
  int local_size = 1;          // ranks on this node
  int threads = 0;             // 0: one per core owned; otherwise this many (narrows `core`)
  std::string gpu_pci_bus_id;  // the GPU this rank drives, if any (any form CUDA prints)
  // The CPU set the rank started with is the launcher's own default, not a binding anyone asked
  // for (launcher_binding_is_default()): the rank is placed as if unbound.
  bool launcher_default = false;
};

// Whether this process was bound by Open MPI's own default (mpirun binds 1 or 2 processes to a
// core each, more to a socket, when no --bind-to, --map-by or --cpu-set was given): mpirun says
// it bound the process (OMPI_MCA_orte_bound_at_launch) and no binding, mapping or CPU-set
// parameter was passed (OMPI_MCA_hwloc_base_binding_policy, OMPI_MCA_rmaps_base_mapping_policy,
// OMPI_MCA_hwloc_base_cpu_set, OMPI_MCA_hwloc_base_cpu_list). Such a binding leaves a multi-threaded
// rank one core of the node; --pin places it instead. A site default in Open MPI's parameter
// file is not seen here: pass --bind-to to keep a binding, or --pin none.
bool launcher_binding_is_default();

// The pure rule. `current_affinity` is the rank's CPU set before binding (PU OS indices): when it
// is narrower than the machine, the launcher bound the rank and its binding is kept, unless it is
// the launcher's own default (request.launcher_default).
// Policies (docs/placement.md):
//   core: the node's cores are split into local_size contiguous blocks; rank r takes block r
//         (narrowed to `threads` cores when fewer are asked). Memory: first touch.
//   numa: ranks are spread over the NUMA domains that hold cores, consecutive ranks on the same
//         domain; ranks sharing a domain split its cores. Memory bound to the domain.
//   gpu:  the rank drives its GPU (the requested bus id, else the node's GPU local_rank % G in
//         placement order, of the GPUs CUDA_VISIBLE_DEVICES leaves unless it shows several ranks
//         one GPU each) and takes its share of that GPU's NUMA domain's cores, shared with
//         the other ranks whose GPU sits there. Memory bound to the domain.
//   auto: gpu if a GPU was named; core if alone on the node; numa if the ranks fill the NUMA
//         domains evenly (local_size a multiple of their count, more than one); core otherwise.
//   none: no binding; cpus = current affinity.
// Throws UsageError for a bad request and ResourceError for `gpu` on a machine without GPU.
RankPlacement decide_rank_placement(const Topology& topology, const PlacementRequest& request,
                                    const std::vector<int>& current_affinity);

// The plan of a mode on one node, repeated on every node of the allocation.
struct PlacementPlan {
  Mode mode = Mode::naive;
  bool possible = false;
  std::string reason;               // why not possible ("no GPU", "one node", ...)
  Mode layout = Mode::naive;        // the per-node mode (multinode: numa, gpu or multi-thread)
  PinPolicy pin = PinPolicy::none;  // what the ranks run with (--pin)
  int fixed_threads = 0;            // --threads the ranks must be given (0: one per core owned)
  int nodes = 1;
  int ranks_per_node = 0;
  int numa_domains_per_node = 0;     // NUMA domains holding cores, on each node
  std::vector<RankPlacement> ranks;  // the ranks of one node, by local rank
  int total_ranks() const { return nodes * ranks_per_node; }
  nlohmann::json to_json() const;
};

struct PlanOptions {
  int nodes = 1;                    // nodes of the allocation (multinode needs 2 or more)
  std::optional<Mode> node_layout;  // multinode's per-node layout; default: gpu if the node
                                    // has GPUs (and gpus_usable), else numa if it has several
                                    // domains, else multi-thread
  bool gpus_usable = true;          // false: a build without a GPU backend (GPUs are not a layout)
};

// Pure: depends only on the topology's description.
PlacementPlan plan_placement(const Topology& topology, Mode mode, const PlanOptions& options = {});
std::vector<PlacementPlan> plan_all_modes(const Topology& topology, const PlanOptions& options = {});

// A plan as a launcher command: `<launcher> <launcher_args> scalebench <workload> <program_args>`.
enum class Launcher { mpirun, srun };
struct LaunchArgs {
  std::vector<std::string> launcher_args;  // e.g. -np 2 --map-by ppr:1:numa:PE=7 --bind-to core
  std::vector<std::string> program_args;   // e.g. --pin numa (and --threads 1 where fixed)
  std::vector<std::string> notes;          // why a choice was made (irregular layouts, ...)
};
// Open MPI 4.x mpirun options: -np, --map-by, --bind-to. Throws UsageError if !plan.possible.
LaunchArgs mpirun_args(const PlacementPlan& plan);
// Slurm srun options: --nodes, --ntasks, --ntasks-per-node, --cpus-per-task, --cpu-bind,
// --gpus-per-task. Throws UsageError if !plan.possible.
LaunchArgs srun_args(const PlacementPlan& plan);
LaunchArgs launch_args(const PlacementPlan& plan, Launcher launcher);
std::string join_args(const std::vector<std::string>& args);  // shell-readable, one line

// What apply_placement did and what the OS says about it.
class PlacementReport {
 public:
  RankPlacement placement;  // the decision
  PinPolicy requested = PinPolicy::automatic;
  bool cpu_binding_applied = false;     // scalebench changed the CPU binding
  bool memory_binding_applied = false;  // scalebench bound memory to placement.numa_domains
  std::vector<int> affinity_before;     // sched_getaffinity before binding
  std::vector<int> affinity_after;      // sched_getaffinity after binding
  std::string memory_policy;            // "bind", "first-touch" or "default"
  std::vector<std::string> warnings;    // placement's warnings plus verification's

  // Records the NUMA nodes holding `bytes` at `p` (pages must be touched first) and warns when
  // they are not the rank's domains. Call after the buffers were first touched.
  void record_buffer(const std::string& name, const void* p, std::size_t bytes);
  nlohmann::json to_json() const;

 private:
  nlohmann::json buffers_ = nlohmann::json::object();
};

// Binds the calling process (all its threads) to its share of this machine and verifies it.
// Uses the live topology; throws UsageError if HWLOC_XMLFILE describes another machine, and
// RuntimeLibraryError if hwloc refuses a binding the OS supports.
PlacementReport apply_placement(const PlacementRequest& request);
PlacementReport apply_placement(const Topology& topology, const PlacementRequest& request);

// NUMA nodes (OS indices, sorted, unique) holding the pages of [p, p + bytes), sampled on up to
// `max_samples` pages spread over the range. Pages not yet touched are skipped; empty if none
// was touched or the kernel cannot say (no NUMA support).
std::vector<int> numa_nodes_of(const void* p, std::size_t bytes, int max_samples = 64);

}  // namespace scalebench
