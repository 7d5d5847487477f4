// Topology: loads hwloc (this machine or XML, I/O devices included) and extracts the plain
// description that planning reads.
#include "scalebench/topology/topology.hpp"

#include <hwloc.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "hwloc_util.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/base/host.hpp"
#include "scalebench/base/input_file.hpp"
#include "scalebench/base/output_file.hpp"

namespace scalebench {

namespace {

// An hwloc XML export of the largest machines is a few MiB; more is not a topology file.
constexpr std::size_t kMaxTopologyXmlBytes = std::size_t{64} << 20;

constexpr unsigned kNvidiaVendorId = 0x10de;
constexpr unsigned kDisplayControllerClass = 0x03;  // PCI base class: VGA (0x0300), 3D (0x0302), ...

hwloc_topology_t new_handle(IoDiscovery io) {
  hwloc_topology_t t = nullptr;
  if (hwloc_topology_init(&t) != 0) {
    throw RuntimeLibraryError(fmt::format("hwloc_topology_init failed: {}", std::strerror(errno)));
  }
  // GPUs, NICs and disks with their PCI locality; bridges only where needed to place them.
  hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  if (io == IoDiscovery::pci) {
    // These plugins initialise CUDA, NVML, OpenCL, ROCm or X in the calling process.
    for (const char* plugin : {"cuda", "nvml", "opencl", "rsmi", "levelzero", "gl"}) {
      hwloc_topology_set_components(t, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, plugin);
    }
  }
  return t;
}

std::string pci_bus_id_of(hwloc_obj_t pci) {
  const auto& a = pci->attr->pcidev;
  return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", a.domain, a.bus, a.dev, a.func);
}

const char* info(hwloc_obj_t obj, const char* name) {
  const char* v = hwloc_obj_get_info_by_name(obj, name);
  return v != nullptr ? v : "";
}

// NUMA domains, by OS index.
std::vector<hwloc_obj_t> numa_objects(hwloc_topology_t t) {
  std::vector<hwloc_obj_t> objs;
  for (int i = 0, n = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_NUMANODE); i < n; ++i) {
    objs.push_back(hwloc_get_obj_by_type(t, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(i)));
  }
  std::sort(objs.begin(), objs.end(), [](hwloc_obj_t a, hwloc_obj_t b) { return a->os_index < b->os_index; });
  return objs;
}

NumaDomainInfo numa_domain_of(hwloc_obj_t obj) {
  NumaDomainInfo d;
  d.os_index = static_cast<int>(obj->os_index);
  d.cpus = detail::cpus_of(obj->cpuset);
  d.local_memory_bytes = obj->attr->numanode.local_memory;
  return d;
}

// Cores (PUs stand in for cores where hwloc found none, as in some virtual machines), each with
// its NUMA domain and package; cores whose PUs are all disallowed are left out.
std::vector<CoreInfo> describe_cores(hwloc_topology_t t, const std::vector<hwloc_obj_t>& numa_objs) {
  std::vector<CoreInfo> cores;
  const hwloc_obj_type_t core_type = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE) > 0 ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU;
  for (int i = 0, n = hwloc_get_nbobjs_by_type(t, core_type); i < n; ++i) {
    hwloc_obj_t obj = hwloc_get_obj_by_type(t, core_type, static_cast<unsigned>(i));
    CoreInfo c;
    c.index = i;
    c.pus = detail::cpus_of(obj->cpuset);
    if (c.pus.empty()) continue;
    for (hwloc_obj_t numa : numa_objs) {
      if (!hwloc_bitmap_iszero(numa->cpuset) && hwloc_bitmap_isincluded(obj->cpuset, numa->cpuset)) {
        c.numa_domain = static_cast<int>(numa->os_index);
        break;
      }
    }
    if (hwloc_obj_t pkg = hwloc_get_ancestor_obj_by_type(t, HWLOC_OBJ_PACKAGE, obj)) {
      c.package = static_cast<int>(pkg->os_index);
    }
    cores.push_back(std::move(c));
  }
  return cores;
}

