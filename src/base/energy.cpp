// Energy counters: RAPL through the powercap tree, NVML's total energy through dlopen; each
// reading checked as input (energy.hpp).
#include "scalebench/base/energy.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "scalebench/base/error.hpp"
#include "scalebench/base/input_file.hpp"

namespace scalebench {
namespace {

namespace fs = std::filesystem;

// A counter's range must hold at least this many seconds at its ceiling, or no two readings of a
// run (20 ms apart) could be told apart from a wrap (RAPL's hold minutes).
constexpr double kMinWrapSeconds = 10;

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// A powercap file's text, read as any input file (a regular file, checked on the opened
// descriptor, of at most kCounterFileBytes); none, with the reason, when it cannot be.
std::optional<std::string> read_powercap_file(const std::string& path, std::string& why) {
  try {
    return read_input_file(path, "the powercap file", kCounterFileBytes);
  } catch (const Error& e) {
    why = e.what();
    return std::nullopt;
  }
}

// A domain's name file's first line; "" when it cannot be read.
std::string read_name(const std::string& path) {
  std::string why;
  const std::optional<std::string> text = read_powercap_file(path, why);
  if (!text) return "";
  return text->substr(0, text->find('\n'));
}

// A counter file's value in microjoules; none, with the reason, when it is not a whole number.
std::optional<double> read_microjoules(const std::string& path, std::string& why) {
  const std::optional<std::string> text = read_powercap_file(path, why);
  if (!text) return std::nullopt;
  const std::optional<std::uint64_t> uj = parse_microjoules(*text);
  if (!uj) {
    why = fmt::format("the powercap file {} does not hold a whole number of microjoules", path);
    return std::nullopt;
  }
  return static_cast<double>(*uj);
}

// One RAPL zone as a domain: its counter and range read and checked; the reason when not usable.
std::string rapl_domain(const std::string& dir, const std::string& label, bool dram, EnergyDomain& out) {
  std::string why;
  const std::string file = dir + "/energy_uj";
  const std::optional<double> max_uj = read_microjoules(dir + "/max_energy_range_uj", why);
  const std::optional<double> uj = max_uj ? read_microjoules(file, why) : std::nullopt;
  if (!uj && why.rfind("cannot read", 0) == 0) {
    return fmt::format("{} (RAPL counters often need root or are hidden in virtual machines)", why);
  }
  if (!uj) return why;
  out = {"cpu", label, *max_uj * 1e-6, 0, dram ? kMaxDramWatts : kMaxPackageWatts, kRaplRefreshSlackS};
  if (out.max_joules < out.max_w * kMinWrapSeconds) {
    return fmt::format("{}/max_energy_range_uj is {:.0f} µJ: it would wrap in under {:g} s at {:g} W, too soon to be "
                       "read",
                       dir, *max_uj, kMinWrapSeconds, out.max_w);
  }
  if (*uj > *max_uj) return fmt::format("{} reads {:.0f} µJ, above its range of {:.0f} µJ", file, *uj, *max_uj);
  return "";
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
  std::string unusable;
  for (const fs::path& z : zones) {
    const std::string zone = z.filename().string();
    const std::string name = read_name((z / "name").string());
    const bool sub = std::count(zone.begin(), zone.end(), ':') == 2;
    if (!(sub ? name == "dram" : name.rfind("package-", 0) == 0)) continue;
    std::string label = name;
    if (sub) label = fmt::format("package-{}/dram", zone.substr(11, zone.find(':', 11) - 11));
    EnergyDomain d;
    if (const std::string why = rapl_domain(z.string(), label, sub, d); !why.empty()) {
      unusable = why;
      continue;
    }
    domains.push_back(d);
    files.push_back((z / "energy_uj").string());
  }
  if (!files.empty()) return "";
  if (!unusable.empty()) return unusable;
  return fmt::format("no RAPL package domain under {}", root);
}

// "the RAPL counter package-0", "the NVML counter gpu 0000:65:00.0".
std::string counter_name(const EnergyDomain& d) {
  return fmt::format("the {} counter {}", d.kind == "gpu" ? "NVML" : "RAPL", d.name);
}

// One domain's joules from `a` to `b` (both read) over `seconds` (energy.hpp's rule).
EnergyDelta checked_delta(const EnergyDomain& d, double a, double b, double seconds) {
  const std::string who = counter_name(d);
  const double most = d.max_w * (seconds + d.refresh_s);  // the most it can count in that time
  if (d.max_joules > 0 && d.max_w * seconds >= d.max_joules) {
    return {std::nullopt,
            fmt::format("{} was read {:.3g} s apart, time enough to wrap (its range {:.6g} J at the {:g} W "
                        "it can draw at most): not counted",
                        who, seconds, d.max_joules, d.max_w)};
  }
  const double rise = b - a;
  if (rise >= 0) {
    if (rise <= most) return {rise, ""};
    return {std::nullopt,
            fmt::format("{} rose by {:.6g} J in {:.3g} s, more than the {:.3g} J it can count in that time "
                        "at the {:g} W it can draw at most: not counted",
                        who, rise, seconds, most, d.max_w)};
  }
  const double wrapped = rise + d.max_joules;
  if (d.max_joules > 0 && wrapped >= 0 && wrapped <= most) return {wrapped, ""};
  const std::string through =
      d.max_joules > 0
          ? fmt::format("; a wrap through its range ({:.6g} J) would be {:.6g} J in {:.3g} s, more than the "
                        "{:.3g} J it can count in that time at the {:g} W it can draw at most",
                        d.max_joules, wrapped, seconds, most, d.max_w)
          : std::string("; it does not wrap");
  return {std::nullopt, fmt::format("{} went down by {:.6g} J (from {:.6f} J to {:.6f} J){}: not counted", who, a - b,
                                    a, b, through)};
}

}  // namespace

std::optional<std::uint64_t> parse_microjoules(const std::string& text) {
  std::string_view s(text);
  if (!s.empty() && s.back() == '\n') s.remove_suffix(1);
  if (s.empty() || s.size() > 19 || s.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

std::vector<EnergyDelta> energy_between(const std::vector<EnergyDomain>& domains, const EnergyReading& before,
                                        const EnergyReading& after) {
  std::vector<EnergyDelta> out(domains.size());
  const double seconds = std::max(0.0, after.at_s - before.at_s);
  for (std::size_t i = 0; i < domains.size(); ++i) {
    const bool a = i < before.joules.size() && before.joules[i], b = i < after.joules.size() && after.joules[i];
    if (a && b) {
      out[i] = checked_delta(domains[i], *before.joules[i], *after.joules[i], seconds);
      continue;
    }
    const EnergyReading& bad = a ? after : before;
    const std::string why = i < bad.unreadable.size() && !bad.unreadable[i].empty() ? bad.unreadable[i] : "no reading";
    out[i] = {std::nullopt, fmt::format("{} could not be read ({}): not counted", counter_name(domains[i]), why)};
  }
  return out;
}

EnergyDelta joules_of_kind(const std::vector<EnergyDomain>& domains, const std::vector<EnergyDelta>& deltas,
                           const std::string& kind) {
  double sum = 0;
  for (std::size_t i = 0; i < domains.size(); ++i) {
    if (domains[i].kind != kind) continue;
    if (i >= deltas.size() || !deltas[i].joules) {
      return {std::nullopt, i < deltas.size() ? deltas[i].why : counter_name(domains[i]) + " has no delta"};
    }
    sum += *deltas[i].joules;
  }
  return {sum, ""};
}

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
    gpus.push_back({"gpu", "gpu " + bus, 0, limit_mw * 1e-3, kMaxGpuWatts, kNvmlRefreshSlackS});
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
  r.unreadable.reserve(domains_.size());
  for (std::size_t i = 0; i < rapl_files_.size(); ++i) {
    std::string why;
    std::optional<double> uj = read_microjoules(rapl_files_[i], why);
    if (uj && *uj * 1e-6 > domains_[i].max_joules) {
      why = fmt::format("{} reads {:.0f} µJ, above its range of {:.0f} µJ", rapl_files_[i], *uj,
                        domains_[i].max_joules * 1e6);
      uj.reset();
    }
    r.joules.push_back(uj ? std::optional<double>(*uj * 1e-6) : std::nullopt);
    r.unreadable.push_back(why);
  }
  if (nvml_) {
    for (const auto d : nvml_->devices) {
      unsigned long long mj = 0;
      const int rc = nvml_->energy(d, &mj);
      r.joules.push_back(rc == 0 ? std::optional<double>(static_cast<double>(mj) * 1e-3) : std::nullopt);
      r.unreadable.push_back(rc == 0 ? "" : fmt::format("NVML error {}", rc));
    }
  }
  return r;
}

}  // namespace scalebench
