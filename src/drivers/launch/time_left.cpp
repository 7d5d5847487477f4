#include "launch/time_left.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "scalebench/workloads/workload.hpp"
#include "study/baseline.hpp"

namespace scalebench::launch {

void TimeLeft::finished(double work, double seconds) {
  if (work > 0 && seconds >= 0) {
    work_ += work;
    seconds_ += seconds;
  }
}

std::string TimeLeft::text(double work_to_come) const {
  if (work_ <= 0 || work_to_come <= 0) return "";
  const double s = std::round(seconds_ / work_ * work_to_come);
  if (s < 60) return fmt::format("about {:.0f} s left", s);
  if (s < 3600) return fmt::format("about {:.0f} min {:.0f} s left", std::floor(s / 60), std::fmod(s, 60));
  return fmt::format("about {:.0f} h {:.0f} min left", std::floor(s / 3600), std::floor(std::fmod(s, 3600) / 60));
}

double run_work(const std::string& name, const std::string& size, double repeats, double workers) {
  const double v = study::size_value(size);
  const double per_repeat = v <= 0 ? 1.0 : workload(name).work_per_repeat(v);
  const double work = per_repeat * std::max(repeats, 1.0) / std::max(workers, 1.0);
  return std::isfinite(work) ? work : std::numeric_limits<double>::max();
}

}  // namespace scalebench::launch