std::vector<PackageInfo> describe_packages(hwloc_topology_t t, const std::vector<CoreInfo>& cores) {
  std::vector<PackageInfo> packages;
  for (int i = 0, n = hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PACKAGE); i < n; ++i) {
    hwloc_obj_t obj = hwloc_get_obj_by_type(t, HWLOC_OBJ_PACKAGE, static_cast<unsigned>(i));
    PackageInfo p;
    p.os_index = static_cast<int>(obj->os_index);
    p.cpu_model = info(obj, "CPUModel");
    p.cpus = detail::cpus_of(obj->cpuset);
    for (const auto& c : cores) {
      if (c.package != p.os_index) continue;
      ++p.cores;
      if (c.numa_domain >= 0 &&
          std::find(p.numa_domains.begin(), p.numa_domains.end(), c.numa_domain) == p.numa_domains.end()) {
        p.numa_domains.push_back(c.numa_domain);
      }
    }
    std::sort(p.numa_domains.begin(), p.numa_domains.end());
    packages.push_back(std::move(p));
  }
  return packages;
}

// One NVIDIA GPU (a PCI display controller): its model and OS devices (one GPU however many of
// cuda, nvml, opencl hwloc attached to it) and its locality: the nearest CPU-side ancestor. At
// the machine root with several domains hwloc knows nothing closer: no nearest domain.
GpuInfo describe_gpu(hwloc_topology_t t, hwloc_obj_t pci, const std::vector<NumaDomainInfo>& cpu_domains) {
  const auto& a = pci->attr->pcidev;
  GpuInfo g;
  g.pci_bus_id = pci_bus_id_of(pci);
  for (hwloc_obj_t child = pci->io_first_child; child != nullptr; child = child->next_sibling) {
    if (child->type != HWLOC_OBJ_OS_DEVICE || child->name == nullptr) continue;
    g.os_devices.emplace_back(child->name);
    if (g.model.empty()) g.model = info(child, "GPUModel");
    if (g.uuid.empty()) g.uuid = info(child, "NVIDIAUUID");
  }
  if (g.model.empty()) g.model = info(pci, "PCIDevice");
  if (g.model.empty()) g.model = fmt::format("NVIDIA [{:04x}:{:04x}]", a.vendor_id, a.device_id);
  hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(t, pci);
  if (anc == nullptr) return g;
  g.local_cpus = detail::cpus_of(anc->cpuset);
  if (anc == hwloc_get_root_obj(t) && cpu_domains.size() != 1) return g;
  for (const auto& d : cpu_domains) {
    if (hwloc_bitmap_isset(anc->nodeset, static_cast<unsigned>(d.os_index))) {
      g.numa_domain = d.os_index;
      break;
    }
  }
  return g;
}

// NVIDIA GPUs: PCI display controllers (VGA, 3D) of vendor 0x10de, in PCI bus id order.
std::vector<GpuInfo> describe_gpus(hwloc_topology_t t, const std::vector<NumaDomainInfo>& cpu_domains) {
  std::vector<GpuInfo> gpus;
  for (hwloc_obj_t pci = hwloc_get_next_pcidev(t, nullptr); pci != nullptr; pci = hwloc_get_next_pcidev(t, pci)) {
    const auto& a = pci->attr->pcidev;
    if (a.vendor_id != kNvidiaVendorId || (a.class_id >> 8) != kDisplayControllerClass) continue;
    gpus.push_back(describe_gpu(t, pci, cpu_domains));
  }
  std::sort(gpus.begin(), gpus.end(), [](const GpuInfo& a, const GpuInfo& b) { return a.pci_bus_id < b.pci_bus_id; });
  for (std::size_t i = 0; i < gpus.size(); ++i) gpus[i].index = static_cast<int>(i);
  return gpus;
}

}  // namespace

Topology Topology::load(IoDiscovery io) {
  // hwloc itself falls back to this machine when HWLOC_XMLFILE cannot be read, and the result
  // would be labelled with the file: read the file explicitly, so that a bad one is an error.
  if (const char* xml = std::getenv("HWLOC_XMLFILE"); xml != nullptr && *xml != '\0') {
    try {
      return load_xml(xml);
    } catch (const UsageError& e) {
      throw UsageError(fmt::format("HWLOC_XMLFILE: {}; or unset HWLOC_XMLFILE to use this machine", e.what()));
    }
  }
  hwloc_topology_t t = new_handle(io);
  if (hwloc_topology_load(t) != 0) {
    const int err = errno;
    hwloc_topology_destroy(t);
    throw RuntimeLibraryError(fmt::format("hwloc could not discover this machine's topology: {}", std::strerror(err)));
  }
  return Topology(t, "this machine");
}

