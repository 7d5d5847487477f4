// --algorithm, --grid and --panel-width with the real binary under the real mpirun: usage errors
// are one line and exit 2 on every rank before any work; the help and --dry-run show the grid;
// the ranks of an MPMD launch must agree on the algorithm and the grid.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"

namespace {

std::string mpiexec() {
  const char* v = std::getenv("SCALEBENCH_MPIEXEC");
  return v != nullptr && *v != '\0' ? v : "mpirun";
}
std::string binary() {
  const char* v = std::getenv("SCALEBENCH_BINARY");
  return v != nullptr && *v != '\0' ? v : "scalebench";
}

struct Refusal {
  const char* name;
  int ranks;
  std::string args;
  std::string message;  // a fragment of the one error line
};

class AlgorithmRefused : public testing::TestWithParam<Refusal> {};

TEST_P(AlgorithmRefused, ExitTwoWithOneLineBeforeAnyWork) {
  const auto& c = GetParam();
  const CliRun r = run_scalebench_mpi(c.ranks, "gemm --threads 1 " + c.args);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(count_of(r.output, "scalebench: error"), 1) << r.output;
  EXPECT_NE(r.output.find(c.message), std::string::npos) << "expected '" << c.message << "' in:\n" << r.output;
  EXPECT_EQ(r.output.find("verification"), std::string::npos) << "the work ran:\n" << r.output;
}

INSTANTIATE_TEST_SUITE_P(
    Cli, AlgorithmRefused,
    testing::Values(Refusal{"unknown_algorithm", 1, "--n 32 --algorithm cannon",
                            "unknown --algorithm 'cannon'; use row1d or summa2d"},
                    Refusal{"grid_not_PRxPC", 2, "--n 32 --algorithm summa2d --grid 2", "--grid '2' is not PRxPC"},
                    Refusal{"grid_zero", 2, "--n 32 --algorithm summa2d --grid 0x2", "--grid (rows)"},
                    Refusal{"grid_letters", 2, "--n 32 --algorithm summa2d --grid 2xb", "--grid (columns)"},
                    Refusal{"grid_product_differs", 4, "--n 32 --algorithm summa2d --grid 3x2",
                            "--grid 3x2 has 6 processes but the run has 4 ranks; give PR*PC = 4 (e.g. --grid 2x2)"},
                    Refusal{"grid_product_differs_dry_run", 3, "--n 32 --algorithm summa2d --grid 2x2 --dry-run",
                            "--grid 2x2 has 4 processes but the run has 3 ranks"},
                    Refusal{"grid_with_row1d", 2, "--n 32 --algorithm row1d --grid 1x2",
                            "--grid 1x2 needs --algorithm summa2d (row1d runs on 2x1)"},
                    Refusal{"grid_beyond_rows", 4, "--m 3 --n 32 --k 32 --algorithm summa2d --grid 4x1",
                            "--grid 4x1 needs at least 4 rows and 1 columns of C"},
                    Refusal{"panel_zero", 1, "--n 32 --algorithm summa2d --panel-width 0", "--panel-width"},
                    Refusal{"panel_with_row1d", 1, "--n 32 --algorithm row1d --panel-width 64",
                            "--panel-width is the k-panel of --algorithm summa2d"},
                    Refusal{"summa_with_nccl", 1, "--n 32 --algorithm summa2d --transport nccl",
                            "--transport nccl, --resident and --overlap need --backend cublas"},
                    Refusal{"lookahead_beyond_range", 1, "--n 32 --algorithm summa2d --lookahead 17", "--lookahead"},
                    Refusal{"lookahead_not_a_number", 1, "--n 32 --algorithm summa2d --lookahead two", "--lookahead"},
                    Refusal{"lookahead_with_row1d", 1, "--n 32 --algorithm row1d --lookahead 2",
                            "--lookahead is the panel pipeline of --algorithm summa2d"},
                    Refusal{"summa_overlap_without_lookahead", 1, "--n 32 --algorithm summa2d --overlap --lookahead 0",
                            "--overlap with summa2d is its lookahead, but --lookahead 0 turns it off"},
                    // Refused before any GPU is looked for: the same on a machine without one.
                    Refusal{"summa_with_resident", 1, "--n 32 --backend cublas --algorithm summa2d --resident",
                            "--algorithm summa2d has no --resident schedule"},
                    Refusal{"unknown_distribution", 2, "--n 32 --distribution numa",
                            "unknown --distribution 'numa'; use replicated or shared"},
                    Refusal{"shared_with_summa", 2, "--n 32 --algorithm summa2d --distribution shared",
                            "--distribution shared is row1d's node-shared scheme"},
                    Refusal{"shared_with_resident", 1, "--n 32 --distribution shared --resident",
                            "--resident keeps A, B and C on the device"}),
    [](const testing::TestParamInfo<Refusal>& p) { return std::string(p.param.name); });

TEST(AlgorithmCli, HelpListsAlgorithmGridAndPanelWidth) {
  const CliRun r = run_scalebench("gemm --help");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  for (const char* what : {"--algorithm", "row1d", "summa2d", "--grid", "PRxPC", "--panel-width", "--lookahead"}) {
    EXPECT_NE(r.output.find(what), std::string::npos) << what << " missing from:\n" << r.output;
  }
}

TEST(AlgorithmCli, DryRunShowsTheMostSquareGridAndEveryRanksBlock) {
  // No profile (a calibration by another test may have left one in the tests' cache).
  const std::string dir = make_temp_dir();
  const CliRun r = run_command("SCALEBENCH_PROFILE=" + dir + "/none.json timeout 120 " +
                               std::getenv("SCALEBENCH_MPIEXEC") + " -np 6 --oversubscribe " +
                               std::getenv("SCALEBENCH_BINARY") +
                               " gemm --n 100 --threads 1 --algorithm summa2d --dry-run 2>&1");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  // The grid and the lookahead not given: by the rules (no profile), the most square and 0 on the host.
  EXPECT_NE(r.output.find("algorithm summa2d  grid 2x3  panel width 512, lookahead 0"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("grid (1,2) C block     50 x 33"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("verification"), std::string::npos) << r.output;
}

TEST(AlgorithmCli, RunRecordNamesAlgorithmGridAndBytes) {
  const std::string dir = make_temp_dir();
  const CliRun r = run_scalebench_mpi(
      4, "gemm --n 48 --threads 1 --reps 1 --quiet --algorithm summa2d --grid 4x1 --fill integer --json " + dir +
             "/r.json");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const std::string rec = read_file(dir + "/r.json");
  EXPECT_NE(rec.find("\"algorithm\": \"summa2d\""), std::string::npos) << rec.substr(0, 400);
  EXPECT_NE(rec.find("\"bytes_per_rank\""), std::string::npos);
  EXPECT_NE(rec.find("\"grid\": [\n      4,\n      1\n    ]"), std::string::npos);
}

// --distribution shared through the binary: the table's distribution line, one B per node in
// the record, and the dry run's memory lines say what each rank holds.
TEST(AlgorithmCli, SharedDistributionTableRecordAndDryRun) {
  const std::string dir = make_temp_dir();
  const CliRun r =
      run_scalebench_mpi(3,
                         "gemm --m 50 --n 40 --k 30 --threads 1 --reps 1 --fill integer --distribution shared --json " +
                             dir + "/r.json");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("distribution: shared  moved per repeat 0.000 GB between nodes, 0.000 GB within nodes; B "
                          "copies per node 1"),
            std::string::npos)
      << r.output;
  const std::string rec = read_file(dir + "/r.json");
  EXPECT_NE(rec.find("\"scheme\": \"shared\""), std::string::npos) << rec.substr(0, 400);
  EXPECT_NE(rec.find("\"b_copies\": 1"), std::string::npos);
  const CliRun dry = run_scalebench_mpi(2, "gemm --n 40 --threads 1 --distribution shared --dry-run");
  EXPECT_EQ(dry.exit_code, 0) << dry.output;
  EXPECT_NE(dry.output.find("one A, B and C per node in shared windows"), std::string::npos) << dry.output;
}

// The algorithm and the grid decide which collectives run: two halves of an MPMD launch that
// differ in them must stop with the field named, not hang.
TEST(AlgorithmCli, RanksMustAgreeOnAlgorithmAndGrid) {
  const std::string launch = "timeout 60 " + mpiexec() + " --oversubscribe -np 1 " + binary();
  CliRun r = run_command(launch + " gemm --n 32 --reps 1 --quiet --algorithm row1d : -np 1 " + binary() +
                         " gemm --n 32 --reps 1 --quiet --algorithm summa2d");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("rank 0 has algorithm=row1d, rank 1 has algorithm=summa2d"), std::string::npos) << r.output;
  r = run_command(launch + " gemm --n 32 --reps 1 --quiet --algorithm summa2d --grid 1x2 : -np 1 " + binary() +
                  " gemm --n 32 --reps 1 --quiet --algorithm summa2d --grid 2x1");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("rank 0 has grid=1x2, rank 1 has grid=2x1"), std::string::npos) << r.output;
  r = run_command(launch + " gemm --n 32 --reps 1 --quiet : -np 1 " + binary() +
                  " gemm --n 32 --reps 1 --quiet --distribution shared");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  // Not given on rank 0: auto (by default), named so.
  EXPECT_NE(r.output.find("rank 0 has distribution=auto, rank 1 has distribution=shared"), std::string::npos)
      << r.output;
}

