// decide_rank_placement(): the rule each rank applies at run time, for every pin policy, with
// and without a launcher binding, on saved topologies of real machines.
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <cstdlib>

#include "scalebench/base/error.hpp"
#include "scalebench/topology/placement.hpp"
#include "test_topology_data.hpp"

using scalebench::decide_rank_placement;
using scalebench::PinPolicy;
using scalebench::PlacementRequest;
using scalebench::RankPlacement;

namespace {

std::vector<int> range(int first, int last) {
  std::vector<int> v;
  for (int i = first; i <= last; ++i) v.push_back(i);
  return v;
}

PlacementRequest request(PinPolicy pin, int rank, int size, int threads = 0, std::string gpu = "") {
  PlacementRequest r;
  r.pin = pin;
  r.local_rank = rank;
  r.local_size = size;
  r.threads = threads;
  r.gpu_pci_bus_id = std::move(gpu);
  return r;
}

bool mentions(const RankPlacement& p, const std::string& text) {
  return std::any_of(p.warnings.begin(), p.warnings.end(),
                     [&](const std::string& w) { return w.find(text) != std::string::npos; });
}

}  // namespace

TEST(RankRule, CoreSplitsTheNodeIntoBalancedContiguousBlocks) {
  const auto t = test_data::load(test_data::kTwoSocket);
  const auto all = t.cpus();
  // 28 cores over 3 ranks: 10, 9, 9.
  EXPECT_EQ(decide_rank_placement(t, request(PinPolicy::core, 0, 3), all).cpus, range(0, 9));
  EXPECT_EQ(decide_rank_placement(t, request(PinPolicy::core, 1, 3), all).cpus, range(10, 18));
  const auto last = decide_rank_placement(t, request(PinPolicy::core, 2, 3), all);
  EXPECT_EQ(last.cpus, range(19, 27));
  EXPECT_EQ(last.numa_domains, (std::vector<int>{2, 3}));
  EXPECT_EQ(last.threads, 9);
  EXPECT_FALSE(last.bind_memory);
}

TEST(RankRule, CoreNarrowsToTheThreadsAsked) {
  const auto t = test_data::load(test_data::kTwoSocket);
  const auto p = decide_rank_placement(t, request(PinPolicy::core, 1, 2, 2), t.cpus());
  EXPECT_EQ(p.cpus, (std::vector<int>{14, 15}));
  EXPECT_EQ(p.threads, 2);
  EXPECT_TRUE(p.warnings.empty());
}

TEST(RankRule, MoreRanksThanCoresShareCoresAndSaySo) {
  const auto t = test_data::load(test_data::kWorkstation);
  const auto p = decide_rank_placement(t, request(PinPolicy::core, 2, 3), t.cpus());
  EXPECT_EQ(p.cpus, std::vector<int>{0});  // rank 2 wraps to core 0
  EXPECT_TRUE(mentions(p, "oversubscribed: 3 ranks share the 2 core(s)"));
}

TEST(RankRule, MoreThreadsThanCoresIsWarned) {
  const auto t = test_data::load(test_data::kWorkstation);
  const auto p = decide_rank_placement(t, request(PinPolicy::core, 0, 1, 5), t.cpus());
  EXPECT_EQ(p.threads, 5);
  EXPECT_EQ(p.cores, 2);
  EXPECT_TRUE(mentions(p, "oversubscribed: 5 threads on 2 core(s)"));
}

TEST(RankRule, NumaPutsConsecutiveRanksOnADomainAndSplitsIt) {
  const auto t = test_data::load(test_data::kTwoSocket);
  const auto all = t.cpus();
  // 8 ranks on 4 domains of 7 cores: ranks 2d and 2d+1 share domain d (4 + 3 cores).
  for (int d = 0; d < 4; ++d) {
    const auto a = decide_rank_placement(t, request(PinPolicy::numa, 2 * d, 8), all);
    const auto b = decide_rank_placement(t, request(PinPolicy::numa, 2 * d + 1, 8), all);
    EXPECT_EQ(a.cpus, range(7 * d, 7 * d + 3)) << "domain " << d;
    EXPECT_EQ(b.cpus, range(7 * d + 4, 7 * d + 6)) << "domain " << d;
    EXPECT_EQ(a.numa_domains, std::vector<int>{d});
    EXPECT_TRUE(a.bind_memory && b.bind_memory);
  }
  // Fewer ranks than domains: rank r takes domain r whole.
  EXPECT_EQ(decide_rank_placement(t, request(PinPolicy::numa, 1, 2), all).cpus, range(7, 13));
}

