#pragma once
// The energy of a run (the record's `energy` section): one reader per node (the node's first
// rank) reads its CPU packages' RAPL counters and the GPUs its ranks drive (each GPU once, however
// many ranks share it) just before every repeat's barrier and after the last; the nodes' joules are
// summed on rank 0. The main thread never reads a counter inside a timed repeat; a sampler thread
// on the reader reads them every kSamplePeriod. Each figure says which interval it covers: the
// timed interval of each repeat (from the end of its barrier, as long as its slowest rank's end to
// end: the time column's interval, and the one GFLOP/J and J per 1e9 samples come from), the whole
// repeat with its check (per_result_j), and each phase long enough for the counters' refresh
// (PhaseRecorder::spans), all from that timeline (energy_timeline.hpp). A kind (CPU, GPU) with one
// of these intervals not counted on one node is not counted for the run: the reason says where,
// a warning too, and its joules are null, never 0 J. `covers` names the parts counted.
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "scalebench/base/energy.hpp"
#include "scalebench/mpi/mpi.hpp"
#include "scalebench/mpi/timing.hpp"

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
  ~EnergyRun();
  EnergyRun(const EnergyRun&) = delete;
  EnergyRun& operator=(const EnergyRun&) = delete;
  // The node's power at rest before the run loads it (its counters over 0.3 s; only where a
  // counter is present).
  void sample_idle();
  // Starts the sampler thread (where a counter is present), before the first repeat.
  void start_sampling();
  // Before each repeat's barrier and once after the last repeat.
  void mark();
  // Collective: the section (on rank 0; null elsewhere) for `total` repeats of which `warmup`
  // came first; `timed` holds the timed repeats' phases and, on each node's reader, their spans.
  // Stops the sampler.
  nlohmann::json section(int total, int warmup, const EnergyWork& work, const PhaseRecorder& timed);
  // One line for the human table ("energy: ...").
  static std::string table_line(const nlohmann::json& e);

 private:
  const Communicator& comm_;
  void stop_sampling();
  EnergyReading read();

  std::unique_ptr<EnergyMeter> meter_;  // on the node's first rank only
  std::vector<EnergyReading> marks_;
  std::optional<double> idle_cpu_w_, idle_gpu_w_;  // none: not counted (the warning says why)
  std::string idle_cpu_why_, idle_gpu_why_;
  std::mutex read_mutex_;  // the meter is read by the main thread and the sampler
  std::vector<EnergyReading> timeline_;
  std::thread sampler_;
  std::mutex stop_mutex_;
  std::condition_variable stop_cv_;
  bool stop_ = false;
};

}  // namespace scalebench