// The record of a 2-rank Summa2D run of n=32 in panels of 8 (integer fill) with rank 1's
// multiplies slowed by `delay` seconds each (the hidden test options); `extra` adds options.
nlohmann::json delayed_summa_record(double delay, const std::string& extra) {
  const std::string dir = make_temp_dir();
  const CliRun r = run_scalebench_mpi(2, "gemm --n 32 --threads 1 --warmup 0 --quiet --algorithm summa2d "
                                         "--panel-width 8 --fill integer --delay-rank 1 --delay-seconds " +
                                             std::to_string(delay) + " " + extra + " --json " + dir + "/r.json");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return r.exit_code == 0 ? nlohmann::json::parse(read_file(dir + "/r.json")) : nlohmann::json::object();
}

}  // namespace

// The hidden test options that slow one rank's multiplies: the sleep lands in that rank's compute,
// the record splits every rank's broadcast phase, and a negative sleep is refused.
TEST(AlgorithmCli, DelayedRankSleepsInItsComputeAndTheRecordSplitsTheBroadcasts) {
  const auto rec = delayed_summa_record(0.01, "--reps 1 --lookahead 2");
  ASSERT_TRUE(rec.contains("distribution"));
  const auto& s = rec.at("distribution").at("panel_schedule");
  EXPECT_EQ(s.at("lookahead").get<int>(), 2) << s.dump(2);
  EXPECT_GE(s.at("compute_s").at(1).get<double>(), 4 * 0.01) << s.dump(2);  // at least 32 / 8 panels
  EXPECT_LT(s.at("compute_s").at(0).get<double>(), 4 * 0.01) << s.dump(2);
  EXPECT_TRUE(s.at("wait_s").at(0).is_number()) << s.dump(2);
  const CliRun bad = run_scalebench("gemm --n 32 --algorithm summa2d --delay-rank 0 --delay-seconds -1");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("--delay-seconds"), std::string::npos) << bad.output;
}

