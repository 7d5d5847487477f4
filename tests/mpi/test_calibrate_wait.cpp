// While rank 0 times a kernel (here an OpenBLAS multiply, as calibrate does), the other ranks
// wait in calibrate's quiet wait and leave their cores alone: each uses under 10% of a core
// (getrusage of the whole process, every thread counted), where MPI_Barrier's busy poll uses
// about all of one.
#include <sys/resource.h>

#include <vector>

#include <gtest/gtest.h>

#include "mpi_test_util.hpp"
#include "scalebench/cpu/gemm.hpp"
#include "scalebench/mpi/mpi.hpp"
#include "scalebench/mpi/timing.hpp"
#include "workloads/model/calibrate_steps.hpp"

using namespace scalebench;

namespace {

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

// Rank 0 multiplies 256^3 blocks on one thread for `seconds`.
void time_a_kernel(double seconds) {
  const GemmShape s{256, 256, 256};
  std::vector<double> a(256 * 256, 0.5), b(256 * 256, 0.25), c(256 * 256, 0.0);
  auto gemm = make_cpu_gemm(GemmBackendKind::openblas, 1);
  PhaseRecorder rec;
  gemm->prepare(s, Precision::fp64, rec);
  const double t0 = wall_seconds();
  while (wall_seconds() - t0 < seconds) gemm->multiply(a.data(), b.data(), c.data(), rec);
}

TEST(CalibrateWait, AWaitingRankUsesUnderATenthOfACore) {
  const auto comm = Communicator::world();
  ASSERT_GE(comm.size(), 2) << "needs a rank to time and one to wait";
  comm.barrier();
  const double wall0 = wall_seconds(), cpu0 = cpu_seconds();
  if (comm.is_root()) time_a_kernel(1.5);
  wait_quietly(comm);
  const double wall = wall_seconds() - wall0, cpu = cpu_seconds() - cpu0;
  const double share = cpu / wall;
  bool ok = true;
  if (!comm.is_root()) {
    ok = wall > 1.4 && share < 0.10;
    std::printf("rank %d waited %.2f s using %.3f s of CPU (%.1f%% of a core)\n", comm.rank(), wall, cpu, share * 100);
  }
  EXPECT_TRUE(all_ranks(ok)) << "a waiting rank spun (rank 0 prints nothing; see the ranks' lines)";
}

}  // namespace
