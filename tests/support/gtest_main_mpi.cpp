// gtest main for MPI tests: every rank runs every test; only rank 0 prints; the exit code is
// failure on every rank if any rank failed, 77 (skipped) if every test skipped everywhere.
#include <mpi.h>

#include <gtest/gtest.h>

#include "scalebench/gpu/device.hpp"

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  scalebench::register_builtin_devices();
  testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {
    auto& listeners = testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  int local_failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
  int any_failed = 0;
  MPI_Allreduce(&local_failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0 && any_failed && !local_failed) {
    std::fprintf(stderr, "a test failed on another rank\n");
  }
  // Exit 77 (CTest's SKIP_RETURN_CODE) only when every test skipped on every rank and none failed.
  const auto* ut = testing::UnitTest::GetInstance();
  int all_skipped_local = ut->test_to_run_count() > 0 && ut->skipped_test_count() == ut->test_to_run_count() ? 1 : 0;
  int all_skipped = 0;
  MPI_Allreduce(&all_skipped_local, &all_skipped, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Finalize();
  if (!any_failed && all_skipped) return 77;
  return any_failed;
}
