// The gemm record's `comm_bound` under the real mpirun: the words a rank moved are the transport's
// counted bytes, the grid's schedule and the bounds are the hand-worked ones of 4 ranks on a square
// n (docs/model.md, "How far from the least traffic"), and the table says both.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"

namespace {

struct Case {
  const char* algorithm;
  double schedule_n2;  // the grid's words a rank beyond its share, in n²
};

void expect_bound(const Case& c) {
  const std::string dir = make_temp_dir();
  // The schedule pinned whole: row1d's replicated blocks, summa2d's 2x2 grid.
  const std::string pinned = std::string(c.algorithm) == "row1d" ? " --distribution replicated" : " --grid 2x2";
  const CliRun r = run_scalebench_mpi(4, std::string("gemm --n 256 --reps 1 --threads 1 --algorithm ") + c.algorithm +
                                             pinned + " --json " + dir + "/r.json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto rec = nlohmann::json::parse(read_file(dir + "/r.json"));
  const auto& b = rec["comm_bound"];
  const double n2 = 256.0 * 256.0;
  EXPECT_EQ(b["element_bytes"].get<int>(), 8);
  EXPECT_NEAR(b["spread"]["bound_words"].get<double>() / n2, 0.4406, 5e-5) << b.dump();
  EXPECT_NEAR(b["spread"]["schedule_words"].get<double>() / n2, c.schedule_n2, 1e-9) << b.dump();
  EXPECT_NEAR(b["bound_words"].get<double>() / n2, 3 * std::pow(0.25, 2.0 / 3), 1e-6) << b.dump();
  // The most any rank handed to and got from the transport, in words.
  const auto& comm = rec["distribution"]["communication"];
  long long most = 0;
  int at = -1;
  for (int q = 0; q < 4; ++q) {
    const long long moved = comm["bytes_sent_per_rank"][q].get<long long>() +
                            comm["bytes_received_per_rank"][q].get<long long>();
    if (moved > most) most = moved, at = q;
  }
  EXPECT_DOUBLE_EQ(b["moved_words"].get<double>(), static_cast<double>(most) / 8) << b.dump();
  EXPECT_EQ(b["moved_rank"].get<int>(), at);
  EXPECT_NEAR(b["moved_to_bound"].get<double>(), b["moved_words"].get<double>() / b["bound_words"].get<double>(),
              1e-12);
  EXPECT_GE(b["moved_to_bound"].get<double>(), 1.0) << "a run moved less than the least any algorithm must";
  EXPECT_NE(r.output.find("communication bound: rank " + std::to_string(at) + " moved"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("communication bound: with A, B and C spread evenly this grid moves"), std::string::npos)
      << r.output;
}

}  // namespace

TEST(CommBoundCli, Row1dMovesThreeQuartersOfN2WithSpreadInputs) { expect_bound({"row1d", 0.75}); }

TEST(CommBoundCli, Summa2dOnTwoByTwoMovesHalfOfN2WithSpreadInputs) { expect_bound({"summa2d", 0.5}); }

TEST(CommBoundCli, OneRankHasNoBoundLines) {
  const std::string dir = make_temp_dir();
  const CliRun r = run_scalebench("gemm --n 64 --reps 1 --json " + dir + "/r.json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("communication bound"), std::string::npos) << r.output;
  const auto rec = nlohmann::json::parse(read_file(dir + "/r.json"));
  EXPECT_DOUBLE_EQ(rec["comm_bound"]["spread"]["bound_words"].get<double>(), 0.0);
}

TEST(CommBoundCli, SharedDistributionCountsWhatItsLayoutMovesBetweenNodes) {
  // No host transport carries the blocks: the layout's bytes per rank stand in. On one node the
  // ranks read the node's windows, and nothing crosses a node.
  const std::string dir = make_temp_dir();
  const CliRun r = run_scalebench_mpi(4, "gemm --n 256 --reps 1 --threads 1 --distribution shared --json " + dir +
                                             "/r.json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto rec = nlohmann::json::parse(read_file(dir + "/r.json"));
  ASSERT_EQ(rec["distribution"]["scheme"], "shared") << rec["distribution"].dump();
  const auto& b = rec["comm_bound"];
  EXPECT_EQ(b["moved_source"], "layout") << b.dump();
  EXPECT_DOUBLE_EQ(b["moved_words"].get<double>(), 0.0) << b.dump();
  EXPECT_EQ(b["moved_rank"].get<int>(), 0);
  EXPECT_DOUBLE_EQ(b["moved_to_bound"].get<double>(), 0.0);
  EXPECT_NE(r.output.find("communication bound: no rank moved a word to another (the node's shared windows hold A, B "
                          "and C once)"),
            std::string::npos)
      << r.output;
}

TEST(CommBoundCli, ATransportsCountsSayTheirSource) {
  const std::string dir = make_temp_dir();
  // Pinned: the replicated scheme moves its blocks through the host transport.
  const CliRun r =
      run_scalebench_mpi(2, "gemm --n 128 --reps 1 --threads 1 --algorithm row1d --distribution replicated --json " +
                                dir + "/r.json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto rec = nlohmann::json::parse(read_file(dir + "/r.json"));
  EXPECT_EQ(rec["comm_bound"]["moved_source"], "transport") << rec["comm_bound"].dump();
}
