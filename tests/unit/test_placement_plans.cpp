// The placement plan of every mode on saved topologies of real machines: the CPUs (PU OS
// indices), NUMA domain, GPU and threads of every rank, or why the mode cannot run there.
#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "scalebench/base/error.hpp"
#include "scalebench/topology/placement.hpp"
#include "test_topology_data.hpp"

using scalebench::Mode;
using scalebench::PinPolicy;
using scalebench::PlacementPlan;
using scalebench::plan_placement;
using scalebench::PlanOptions;

namespace {

std::vector<int> range(int first, int last) {
  std::vector<int> v;
  for (int i = first; i <= last; ++i) v.push_back(i);
  return v;
}

// One expected rank: its CPUs, NUMA domains, threads, GPU bus id ("" for none).
struct Expected {
  std::vector<int> cpus;
  std::vector<int> numa;
  int threads;
  std::string gpu;
};

void expect_ranks(const PlacementPlan& plan, const std::vector<Expected>& want) {
  ASSERT_TRUE(plan.possible) << plan.reason;
  ASSERT_EQ(plan.ranks_per_node, static_cast<int>(want.size()));
  ASSERT_EQ(plan.ranks.size(), want.size());
  for (std::size_t r = 0; r < want.size(); ++r) {
    const auto& got = plan.ranks[r];
    SCOPED_TRACE("rank " + std::to_string(r));
    EXPECT_EQ(got.local_rank, static_cast<int>(r));
    EXPECT_EQ(got.cpus, want[r].cpus);
    EXPECT_EQ(got.numa_domains, want[r].numa);
    EXPECT_EQ(got.threads, want[r].threads);
    EXPECT_FALSE(got.launcher_bound);
    EXPECT_TRUE(got.warnings.empty()) << got.warnings.front();
    if (want[r].gpu.empty()) {
      EXPECT_FALSE(got.gpu.has_value());
    } else {
      ASSERT_TRUE(got.gpu.has_value());
      EXPECT_EQ(got.gpu->pci_bus_id, want[r].gpu);
    }
  }
}

void expect_impossible(const PlacementPlan& plan, const std::string& reason) {
  EXPECT_FALSE(plan.possible);
  EXPECT_EQ(plan.reason, reason);
  EXPECT_TRUE(plan.ranks.empty());
}

}  // namespace

// --- one-socket workstation: 2 cores, one NUMA domain, no GPU -----------------------------------

TEST(PlanWorkstation, NaiveAndSingleCoreRunOneThreadOnTheFirstCore) {
  const auto t = test_data::load(test_data::kWorkstation);
  for (Mode m : {Mode::naive, Mode::single_core}) {
    const auto plan = plan_placement(t, m);
    expect_ranks(plan, {{{0}, {0}, 1, ""}});
    EXPECT_EQ(plan.pin, PinPolicy::core);
    EXPECT_EQ(plan.fixed_threads, 1);
    EXPECT_FALSE(plan.ranks[0].bind_memory);
  }
}

TEST(PlanWorkstation, MultiThreadRunsOneRankOnBothCores) {
  const auto t = test_data::load(test_data::kWorkstation);
  expect_ranks(plan_placement(t, Mode::multi_thread), {{{0, 1}, {0}, 2, ""}});
}

TEST(PlanWorkstation, NumaGpuAndMultinodeSayWhyNot) {
  const auto t = test_data::load(test_data::kWorkstation);
  expect_impossible(plan_placement(t, Mode::numa), "one NUMA domain: same as multi-thread");
  expect_impossible(plan_placement(t, Mode::gpu), "no GPU");
  expect_impossible(plan_placement(t, Mode::multinode), "one node");
}

TEST(PlanWorkstation, MultinodeRepeatsMultiThreadOnEveryNode) {
  const auto t = test_data::load(test_data::kWorkstation);
  PlanOptions o;
  o.nodes = 3;
  const auto plan = plan_placement(t, Mode::multinode, o);
  expect_ranks(plan, {{{0, 1}, {0}, 2, ""}});
  EXPECT_EQ(plan.layout, Mode::multi_thread);
  EXPECT_EQ(plan.nodes, 3);
  EXPECT_EQ(plan.total_ranks(), 3);
  // numa is not a layout this node can run.
  o.node_layout = Mode::numa;
  expect_impossible(plan_placement(t, Mode::multinode, o), "numa layout: one NUMA domain: same as multi-thread");
}