TEST(RankRule, AutoPicksCoreNumaOrGpuFromTheRequest) {
  const auto two = test_data::load(test_data::kTwoSocket);
  EXPECT_EQ(decide_rank_placement(two, request(PinPolicy::automatic, 0, 1), two.cpus()).pin, PinPolicy::core);
  EXPECT_EQ(decide_rank_placement(two, request(PinPolicy::automatic, 0, 1), two.cpus()).cpus, range(0, 27));
  EXPECT_EQ(decide_rank_placement(two, request(PinPolicy::automatic, 3, 4), two.cpus()).pin, PinPolicy::numa);
  EXPECT_EQ(decide_rank_placement(two, request(PinPolicy::automatic, 3, 4), two.cpus()).cpus, range(21, 27));
  EXPECT_EQ(decide_rank_placement(two, request(PinPolicy::automatic, 0, 3), two.cpus()).pin, PinPolicy::core);
  const auto gpu = test_data::load(test_data::kGpuNode);
  EXPECT_EQ(decide_rank_placement(gpu, request(PinPolicy::automatic, 0, 1, 0, "000b:01:00.0"), gpu.cpus()).pin,
            PinPolicy::gpu);
}

TEST(RankRule, LauncherBindingIsKept) {
  const auto t = test_data::load(test_data::kTwoSocket);
  // As `mpirun --bind-to numa` would leave rank 1.
  const auto p = decide_rank_placement(t, request(PinPolicy::numa, 0, 4), range(7, 13));
  EXPECT_TRUE(p.launcher_bound);
  EXPECT_EQ(p.cpus, range(7, 13));
  EXPECT_EQ(p.numa_domains, std::vector<int>{1});
  EXPECT_TRUE(p.bind_memory);
  EXPECT_EQ(p.threads, 7);
  // A mask naming CPUs beyond the machine (offline ones) is no binding.
  EXPECT_FALSE(decide_rank_placement(t, request(PinPolicy::core, 0, 1), range(0, 1023)).launcher_bound);
}

TEST(RankRule, LauncherDefaultBindingIsReplacedByThePolicy) {
  const auto t = test_data::load(test_data::kTwoSocket);
  // `mpirun -np 1` with no binding option leaves the rank on one core: not a binding anyone asked for.
  auto req = request(PinPolicy::automatic, 0, 1);
  req.launcher_default = true;
  const auto p = decide_rank_placement(t, req, {0});
  EXPECT_FALSE(p.launcher_bound);
  EXPECT_EQ(p.cpus, range(0, 27));
  EXPECT_EQ(p.threads, 28);
  EXPECT_EQ(p.replaced_default, std::vector<int>{0});
  EXPECT_EQ(p.to_json()["replaced_launcher_default"], "0");
  // Two ranks of a 2-socket node: each its own socket, not one core each.
  auto second = request(PinPolicy::automatic, 1, 2);
  second.launcher_default = true;
  EXPECT_EQ(decide_rank_placement(t, second, {1}).cpus, range(14, 27));
  // --pin none keeps what the process has; an unbound process has nothing to replace.
  auto none = request(PinPolicy::none, 0, 1);
  none.launcher_default = true;
  EXPECT_EQ(decide_rank_placement(t, none, {0}).cpus, std::vector<int>{0});
  EXPECT_TRUE(decide_rank_placement(t, none, {0}).replaced_default.empty());
  EXPECT_TRUE(decide_rank_placement(t, req, t.cpus()).replaced_default.empty());
  EXPECT_FALSE(decide_rank_placement(t, req, t.cpus()).to_json().contains("replaced_launcher_default"));
}

