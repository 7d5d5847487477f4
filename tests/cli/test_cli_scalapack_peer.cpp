// `scalebench gemm --peer scalapack` with the real binary under the real mpirun: the table's peer
// lines where the build has ScaLAPACK, one refusal line (exit 3) where it has not; values the peer
// cannot take refused before any work (exit 2).
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"

TEST(CliScalapackPeer, UnknownPeerAndPrecisionsScalapackLacksAreUsageErrors) {
  expect_refused("gemm --n 16 --peer bogus", 2, "--peer");
  expect_refused("gemm --n 16 --peer scalapack --precision bf16", 2, "--peer scalapack");
  expect_refused("gemm --n 16 --peer scalapack --precision tf32", 2, "--peer scalapack");
  expect_refused("contrast --workload gemm --n 64 --peer bogus --dry-run", 2, "--peer");
}

TEST(CliScalapackPeer, TableShowsBothVariantsOrTheBuildSaysItHasNone) {
  const CliRun r =
      run_scalebench_mpi(2, "gemm --n 64 --reps 2 --algorithm summa2d --grid 1x2 --panel-width 16 --peer scalapack");
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

TEST(CliScalapackPeer, Summa2dPreDistributedIsItsPanelsAsOneInterval) {
  // PDGEMM's pre-distributed time is one interval; Summa2D's broadcast + compute is compared as
  // one too: the slowest rank's sum per repeat (panel_schedule.panels_s), not the phases' medians.
  const std::string dir = make_temp_dir();
  const CliRun r = run_scalebench_mpi(2, "gemm --n 64 --reps 2 --quiet --algorithm summa2d --grid 1x2 --panel-width 16 "
                                         "--peer scalapack --json " +
                                             dir + "/r.json");
  if (r.exit_code == 3) GTEST_SKIP() << "this scalebench has no ScaLAPACK: " << r.output;
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto rec = nlohmann::json::parse(read_file(dir + "/r.json"));
  const auto& p = rec.at("peers").at("scalapack");
  EXPECT_DOUBLE_EQ(p.at("run_pre_distributed_s").get<double>(),
                   rec.at("distribution").at("panel_schedule").at("panels_s").get<double>())
      << p.dump(2);
  EXPECT_NE(p.at("run_pre_distributed_what").get<std::string>().find("one interval"), std::string::npos);
  const double ratio = p.at("variants").at("tuned").at("ratio_run_vs_peer").get<double>();
  EXPECT_DOUBLE_EQ(ratio, p.at("run_pre_distributed_s").get<double>() /
                              p.at("variants").at("tuned").at("pre_distributed").at("median_s").get<double>());
}

TEST(CliScalapackPeer, DryRunNamesThePeer) {
  const CliRun r = run_scalebench("gemm --n 64 --peer scalapack --dry-run");
  if (r.exit_code == 3) GTEST_SKIP() << "this scalebench has no ScaLAPACK: " << r.output;
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("--peer scalapack"), std::string::npos) << r.output;
}

// One rank's block-cyclic piece beyond ScaLAPACK's integer: refused before any work (on 1 rank,
// n = 50000 is 2.5e9 elements), with the way out.
TEST(CliScalapackPeer, PieceBeyondScalapacksIntegerIsRefusedBeforeAnyWork) {
  const CliRun r = run_scalebench("gemm --n 50000 --peer scalapack --dry-run");
  if (r.exit_code == 3 && r.output.find("built without it") != std::string::npos) {
    GTEST_SKIP() << "this scalebench has no ScaLAPACK: " << r.output;
  }
  EXPECT_TRUE(is_refusal(r, 2, "ScaLAPACK's integer")) << r.output;
  EXPECT_NE(r.output.find("more ranks"), std::string::npos) << r.output;
}

// contrast --peer scalapack: the CPU gemm rows time PDGEMM too; their rows carry it and the table
// shows the run/pdgemm column (the naive row does not run the peer: another problem size).
TEST(CliScalapackPeer, ContrastRowsCarryThePeer) {
  const std::string dir = make_temp_dir();
  const CliRun r = run_scalebench("contrast --workload gemm --modes naive,single-core --n 128 --naive-n 64 --reps 1 "
                                  "--warmup 0 --peer scalapack --no-report --out-dir " +
                                  dir + "/runs --json " + dir + "/c.json");
  if (r.exit_code == 8 && r.output.find("built without it") != std::string::npos) {
    GTEST_SKIP() << "this scalebench has no ScaLAPACK: " << r.output;
  }
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("run/pdgemm"), std::string::npos) << r.output;
  const nlohmann::json report = nlohmann::json::parse(read_file(dir + "/c.json"));
  int with_peer = 0;
  for (const auto& row : report["runs"]) {
    if (row["mode"] == "single-core") {
      ASSERT_TRUE(row.contains("peer")) << row.dump();
      EXPECT_EQ(row["peer"]["tuned"]["k_step"].get<int>(), 128) << row.dump();  // min(block 512, k 128)
      EXPECT_EQ(row["peer"]["shipped"]["k_step"].get<int>(), 32) << row.dump();
      ++with_peer;
    } else {
      EXPECT_FALSE(row.contains("peer")) << row.dump();
    }
  }
  EXPECT_EQ(with_peer, 1) << report.dump();
}

// row1d has no panel: the peer's blocks are m / ranks rows (at most 512), so that every process of
// its Px1 grid holds rows of A and C; the record says where the width came from.
TEST(CliScalapackPeer, Row1dBlocksGiveEveryRankRows) {
  const std::string dir = make_temp_dir();
  const CliRun r =
      run_scalebench_mpi(4, "gemm --n 64 --reps 1 --warmup 0 --threads 1 --algorithm row1d --peer scalapack --json " +
                                dir + "/r.json");
  if (r.exit_code == 3 && r.output.find("built without it") != std::string::npos) {
    GTEST_SKIP() << "this scalebench has no ScaLAPACK: " << r.output;
  }
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("peer scalapack: pdgemm on a 4x1 grid, blocks 16"), std::string::npos) << r.output;
  const nlohmann::json peer = nlohmann::json::parse(read_file(dir + "/r.json"))["peers"]["scalapack"];
  EXPECT_EQ(peer["block_width"].get<int>(), 16) << peer.dump(2);
  EXPECT_NE(peer["block_width_source"].get<std::string>().find("every rank holds rows"), std::string::npos)
      << peer.dump(2);
  EXPECT_EQ(peer["variants"]["tuned"]["k_step"].get<int>(), 16) << peer.dump(2);
}

// The peer's block width beyond ScaLAPACK's integer is --panel-width's: the line names it.
TEST(CliScalapackPeer, BlockWidthRefusalNamesPanelWidth) {
  const CliRun r = run_scalebench("gemm --n 64 --algorithm summa2d --panel-width 3e9 --peer scalapack --dry-run");
  if (r.exit_code == 3 && r.output.find("built without it") != std::string::npos) {
    GTEST_SKIP() << "this scalebench has no ScaLAPACK: " << r.output;
  }
  EXPECT_TRUE(is_refusal(r, 2, "--panel-width")) << r.output;
}
