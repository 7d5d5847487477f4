#pragma once
// The energy of a run (the record's `energy` section): one reader per node (the node's first
// rank) reads its CPU packages' RAPL counters and the GPUs its ranks drive (each GPU once, however
// many ranks share it) just before every repeat's barrier and after the last; the nodes' joules are
// summed on rank 0. Counters are never read inside a timed repeat.
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scalebench/base/energy.hpp"
#include "scalebench/mpi/mpi.hpp"

namespace scalebench {

// What one repeat computes, for the efficiency figure (gemm: GFLOP; Monte Carlo: 1e9 samples).
struct EnergyWork {
  std::string unit;  // "GFLOP" or "1e9 samples"; empty: no efficiency figure
  double per_repeat = 0;
};

class EnergyRun {
 public:
  // Collective over `comm`: the node's GPUs gathered on its first rank, which opens the meter.
  EnergyRun(const Communicator& comm, const std::string& gpu_pci_bus_id);
  // The node's power at rest before the run loads it (its counters over 0.3 s; only where a
  // counter is present).
  void sample_idle();
  // Before each repeat's barrier and once after the last repeat.
  void mark();
  // Collective: the section (on rank 0; null elsewhere) for `warmup` warm-up repeats first.
  nlohmann::json section(int warmup, const EnergyWork& work) const;
  // One line for the human table ("energy: ...").
  static std::string table_line(const nlohmann::json& e);

 private:
  const Communicator& comm_;
  std::unique_ptr<EnergyMeter> meter_;  // on the node's first rank only
  std::vector<EnergyReading> marks_;
  double idle_cpu_w_ = 0, idle_gpu_w_ = 0;
};

}  // namespace scalebench