Topology Topology::load_xml(const std::string& path) {
  // Read as every input file is (input_file.hpp): a FIFO, a device or a folder is refused instead
  // of blocking hwloc's own open, and the file's size is bounded.
  std::string text;
  try {
    text = read_input_file(path, "the topology file", kMaxTopologyXmlBytes);
  } catch (const Error& e) {
    throw UsageError(fmt::format("{}; give an hwloc XML export (lstopo --of xml > FILE)", e.what()));
  }
  hwloc_topology_t t = new_handle(IoDiscovery::gpu_libraries);  // an XML file runs no plugin
  if (hwloc_topology_set_xmlbuffer(t, text.c_str(), static_cast<int>(text.size()) + 1) != 0 ||
      hwloc_topology_load(t) != 0) {
    const int err = errno;
    hwloc_topology_destroy(t);
    throw UsageError(fmt::format("'{}' is not an hwloc XML topology that hwloc {} can read ({}); export it "
                                 "with lstopo --of xml (hwloc 2.x format)",
                                 path, HWLOC_VERSION, std::strerror(err)));
  }
  return Topology(t, fmt::format("xml:{}", path));
}

Topology Topology::restricted_to(const std::vector<int>& cpus) const {
  hwloc_topology_t t = nullptr;
  if (hwloc_topology_dup(&t, handle_) != 0) throw RuntimeLibraryError("hwloc could not copy the topology");
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  for (int c : cpus) hwloc_bitmap_set(set, static_cast<unsigned>(c));
  const int rc = hwloc_topology_restrict(t, set, HWLOC_RESTRICT_FLAG_REMOVE_CPULESS | HWLOC_RESTRICT_FLAG_ADAPT_IO);
  hwloc_bitmap_free(set);
  if (rc != 0) {
    hwloc_topology_destroy(t);
    throw UsageError(fmt::format("none of the CPUs {} is in the topology of {}", fmt::join(cpus, ","), host_));
  }
  Topology out(t, source_);
  out.this_machine_ = this_machine_;
  return out;
}

Topology::Topology(hwloc_topology* handle, std::string source) : handle_(handle), source_(std::move(source)) {
  this_machine_ = hwloc_topology_is_thissystem(handle_) != 0;
  describe();
}

Topology::Topology(Topology&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)),
      this_machine_(other.this_machine_),
      source_(std::move(other.source_)),
      host_(std::move(other.host_)),
      packages_(std::move(other.packages_)),
      numa_(std::move(other.numa_)),
      cores_(std::move(other.cores_)),
      gpus_(std::move(other.gpus_)),
      visible_gpus_(std::move(other.visible_gpus_)),
      gpus_note_(std::move(other.gpus_note_)) {}

Topology& Topology::operator=(Topology&& other) noexcept {
  if (this != &other) {
    if (handle_ != nullptr) hwloc_topology_destroy(handle_);
    handle_ = std::exchange(other.handle_, nullptr);
    this_machine_ = other.this_machine_;
    source_ = std::move(other.source_);
    host_ = std::move(other.host_);
    packages_ = std::move(other.packages_);
    numa_ = std::move(other.numa_);
    cores_ = std::move(other.cores_);
    gpus_ = std::move(other.gpus_);
    visible_gpus_ = std::move(other.visible_gpus_);
    gpus_note_ = std::move(other.gpus_note_);
  }
  return *this;
}

Topology::~Topology() {
  if (handle_ != nullptr) hwloc_topology_destroy(handle_);
}

