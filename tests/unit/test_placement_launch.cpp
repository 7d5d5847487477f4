// Plans rendered as Open MPI mpirun and Slurm srun options, and the scalebench options the
// ranks run with.
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "scalebench/base/error.hpp"
#include "scalebench/topology/placement.hpp"
#include "test_topology_data.hpp"

using scalebench::Mode;
using scalebench::mpirun_args;
using scalebench::plan_placement;
using scalebench::srun_args;
using Args = std::vector<std::string>;

TEST(LaunchArgs, NumaModeMapsOneRankPerDomainOnItsCores) {
  const auto plan = plan_placement(test_data::load(test_data::kTwoSocket), Mode::numa);
  const auto m = mpirun_args(plan);
  EXPECT_EQ(m.launcher_args, (Args{"-np", "4", "--map-by", "ppr:1:numa:PE=7", "--bind-to", "core"}));
  EXPECT_EQ(m.program_args, (Args{"--pin", "numa"}));
  EXPECT_TRUE(m.notes.empty());
  const auto s = srun_args(plan);
  EXPECT_EQ(s.launcher_args, (Args{"--nodes=1", "--ntasks=4", "--ntasks-per-node=4", "--cpus-per-task=7",
                                   "--distribution=block:block", "--cpu-bind=ldoms"}));
  EXPECT_EQ(s.program_args, (Args{"--pin", "numa"}));
}

TEST(LaunchArgs, SingleCoreFixesOneThread) {
  const auto plan = plan_placement(test_data::load(test_data::kGpuNode), Mode::single_core);
  const auto m = mpirun_args(plan);
  EXPECT_EQ(m.launcher_args, (Args{"-np", "1", "--map-by", "ppr:1:node:PE=1", "--bind-to", "core"}));
  EXPECT_EQ(m.program_args, (Args{"--pin", "core", "--threads", "1"}));
  // Slurm counts hardware threads: the core's 2 PUs.
  EXPECT_EQ(srun_args(plan).launcher_args, (Args{"--nodes=1", "--ntasks=1", "--ntasks-per-node=1", "--cpus-per-task=2",
                                                 "--distribution=block:block", "--cpu-bind=cores"}));
}

TEST(LaunchArgs, GpuModeOnARegularNodeBindsTwoRanksPerDomain) {
  const auto plan = plan_placement(test_data::load(test_data::kGpuNode), Mode::gpu);
  EXPECT_EQ(mpirun_args(plan).launcher_args, (Args{"-np", "4", "--map-by", "ppr:2:numa:PE=2", "--bind-to", "core"}));
  EXPECT_EQ(srun_args(plan).launcher_args,
            (Args{"--nodes=1", "--ntasks=4", "--ntasks-per-node=4", "--cpus-per-task=4", "--distribution=block:block",
                  "--cpu-bind=cores", "--gpus-per-task=1", "--gpu-bind=closest"}));
  EXPECT_EQ(mpirun_args(plan).program_args, (Args{"--pin", "gpu"}));
}

TEST(LaunchArgs, GpusOnOneDomainOnlyLeaveBindingToTheRanks) {
  // Two GPU ranks, both near NUMA 0 of a two-domain node: `ppr:2:numa` would also fill domain 1.
  auto plan = plan_placement(test_data::load(test_data::kGpuNode), Mode::gpu);
  plan.ranks.resize(2);
  plan.ranks_per_node = 2;
  const auto m = mpirun_args(plan);
  EXPECT_EQ(m.launcher_args, (Args{"-np", "2", "--map-by", "ppr:2:node", "--bind-to", "none"}));
  ASSERT_EQ(m.notes.size(), 1u);
  EXPECT_NE(m.notes[0].find("each rank binds itself"), std::string::npos);
}

TEST(LaunchArgs, GpuRanksAcrossNodesBindThemselves) {
  // Four GPUs on two domains, two nodes: within a node `ppr:2:numa:PE=` would fit, but across
  // nodes mpirun leaves binding to the ranks (--pin gpu), so that MPI's node split stays whole.
  scalebench::PlanOptions o;
  o.nodes = 2;
  o.node_layout = Mode::gpu;
  const auto plan = plan_placement(test_data::load(test_data::kGpuNode), Mode::multinode, o);
  ASSERT_EQ(plan.layout, Mode::gpu);
  const auto m = mpirun_args(plan);
  EXPECT_EQ(m.launcher_args, (Args{"-np", std::to_string(plan.total_ranks()), "--map-by",
                                   fmt::format("ppr:{}:node", plan.ranks_per_node), "--bind-to", "none"}));
  EXPECT_EQ(plan.total_ranks(), 2 * plan.ranks_per_node);
  EXPECT_EQ(m.program_args, (Args{"--pin", "gpu"}));
  ASSERT_FALSE(m.notes.empty());
  EXPECT_NE(m.notes[0].find("GPU ranks across nodes"), std::string::npos);
}

TEST(LaunchArgs, MultinodeMultipliesRanksByNodes) {
  scalebench::PlanOptions o;
  o.nodes = 2;
  const auto plan = plan_placement(test_data::load(test_data::kTwoSocket), Mode::multinode, o);
  const auto m = mpirun_args(plan);
  EXPECT_EQ(m.launcher_args, (Args{"-np", "8", "--map-by", "ppr:1:numa:PE=7", "--bind-to", "core"}));
  EXPECT_EQ(m.notes, (Args{"run inside an allocation of 2 nodes or add --hostfile"}));
  EXPECT_EQ(srun_args(plan).launcher_args, (Args{"--nodes=2", "--ntasks=8", "--ntasks-per-node=4", "--cpus-per-task=7",
                                                 "--distribution=block:block", "--cpu-bind=ldoms"}));
}

TEST(LaunchArgs, ImpossiblePlanHasNoCommand) {
  const auto plan = plan_placement(test_data::load(test_data::kWorkstation), Mode::gpu);
  EXPECT_THROW(mpirun_args(plan), scalebench::UsageError);
  EXPECT_THROW(srun_args(plan), scalebench::UsageError);
}

TEST(LaunchArgs, JoinQuotesWhatTheShellWouldSplit) {
  EXPECT_EQ(scalebench::join_args({"-np", "2", "--map-by", "ppr:1:numa:PE=7"}), "-np 2 --map-by ppr:1:numa:PE=7");
  EXPECT_EQ(scalebench::join_args({"--x", "a b", "it's", ""}), "--x 'a b' 'it'\\''s' ''");
}
