// Names of the execution modes and pin policies, as the CLI and the records spell them.
#include <array>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "scalebench/base/error.hpp"
#include "scalebench/topology/placement.hpp"

namespace scalebench {
namespace {

constexpr std::array<std::pair<Mode, std::string_view>, 6> kModes{{
    {Mode::naive, "naive"},
    {Mode::single_core, "single-core"},
    {Mode::multi_thread, "multi-thread"},
    {Mode::numa, "numa"},
    {Mode::gpu, "gpu"},
    {Mode::multinode, "multinode"},
}};

constexpr std::array<std::pair<PinPolicy, std::string_view>, 5> kPins{{
    {PinPolicy::none, "none"},
    {PinPolicy::core, "core"},
    {PinPolicy::numa, "numa"},
    {PinPolicy::gpu, "gpu"},
    {PinPolicy::automatic, "auto"},
}};

template <class Table>
std::string names_of(const Table& table) {
  std::string out;
  for (const auto& [value, name] : table) out += fmt::format("{}{}", out.empty() ? "" : ", ", name);
  return out;
}

}  // namespace

const std::vector<Mode>& all_modes() {
  static const std::vector<Mode> modes = [] {
    std::vector<Mode> m;
    for (const auto& [mode, name] : kModes) m.push_back(mode);
    return m;
  }();
  return modes;
}

std::string_view mode_name(Mode mode) {
  for (const auto& [m, name] : kModes) {
    if (m == mode) return name;
  }
  return "unknown";
}

Mode parse_mode(std::string_view name) {
  for (const auto& [m, n] : kModes) {
    if (n == name) return m;
  }
  throw UsageError(fmt::format("unknown mode '{}'; choose one of: {}", name, names_of(kModes)));
}

std::string_view pin_policy_name(PinPolicy pin) {
  for (const auto& [p, name] : kPins) {
    if (p == pin) return name;
  }
  return "unknown";
}

PinPolicy parse_pin_policy(std::string_view name) {
  for (const auto& [p, n] : kPins) {
    if (n == name) return p;
  }
  throw UsageError(fmt::format("unknown --pin value '{}'; choose one of: {}", name, names_of(kPins)));
}

}  // namespace scalebench
