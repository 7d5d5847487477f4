// Topology of the machine the test runs on: discovery matches what the OS reports, an export
// reads back identically, and the kernel's page placement query works.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

#include <gtest/gtest.h>

#include "scalebench/base/error.hpp"
#include "scalebench/base/host.hpp"
#include "scalebench/topology/placement.hpp"
#include "scalebench/topology/topology.hpp"

using scalebench::Topology;

TEST(TopologyLive, ThisMachineHasTheCpusTheOsAllows) {
  if (std::getenv("HWLOC_XMLFILE") != nullptr) GTEST_SKIP() << "HWLOC_XMLFILE is set: not this machine";
  const Topology t = Topology::load();
  EXPECT_TRUE(t.is_this_machine());
  EXPECT_EQ(t.source(), "this machine");
  // ctest runs unbound, so the process may use every PU hwloc found, and only those.
  EXPECT_EQ(t.cpus(), scalebench::allowed_cpus());
  EXPECT_FALSE(t.numa_domains().empty());
  EXPECT_FALSE(t.cpu_numa_domains().empty());
}

TEST(TopologyLive, ExportReadsBackTheSameMachine) {
  if (std::getenv("HWLOC_XMLFILE") != nullptr) GTEST_SKIP() << "HWLOC_XMLFILE is set: not this machine";
  const Topology live = Topology::load();
  char path[] = "/tmp/scalebench-topology-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  live.export_xml(path);
  const Topology back = Topology::load_xml(path);
  std::remove(path);
  EXPECT_EQ(back.cpus(), live.cpus());
  EXPECT_EQ(back.cores().size(), live.cores().size());
  EXPECT_EQ(back.numa_domains().size(), live.numa_domains().size());
  EXPECT_EQ(back.gpus().size(), live.gpus().size());
  EXPECT_EQ(back.to_json()["packages"], live.to_json()["packages"]);
}

TEST(TopologyLive, ExportToAnUnwritablePathIsAResourceError) {
  const Topology t = Topology::load();
  EXPECT_THROW(t.export_xml("/nonexistent-dir/topology.xml"), scalebench::ResourceError);
}

TEST(NumaPages, UntouchedPagesHaveNoNodeTouchedOnesHaveOne) {
  const Topology t = Topology::load();
  const std::size_t bytes = 64 * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  EXPECT_TRUE(scalebench::numa_nodes_of(p, bytes).empty());
  std::memset(p, 1, bytes);
  const auto nodes = scalebench::numa_nodes_of(p, bytes);
  ASSERT_FALSE(nodes.empty());
  for (int n : nodes) EXPECT_NE(t.numa_domain(n), nullptr) << "node " << n << " is not in the topology";
  munmap(p, bytes);
  EXPECT_TRUE(scalebench::numa_nodes_of(nullptr, 10).empty());
}