void Topology::describe() {
  hwloc_topology_t t = handle_;
  host_ = info(hwloc_get_root_obj(t), "HostName");
  const auto numa_objs = numa_objects(t);
  for (hwloc_obj_t obj : numa_objs) numa_.push_back(numa_domain_of(obj));
  cores_ = describe_cores(t, numa_objs);
  for (auto& d : numa_) {
    d.cores = static_cast<int>(
        std::count_if(cores_.begin(), cores_.end(), [&](const CoreInfo& c) { return c.numa_domain == d.os_index; }));
  }
  packages_ = describe_packages(t, cores_);
  gpus_ = describe_gpus(t, cpu_numa_domains());
  visible_gpus_ = gpus_visible_to_cuda(gpus_, std::getenv("CUDA_VISIBLE_DEVICES"), gpus_note_);
}

std::vector<GpuInfo> gpus_visible_to_cuda(const std::vector<GpuInfo>& all, const char* env, std::string& note) {
  note.clear();
  if (env == nullptr) return all;
  std::vector<std::size_t> picked;
  int unmatched = 0;  // UUIDs or MIG instances this topology cannot tell apart
  const bool known = std::any_of(all.begin(), all.end(), [](const GpuInfo& g) { return !g.uuid.empty(); });
  std::string stopped_at;
  const std::string list(env);
  for (std::size_t start = 0, end = 0; start <= list.size(); start = end + 1) {
    end = std::min(list.find(',', start), list.size());
    std::string token = list.substr(start, end - start);
    token.erase(0, token.find_first_not_of(" \t"));
    token.erase(token.find_last_not_of(" \t") + 1);
    if (token.empty() && end == list.size() && start > 0) break;  // a trailing comma
    std::optional<std::size_t> index;
    if (!token.empty() && token.find_first_not_of("0123456789") == std::string::npos && token.size() < 6) {
      const auto i = static_cast<std::size_t>(std::stoi(token));
      if (i < all.size()) index = i;
    } else if (token.rfind("GPU-", 0) == 0 || token.rfind("MIG-", 0) == 0) {
      std::vector<std::size_t> match;
      for (std::size_t i = 0; i < all.size(); ++i) {
        if (!all[i].uuid.empty() && all[i].uuid.rfind(token, 0) == 0) match.push_back(i);
      }
      if (match.size() == 1) {
        index = match.front();
      } else if (!known || token.rfind("MIG-", 0) == 0) {
        ++unmatched;
        continue;
      }
    }
    // CUDA stops at the first entry that names no GPU (or one already named).
    if (!index || std::find(picked.begin(), picked.end(), *index) != picked.end()) {
      stopped_at = token;
      break;
    }
    picked.push_back(*index);
  }
  const bool counted = unmatched > 0;
  for (std::size_t i = 0; i < all.size() && unmatched > 0; ++i) {
    if (std::find(picked.begin(), picked.end(), i) == picked.end()) {
      picked.push_back(i);
      --unmatched;
    }
  }
  std::vector<GpuInfo> out;
  for (const std::size_t i : picked) {
    out.push_back(all[i]);
    out.back().index = static_cast<int>(out.size()) - 1;
  }
  if (out.size() < all.size()) {
    note = fmt::format("CUDA_VISIBLE_DEVICES='{}' leaves {} of the {} GPU(s) on the bus", list, out.size(), all.size());
    if (!stopped_at.empty()) note += fmt::format(" (CUDA reads it up to '{}', which names no other GPU)", stopped_at);
  }
  if (counted) {
    note += fmt::format("{}CUDA_VISIBLE_DEVICES names GPUs by UUIDs (or MIG instances) this topology cannot match: "
                        "they are counted and taken in bus order, their locality not known",
                        note.empty() ? "" : "; ");
  }
  return out;
}

std::vector<NumaDomainInfo> Topology::cpu_numa_domains() const {
  std::vector<NumaDomainInfo> out;
  for (const auto& d : numa_) {
    if (d.cores > 0) out.push_back(d);
  }
  return out;
}

const NumaDomainInfo* Topology::numa_domain(int os_index) const {
  for (const auto& d : numa_) {
    if (d.os_index == os_index) return &d;
  }
  return nullptr;
}

std::vector<int> Topology::cpus() const {
  std::vector<int> out;
  for (const auto& c : cores_) out.insert(out.end(), c.pus.begin(), c.pus.end());
  std::sort(out.begin(), out.end());
  return out;
}

