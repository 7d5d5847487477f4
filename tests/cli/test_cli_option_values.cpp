// Options as hostile input, with the real binary: every option that takes a value refuses an
// empty one (each subcommand's --help list, walked); sums and products of option values that do
// not fit are exit 2 naming the options, never a wrapped count; `predict` answers a huge finite
// value with exit 2 or a finite answer, never exit 1, a negative or a non-finite figure; row1d
// (given) refuses --lookahead and --panel-width whatever their value.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"

namespace {

std::string synthetic_profile() {
  return std::string(std::getenv("SCALEBENCH_SOURCE_DIR")) + "/tests/data/profile-synthetic.json";
}

// The options of `subcommand --help` that take a value ("  --n TEXT   ..."), hidden ones not listed.
std::vector<std::string> value_options(const std::string& subcommand) {
  const CliRun help = run_scalebench(subcommand + " --help");
  std::vector<std::string> out;
  const std::regex line(R"(^\s+(?:-\w,)?(--[a-z0-9-]+) [A-Z]+)");
  std::istringstream in(help.output);
  for (std::string l; std::getline(in, l);) {
    std::smatch m;
    if (std::regex_search(l, m, line) && m[1] != "--help") out.push_back(m[1]);
  }
  return out;
}

struct Subcommand {
  std::string name;       // as typed, with its positional argument when it needs one
  std::string help_name;  // what --help is asked of
  std::size_t at_least;   // the options with a value its --help must list (a parsing check)
};

TEST(OptionValues, EveryOptionGivenEmptyIsExitTwoNamingIt) {
  const std::vector<Subcommand> subs = {{"gemm", "gemm", 20},
                                        {"montecarlo", "montecarlo", 12},
                                        {"topology", "topology", 1},
                                        {"contrast", "contrast", 10},
                                        {"study no-such-study.yaml", "study", 1},
                                        {"report no-such-folder", "report", 1},
                                        {"calibrate", "calibrate", 1},
                                        {"predict gemm", "predict gemm", 20},
                                        {"predict montecarlo", "predict montecarlo", 12}};
  for (const auto& s : subs) {
    const std::vector<std::string> options = value_options(s.help_name);
    EXPECT_GE(options.size(), s.at_least) << s.help_name;
    for (const auto& option : options) {
      SCOPED_TRACE(s.name + " " + option);
      EXPECT_TRUE(is_refusal(run_scalebench(s.name + " " + option + " ''"), 2, option));
      EXPECT_TRUE(is_refusal(run_scalebench(s.name + " " + option + "="), 2, option));
    }
  }
  // The hidden ones too, and the bare --overlap still means on.
  expect_refused("gemm --distribution auto --auto-memory-per-node ''", 2, "--auto-memory-per-node");
  expect_refused("gemm --algorithm summa2d --lookahead ''", 2, "--lookahead");
  expect_refused("gemm --mpi-chunk ''", 2, "--mpi-chunk");
  expect_refused("gemm --overlap ''", 2, "--overlap");
  const CliRun bare = run_scalebench("gemm --n 32 --backend cublas --overlap --dry-run");
  EXPECT_EQ(bare.output.find("is empty"), std::string::npos) << bare.output;
}

struct Refusal {
  const char* name;
  std::string args;
  std::string names;  // what the one line must name
};

class SumRefused : public testing::TestWithParam<Refusal> {};

TEST_P(SumRefused, ExitTwoNamingTheOptions) {
  std::string args = GetParam().args;
  if (const auto at = args.find("PROFILE"); at != std::string::npos) args.replace(at, 7, synthetic_profile());
  expect_refused(args, 2, GetParam().names);
}

INSTANTIATE_TEST_SUITE_P(
    Cli, SumRefused,
    testing::Values(
        Refusal{"gemm_repeats", "gemm --n 64 --reps 1073741824 --warmup 1 --dry-run", "--reps + --warmup"},
        Refusal{"gemm_naive_repeats", "gemm --n 64 --backend naive --reps 1073741823 --warmup 1073741823 --dry-run",
                "--reps + --warmup = 1073741823 + 1073741823"},
        Refusal{"montecarlo_repeats", "montecarlo --samples 1000 --reps 1 --warmup 1073741824 --dry-run",
                "--reps + --warmup"},
        Refusal{"contrast_repeats", "contrast --reps 2147483647 --warmup 1 --dry-run", "--reps"},
        Refusal{"contrast_warmup", "contrast --reps 1000000000 --warmup 1000000000 --dry-run", "--reps + --warmup"},
        Refusal{"predict_repeats",
                "predict gemm --n 64 --reps 1073741824 --warmup 1073741824 --price-per-hour 1 --profile PROFILE",
                "--reps + --warmup"}),
    [](const testing::TestParamInfo<Refusal>& i) { return std::string(i.param.name); });

// `predict` with huge finite values: a usage error or a finite, non-negative answer; never exit 1.
TEST(OptionValues, PredictHugeValuesAreRefusedOrFinite) {
  const std::string dir = make_temp_dir();
  const std::string p = " --profile " + synthetic_profile();
  const std::vector<std::string> cases = {
      "gemm --n 64 --price-per-hour 1e308",
      "gemm --n 64 --price-per-hour 1e12 --energy-price 1e308",
      "gemm --n 64 --inter-node-gbps 1e308 --inter-node-latency-us 1 --nodes 2",
      "gemm --n 64 --inter-node-latency-us 1e308 --nodes 2",
      "gemm --n 64 --nodes 1e308",
      "gemm --n 64 --ranks-per-node 99999999999999999999",
      "gemm --n 2147483647 --reps 1073741823 --warmup 1 --price-per-hour 1e12 --energy-price 1e12",
      "gemm --m 1 --n 1 --k 4e18 --reps 1073741823 --warmup 1 --price-per-hour 1e12",
      "gemm --n 1e6 --backend naive --force --reps 1073741823 --warmup 1 --price-per-hour 1e12",
      "montecarlo --samples 9e18 --reps 1073741823 --warmup 1 --price-per-hour 1e12 --energy-price 1e12",
      "montecarlo --samples 1000 --reps 1073741823 --warmup 1 --nodes 1000 --ranks-per-node 1000 --price-per-hour "
      "1e12"};
  for (const auto& c : cases) {
    SCOPED_TRACE(c);
    const std::string json = dir + "/predict.json";
    std::remove(json.c_str());
    const CliRun r = run_scalebench("predict " + c + p + " --json " + json);
    ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 2) << r.output;
    EXPECT_EQ(r.output.find("internal error"), std::string::npos) << r.output;
    for (const char* bad : {" inf", " nan", "-inf", " -0.", "cost per job (-"}) {
      EXPECT_EQ(r.output.find(bad), std::string::npos) << bad << " in:\n" << r.output;
    }
    if (r.exit_code != 0) {
      EXPECT_EQ(count_of(r.output, "scalebench: error"), 1) << r.output;
      continue;
    }
    const auto out = nlohmann::json::parse(read_file(json));
    EXPECT_GT(out["end_to_end_s"].get<double>(), 0) << out.dump(2);
    if (out.contains("cost")) {
      for (const char* k : {"node_hours", "cost"}) {
        const double v = out["cost"][k].get<double>();
        EXPECT_TRUE(std::isfinite(v) && v >= 0) << k << " " << out["cost"].dump(2);
      }
      EXPECT_GT(out["cost"]["job_repeats"].get<long long>(), 0) << out["cost"].dump(2);
    }
  }
}

