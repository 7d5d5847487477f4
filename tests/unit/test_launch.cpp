// The drivers' launch rules: hosts and hostfiles, srun's PMI type, the CPUs an allocation gives.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "scalebench/error.hpp"
#include "scalebench/launch.hpp"

using scalebench::allocation_cpus;
using scalebench::HostEntry;
using scalebench::parse_hosts;
using scalebench::read_hostfile;
using scalebench::srun_mpi_flag;
using scalebench::UsageError;

namespace {

// A file with `text`, removed when the test ends.
struct TempFile {
  std::string path;
  explicit TempFile(const std::string& text) {
    char name[] = "/tmp/scalebench-launch-XXXXXX";
    const int fd = mkstemp(name);
    close(fd);
    path = name;
    std::ofstream(path) << text;
  }
  ~TempFile() { std::remove(path.c_str()); }
};

}  // namespace

TEST(Hosts, ListsWithAndWithoutSlots) {
  const auto h = parse_hosts("node1,node2:4,node-3.example");
  ASSERT_EQ(h.size(), 3u);
  EXPECT_EQ(h[0].name, "node1");
  EXPECT_EQ(h[0].slots, 0);
  EXPECT_EQ(h[1].name, "node2");
  EXPECT_EQ(h[1].slots, 4);
  EXPECT_EQ(h[2].name, "node-3.example");
  EXPECT_EQ(parse_hosts("a:2,a:3").size(), 1u);  // one host named twice
  EXPECT_EQ(parse_hosts("a:2,a:3")[0].slots, 5);
  for (const char* bad : {"", ",", "a:0", "a:x", "a;b", "a b", "a:"}) {
    EXPECT_THROW(parse_hosts(bad), UsageError) << bad;
  }
}

TEST(Hosts, OpenMpiHostfiles) {
  const TempFile f("# the test cluster\nnode1 slots=2\n\n  node2 slots=4 max_slots=8  # big one\nnode3\n");
  const auto h = read_hostfile(f.path);
  ASSERT_EQ(h.size(), 3u);
  EXPECT_EQ(h[0].name, "node1");
  EXPECT_EQ(h[0].slots, 2);
  EXPECT_EQ(h[1].slots, 4);
  EXPECT_EQ(h[2].slots, 0);
  const TempFile bad("node1 slots=two\n");
  try {
    read_hostfile(bad.path);
    FAIL() << "a bad slot count was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find(bad.path + ":1"), std::string::npos) << e.what();
  }
  const TempFile empty("# nothing\n\n");
  EXPECT_THROW(read_hostfile(empty.path), UsageError);
  EXPECT_THROW(read_hostfile("/nonexistent/hostfile"), UsageError);
}

TEST(SrunMpi, RespectsTheUserThenSlurmMpiTypeThenOffersPmix) {
  const std::string list = "MPI plugin types are...\n\tnone\n\tcray_shasta\n\tpmi2\n\tpmix\n"
                           "specific pmix plugin versions available: pmix_v4\n";
  EXPECT_EQ(srun_mpi_flag({}, nullptr, list), "--mpi=pmix");
  EXPECT_EQ(srun_mpi_flag({}, "pmi2", list), "--mpi=pmi2");
  EXPECT_EQ(srun_mpi_flag({"--mpi=none"}, "pmi2", list), "");
  EXPECT_EQ(srun_mpi_flag({}, "", "srun: MPI types are...\nsrun: none\nsrun: pmix_v3\n"), "--mpi=pmix");
  EXPECT_EQ(srun_mpi_flag({}, nullptr, "MPI plugin types are...\n\tnone\n\tpmi2\n"), "");
  EXPECT_EQ(srun_mpi_flag({}, nullptr, ""), "");
}

TEST(AllocationCpus, TheLeastOfWhatSlurmAndTheCpuSetGive) {
  EXPECT_EQ(allocation_cpus(nullptr, nullptr, 0), 0);
  EXPECT_EQ(allocation_cpus(nullptr, nullptr, 16), 16);
  EXPECT_EQ(allocation_cpus("8", nullptr, 16), 8);
  EXPECT_EQ(allocation_cpus("8", "8(x2),4", 16), 4);
  EXPECT_EQ(allocation_cpus(nullptr, "72(x3)", 0), 72);
  EXPECT_EQ(allocation_cpus("12", "12,16", 6), 6);
  EXPECT_EQ(allocation_cpus("", "junk", 4), 4);
}
