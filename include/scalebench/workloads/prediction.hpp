#pragma once
// What a workload contributes to `scalebench predict` and `study --predict` (docs/model.md): its
// configuration's prediction on any layout, and its variants on one core and one GPU.
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "scalebench/workloads/model.hpp"

namespace scalebench {

struct PredictedWorkload {
  std::string what;  // the configuration in words
  std::string unit;  // "GFLOP/s" or "samples/s"
  double work = 0;   // flops or samples of one end-to-end
  bool gpu = false;  // a GPU backend
  int threads = 1;
  int repeats = 1;      // warm-up + timed repeats of one job
  EnergyKernel kernel;  // whose watts the compute phase draws (predict_energy)
  std::function<Prediction(const MachineLayout&)> here;
  std::function<Prediction(const MachineLayout&)> one_core;
  std::function<Prediction(const MachineLayout&)> one_gpu;
  // The smallest size at which one GPU beats a whole node's cores, as text.
  std::function<std::string()> crossover;
  // `auto` options: the ranking of the alternatives (choice.hpp) as lines and as JSON; empty/null
  // when none was given.
  std::string choice_text;
  nlohmann::json choice;
};

// The end-to-end seconds `f` predicts on `m`; none when the profile cannot say (UsageError).
std::optional<double> try_seconds(const std::function<Prediction(const MachineLayout&)>& f, const MachineLayout& m);

// The smallest size in [lo, hi] (geometric steps of 2^(1/8)) at which `gpu` is faster than `cpu`.
std::optional<double> crossover_size(double lo, double hi, const std::function<std::optional<double>(double)>& gpu,
                                     const std::function<std::optional<double>(double)>& cpu);

}  // namespace scalebench
