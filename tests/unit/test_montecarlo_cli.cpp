// `scalebench montecarlo` under mpirun -np 2: bad input gives one error line and exit code 2 on
// every rank; a good run exits 0 and writes its record.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "scalebench/gpu/gpu.hpp"

namespace {

struct Outcome {
  int exit_code = -1;
  std::string output;  // stdout and stderr of all ranks and of mpirun
};

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

// Runs the binary on 2 ranks; each rank appends "rank-exit <code>" so every rank's code is seen.
Outcome run_two_ranks(const std::string& args) {
  const std::string cmd = env("SCALEBENCH_MPIEXEC") + " -np 2 --oversubscribe sh -c '\"" + env("SCALEBENCH_BINARY") +
                          "\" montecarlo " + args + "; echo rank-exit $?' 2>&1";
  Outcome o;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return o;
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), buf.size(), p) != nullptr) o.output += buf.data();
  const int status = pclose(p);
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return o;
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (auto pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

class MonteCarloCli : public testing::Test {
 protected:
  void SetUp() override {
    if (env("SCALEBENCH_BINARY").empty() || env("SCALEBENCH_MPIEXEC").empty()) {
      GTEST_SKIP() << "SCALEBENCH_BINARY and SCALEBENCH_MPIEXEC are not set (run through ctest)";
    }
  }
};

}  // namespace

TEST_F(MonteCarloCli, BadInputIsOneLineAndUsageExitOnEveryRank) {
  const char* cases[] = {
      "--samples 0",
      "--samples -5",
      "--samples abc",
      "--problem european --sigma 0",
      "--problem european --sigma=-0.2",
      "--problem european --maturity 0",
      "--problem european --maturity=-1",
      "--problem asian --steps 0",
      "--problem european --strike=-1",
      "--problem european --spot=-100",
      "--problem binomial",
      "--backend fpga",
  };
  for (const char* args : cases) {
    const Outcome o = run_two_ranks(args);
    EXPECT_EQ(count(o.output, "rank-exit 2"), 2) << args << "\n" << o.output;
    EXPECT_EQ(count(o.output, "scalebench: error:"), 1) << args << "\n" << o.output;
  }
}

TEST_F(MonteCarloCli, GoodRunWritesItsRecord) {
  const std::string path = "montecarlo_cli_record.json";
  std::remove(path.c_str());
  const Outcome o = run_two_ranks("--problem european --samples 50000 --threads 1 --reps 2 --json " + path);
  EXPECT_EQ(count(o.output, "rank-exit 0"), 2) << o.output;
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
  const Outcome o = run_two_ranks("--samples 1e12 --dry-run");
  EXPECT_EQ(count(o.output, "rank-exit 0"), 2) << o.output;
  EXPECT_NE(o.output.find("chunks [0, 476838)"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("chunks [476838, 953675)"), std::string::npos) << o.output;
}

TEST_F(MonteCarloCli, CudaWithoutAGpuNamesTheBackendAndWhatIsMissingOnEveryRank) {
  if (scalebench::visible_gpu_count() > 0) GTEST_SKIP() << "a GPU is visible: the cuda backend would run";
  for (const char* extra : {"", " --dry-run"}) {
    const Outcome o = run_two_ranks(std::string("--backend cuda --samples 1000") + extra);
    const bool fails = !scalebench::gpu_support_built() || std::string(extra).empty();
    EXPECT_EQ(count(o.output, "scalebench: error:"), fails ? 1 : 0) << o.output;
    if (!scalebench::gpu_support_built()) {
      EXPECT_EQ(count(o.output, "rank-exit 6"), 2) << o.output;
      EXPECT_NE(o.output.find("--backend cuda needs CUDA, but this scalebench was built without CUDA"),
                std::string::npos)
          << o.output;
    } else if (std::string(extra).empty()) {
      EXPECT_EQ(count(o.output, "rank-exit 3"), 2) << o.output;
      EXPECT_NE(o.output.find("--backend cuda needs a GPU"), std::string::npos) << o.output;
    } else {
      EXPECT_EQ(count(o.output, "rank-exit 0"), 2) << "a dry run may plan for a GPU node elsewhere\n" << o.output;
    }
  }
}

TEST_F(MonteCarloCli, CurandInABuildWithoutCudaExitsSixOnEveryRank) {
  if (scalebench::gpu_support_built()) {
    GTEST_SKIP() << "this scalebench is built with CUDA: --backend curand exists (tested by montecarlo_curand*)";
  }
  for (const char* problem : {"pi", "european"}) {
    const Outcome o = run_two_ranks(std::string("--backend curand --samples 1000 --problem ") + problem);
    EXPECT_EQ(count(o.output, "rank-exit 6"), 2) << o.output;
    EXPECT_EQ(count(o.output, "scalebench: error:"), 1) << o.output;
    EXPECT_NE(o.output.find("built without CUDA"), std::string::npos) << o.output;
  }
}

TEST_F(MonteCarloCli, CurandWithoutAGpuIsAResourceErrorOnEveryRank) {
  if (scalebench::visible_gpu_count() > 0) GTEST_SKIP() << "a GPU is visible: the curand backend would run";
  const Outcome o = run_two_ranks("--backend curand --batch 1000 --samples 10000");
  // 3: no GPU visible; 6: built without CUDA
  const int resource = count(o.output, "rank-exit 3"), no_cuda = count(o.output, "rank-exit 6");
  EXPECT_EQ(resource + no_cuda, 2) << o.output;
  EXPECT_EQ(count(o.output, "scalebench: error:"), 1) << o.output;
}

TEST_F(MonteCarloCli, CurandOptionsAreCheckedBeforeAnyGpuIsLookedFor) {
  for (const char* args :
       {"--backend curand --problem asian", "--backend cpu --batch 1000", "--backend cuda --curand-generator xorwow",
        "--backend curand --curand-generator mt", "--backend curand --batch -3"}) {
    const Outcome o = run_two_ranks(args);
    EXPECT_EQ(count(o.output, "rank-exit 2"), 2) << args << "\n" << o.output;
    EXPECT_EQ(count(o.output, "scalebench: error:"), 1) << args << "\n" << o.output;
  }
}