// --- two-socket server, Cluster-on-Die: 4 NUMA domains x 7 cores, PUs 0-27 ----------------------

TEST(PlanTwoSocket, NumaGivesOneRankPerDomainWithExactlyItsCores) {
  const auto t = test_data::load(test_data::kTwoSocket);
  const auto plan = plan_placement(t, Mode::numa);
  expect_ranks(plan, {{range(0, 6), {0}, 7, ""},
                      {range(7, 13), {1}, 7, ""},
                      {range(14, 20), {2}, 7, ""},
                      {range(21, 27), {3}, 7, ""}});
  EXPECT_EQ(plan.pin, PinPolicy::numa);
  for (const auto& r : plan.ranks) EXPECT_TRUE(r.bind_memory);
}

TEST(PlanTwoSocket, CoreModesUseTheFirstCoreOrAllOfThem) {
  const auto t = test_data::load(test_data::kTwoSocket);
  expect_ranks(plan_placement(t, Mode::naive), {{{0}, {0}, 1, ""}});
  expect_ranks(plan_placement(t, Mode::single_core), {{{0}, {0}, 1, ""}});
  expect_ranks(plan_placement(t, Mode::multi_thread), {{range(0, 27), {0, 1, 2, 3}, 28, ""}});
}

TEST(PlanTwoSocket, NoGpuAndMultinodeUsesTheNumaLayout) {
  const auto t = test_data::load(test_data::kTwoSocket);
  expect_impossible(plan_placement(t, Mode::gpu), "no GPU");
  PlanOptions o;
  o.nodes = 2;
  const auto plan = plan_placement(t, Mode::multinode, o);
  EXPECT_EQ(plan.layout, Mode::numa);
  EXPECT_EQ(plan.total_ranks(), 8);
  expect_ranks(plan, {{range(0, 6), {0}, 7, ""},
                      {range(7, 13), {1}, 7, ""},
                      {range(14, 20), {2}, 7, ""},
                      {range(21, 27), {3}, 7, ""}});
}

// --- GPU node: 2 POWER8 sockets (4 cores x 2 PUs each), GPUs 0-1 on NUMA 0, 2-3 on NUMA 1 --------

TEST(PlanGpuNode, GpuRanksBindToTheirGpusDomainSplittingItsCores) {
  const auto t = test_data::load(test_data::kGpuNode);
  const auto plan = plan_placement(t, Mode::gpu);
  expect_ranks(plan, {{{0, 1, 8, 9}, {0}, 2, "0002:01:00.0"},
                      {{16, 17, 24, 25}, {0}, 2, "0003:01:00.0"},
                      {{80, 81, 88, 89}, {1}, 2, "000a:01:00.0"},
                      {{96, 97, 104, 105}, {1}, 2, "000b:01:00.0"}});
  EXPECT_EQ(plan.pin, PinPolicy::gpu);
  for (const auto& r : plan.ranks) {
    EXPECT_TRUE(r.bind_memory);
    // Every CPU of a GPU rank is local to its GPU.
    for (int cpu : r.cpus) {
      EXPECT_NE(std::find(r.gpu->local_cpus.begin(), r.gpu->local_cpus.end(), cpu), r.gpu->local_cpus.end());
    }
  }
}

TEST(PlanGpuNode, NumaAndCoreModesCountCoresNotHardwareThreads) {
  const auto t = test_data::load(test_data::kGpuNode);
  expect_ranks(plan_placement(t, Mode::numa),
               {{{0, 1, 8, 9, 16, 17, 24, 25}, {0}, 4, ""}, {{80, 81, 88, 89, 96, 97, 104, 105}, {1}, 4, ""}});
  expect_ranks(plan_placement(t, Mode::single_core), {{{0, 1}, {0}, 1, ""}});
  const auto all = plan_placement(t, Mode::multi_thread);
  expect_ranks(all, {{t.cpus(), {0, 1}, 8, ""}});
}

