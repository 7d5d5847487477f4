// Energy counters: RAPL through the powercap tree, NVML's total energy through dlopen.
#include "scalebench/base/energy.hpp"

#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>

namespace scalebench {
namespace {

namespace fs = std::filesystem;

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// A small regular file's first line (the powercap files); "" when it is not one or cannot be read.
std::string read_line(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return "";
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return "";
  return line;
}

// A counter file's value in microjoules; -1 when it is not a whole number.
double read_microjoules(const std::string& path) {
  const std::string s = read_line(path);
  if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos || s.size() > 19) return -1;
  return static_cast<double>(std::stoull(s));
}

// The RAPL domains under `root`: each package ("intel-rapl:N", named package-N) and its DRAM
// subdomain ("intel-rapl:N:M" named dram). Core and uncore are parts of the package: not added.
std::string find_rapl(const std::string& root, std::vector<EnergyDomain>& domains, std::vector<std::string>& files) {
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return fmt::format("no powercap tree at {} (RAPL is not exposed here)", root);
  std::vector<fs::path> zones;
  for (const auto& e : fs::directory_iterator(root, ec)) {
    const std::string n = e.path().filename().string();
    if (n.rfind("intel-rapl:", 0) == 0) zones.push_back(e.path());
  }
  // intel-rapl:N are links to intel-rapl/intel-rapl:N on real machines; subzones also appear at top level.
  std::sort(zones.begin(), zones.end());
  std::string unreadable;
  for (const fs::path& z : zones) {
    const std::string zone = z.filename().string();
    const std::string name = read_line((z / "name").string());
    const bool sub = std::count(zone.begin(), zone.end(), ':') == 2;
    if (!(sub ? name == "dram" : name.rfind("package-", 0) == 0)) continue;
    const std::string file = (z / "energy_uj").string();
    const double max_uj = read_microjoules((z / "max_energy_range_uj").string());
    if (read_microjoules(file) < 0 || max_uj <= 0) {
      unreadable = fmt::format("{} cannot be read (RAPL counters often need root or are hidden in virtual machines)",
                               file);
      continue;
    }
    std::string label = name;
    if (sub) label = fmt::format("package-{}/dram", zone.substr(11, zone.find(':', 11) - 11));
    domains.push_back({"cpu", label, max_uj * 1e-6, 0});
    files.push_back(file);
  }
  if (!files.empty()) return "";
  if (!unreadable.empty()) return unreadable;
  return fmt::format("no RAPL package domain under {}", root);
}

}  // namespace

// NVML, loaded at run time; only the few calls used are declared (nvml.h's signatures).
struct EnergyMeter::Nvml {
  using Device = void*;
  void* lib = nullptr;
  int (*shutdown)() = nullptr;
  int (*energy)(Device, unsigned long long*) = nullptr;  // nvmlDeviceGetTotalEnergyConsumption, mJ
  std::vector<Device> devices;
  ~Nvml() {
    if (shutdown) shutdown();
    if (lib) dlclose(lib);
  }
};

std::string powercap_root() {
  const char* e = std::getenv("SCALEBENCH_POWERCAP_ROOT");
  return e && *e ? e : "/sys/class/powercap";
}

std::string nvml_library() {
  const char* e = std::getenv("SCALEBENCH_NVML_LIBRARY");
  return e && *e ? e : "libnvidia-ml.so.1";
}

std::unique_ptr<EnergyMeter> EnergyMeter::open(const std::vector<std::string>& gpu_bus_ids) {
  return open(powercap_root(), nvml_library(), gpu_bus_ids);
}

namespace {

template <class F>
bool load(void* lib, const char* name, F& f) {
  f = reinterpret_cast<F>(dlsym(lib, name));  // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast): dlsym
  return f != nullptr;
}

}  // namespace

std::unique_ptr<EnergyMeter> EnergyMeter::open(const std::string& root, const std::string& library,
                                               const std::vector<std::string>& gpu_bus_ids) {
  std::unique_ptr<EnergyMeter> m(new EnergyMeter());
  m->cpu_reason_ = find_rapl(root, m->domains_, m->rapl_files_);
  if (gpu_bus_ids.empty()) {
    m->gpu_reason_ = "no GPU used by this run";
    return m;
  }
  auto n = std::make_unique<Nvml>();
  n->lib = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (n->lib == nullptr) {
    m->gpu_reason_ = fmt::format("NVML ({}) cannot be loaded: {}", library, dlerror());
    return m;
  }
  int (*init)() = nullptr;
  int (*by_bus)(const char*, Nvml::Device*) = nullptr;
  int (*limit)(Nvml::Device, unsigned int*) = nullptr;
  if (!load(n->lib, "nvmlInit_v2", init) || !load(n->lib, "nvmlShutdown", n->shutdown) ||
      !load(n->lib, "nvmlDeviceGetHandleByPciBusId_v2", by_bus) ||
      !load(n->lib, "nvmlDeviceGetTotalEnergyConsumption", n->energy) ||
      !load(n->lib, "nvmlDeviceGetEnforcedPowerLimit", limit)) {
    n->shutdown = nullptr;
    m->gpu_reason_ = fmt::format("{} lacks the NVML calls for energy", library);
    return m;
  }
  if (const int rc = init(); rc != 0) {
    n->shutdown = nullptr;
    m->gpu_reason_ = fmt::format("NVML did not start (error {})", rc);
    return m;
  }
  std::vector<EnergyDomain> gpus;
  for (const std::string& bus : gpu_bus_ids) {
    Nvml::Device d = nullptr;
    unsigned long long mj = 0;
    unsigned int limit_mw = 0;
    if (by_bus(bus.c_str(), &d) != 0 || n->energy(d, &mj) != 0) {
      m->gpu_reason_ = fmt::format("NVML gives no energy counter for the GPU at {} (it needs a Volta or newer GPU)",
                                   bus);
      return m;
    }
    if (limit(d, &limit_mw) != 0) limit_mw = 0;
    n->devices.push_back(d);
    gpus.push_back({"gpu", "gpu " + bus, 0, limit_mw * 1e-3});
  }
  m->domains_.insert(m->domains_.end(), gpus.begin(), gpus.end());
  m->nvml_ = std::move(n);
  return m;
}

EnergyMeter::~EnergyMeter() = default;

EnergyReading EnergyMeter::read() const {
  EnergyReading r;
  r.at_s = now_s();
  r.at_unix = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  r.joules.reserve(domains_.size());
  for (const std::string& f : rapl_files_) r.joules.push_back(std::max(0.0, read_microjoules(f)) * 1e-6);
  if (nvml_) {
    for (const auto d : nvml_->devices) {
      unsigned long long mj = 0;
      r.joules.push_back(nvml_->energy(d, &mj) == 0 ? static_cast<double>(mj) * 1e-3 : 0.0);
    }
  }
  return r;
}

std::vector<double> energy_between(const std::vector<EnergyDomain>& domains, const EnergyReading& before,
                                   const EnergyReading& after) {
  std::vector<double> out(domains.size(), 0.0);
  for (std::size_t i = 0; i < domains.size() && i < before.joules.size() && i < after.joules.size(); ++i) {
    double d = after.joules[i] - before.joules[i];
    if (d < 0 && domains[i].max_joules > 0) d += domains[i].max_joules;  // wrapped once
    out[i] = std::max(0.0, d);
  }
  return out;
}

}  // namespace scalebench