TEST(OptionValues, Row1dRefusesEveryLookaheadAndPanelWidthAlike) {
  // row1d has neither: with --algorithm row1d every value is refused with the same line (1, the
  // placeholder's value, too); `auto` is accepted. With the algorithm not given, the option picks
  // summa2d, the schedule that has it (auto by default).
  for (const char* value : {"0", "1", "2", "16"}) {
    SCOPED_TRACE(value);
    expect_refused(std::string("gemm --n 32 --dry-run --algorithm row1d --lookahead ") + value, 2,
                   "--lookahead is the panel pipeline of --algorithm summa2d; row1d has none");
    const CliRun picked = run_scalebench(std::string("gemm --n 32 --dry-run --lookahead ") + value);
    EXPECT_EQ(picked.exit_code, 0) << picked.output;
    EXPECT_NE(picked.output.find("algorithm summa2d"), std::string::npos) << picked.output;
  }
  for (const char* value : {"1", "512", "64"}) {
    expect_refused(std::string("gemm --n 32 --dry-run --algorithm row1d --panel-width ") + value, 2,
                   "--panel-width is the k-panel of --algorithm summa2d; row1d has none");
  }
  const CliRun automatic = run_scalebench("gemm --n 32 --dry-run --algorithm row1d --lookahead auto");
  EXPECT_EQ(automatic.exit_code, 0) << automatic.output;
  const CliRun summa = run_scalebench("gemm --n 32 --dry-run --algorithm summa2d --lookahead 1 --panel-width 512");
  EXPECT_EQ(summa.exit_code, 0) << summa.output;
}

