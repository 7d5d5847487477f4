#pragma once
// The sharded Monte Carlo run over ranks (src/workloads/montecarlo/): its outcome and its entry.
#include <nlohmann/json.hpp>

#include "scalebench/problem/montecarlo.hpp"

namespace scalebench {

class Communicator;

struct MonteCarloResult {
  bool ok = false;
  McOutcome outcome;      // valid on every rank
  nlohmann::json record;  // the full run record (rank 0)
};

// Collective over `comm`: shard, compute, reduce, verify, time; prints the human table on rank 0
// unless quiet; writes --json on rank 0. Throws scalebench::Error on failures detected before work.
MonteCarloResult run_distributed_montecarlo(const MonteCarloConfig& cfg, const Communicator& comm);

}  // namespace scalebench
