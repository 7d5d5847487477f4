#pragma once
// The repeat loop every workload driver runs (gemm, montecarlo): warm-up repeats dropped from the
// recorder, a barrier before each repeat so that every rank starts it together, and a progress
// line from rank 0 once a run has taken more than 5 s.
#include <cstdio>
#include <string>

#include "scalebench/mpi/mpi.hpp"
#include "scalebench/mpi/timing.hpp"

namespace scalebench {

class RepeatLoop {
 public:
  RepeatLoop(std::string what, int warmup, int reps, const Communicator& comm, bool quiet)
      : what_(std::move(what)),
        warmup_(warmup),
        total_(warmup + reps),
        comm_(comm),
        quiet_(quiet),
        start_(wall_seconds()) {}

  int total() const noexcept { return total_; }
  // Start of repeat `rep`: the timed repeats begin with an empty `rec`; every rank waits for the
  // others. Returns the repeat's start time.
  double begin(int rep, PhaseRecorder& rec) const {
    if (rep == warmup_) rec.clear();
    comm_.barrier();
    return wall_seconds();
  }
  // End of repeat `rep`: the progress line on long runs.
  void end(int rep) const {
    const double elapsed = wall_seconds() - start_;
    if (!quiet_ && comm_.is_root() && elapsed > 5.0) {
      std::fprintf(stderr, "scalebench %s: repeat %d/%d done (%s), %.1f s elapsed\n", what_.c_str(), rep + 1, total_,
                   rep < warmup_ ? "warm-up" : "timed", elapsed);
    }
  }

 private:
  std::string what_;
  int warmup_, total_;
  const Communicator& comm_;
  bool quiet_;
  double start_;
};

}  // namespace scalebench