TEST(RankRule, OpenMpiDefaultBindingIsToldFromAnAskedOne) {
  const char* asked[] = {"OMPI_MCA_hwloc_base_binding_policy", "OMPI_MCA_rmaps_base_mapping_policy",
                         "OMPI_MCA_hwloc_base_cpu_set", "OMPI_MCA_hwloc_base_cpu_list"};
  std::vector<std::pair<std::string, std::string>> saved;
  for (const char* name : {"OMPI_MCA_orte_bound_at_launch", asked[0], asked[1], asked[2], asked[3]}) {
    if (const char* v = std::getenv(name)) saved.emplace_back(name, v);
    unsetenv(name);
  }
  EXPECT_FALSE(scalebench::launcher_binding_is_default());  // not started by mpirun, or mpirun did not bind
  setenv("OMPI_MCA_orte_bound_at_launch", "1", 1);
  EXPECT_TRUE(scalebench::launcher_binding_is_default());  // `mpirun -np 1 scalebench ...`
  for (const char* name : asked) {
    setenv(name, "core", 1);  // --bind-to core, --map-by ..., --cpu-set ...
    EXPECT_FALSE(scalebench::launcher_binding_is_default()) << name;
    setenv(name, "", 1);  // an empty value asks for nothing
    EXPECT_TRUE(scalebench::launcher_binding_is_default()) << name;
    unsetenv(name);
  }
  unsetenv("OMPI_MCA_orte_bound_at_launch");
  for (const auto& [name, value] : saved) setenv(name.c_str(), value.c_str(), 1);
}

TEST(RankRule, NoneKeepsWhateverTheProcessHas) {
  const auto t = test_data::load(test_data::kTwoSocket);
  const auto unbound = decide_rank_placement(t, request(PinPolicy::none, 0, 2), t.cpus());
  EXPECT_EQ(unbound.cpus, range(0, 27));
  EXPECT_FALSE(unbound.launcher_bound);
  EXPECT_FALSE(unbound.bind_memory);
  const auto bound = decide_rank_placement(t, request(PinPolicy::none, 0, 2), {3, 4});
  EXPECT_EQ(bound.cpus, (std::vector<int>{3, 4}));
  EXPECT_TRUE(bound.launcher_bound);
  EXPECT_EQ(bound.threads, 2);
}

TEST(RankRule, GpuRankTakesItsNamedGpusWholeDomainWhenAlone) {
  const auto t = test_data::load(test_data::kGpuNode);
  const auto p = decide_rank_placement(t, request(PinPolicy::gpu, 0, 1, 0, "0000000A:01:00.0"), t.cpus());
  ASSERT_TRUE(p.gpu.has_value());
  EXPECT_EQ(p.gpu->pci_bus_id, "000a:01:00.0");
  EXPECT_EQ(p.cpus, (std::vector<int>{80, 81, 88, 89, 96, 97, 104, 105}));
  EXPECT_EQ(p.numa_domains, std::vector<int>{1});
  EXPECT_EQ(p.threads, 4);
}

TEST(RankRule, GpuRanksSharingADomainSplitIt) {
  const auto t = test_data::load(test_data::kGpuNode);
  // Two ranks: GPUs 0 and 1, both on NUMA 0.
  const auto a = decide_rank_placement(t, request(PinPolicy::gpu, 0, 2), t.cpus());
  const auto b = decide_rank_placement(t, request(PinPolicy::gpu, 1, 2), t.cpus());
  EXPECT_EQ(a.gpu->pci_bus_id, "0002:01:00.0");
  EXPECT_EQ(b.gpu->pci_bus_id, "0003:01:00.0");
  EXPECT_EQ(a.cpus, (std::vector<int>{0, 1, 8, 9}));
  EXPECT_EQ(b.cpus, (std::vector<int>{16, 17, 24, 25}));
  // Rank 1 names a GPU on the other domain: each rank then has a domain to itself.
  const auto c = decide_rank_placement(t, request(PinPolicy::gpu, 1, 2, 0, "000b:01:00.0"), t.cpus());
  EXPECT_EQ(c.cpus, (std::vector<int>{80, 81, 88, 89, 96, 97, 104, 105}));
}

TEST(RankRule, GpuErrorsNameTheProblem) {
  const auto gpu = test_data::load(test_data::kGpuNode);
  try {
    decide_rank_placement(gpu, request(PinPolicy::gpu, 0, 1, 0, "0000:3b:00.0"), gpu.cpus());
    FAIL() << "an unknown GPU was accepted";
  } catch (const scalebench::ResourceError& e) {
    EXPECT_NE(std::string(e.what()).find("GPU 0000:3b:00.0 is not in this machine's topology"), std::string::npos);
  }
  const auto ws = test_data::load(test_data::kWorkstation);
  EXPECT_THROW(decide_rank_placement(ws, request(PinPolicy::gpu, 0, 1), ws.cpus()), scalebench::ResourceError);
  EXPECT_THROW(decide_rank_placement(ws, request(PinPolicy::core, 2, 2), ws.cpus()), scalebench::UsageError);
  EXPECT_THROW(decide_rank_placement(ws, request(PinPolicy::core, 0, 1, -1), ws.cpus()), scalebench::UsageError);
}