const GpuInfo* Topology::gpu_by_pci_bus_id(const std::string& bus_id) const {
  const std::string want = normalize_pci_bus_id(bus_id);
  if (want.empty()) return nullptr;
  for (const auto& g : gpus_) {
    if (g.pci_bus_id == want) return &g;
  }
  return nullptr;
}

std::vector<const CoreInfo*> Topology::cores_in(const std::vector<int>& cpus) const {
  std::vector<const CoreInfo*> out;
  for (const auto& c : cores_) {
    const bool any = std::any_of(c.pus.begin(), c.pus.end(),
                                 [&](int pu) { return std::find(cpus.begin(), cpus.end(), pu) != cpus.end(); });
    if (any) out.push_back(&c);
  }
  return out;
}

void Topology::export_xml(const std::string& path) const {
  char* buffer = nullptr;
  int length = 0;
  if (hwloc_topology_export_xmlbuffer(handle_, &buffer, &length, 0) != 0) {
    throw RuntimeLibraryError(fmt::format("hwloc could not export the topology as XML: {}", std::strerror(errno)));
  }
  std::string text(buffer, length > 0 ? static_cast<std::size_t>(length - 1) : 0);  // the length counts the NUL
  hwloc_free_xmlbuffer(handle_, buffer);
  write_file_atomic(path, text);  // the output-file rule (output_file.hpp): atomic, a FIFO or device as it says
}

nlohmann::json Topology::to_json() const {
  nlohmann::json j;
  j["source"] = source_;
  j["host"] = host_;
  j["this_machine"] = this_machine_;
  j["pus"] = cpus().size();
  j["cores"] = cores_.size();
  j["packages"] = nlohmann::json::array();
  for (const auto& p : packages_) {
    j["packages"].push_back({{"os_index", p.os_index},
                             {"cpu_model", p.cpu_model},
                             {"cpus", format_cpu_list(p.cpus)},
                             {"cores", p.cores},
                             {"numa_domains", p.numa_domains}});
  }
  j["numa_domains"] = nlohmann::json::array();
  for (const auto& d : numa_) {
    j["numa_domains"].push_back({{"os_index", d.os_index},
                                 {"cpus", format_cpu_list(d.cpus)},
                                 {"cores", d.cores},
                                 {"local_memory_bytes", d.local_memory_bytes}});
  }
  j["gpus"] = nlohmann::json::array();
  for (const auto& g : gpus_) {
    j["gpus"].push_back({{"index", g.index},
                         {"pci_bus_id", g.pci_bus_id},
                         {"model", g.model},
                         {"os_devices", g.os_devices},
                         {"numa_domain", g.numa_domain >= 0 ? nlohmann::json(g.numa_domain) : nlohmann::json()},
                         {"local_cpus", format_cpu_list(g.local_cpus)}});
  }
  j["visible_gpus"] = nlohmann::json::array();
  for (const auto& g : visible_gpus_) j["visible_gpus"].push_back(g.pci_bus_id);
  if (!gpus_note_.empty()) j["gpus_note"] = gpus_note_;
  return j;
}

std::string normalize_pci_bus_id(const std::string& id) {
  // Hex digits only: sscanf's %x would also take signs and "0x" prefixes.
  if (id.empty() || id.find_first_not_of("0123456789abcdefABCDEF:.") != std::string::npos) return {};
  unsigned domain = 0, bus = 0, dev = 0, func = 0;
  int used = 0;
  const auto length = static_cast<int>(id.size());
  // "dddd:bb:dd.f" (hwloc, Linux) or "dddddddd:BB:DD.F" (CUDA, nvidia-smi); else "bb:dd.f".
  const bool full = std::sscanf(id.c_str(), "%x:%x:%x.%x%n", &domain, &bus, &dev, &func, &used) == 4 && used == length;
  if (!full) {
    domain = 0;
    used = 0;
    if (std::sscanf(id.c_str(), "%x:%x.%x%n", &bus, &dev, &func, &used) != 3 || used != length) return {};
  }
  if (domain > 0xffff || bus > 0xff || dev > 0x1f || func > 0x7) return {};
  return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", domain, bus, dev, func);
}

}  // namespace scalebench