TEST(OptionValues, DriverTimeoutsAreFinitePositiveSeconds) {
  // A timeout that never ends a run (inf, nan) or ends it at once (0, negative) is refused.
  const std::string dir = make_temp_dir();
  const std::string file = dir + "/s.yaml";
  std::ofstream(file) << "study: s\nworkload: gemm\nargs: {n: 64}\n";
  for (const char* value : {"0", "-1", "inf", "nan", "1e400"}) {
    SCOPED_TRACE(value);
    expect_refused(std::string("contrast --dry-run --timeout ") + value, 2, "--timeout");
    expect_refused("study " + file + " --dry-run --timeout " + value + " --out-dir " + dir + "/out", 2, "--timeout");
  }
}

TEST(OptionValues, StudyPlacementProductIsChecked) {
  // nodes x ranks_per_node beyond an int once wrapped; now one line naming the file and keys.
  const std::string dir = make_temp_dir();
  const std::string file = dir + "/big.yaml";
  std::ofstream(file) << "study: big\nworkload: gemm\nargs: {n: 64}\nsweep: {nodes: [1000000], ranks_per_node: "
                         "[1000000]}\n";
  expect_refused("study " + file + " --dry-run --out-dir " + dir + "/out", 2, "nodes x ranks_per_node");
}

}  // namespace

namespace {
std::string bin() { return std::getenv("SCALEBENCH_BINARY"); }
}  // namespace

// An option whose value was left out takes no other option as its value: "--json --quiet" would
// write a file named --quiet, "--out-dir --dry-run" would run for real. "--json=--quiet" (one word)
// is a value given on purpose.
TEST(OptionValues, AnOptionIsNeverTakenAsTheValueLeftOut) {
  const std::string dir = make_temp_dir();
  const CliRun swallowed = run_command("cd " + dir + " && " + bin() +
                                       " gemm --n 16 --reps 1 --warmup 0 --no-peer --json --quiet 2>&1");
  EXPECT_TRUE(is_refusal(swallowed, 2, "--json has no value: the word after it, --quiet, is an option"));
  EXPECT_FALSE(file_exists(dir + "/--quiet"));
  expect_refused("contrast --out-dir --dry-run", 2, "--out-dir has no value: the word after it, --dry-run");
  expect_refused("montecarlo --samples --quiet", 2, "--samples has no value");
  const CliRun on_purpose = run_command("cd " + dir + " && " + bin() +
                                        " gemm --n 16 --reps 1 --warmup 0 --no-peer --json=--quiet --quiet 2>&1");
  EXPECT_EQ(on_purpose.exit_code, 0) << on_purpose.output;
  EXPECT_TRUE(file_exists(dir + "/--quiet"));
}

