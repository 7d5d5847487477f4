#pragma once
// The context every run record carries (docs/output.md): versions, hosts, ranks, environment.
#include <string>

#include <nlohmann/json.hpp>

namespace scalebench {

class Communicator;

inline constexpr int kSchemaVersion = 1;

std::string mpi_library_version();
nlohmann::json openblas_info();  // config, core, threads, parallel mode

// This rank's facts: host, pid, allowed CPUs as the OS reports them, local rank.
nlohmann::json local_rank_info(const Communicator& comm);

// The GPUs a run used, from its gathered rank_info entries (each GPU rank's "gpu": gpu_info()):
// {"used": true, "count", "models", "driver_releases", "devices": [{host, name, uuid, pci_bus_id,
// memory_bytes, compute_capability, driver_release, driver_version, ranks}]}, one device per host
// and UUID however many ranks share it; without any, {"used": false, "count": 0, "reason"}.
nlohmann::json gpus_used(const nlohmann::json& rank_info);

// Collective: versions (the device libraries' too: gpu_library_versions()), hosts, CPU model, the
// GPUs used (gpus_used), per-rank info (gathered), environment knobs, Slurm variables, command
// line. Valid on rank 0; `extra_rank_info` is merged into each rank's entry.
nlohmann::json run_context(const Communicator& comm, const nlohmann::json& extra_rank_info = nlohmann::json::object());

}  // namespace scalebench
