// `scalebench gemm … auto`: the facts of this run's machine gathered from every rank, the choice
// made on rank 0 and broadcast (choice.hpp, resolve_gemm_auto).
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "gemm/algorithms/node_shared.hpp"
#include "scalebench/base/host.hpp"
#include "scalebench/gpu/gpu.hpp"
#include "scalebench/mpi/mpi.hpp"
#include "scalebench/workloads/gemm/choice.hpp"
#include "scalebench/workloads/model.hpp"
#include "scalebench/workloads/run_context.hpp"

namespace scalebench {
namespace {

// This host's profile when it is there and current; otherwise none and why (rank 0 only).
std::optional<Profile> current_profile(std::string& why) {
  try {
    const ProfileSource source = default_profile_source();
    std::error_code ec;
    if (!std::filesystem::exists(std::filesystem::symlink_status(source.path, ec))) {
      why = fmt::format("no profile at {} (run `scalebench calibrate`)", source.path);
      return std::nullopt;
    }
    Profile p = load_profile(source.path, source.origin);
    if (const std::string stale = profile_mismatch(p, host_name(), profile_valid_for_here()); !stale.empty()) {
      why = fmt::format("profile {} is stale: {}", source.path, stale);
      return std::nullopt;
    }
    return p;
  } catch (const std::exception& e) {
    why = e.what();
    return std::nullopt;
  }
}

// Collective: the layout, NCCL in this build, shared windows, free host memory and GPU memory.
ChoiceFacts machine_facts(const GemmConfig& cfg, const std::vector<GemmConfig>& alts, const Communicator& comm) {
  ChoiceFacts f;
  const Communicator& node = comm.node();
  f.layout.ranks_per_node = static_cast<int>(comm.max(static_cast<std::int64_t>(node.size())));
  f.layout.nodes = static_cast<int>(comm.sum(static_cast<std::int64_t>(node.rank() == 0 ? 1 : 0)));
  // Blocks of ranks per node (the model's layout); uneven nodes are predicted as the fullest.
  f.layout.nodes = std::max(f.layout.nodes, (comm.size() + f.layout.ranks_per_node - 1) / f.layout.ranks_per_node);
  f.layout.gpus_per_node = static_cast<int>(comm.min(static_cast<double>(visible_gpu_count())));
  f.device_transport = gpu_support_built();
  for (const GemmConfig& a : alts) {
    if (a.algorithm == GemmAlgorithm::row1d && a.distribution == GemmDistribution::shared) {
      f.shared_refusal = shared_windows_refusal(a, comm);  // collective; the same alternative on every rank
      break;
    }
  }
  if (cfg.autos.host_bytes_per_node > 0) {
    f.host_bytes_per_node = static_cast<double>(cfg.autos.host_bytes_per_node);
  } else if (const double least_free = comm.min(static_cast<double>(memory_available_bytes())); least_free > 0) {
    f.host_bytes_per_node = least_free;
  }
  if (cfg.backend == GemmBackendKind::cublas && f.layout.gpus_per_node > 0) {
    double bytes = -1;
    try {
      bytes = gpu_info(0).value("memory_bytes", -1.0);
    } catch (const std::exception&) {
      bytes = -1;
    }
    if (const double least = comm.min(bytes); least > 0) f.gpu_bytes = least;
  }
  return f;
}

}  // namespace

GemmConfig resolve_gemm_auto(const GemmConfig& cfg, const Communicator& comm) {
  if (!cfg.autos.any()) return cfg;
  const std::vector<GemmConfig> alts = gemm_alternatives(cfg, comm.size());
  ChoiceFacts facts = machine_facts(cfg, alts, comm);
  int taken = -1;
  nlohmann::json record;
  agree(comm, [&] {
    if (!comm.is_root()) return;
    std::string why;
    std::optional<Profile> profile = current_profile(why);
    if (profile && facts.layout.gpus_per_node == 0 && profile->gpu.present) {
      facts.layout.gpus_per_node = profile->gpu.count;
    }
    const GemmChoice c = choose_gemm(cfg, facts, profile ? &*profile : nullptr, why);
    taken = c.taken;
    record = choice_json(c, cfg.autos);
    if (!cfg.quiet) {
      const bool whole = cfg.autos.asked.any() || cfg.dry_run;
      std::fputs((whole ? choice_table(c, cfg.autos) : choice_line(c, cfg.autos)).c_str(), stdout);
      std::fflush(stdout);
    }
  });
  SCALEBENCH_MPI(MPI_Bcast(&taken, 1, MPI_INT, 0, comm.get()));
  GemmConfig out = alts.at(static_cast<std::size_t>(taken));
  if (comm.is_root()) out.choice = std::move(record);
  return out;
}

}  // namespace scalebench
