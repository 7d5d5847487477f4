#pragma once
// Energy counters of one node: RAPL through the Linux powercap tree (CPU packages and their DRAM
// domains) and NVML's total-energy counter of the GPUs a run drives (the driver's library, loaded
// at run time: no build dependency). One reader per node reads them; nothing is estimated: where a
// counter is absent or unreadable the reason is kept and said.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace scalebench {

// One counter: a RAPL domain ("package-0", "dram" of package 0) or a GPU (its PCI bus id).
struct EnergyDomain {
  std::string kind;          // "cpu" (RAPL) or "gpu" (NVML)
  std::string name;          // "package-0", "package-0/dram", "gpu 0000:65:00.0"
  double max_joules = 0;     // where the counter wraps (RAPL's max_energy_range_uj); 0: it does not
  double power_limit_w = 0;  // the GPU's enforced power limit (NVML); 0: unknown
};

// The counters' values at one instant, in joules, in the order of EnergyMeter::domains().
struct EnergyReading {
  std::vector<double> joules;
  double at_s = 0;     // a steady clock's seconds when read (for durations)
  double at_unix = 0;  // the same instant in seconds since 1970 (to line up with other meters)
};

// Joules counted from `before` to `after` for each domain, a wrapped counter (after < before)
// counted through its wrap at max_joules (RAPL wraps at max_energy_range_uj).
std::vector<double> energy_between(const std::vector<EnergyDomain>& domains, const EnergyReading& before,
                                   const EnergyReading& after);

class EnergyMeter {
 public:
  // The powercap tree under `powercap_root` (SCALEBENCH_POWERCAP_ROOT, else /sys/class/powercap)
  // and NVML's counters of the GPUs whose PCI bus ids are given (none: no GPU read).
  static std::unique_ptr<EnergyMeter> open(const std::vector<std::string>& gpu_bus_ids);
  static std::unique_ptr<EnergyMeter> open(const std::string& powercap_root, const std::string& nvml_library,
                                           const std::vector<std::string>& gpu_bus_ids);
  ~EnergyMeter();
  EnergyMeter(const EnergyMeter&) = delete;
  EnergyMeter& operator=(const EnergyMeter&) = delete;

  const std::vector<EnergyDomain>& domains() const { return domains_; }
  // Why CPU or GPU energy is not counted ("" when it is; "not used" for GPUs of a CPU run).
  const std::string& cpu_reason() const { return cpu_reason_; }
  const std::string& gpu_reason() const { return gpu_reason_; }
  EnergyReading read() const;

 private:
  struct Nvml;
  EnergyMeter() = default;
  std::vector<EnergyDomain> domains_;
  std::vector<std::string> rapl_files_;  // energy_uj of each cpu domain, in order
  std::unique_ptr<Nvml> nvml_;
  std::string cpu_reason_, gpu_reason_;
};

// The default powercap root and NVML library (environment, else the system's).
std::string powercap_root();
std::string nvml_library();

}  // namespace scalebench
