// Binding for real under mpirun (run unbound: ctest sets OMPI_MCA_hwloc_base_binding_policy=none):
// each rank applies its placement, the OS reports the affinity asked for, the ranks of a node
// hold distinct cores, and a buffer first touched after binding sits on the rank's domain.
#include <sched.h>

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "mpi_test_util.hpp"
#include "scalebench/base/host.hpp"
#include "scalebench/mpi/mpi.hpp"
#include "scalebench/topology/placement.hpp"
#include "scalebench/topology/topology.hpp"

using scalebench::PinPolicy;

namespace {

struct Local {
  int rank = 0;
  int size = 1;
};

Local local_ranks() {
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, world_rank(), MPI_INFO_NULL, &node);
  Local l;
  MPI_Comm_rank(node, &l.rank);
  MPI_Comm_size(node, &l.size);
  MPI_Comm_free(&node);
  return l;
}

// Undo an earlier test's binding, as an unbound launch would leave the process.
bool unbind(const scalebench::Topology& t) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : t.cpus()) CPU_SET(c, &set);
  return sched_setaffinity(0, sizeof set, &set) == 0;
}

// apply_placement with `pin` for this rank of its node; the error text (empty when it worked).
struct Placed {
  scalebench::PlacementReport report;
  std::string error;
};
Placed place(const scalebench::Topology& t, PinPolicy pin) {
  const Local local = local_ranks();
  scalebench::PlacementRequest req;
  req.pin = pin;
  req.local_rank = local.rank;
  req.local_size = local.size;
  Placed out;
  try {
    out.report = scalebench::apply_placement(t, req);
  } catch (const std::exception& e) {
    out.error = e.what();
  }
  return out;
}

// The CPUs of every rank of this node, gathered everywhere.
std::vector<std::vector<int>> allgather_cpus(const std::vector<int>& mine, int size) {
  std::vector<int> all(static_cast<std::size_t>(size) * CPU_SETSIZE, 0);
  std::vector<int> flags(CPU_SETSIZE, 0);
  for (int c : mine) flags[static_cast<std::size_t>(c)] = 1;
  MPI_Allgather(flags.data(), CPU_SETSIZE, MPI_INT, all.data(), CPU_SETSIZE, MPI_INT, MPI_COMM_WORLD);
  std::vector<std::vector<int>> out(static_cast<std::size_t>(size));
  for (int r = 0; r < size; ++r) {
    for (int c = 0; c < CPU_SETSIZE; ++c) {
      if (all[static_cast<std::size_t>(r) * CPU_SETSIZE + static_cast<std::size_t>(c)]) {
        out[static_cast<std::size_t>(r)].push_back(c);
      }
    }
  }
  return out;
}

std::string joined(const std::vector<std::string>& w) {
  std::string s;
  for (const auto& x : w) s += x + "; ";
  return s;
}

}  // namespace

TEST(Binding, CoreRanksGetDistinctCoresAndTheirPagesStayLocal) {
  const auto t = scalebench::Topology::load();
  ASSERT_TRUE(all_ranks(unbind(t)));
  const Local local = local_ranks();
  ASSERT_EQ(local.size, world_size()) << "this test runs its ranks on one node";

  auto [report, error] = place(t, PinPolicy::core);
  ASSERT_TRUE(all_ranks(error.empty())) << error;
  const auto& p = report.placement;

  // Bound by scalebench (the launcher did not bind), and the OS reports exactly that set.
  EXPECT_TRUE(all_ranks(report.cpu_binding_applied && !p.launcher_bound));
  EXPECT_TRUE(all_ranks(report.affinity_after == p.cpus && report.affinity_after == scalebench::allowed_cpus()))
      << "asked " << scalebench::format_cpu_list(p.cpus) << ", OS "
      << scalebench::format_cpu_list(report.affinity_after);
  EXPECT_TRUE(all_ranks(report.affinity_before == t.cpus()));
  // One thread per core owned; every core owned by exactly one rank.
  const int expected_cores = static_cast<int>(t.cores().size()) / local.size;
  EXPECT_TRUE(all_ranks(p.cores >= expected_cores && p.threads == p.cores)) << p.cores << " cores";
  const auto everyone = allgather_cpus(p.cpus, world_size());
  bool disjoint = true;
  for (std::size_t a = 0; a < everyone.size(); ++a) {
    disjoint = disjoint && !everyone[a].empty();
    for (std::size_t b = a + 1; b < everyone.size(); ++b) {
      for (int c : everyone[a]) {
        disjoint = disjoint && std::find(everyone[b].begin(), everyone[b].end(), c) == everyone[b].end();
      }
    }
  }
  EXPECT_TRUE(all_ranks(disjoint));

  // A buffer first touched after binding: its pages are on this rank's NUMA domain(s).
  std::vector<double> buffer(1 << 20, 1.0);  // 8 MiB, touched by the constructor
  report.record_buffer("A", buffer.data(), buffer.size() * sizeof(double));
  const auto pages = scalebench::numa_nodes_of(buffer.data(), buffer.size() * sizeof(double));
  const bool local_pages = !pages.empty() &&
                           std::includes(p.numa_domains.begin(), p.numa_domains.end(), pages.begin(), pages.end());
  EXPECT_TRUE(all_ranks(local_pages)) << "pages on " << scalebench::format_cpu_list(pages) << ", rank's domains "
                                      << scalebench::format_cpu_list(p.numa_domains);
  EXPECT_TRUE(all_ranks(report.warnings.empty())) << joined(report.warnings);
  const auto j = report.to_json();
  EXPECT_TRUE(all_ranks(j["binding"] == "scalebench" && j["affinity_os"] == scalebench::format_cpu_list(p.cpus) &&
                        j["buffers"]["A"]["numa_nodes"] == pages));
}

TEST(Binding, NumaRanksBindMemoryToTheirDomain) {
  const auto t = scalebench::Topology::load();
  ASSERT_TRUE(all_ranks(unbind(t)));
  auto [report, error] = place(t, PinPolicy::numa);
  ASSERT_TRUE(all_ranks(error.empty())) << error;
  const auto& p = report.placement;
  EXPECT_TRUE(all_ranks(p.numa_domains.size() == 1 && report.memory_binding_applied && report.memory_policy == "bind"));
  EXPECT_TRUE(all_ranks(report.affinity_after == p.cpus));
  std::vector<double> buffer(1 << 20, 2.0);
  const auto pages = scalebench::numa_nodes_of(buffer.data(), buffer.size() * sizeof(double));
  EXPECT_TRUE(all_ranks(pages == p.numa_domains)) << "pages on " << scalebench::format_cpu_list(pages);
  EXPECT_TRUE(all_ranks(report.warnings.empty())) << joined(report.warnings);
}

TEST(Binding, LauncherBindingIsRespectedAndReported) {
  const auto t = scalebench::Topology::load();
  // Bind as a launcher would: this rank to the last PU of the machine.
  const int pu = t.cpus().back();
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(pu, &set);
  ASSERT_TRUE(all_ranks(sched_setaffinity(0, sizeof set, &set) == 0));
  auto [report, error] = place(t, PinPolicy::core);
  ASSERT_TRUE(all_ranks(error.empty())) << error;
  EXPECT_TRUE(all_ranks(report.placement.launcher_bound && !report.cpu_binding_applied));
  const std::vector<int> just_pu{pu};
  EXPECT_TRUE(all_ranks(report.placement.cpus == just_pu && report.affinity_after == just_pu));
  EXPECT_TRUE(all_ranks(report.to_json()["binding"] == "launcher"));
  EXPECT_TRUE(all_ranks(unbind(t)));
}
