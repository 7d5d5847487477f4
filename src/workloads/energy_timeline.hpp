#pragma once
// One node's counter readings as a timeline: the joules of any interval within them, CPU and GPU
// apart, linear between two readings. Every interval between two readings is checked
// (energy_between, energy.hpp); the joules of an interval that touches one not counted, or that
// reaches outside the readings, are not counted for that kind: no value and the reason, never a
// number made of the counted part alone.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "scalebench/base/energy.hpp"

namespace scalebench {

// The joules of one interval: none for a kind not counted there, `*_why` saying why.
struct IntervalJoules {
  std::optional<double> cpu, gpu;
  std::string cpu_why, gpu_why;
};

class EnergyTimeline {
 public:
  EnergyTimeline(const std::vector<EnergyDomain>& domains, std::vector<EnergyReading> readings);
  // The joules from t0 to t1 (wall_seconds(); t0 <= t1).
  IntervalJoules between(double t0, double t1) const;

 private:
  // One kind's joules since the first reading (its intervals not counted add nothing) and how
  // many of its intervals were not counted, after each reading; the reason of each not counted.
  struct Kind {
    std::vector<double> joules;
    std::vector<std::size_t> bad;
    std::vector<std::string> why;  // per interval (index i: between readings i - 1 and i); "" counted
  };
  std::optional<double> kind_between(const Kind& k, double t0, double t1, std::string& why) const;
  std::vector<double> t_;
  Kind cpu_, gpu_;
};

}  // namespace scalebench