// Broadcast + compute as one interval: per repeat the slowest rank's sum, which lies between the
// slowest multiply and the two phases' maxima added. With rank 1's multiplies slowed, rank 0 waits
// for its panels in the broadcast while rank 1 multiplies: the maxima come from different ranks,
// and their sum overstates the interval.
TEST(AlgorithmCli, BroadcastAndComputeAsOneIntervalTakeTheSlowestRanksSum) {
  const auto rec = delayed_summa_record(0.05, "--reps 3 --grid 1x2 --lookahead 0");
  ASSERT_TRUE(rec.contains("distribution"));
  const auto& s = rec.at("distribution").at("panel_schedule");
  const auto& panels = s.at("panels_per_repeat_s");
  const auto& b = rec.at("phases").at("broadcast").at("per_repeat_max_s");
  const auto& c = rec.at("phases").at("compute").at("per_repeat_max_s");
  ASSERT_EQ(panels.size(), 3u) << s.dump(2);
  for (std::size_t i = 0; i < panels.size(); ++i) {
    const double one = panels.at(i).get<double>(), bi = b.at(i).get<double>(), ci = c.at(i).get<double>();
    EXPECT_GE(one, ci - 1e-9) << "repeat " << i;
    EXPECT_LE(one, bi + ci + 1e-9) << "repeat " << i;
  }
  const double one = s.at("panels_s").get<double>();
  const double summed = rec.at("phases").at("broadcast").at("median_s").get<double>() +
                        rec.at("phases").at("compute").at("median_s").get<double>();
  EXPECT_GE(one, 4 * 0.05) << s.dump(2);      // rank 1 sleeps in each of its 4 panels' multiplies
  EXPECT_LT(one, 0.8 * summed) << s.dump(2);  // rank 0 waited about 3 of those sleeps in its broadcast
  EXPECT_NE(s.at("panels_what").get<std::string>().find("slowest rank"), std::string::npos);
}
