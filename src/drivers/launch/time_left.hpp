#pragma once
// The estimate of the time a driver has left, for its progress lines: the seconds per unit of
// work of the runs finished so far, times the work of those to come. A run's work is its size
// (gemm n^3, Monte Carlo samples) over the cores or GPUs it runs on; see run_work.
#include <string>

namespace scalebench::launch {

class TimeLeft {
 public:
  void finished(double work, double seconds);
  // "about 2 min 10 s left" for `work_to_come`; "" before a run with work finished.
  std::string text(double work_to_come) const;

 private:
  double work_ = 0, seconds_ = 0;
};

// The work of a run: the workload's work per repeat at `size` (Workload::work_per_repeat: n^3 for
// gemm, the samples for Monte Carlo), times the repeats, over the workers (ranks x threads). A size
// that does not parse counts as 1. In doubles: the counts come from options and study files and
// are never converted to an integer type (a huge one stays a finite, large estimate).
double run_work(const std::string& name, const std::string& size, double repeats, double workers);

}  // namespace scalebench::launch
