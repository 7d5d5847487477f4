#include "scalebench/workloads/rank_setup.hpp"

#include <cstdint>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "scalebench/base/error.hpp"
#include "scalebench/base/host.hpp"
#include "scalebench/base/parse.hpp"
#include "scalebench/gpu/gpu.hpp"
#include "scalebench/mpi/mpi.hpp"

namespace scalebench {

namespace {

// A thread count from the environment (OMP_NUM_THREADS, OPENBLAS_NUM_THREADS): 0 when unset or
// empty; the first of an OpenMP list ("4,2": 4 at the outer level); else a whole number in [1,
// 2^16], the range --threads takes, or a UsageError naming the variable.
int threads_from_env(const std::string& var) {
  const char* v = std::getenv(var.c_str());
  if (v == nullptr || *v == '\0') return 0;
  const std::string text(v);
  const std::string first = text.substr(0, text.find(','));
  try {
    return static_cast<int>(parse_integer(var, first, 1, std::int64_t{1} << 16));
  } catch (const UsageError& e) {
    throw UsageError(
        fmt::format("{}; or unset {} (it is read as the threads per rank when --threads is not given)", e.what(), var));
  }
}

}  // namespace

RankSetup setup_rank(const Communicator& comm, PinPolicy pin, int threads_requested, const std::string& gpu_option,
                     bool share_gpu, const std::vector<std::string>& thread_env) {
  std::string gpu_pci_bus_id;
  if (!gpu_option.empty()) {
    agree(comm,
          [&] { gpu_pci_bus_id = gpu_info(select_gpu_for_rank(comm, share_gpu, gpu_option)).value("pci_bus_id", ""); });
  }
  const Communicator& node = comm.node();
  RankSetup out;
  out.gpu_pci_bus_id = gpu_pci_bus_id;
  agree(comm, [&] {
    PlacementRequest req;
    req.pin = pin;
    req.local_rank = node.rank();
    req.local_size = node.size();
    req.threads = threads_requested;
    req.gpu_pci_bus_id = gpu_pci_bus_id;
    req.launcher_default = launcher_binding_is_default();
    out.report = apply_placement(req);
    if (threads_requested > 0) {
      out.threads = threads_requested;
      out.threads_source = "--threads";
      return;
    }
    for (const auto& var : thread_env) {
      if (const int t = threads_from_env(var); t > 0) {
        out.threads = t;
        out.threads_source = var;
        return;
      }
    }
    const auto& p = out.report.placement;
    if (p.pin != PinPolicy::none && p.threads > 0) {
      out.threads = p.threads;
      out.threads_source = p.launcher_bound ? std::string("cores the launcher bound this rank to")
                                            : fmt::format("cores owned (--pin {})", pin_policy_name(p.pin));
    } else {
      const int cpus = static_cast<int>(allowed_cpus().size());
      out.threads = cpus > 0 ? cpus : 1;
      out.threads_source = "allowed CPUs";
    }
  });
  return out;
}

}  // namespace scalebench

namespace scalebench {

void check_gpu_ranks_dry_run(const Communicator& comm, bool share_gpu, const std::string& gpu_option) {
  const Communicator& node = comm.node();
  const int gpus = visible_gpu_count();
  agree(comm, [&] {
    if (!gpu_support_built()) throw NoCudaError(gpu_option);
    if (share_gpu || gpus < 2 || node.size() <= gpus) return;
    throw ResourceError(fmt::format("{} ranks on {} but {} GPUs visible there; launch at most one rank per GPU or pass "
                                    "--share-gpu",
                                    node.size(), host_name(), gpus));
  });
}

}  // namespace scalebench
