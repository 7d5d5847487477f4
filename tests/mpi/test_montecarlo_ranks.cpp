// Monte Carlo across ranks: the estimate of a run on any number of ranks is the same to the bit
// as a single-rank computation done here, in-process, on every rank. Run with 1, 2, 3 and 4 ranks.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>

#include <nlohmann/json.hpp>

#include "montecarlo_reference.hpp"
#include "mpi_test_util.hpp"
#include "scalebench/mpi/mpi.hpp"
#include "scalebench/problem/montecarlo.hpp"
#include "scalebench/workloads/distributed_montecarlo.hpp"

using namespace scalebench;

namespace {

MonteCarloConfig small(McProblem p) {
  MonteCarloConfig cfg;
  cfg.problem = p;
  cfg.backend = McBackendKind::cpu;
  cfg.threads = 1;
  cfg.reps = 2;
  cfg.warmup = 0;
  cfg.quiet = true;
  cfg.seed = 977;
  switch (p) {
    case McProblem::pi:
      cfg.samples = 2'000'003;  // odd: the last chunk ends mid-block
      cfg.chunk_size = 4096;
      break;
    case McProblem::european:
      cfg.samples = 100'001;
      cfg.chunk_size = 1000;  // not a power of two, uneven last chunk
      break;
    case McProblem::asian:
      cfg.samples = 2001;
      cfg.chunk_size = 12;
      cfg.steps = 30;
      cfg.control_variate = ControlVariate::geometric;
      break;
  }
  return cfg;
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

}  // namespace

TEST(MonteCarloRanks, EstimatesAreBitIdenticalToOneRank) {
  const Communicator world = Communicator::world();
  for (const auto p : {McProblem::pi, McProblem::european, McProblem::asian}) {
    const MonteCarloConfig cfg = small(p);
    const McOutcome reference = cpu_reference(cfg, 1);
    const MonteCarloResult run = run_distributed_montecarlo(cfg, world);
    const bool same = same_bits(run.outcome.main.estimate, reference.main.estimate) &&
                      same_bits(run.outcome.main.std_error, reference.main.std_error) &&
                      same_bits(run.outcome.checked.z, reference.checked.z);
    EXPECT_TRUE(all_ranks(same)) << to_string(p) << " on " << world_size() << " ranks: " << run.outcome.main.estimate
                                 << " vs one rank " << reference.main.estimate;
    EXPECT_TRUE(all_ranks(run.ok)) << to_string(p) << " failed verification: z " << run.outcome.checked.z;
  }
}

TEST(MonteCarloRanks, MoreRanksThanChunksStillAgree) {
  const Communicator world = Communicator::world();
  MonteCarloConfig cfg = small(McProblem::european);
  cfg.samples = 2000;  // two chunks of 1000
  const McOutcome reference = cpu_reference(cfg, 1);
  const MonteCarloResult run = run_distributed_montecarlo(cfg, world);
  EXPECT_TRUE(all_ranks(same_bits(run.outcome.main.estimate, reference.main.estimate)));
}

TEST(MonteCarloRanks, NaiveBaselineRunsAndVerifies) {
  const Communicator world = Communicator::world();
  for (const auto p : {McProblem::pi, McProblem::european, McProblem::asian}) {
    MonteCarloConfig cfg = small(p);
    cfg.backend = McBackendKind::naive;
    const MonteCarloResult run = run_distributed_montecarlo(cfg, world);
    EXPECT_TRUE(all_ranks(run.ok)) << to_string(p) << " z " << run.outcome.checked.z;
  }
}

TEST(MonteCarloRanks, RecordCarriesResultPhasesAndRates) {
  const Communicator world = Communicator::world();
  MonteCarloConfig cfg = small(McProblem::asian);
  const std::string path = "montecarlo_ranks_record_np" + std::to_string(world_size()) + ".json";
  cfg.json_path = path;
  const MonteCarloResult run = run_distributed_montecarlo(cfg, world);
  bool ok = true;
  if (world.is_root()) {
    std::ifstream in(path);
    const auto r = nlohmann::json::parse(in);
    ok = r.at("schema_version").get<int>() >= 1 && r.at("subcommand") == "montecarlo" &&
         r.at("ranks").get<int>() == world_size() && r.at("ok").get<bool>() && r.at("exit_code").get<int>() == 0 &&
         r.at("status") == "ok" && r.at("result").at("samples").get<std::int64_t>() == 2001 &&
         same_bits(r.at("result").at("estimate").get<double>(), run.outcome.main.estimate) &&
         r.at("result").at("ci95").size() == 2 && r.at("result").contains("z") &&
         r.at("result").contains("closed_form") &&
         r.at("result").at("control_variate").at("std_error_ratio").get<double>() > 1 &&
         r.at("phases").contains("compute") && r.at("phases").contains("reduce") &&
         r.at("phases").contains("setup_prepare") && r.at("rates").at("samples_per_s").get<double>() > 0 &&
         r.at("verification").at("repeats_identical").get<bool>() &&
         r.at("partition").at("chunks_per_rank").size() == static_cast<std::size_t>(world_size());
    std::remove(path.c_str());
  }
  EXPECT_TRUE(all_ranks(ok));
}
