// `scalebench montecarlo` under mpirun -np 2: bad input gives one error line and exit code 2 on
// every rank; a good run exits 0 and writes its record.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "../cli/cli_runner.hpp"
#include "scalebench/gpu/gpu.hpp"

namespace {

CliRun run_two_ranks(const std::string& args) { return run_scalebench_each_rank(2, "montecarlo " + args); }

class MonteCarloCli : public testing::Test {
 protected:
  void SetUp() override {
    if (std::getenv("SCALEBENCH_BINARY") == nullptr || std::getenv("SCALEBENCH_MPIEXEC") == nullptr) {
      GTEST_SKIP() << "SCALEBENCH_BINARY and SCALEBENCH_MPIEXEC are not set (run through ctest)";
    }
  }
};

}  // namespace

TEST_F(MonteCarloCli, BadInputIsOneLineAndUsageExitOnEveryRank) {
  struct Case {
    const char* args;
    const char* names;
  };
  for (const Case& c : {
           Case{"--samples 0", "--samples"},
           Case{"--samples -5", "--samples"},
           Case{"--samples abc", "--samples"},
           Case{"--problem european --sigma 0", "--sigma"},
           Case{"--problem european --sigma=-0.2", "--sigma"},
           Case{"--problem european --maturity 0", "--maturity"},
           Case{"--problem european --maturity=-1", "--maturity"},
           Case{"--problem asian --steps 0", "--steps"},
           Case{"--problem european --strike=-1", "--strike"},
           Case{"--problem european --spot=-100", "--spot"},
           Case{"--problem binomial", "binomial"},
           Case{"--backend fpga", "fpga"},
       }) {
    expect_refused_on_every_rank(2, std::string("montecarlo ") + c.args, 2, c.names);
  }
}

TEST_F(MonteCarloCli, OptionsTheProblemDoesNotReadAreRefusedWhateverTheirValue) {
  // Given is refused, the default's value too (--spot 100, --steps 252): the run would silently
  // ignore it. --batch 0 is curand's "automatic", so without curand it is refused like --batch 5.
  struct Case {
    const char* args;
    const char* names;
  };
  for (const Case& c : {
           Case{"--problem pi --control-variate geometric", "--control-variate applies to the option problems"},
           Case{"--problem pi --spot=-1", "--spot applies"},
           Case{"--problem pi --spot 100", "--spot applies"},
           Case{"--problem pi --sigma 0 --option put", "--option and --sigma apply"},
           Case{"--problem pi --steps 5", "--steps applies"},
           Case{"--problem european --steps 252", "--steps applies to --problem asian only"},
           Case{"--problem european --control-variate none", "--control-variate applies to --problem asian only"},
           Case{"--problem european --batch 0", "--batch needs --backend curand"},
           Case{"--problem european --batch 00", "--batch needs --backend curand"},
           Case{"--backend cpu --curand-generator philox", "--curand-generator needs --backend curand"},
       }) {
    expect_refused_on_every_rank(2, std::string("montecarlo ") + c.args, 2, c.names);
  }
}

TEST_F(MonteCarloCli, InputsTheCheckCannotJudgeAreUsageErrorsNotFailedVerifications) {
  // Each ended as exit 4 ("verification failed"): no standard error (z = inf), a nan closed form,
  // or a lognormal too wide for any sample. Now exit 2 naming the options and the bound.
  struct Case {
    const char* args;
    const char* names;
  };
  for (const Case& c : {
           Case{"--problem pi --samples 2", "--samples must be at least 128 for --problem pi (got 2)"},
           Case{"--problem european --samples 100", "--samples must be at least"},
           Case{"--problem european --spot 1e-320 --strike 1e-320 --sigma 1e-320 --maturity 1e-320",
                "--spot must be in [1e-100, 1e100]"},
           Case{"--problem asian --spot 0 --strike 0 --control-variate geometric", "--spot must be in [1e-100, 1e100]"},
           Case{"--problem european --spot 1e100 --rate 10 --sigma 3 --maturity 11", "sigma^2*T = 99, above 4"},
           Case{"--problem european --spot 1e100 --rate 1", "forward S*exp(rT)"},
           Case{"--problem european --sigma 1e-10", "--sigma 1e-10 over --maturity 1"},
           Case{"--problem european --strike 1e4", "no --samples suffices"},
       }) {
    expect_refused_on_every_rank(2, std::string("montecarlo ") + c.args, 2, c.names);
  }
}

TEST_F(MonteCarloCli, TheSmallestRunsInsideTheBoundsVerify) {
  for (const char* args : {"--problem pi --samples 128", "--problem european --sigma 2 --samples 20000",
                           "--problem asian --steps 12 --control-variate geometric --samples 1000"}) {
    const CliRun o = run_two_ranks(std::string(args) + " --threads 1 --reps 1 --warmup 0 --quiet");
    EXPECT_EQ(ranks_exiting(o, 0), 2) << args << "\n" << o.output;
  }
}

