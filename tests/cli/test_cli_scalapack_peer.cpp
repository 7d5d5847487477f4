// `scalebench gemm --peer scalapack` with the real binary under the real mpirun: the table's peer
// lines where the build has ScaLAPACK, one refusal line (exit 3) where it has not; values the peer
// cannot take refused before any work (exit 2).
#include <gtest/gtest.h>

#include <string>

#include "cli_runner.hpp"

TEST(CliScalapackPeer, UnknownPeerAndPrecisionsScalapackLacksAreUsageErrors) {
  expect_refused("gemm --n 16 --peer bogus", 2, "--peer");
  expect_refused("gemm --n 16 --peer scalapack --precision bf16", 2, "--peer scalapack");
  expect_refused("gemm --n 16 --peer scalapack --precision tf32", 2, "--peer scalapack");
}

TEST(CliScalapackPeer, TableShowsBothVariantsOrTheBuildSaysItHasNone) {
  const CliRun r = run_scalebench_mpi(2, "gemm --n 64 --reps 2 --algorithm summa2d --panel-width 16 --peer scalapack");
  if (r.exit_code == 3) {
    EXPECT_TRUE(is_refusal(r, 3, "ScaLAPACK"));
    EXPECT_NE(r.output.find("built without it"), std::string::npos) << r.output;
    GTEST_SKIP() << "this scalebench has no ScaLAPACK; it refused the peer as it should: " << r.output;
  }
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("peer scalapack: pdgemm on a 1x2 grid, blocks 16"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("peer scalapack shipped: k-step   32"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("peer scalapack tuned  : k-step   16"), std::string::npos) << r.output;
  EXPECT_EQ(count_of(r.output, "; freivalds PASSED"), 2) << r.output;
}

TEST(CliScalapackPeer, DryRunNamesThePeer) {
  const CliRun r = run_scalebench("gemm --n 64 --peer scalapack --dry-run");
  if (r.exit_code == 3) GTEST_SKIP() << "this scalebench has no ScaLAPACK: " << r.output;
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("--peer scalapack"), std::string::npos) << r.output;
}
