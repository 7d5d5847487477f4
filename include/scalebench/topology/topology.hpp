#pragma once
// The machine as hwloc sees it: packages, NUMA domains, cores, PUs and NVIDIA GPUs with their
// PCI locality. A Topology owns its hwloc handle (move-only) and a plain description of the
// machine extracted at load time; planning reads only the description, so plans can be
// computed for a saved XML export of another machine as well as for this one.
//
// CPU numbers are always OS indices (what taskset, sched_getaffinity and Slurm print), never
// hwloc logical indices. Lists are sorted ascending.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

struct hwloc_topology;  // hwloc's opaque handle; only src/topology includes hwloc.h

namespace scalebench {

struct PackageInfo {
  int os_index = -1;
  std::string cpu_model;          // hwloc's CPUModel info, empty if unknown
  std::vector<int> cpus;          // PU OS indices
  std::vector<int> numa_domains;  // OS indices of the NUMA domains holding its cores
  int cores = 0;
};

struct NumaDomainInfo {
  int os_index = -1;
  std::vector<int> cpus;  // PU OS indices; empty for memory-only domains (HBM, CXL, GPU memory)
  int cores = 0;          // cores whose PUs all lie in this domain
  std::uint64_t local_memory_bytes = 0;
};

struct CoreInfo {
  int index = 0;         // position in topology order (hwloc logical index)
  std::vector<int> pus;  // PU OS indices of this core (several with SMT)
  int numa_domain = -1;  // OS index of the NUMA domain holding it, -1 if none
  int package = -1;      // OS index of its package, -1 if none
};

struct GpuInfo {
  int index = 0;                        // position among GPUs in PCI bus order
  std::string pci_bus_id;               // "0000:3b:00.0" (lower-case hex, as hwloc and nvidia-smi -q print it)
  std::string model;                    // e.g. "Tesla P100-SXM2-16GB"; the PCI ids if no name is known
  std::vector<std::string> os_devices;  // hwloc OS devices on it: "cuda0", "nvml0", ...
  int numa_domain = -1;                 // nearest NUMA domain (OS index), -1 if hwloc knows no locality
  std::vector<int> local_cpus;          // PUs of the GPU's nearest CPU-side object (package, group or domain)
  std::string uuid;                     // "GPU-77bf6b9a-..." where hwloc's NVML device says it, else empty
};

// How much of the I/O side hwloc discovers on a live machine. PCI (GPUs, their bus ids and
// locality) is always there; the GPU libraries' OS devices ("cuda0", "nvml0", "opencl0d0") cost
// a CUDA/OpenCL initialisation in every process, so only `scalebench topology` asks for them.
enum class IoDiscovery { pci, gpu_libraries };

class Topology {
 public:
  // This machine, or the XML file named by HWLOC_XMLFILE if that is set (hwloc's own rule).
  static Topology load(IoDiscovery io = IoDiscovery::pci);
  // A saved hwloc XML export (`lstopo --of xml`, `scalebench topology --export-xml`).
  static Topology load_xml(const std::string& path);

  Topology(Topology&& other) noexcept;
  Topology& operator=(Topology&& other) noexcept;
  Topology(const Topology&) = delete;
  Topology& operator=(const Topology&) = delete;
  ~Topology();

  // True when this describes the machine the process runs on (binding is possible).
  bool is_this_machine() const noexcept { return this_machine_; }
  // "this machine" or "xml:<path>".
  const std::string& source() const noexcept { return source_; }
  const std::string& host() const noexcept { return host_; }

  const std::vector<PackageInfo>& packages() const noexcept { return packages_; }
  // All NUMA domains, memory-only ones included, in OS index order.
  const std::vector<NumaDomainInfo>& numa_domains() const noexcept { return numa_; }
  // The NUMA domains that hold cores, in OS index order: the ones a rank can be placed on.
  std::vector<NumaDomainInfo> cpu_numa_domains() const;
  const NumaDomainInfo* numa_domain(int os_index) const;
  const std::vector<CoreInfo>& cores() const noexcept { return cores_; }
  std::vector<int> cpus() const;  // every PU, OS indices
  // This topology narrowed to the PUs `cpus` (what an allocation or cpuset gives): cores, NUMA
  // domains and packages without them are gone, I/O devices kept. UsageError if none is left.
  Topology restricted_to(const std::vector<int>& cpus) const;
  // Every NVIDIA GPU on the PCI bus, in bus order: what the ranks of a node place themselves by
  // (each rank's own CUDA_VISIBLE_DEVICES may narrow what it sees to its GPU).
  const std::vector<GpuInfo>& gpus() const noexcept { return gpus_; }
  // The GPUs a CUDA process started here may use, what planning counts (the contrast's and a
  // study's GPU rows): gpus() narrowed by CUDA_VISIBLE_DEVICES as CUDA reads it (indices in PCI
  // bus order or UUIDs, comma-separated, up to the first that names no GPU; empty: none), in its
  // order, indexed from 0 (gpus_visible_to_cuda()).
  const std::vector<GpuInfo>& visible_gpus() const noexcept { return visible_gpus_; }
  // Why some GPUs on the bus are not in visible_gpus(), empty when none is hidden.
  const std::string& gpus_note() const noexcept { return gpus_note_; }
  // The GPU with this PCI bus id ("0000:3b:00.0"; the 8-digit domain form "00000000:3B:00.0"
  // that CUDA prints is accepted too), or nullptr.
  const GpuInfo* gpu_by_pci_bus_id(const std::string& bus_id) const;
  // Cores with at least one PU in `cpus`, in topology order.
  std::vector<const CoreInfo*> cores_in(const std::vector<int>& cpus) const;

  // Writes this topology (I/O devices included) as hwloc XML. Throws ResourceError if the file
  // cannot be written.
  void export_xml(const std::string& path) const;
  // Everything above as JSON (the machine part of `scalebench topology --json`).
  nlohmann::json to_json() const;

  // The hwloc handle, for src/topology only (binding). Never null.
  hwloc_topology* handle() const noexcept { return handle_; }

 private:
  Topology(hwloc_topology* handle, std::string source);
  void describe();

  hwloc_topology* handle_ = nullptr;
  bool this_machine_ = false;
  std::string source_;
  std::string host_;
  std::vector<PackageInfo> packages_;
  std::vector<NumaDomainInfo> numa_;
  std::vector<CoreInfo> cores_;
  std::vector<GpuInfo> gpus_;
  std::vector<GpuInfo> visible_gpus_;
  std::string gpus_note_;
};

// `all` (the GPUs on the bus, PCI bus order) as a process with CUDA_VISIBLE_DEVICES = `env` (null:
// unset) sees them, re-indexed from 0; `note` says what was hidden and how it was read. A UUID
// (GPU-..., a unique prefix is enough) matches where hwloc knew the GPUs' UUIDs; where it did not
// (or for MIG-... instances), the GPUs are counted and taken in bus order, and `note` says so.
std::vector<GpuInfo> gpus_visible_to_cuda(const std::vector<GpuInfo>& all, const char* env, std::string& note);

// Normalises a PCI bus id to "dddd:bb:dd.f" in lower case; accepts CUDA's "dddddddd:BB:DD.F"
// and the short "bb:dd.f". Returns an empty string if `id` is not a PCI bus id.
std::string normalize_pci_bus_id(const std::string& id);

}  // namespace scalebench