TEST_F(MonteCarloCli, GoodRunWritesItsRecord) {
  const std::string path = "montecarlo_cli_record.json";
  std::remove(path.c_str());
  const CliRun o = run_two_ranks("--problem european --samples 50000 --threads 1 --reps 2 --json " + path);
  EXPECT_EQ(ranks_exiting(o, 0), 2) << o.output;
  EXPECT_NE(o.output.find("verification PASSED"), std::string::npos) << o.output;
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << o.output;
  const auto r = nlohmann::json::parse(in);
  EXPECT_EQ(r.at("ranks"), 2);
  EXPECT_EQ(r.at("config").at("problem"), "european");
  EXPECT_TRUE(r.at("ok").get<bool>());
  EXPECT_LT(std::abs(r.at("result").at("z").get<double>()), 4.0);
  std::remove(path.c_str());
}

TEST_F(MonteCarloCli, DryRunComputesNothing) {
  const CliRun o = run_two_ranks("--samples 1e12 --dry-run");
  EXPECT_EQ(ranks_exiting(o, 0), 2) << o.output;
  EXPECT_NE(o.output.find("chunks [0, 476838)"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("chunks [476838, 953675)"), std::string::npos) << o.output;
}

TEST_F(MonteCarloCli, CudaWithoutAGpuNamesTheBackendAndWhatIsMissingOnEveryRank) {
  if (scalebench::visible_gpu_count() > 0) GTEST_SKIP() << "a GPU is visible: the cuda backend would run";
  for (const char* extra : {"", " --dry-run"}) {
    const CliRun o = run_two_ranks(std::string("--backend cuda --samples 1000") + extra);
    const bool fails = !scalebench::gpu_support_built() || std::string(extra).empty();
    EXPECT_EQ(count_of(o.output, "scalebench: error:"), fails ? 1 : 0) << o.output;
    if (!scalebench::gpu_support_built()) {
      EXPECT_EQ(ranks_exiting(o, 6), 2) << o.output;
      EXPECT_NE(o.output.find("--backend cuda needs CUDA, but this scalebench was built without CUDA"),
                std::string::npos)
          << o.output;
    } else if (std::string(extra).empty()) {
      EXPECT_EQ(ranks_exiting(o, 3), 2) << o.output;
      EXPECT_NE(o.output.find("--backend cuda needs a GPU"), std::string::npos) << o.output;
    } else {
      EXPECT_EQ(ranks_exiting(o, 0), 2) << "a dry run may plan for a GPU node elsewhere\n" << o.output;
    }
  }
}

TEST_F(MonteCarloCli, CurandInABuildWithoutCudaExitsSixOnEveryRank) {
  if (scalebench::gpu_support_built()) {
    GTEST_SKIP() << "this scalebench is built with CUDA: --backend curand exists (tested by montecarlo_curand*)";
  }
  for (const char* problem : {"pi", "european"}) {
    const CliRun o = run_two_ranks(std::string("--backend curand --samples 1000 --problem ") + problem);
    EXPECT_EQ(ranks_exiting(o, 6), 2) << o.output;
    EXPECT_EQ(count_of(o.output, "scalebench: error:"), 1) << o.output;
    EXPECT_NE(o.output.find("built without CUDA"), std::string::npos) << o.output;
  }
}

TEST_F(MonteCarloCli, CurandWithoutAGpuIsAResourceErrorOnEveryRank) {
  if (scalebench::visible_gpu_count() > 0) GTEST_SKIP() << "a GPU is visible: the curand backend would run";
  const CliRun o = run_two_ranks("--backend curand --batch 1000 --samples 10000");
  // 3: no GPU visible; 6: built without CUDA
  const int resource = ranks_exiting(o, 3), no_cuda = ranks_exiting(o, 6);
  EXPECT_EQ(resource + no_cuda, 2) << o.output;
  EXPECT_EQ(count_of(o.output, "scalebench: error:"), 1) << o.output;
}

TEST_F(MonteCarloCli, CurandOptionsAreCheckedBeforeAnyGpuIsLookedFor) {
  struct Case {
    const char* args;
    const char* names;
  };
  for (const Case& c :
       {Case{"--backend curand --problem asian", "asian"}, Case{"--backend cpu --batch 1000", "--batch"},
        Case{"--backend cuda --curand-generator xorwow", "--curand-generator"},
        Case{"--backend curand --curand-generator mt", "--curand-generator"},
        Case{"--backend curand --batch -3", "--batch must be >= 1 samples, or 0 for automatic"}}) {
    expect_refused_on_every_rank(2, std::string("montecarlo ") + c.args, 2, c.names);
  }
}
