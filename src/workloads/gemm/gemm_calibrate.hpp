#pragma once
// GEMM's part of `scalebench calibrate` (docs/model.md, "Summa2D's lookahead"): what the panel
// algorithm's host lookahead hides on this machine, kept in the profile's mpi.lookahead; the
// workload's calibrate() (gemm_workload.cpp) runs it.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "scalebench/workloads/gemm/distributed_gemm.hpp"
#include "scalebench/workloads/model.hpp"

namespace scalebench {

class Communicator;

// Summa2D's host lookahead against its blocking broadcasts, collective over `comm` (every rank
// of the calibration): an n x n x n fp64 multiply on the most square grid, openblas on `threads`
// threads per rank, cut in 16 k-panels, made once per lookahead 0..kMaxAutoLookahead with the
// algorithm's own schedules; one warm-up each, then the lookaheads in turn `reps` times. A repeat's
// time is the slowest rank's from a common start. What lookahead D hides is (blocking - D) /
// (the blocking broadcast phase), medians over the repeats, within [kLookaheadMinHidden,
// kLookaheadMaxHidden]; 0 where the broadcasts are under 2% of a blocking repeat (too small here
// to tell from the noise). Each schedule's last product is checked (Freivalds). Valid on every
// rank.
struct LookaheadMeasure {
  struct Depth {
    int depth = 0;
    double seconds = 0;  // median repeat
    double hidden = 0;
  };
  std::int64_t n = 0, panel_width = 0;
  ProcessGrid grid;
  double blocking_s = 0, broadcast_s = 0;  // lookahead 0: its median repeat and broadcast phase
  std::vector<Depth> depths;               // 1..kMaxAutoLookahead
  bool verified = true;                    // every schedule's product passed Freivalds' check
};
LookaheadMeasure measure_lookahead(const Communicator& comm, std::int64_t n, int threads, int reps);

// On every rank of the calibration (two or more; nothing on one): measure_lookahead at the
// largest size whose blocking repeat the new profile predicts under 0.05 s (--quick) or 0.2 s,
// kept in p.lookahead (rank 0) for this rank count and node count; `say` gets the progress line,
// or the warning when a product was wrong (then nothing is kept).
void calibrate_gemm_lookahead(Profile& p, const Communicator& comm, const CalibrateOptions& o,
                              const std::function<void(const std::string&)>& say);

}  // namespace scalebench
