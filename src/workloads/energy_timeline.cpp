// One node's counter readings as a timeline (energy_timeline.hpp).
#include "energy_timeline.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace scalebench {

EnergyTimeline::EnergyTimeline(const std::vector<EnergyDomain>& domains, std::vector<EnergyReading> readings) {
  std::sort(readings.begin(), readings.end(),
            [](const EnergyReading& a, const EnergyReading& b) { return a.at_s < b.at_s; });
  for (std::size_t i = 0; i < readings.size(); ++i) {
    t_.push_back(readings[i].at_s);
    if (i == 0) {
      for (Kind* k : {&cpu_, &gpu_}) {
        k->joules.push_back(0.0);
        k->bad.push_back(0);
        k->why.emplace_back();
      }
      continue;
    }
    const std::vector<EnergyDelta> d = energy_between(domains, readings[i - 1], readings[i]);
    for (auto [k, kind] : {std::pair<Kind*, const char*>{&cpu_, "cpu"}, {&gpu_, "gpu"}}) {
      const EnergyDelta e = joules_of_kind(domains, d, kind);
      // An interval not counted adds nothing here; `bad` keeps any span that holds it from a value.
      k->joules.push_back(k->joules.back() + e.joules.value_or(0.0));
      k->bad.push_back(k->bad.back() + (e.joules ? 0 : 1));
      k->why.push_back(e.joules ? std::string() : e.why);
    }
  }
}

std::optional<double> EnergyTimeline::kind_between(const Kind& k, double t0, double t1, std::string& why) const {
  if (t_.size() < 2 || !(t0 >= t_.front()) || !(t1 <= t_.back()) || !(t0 <= t1)) {
    why = t_.size() < 2 ? "the counters were read fewer than twice: not counted"
                        : fmt::format("the interval {:.6f} s to {:.6f} s reaches outside the counters' readings "
                                      "({:.6f} s to {:.6f} s): not counted",
                                      t0, t1, t_.front(), t_.back());
    return std::nullopt;
  }
  // The intervals between readings that [t0, t1] touches: interval i lies between readings i - 1
  // and i; from the one that holds t0 to the one that holds t1.
  const std::size_t last_interval = t_.size() - 1;
  auto interval_of = [&](std::size_t reading) { return std::clamp<std::size_t>(reading, 1, last_interval); };
  const std::size_t a = interval_of(static_cast<std::size_t>(std::upper_bound(t_.begin(), t_.end(), t0) - t_.begin()));
  const std::size_t b = interval_of(static_cast<std::size_t>(std::lower_bound(t_.begin(), t_.end(), t1) - t_.begin()));
  const std::size_t lo = std::min(a, b), hi = std::max(a, b);
  if (k.bad[hi] != k.bad[lo - 1]) {
    for (std::size_t i = lo; i <= hi; ++i) {
      if (!k.why[i].empty()) {
        why = k.why[i];
        break;
      }
    }
    if (why.empty()) why = "an interval between two readings was not counted";
    return std::nullopt;
  }
  auto at = [&](double t) {
    const std::size_t i = interval_of(static_cast<std::size_t>(std::upper_bound(t_.begin(), t_.end(), t) - t_.begin()));
    const double w = t_[i] > t_[i - 1] ? std::clamp((t - t_[i - 1]) / (t_[i] - t_[i - 1]), 0.0, 1.0) : 1.0;
    return k.joules[i - 1] + w * (k.joules[i] - k.joules[i - 1]);
  };
  return at(t1) - at(t0);
}

IntervalJoules EnergyTimeline::between(double t0, double t1) const {
  IntervalJoules out;
  out.cpu = kind_between(cpu_, t0, t1, out.cpu_why);
  out.gpu = kind_between(gpu_, t0, t1, out.gpu_why);
  return out;
}

}  // namespace scalebench
