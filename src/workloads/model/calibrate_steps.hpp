#pragma once
// The parts of `scalebench calibrate` that tests drive on their own (docs/model.md,
// "Calibration"): the quiet wait of the ranks not being timed, and one BLAS series with its
// collapsed-point check, over a timer the caller gives (the real multiply, or a test's).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "scalebench/workloads/model.hpp"

namespace scalebench {

class Communicator;

// Waits until every rank of `comm` has called it, without spinning: a non-blocking barrier
// polled with MPI_Test and a sleep that grows from 50 µs to 5 ms, so that a waiting rank leaves
// its core to the rank (or node-wide kernel) being timed.
void wait_quietly(const Communicator& comm);

// A point of a series below this fraction of its neighbours (both, or the one before the last
// point) is collapsed: re-timed once, and named in a warning if it stays so.
inline constexpr double kCollapsedFraction = 0.5;

// One timing of a BLAS point: the median repeat's GFLOP/s and the repeats' spread.
struct TimedRate {
  double gflops = 0;
  Spread spread{};
};
// Times `n`³ on the series' thread count; `attempt` is 0, then 1 when re-timed.
using BlasTimer = std::function<TimedRate(std::int64_t n, int attempt)>;

struct BlasSeries {
  std::vector<BlasPoint> points;
  std::vector<std::int64_t> retimed;  // sides re-timed as collapsed
  std::vector<std::string> warnings;  // those that stayed collapsed, in words
};

// Times `sides` in order on `threads` threads (`what` names the series in warnings: "BLAS fp64
// 64 thread(s)"); a side past `grow_from` is timed only while the previous multiply, scaled by
// the cube of the sides, is predicted under `max_multiply_s`. Then every collapsed point is
// re-timed (attempt 1), and kept with a warning if it is still collapsed.
BlasSeries time_blas_series(const std::string& what, int threads, const std::vector<std::int64_t>& sides,
                            std::int64_t grow_from, double max_multiply_s, const BlasTimer& time);

// The indices of the collapsed points of a series of rates ordered by size.
std::vector<std::size_t> collapsed_points(const std::vector<double>& gflops);

}  // namespace scalebench