TEST(PlanGpuNode, MultinodeDefaultsToTheGpuLayoutAndCanUseNuma) {
  const auto t = test_data::load(test_data::kGpuNode);
  PlanOptions o;
  o.nodes = 4;
  const auto gpu = plan_placement(t, Mode::multinode, o);
  EXPECT_EQ(gpu.layout, Mode::gpu);
  EXPECT_EQ(gpu.total_ranks(), 16);
  EXPECT_EQ(gpu.ranks[3].gpu->pci_bus_id, "000b:01:00.0");
  o.node_layout = Mode::numa;
  const auto numa = plan_placement(t, Mode::multinode, o);
  EXPECT_EQ(numa.layout, Mode::numa);
  EXPECT_EQ(numa.total_ranks(), 8);
  o.node_layout = Mode::single_core;
  EXPECT_THROW(plan_placement(t, Mode::multinode, o), scalebench::UsageError);
}

TEST(PlanAllModes, ComesInContrastOrder) {
  const auto plans = scalebench::plan_all_modes(test_data::load(test_data::kGpuNode));
  ASSERT_EQ(plans.size(), 6u);
  const std::vector<std::string> names{"naive", "single-core", "multi-thread", "numa", "gpu", "multinode"};
  for (std::size_t i = 0; i < plans.size(); ++i) EXPECT_EQ(scalebench::mode_name(plans[i].mode), names[i]);
  EXPECT_EQ(scalebench::parse_mode("multi-thread"), Mode::multi_thread);
  EXPECT_THROW(scalebench::parse_mode("fast"), scalebench::UsageError);
  EXPECT_EQ(scalebench::parse_pin_policy("auto"), PinPolicy::automatic);
  EXPECT_THROW(scalebench::parse_pin_policy("socket"), scalebench::UsageError);
}

// --- the H100 benchmark machine: 16 cores, one NUMA domain, one GPU ------------------------------

TEST(PlanH100Node, GpuRankTakesEveryCoreOfItsDomainAndTheOtherModesFollow) {
  const auto t = test_data::load(test_data::kH100Node);
  ASSERT_EQ(t.gpus().size(), 1u);
  EXPECT_EQ(t.gpus().front().pci_bus_id, "0000:00:06.0");
  expect_ranks(plan_placement(t, Mode::gpu), {{range(0, 15), {0}, 16, "0000:00:06.0"}});
  expect_ranks(plan_placement(t, Mode::multi_thread), {{range(0, 15), {0}, 16, ""}});
  expect_ranks(plan_placement(t, Mode::single_core), {{{0}, {0}, 1, ""}});
  expect_impossible(plan_placement(t, Mode::numa), "one NUMA domain: same as multi-thread");
  expect_impossible(plan_placement(t, Mode::multinode), "one node");
}

// The gpu mode runs one rank per GPU a process started here sees: CUDA_VISIBLE_DEVICES=1 on the
// 4-GPU node plans one rank (the contrast's multi-GPU rows then say why they cannot run); none
// visible says so.
TEST(PlanGpuNode, GpuModeCountsTheGpusCudaVisibleDevicesLeaves) {
  const char* old = std::getenv("CUDA_VISIBLE_DEVICES");
  const std::string saved = old ? old : "";
  setenv("CUDA_VISIBLE_DEVICES", "1", 1);
  const scalebench::Topology one = test_data::load(test_data::kGpuNode);
  setenv("CUDA_VISIBLE_DEVICES", "", 1);
  const scalebench::Topology none = test_data::load(test_data::kGpuNode);
  setenv("CUDA_VISIBLE_DEVICES", "2,3", 1);
  const scalebench::Topology second_socket = test_data::load(test_data::kGpuNode);
  if (old) {
    setenv("CUDA_VISIBLE_DEVICES", saved.c_str(), 1);
  } else {
    unsetenv("CUDA_VISIBLE_DEVICES");
  }
  const auto plan = plan_placement(one, Mode::gpu);
  EXPECT_TRUE(plan.possible);
  EXPECT_EQ(plan.ranks.size(), 1u);
  expect_impossible(plan_placement(none, Mode::gpu),
                    "no GPU visible: CUDA_VISIBLE_DEVICES='' leaves 0 of the 4 GPU(s) on the bus");
  // The rank near its GPU: GPU 1 is on NUMA 0; GPUs 2 and 3 on NUMA 1, whose cores their two
  // ranks split.
  expect_ranks(plan, {{{0, 1, 8, 9, 16, 17, 24, 25}, {0}, 4, "0003:01:00.0"}});
  expect_ranks(plan_placement(second_socket, Mode::gpu),
               {{{80, 81, 88, 89}, {1}, 2, "000a:01:00.0"}, {{96, 97, 104, 105}, {1}, 2, "000b:01:00.0"}});
}
