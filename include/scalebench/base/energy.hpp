#pragma once
// Energy counters of one node: RAPL through the Linux powercap tree (CPU packages and their DRAM
// domains) and NVML's total-energy counter of the GPUs a run drives (the driver's library, loaded
// at run time: no build dependency). One reader per node reads them; nothing is estimated: where a
// counter is absent or unreadable the reason is kept and said.
//
// A counter is input, not truth (docs/output.md, "Energy counters"). Each file is read as any
// input file is (a regular file, checked on the opened descriptor; at most kCounterFileBytes), and
// its text must be a whole number of microjoules no larger than its domain's range. The joules
// between two readings are counted only when they are physically possible: at most the domain's
// ceiling (max_w) over the elapsed time plus one refresh of the counter; a counter that went down
// is a wrap only when the joules through its range (max_joules) pass that test; an interval that
// could hold a whole wrap at the ceiling is ambiguous. Anything else — a counter unreadable at
// either end, a step back, an absurd rise — is "not counted" with the reason, never a number.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace scalebench {

// The most one domain can draw, in watts: a bound on what a reading may imply, with room above
// any part built (the largest server packages are rated 500 W, a node's DRAM draws a few hundred,
// the largest GPUs 1200 W), not a rating.
inline constexpr double kMaxPackageWatts = 1000;
inline constexpr double kMaxDramWatts = 500;
inline constexpr double kMaxGpuWatts = 2000;
// How late a counter may lag the clock (RAPL refreshes about every millisecond, NVML's GPU
// energy about every 100 ms): a reading may hold up to this much more time than the clock says.
inline constexpr double kRaplRefreshSlackS = 0.01;
inline constexpr double kNvmlRefreshSlackS = 0.2;
// The most bytes a powercap file may hold (a sysfs attribute is one page; its text a few bytes).
inline constexpr std::size_t kCounterFileBytes = 4096;

// One counter: a RAPL domain ("package-0", "dram" of package 0) or a GPU (its PCI bus id).
struct EnergyDomain {
  std::string kind;                       // "cpu" (RAPL) or "gpu" (NVML)
  std::string name;                       // "package-0", "package-0/dram", "gpu 0000:65:00.0"
  double max_joules = 0;                  // where the counter wraps (RAPL's max_energy_range_uj); 0: it does not
  double power_limit_w = 0;               // the GPU's enforced power limit (NVML); 0: unknown
  double max_w = kMaxPackageWatts;        // the most it can draw (kMaxPackageWatts, kMaxDramWatts, kMaxGpuWatts)
  double refresh_s = kRaplRefreshSlackS;  // how late its counter may lag the clock
};

// The counters' values at one instant, in joules, in the order of EnergyMeter::domains(); a
// counter that could not be read has no value, and `unreadable` (same order) says why.
struct EnergyReading {
  std::vector<std::optional<double>> joules;
  std::vector<std::string> unreadable;
  double at_s = 0;     // a steady clock's seconds when read (for durations)
  double at_unix = 0;  // the same instant in seconds since 1970 (to line up with other meters)
};

// One domain's joules between two readings: none when not counted, `why` saying so.
struct EnergyDelta {
  std::optional<double> joules;
  std::string why;
};

// Joules counted from `before` to `after` for each domain, under the rule above.
std::vector<EnergyDelta> energy_between(const std::vector<EnergyDomain>& domains, const EnergyReading& before,
                                        const EnergyReading& after);

// The joules of the domains of one kind ("cpu", "gpu") in `deltas`; none, with the first
// domain's reason, when any of them is not counted. No domain of that kind: 0 J.
EnergyDelta joules_of_kind(const std::vector<EnergyDomain>& domains, const std::vector<EnergyDelta>& deltas,
                           const std::string& kind);

// A counter file's text as microjoules: a whole number (one trailing newline allowed) of at most
// 19 digits; none for anything else (empty, a sign, a fraction, letters, spaces).
std::optional<std::uint64_t> parse_microjoules(const std::string& text);

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
