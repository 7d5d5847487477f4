// The helpers every workload's prediction uses (prediction.hpp).
#include "scalebench/workloads/prediction.hpp"

#include <cmath>

#include "scalebench/base/error.hpp"

namespace scalebench {

std::optional<double> try_seconds(const std::function<Prediction(const MachineLayout&)>& f, const MachineLayout& m) {
  try {
    return f(m).end_to_end;
  } catch (const UsageError&) {
    return std::nullopt;
  }
}

std::optional<double> crossover_size(double lo, double hi, const std::function<std::optional<double>(double)>& gpu,
                                     const std::function<std::optional<double>(double)>& cpu) {
  for (double x = lo; x <= hi; x *= std::pow(2.0, 0.125)) {
    const auto g = gpu(x), c = cpu(x);
    if (!g || !c) return std::nullopt;
    if (*g < *c) return x;
  }
  return std::nullopt;
}

}  // namespace scalebench