// What a user typed is quoted in the one error line as text: a newline, a carriage return or an
// escape sequence is spelled out (\x0a, \x0d, \x1b), never sent to the terminal.
TEST(OptionValues, ControlCharactersInAValueAreSpelledOut) {
  const CliRun r = run_scalebench("gemm --algorithm \"$(printf 'row1d\\r\\033[31mRED')\"");
  EXPECT_TRUE(is_refusal(r, 2, "\\x0d\\x1b[31mRED")) << r.output;
  EXPECT_EQ(r.output.find('\x1b'), std::string::npos);
  EXPECT_EQ(r.output.find('\r'), std::string::npos);
  const CliRun n = run_scalebench("gemm --n \"$(printf '6\\n4')\"");
  EXPECT_TRUE(is_refusal(n, 2, "'6\\x0a4'")) << n.output;
}

// OMP_NUM_THREADS and OPENBLAS_NUM_THREADS are read as --threads is: a whole number in [1, 2^16]
// (an OpenMP list gives its first, outer level), else exit 2 naming the variable.
TEST(OptionValues, ThreadVariablesAreThreadCountsOrRefused) {
  for (const char* bad : {"abc", "-1", "0", "100000", "4294967298", "2x"}) {
    SCOPED_TRACE(bad);
    const CliRun r = run_command(std::string("OMP_NUM_THREADS='") + bad + "' " + bin() +
                                 " gemm --n 16 --reps 1 --no-peer --dry-run 2>&1");
    EXPECT_TRUE(is_refusal(r, 2, "OMP_NUM_THREADS")) << r.output;
  }
  const CliRun blas = run_command(std::string("OPENBLAS_NUM_THREADS=abc ") + bin() +
                                  " montecarlo --samples 1e4 --reps 1 --dry-run 2>&1");
  EXPECT_EQ(blas.exit_code, 0) << "montecarlo reads OMP_NUM_THREADS only: " << blas.output;
  const CliRun gemm_blas = run_command(std::string("OPENBLAS_NUM_THREADS=abc ") + bin() +
                                       " gemm --n 16 --reps 1 --no-peer --dry-run 2>&1");
  EXPECT_TRUE(is_refusal(gemm_blas, 2, "OPENBLAS_NUM_THREADS")) << gemm_blas.output;
  const CliRun list = run_command(std::string("OMP_NUM_THREADS=2,1 ") + bin() +
                                  " gemm --n 16 --reps 1 --no-peer --dry-run 2>&1");
  EXPECT_EQ(list.exit_code, 0) << list.output;
  EXPECT_NE(list.output.find("threads/rank 2 (OMP_NUM_THREADS)"), std::string::npos) << list.output;
}

// A --panel-width near 2^63 is one panel per block edge: the panels' offsets never overflow, and
// C is right (it had wrapped: 64 rows of C wrong).
TEST(OptionValues, HugePanelWidthIsOnePanelPerBlock) {
  const CliRun r = run_scalebench_mpi(2, "gemm --n 64 --reps 1 --warmup 0 --no-peer --algorithm summa2d --grid 2x1 "
                                         "--lookahead 0 --panel-width 9223372036854775807");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("PASSED"), std::string::npos) << r.output;
}

// predict takes the runs gemm takes: Summa2D on a 1x2 grid with one row of A runs (every grid
// column has columns), so it is predicted; Row1D needs a row a rank, in both.
TEST(OptionValues, PredictTakesTheShapesGemmTakes) {
  const std::string base = "predict gemm --profile " + synthetic_profile() + " --m 1 --n 64 --k 64 --ranks-per-node 2 ";
  const CliRun summa = run_scalebench(base + "--algorithm summa2d --grid 1x2 --lookahead 0");
  EXPECT_EQ(summa.exit_code, 0) << summa.output;
  const CliRun ran = run_scalebench_mpi(2, "gemm --m 1 --n 64 --k 64 --reps 1 --warmup 0 --no-peer --algorithm summa2d "
                                           "--grid 1x2 --lookahead 0");
  EXPECT_EQ(ran.exit_code, 0) << ran.output;
  expect_refused(base + "--algorithm row1d", 2, "every rank needs at least one row");
}
