// The drivers' launch rules: hosts and hostfiles, srun's PMI type, the CPUs an allocation gives.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "scalebench/base/error.hpp"
#include "scalebench/drivers/launch.hpp"

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

// failure_lines on logs captured from real failed steps (tests/data/launch-logs/README.md).
namespace {
std::string log_sample(const std::string& name) {
  return std::string(SCALEBENCH_TEST_DATA_DIR) + "/launch-logs/" + name;
}
}  // namespace

TEST(FailureLines, PmiMissingShowsTheCauseNotTheAbortTrailer) {
  // srun --mpi=none of an Open MPI that needs PMIx: the cause first, the generic abort banner and
  // srun's task lines after it, on both nodes.
  const std::string why = scalebench::failure_lines(log_sample("pmi-none.log"));
  EXPECT_EQ(why, "[node1:11928] OPAL ERROR: Unreachable in file ext3x_client.c at line 112 | The application appears "
                 "to have been direct launched using \"srun\", but OMPI was not built with SLURM's PMI support and "
                 "therefore cannot execute.");
  EXPECT_EQ(why.find("MPI_ERRORS_ARE_FATAL"), std::string::npos);
  EXPECT_EQ(why.find("Exited with exit code"), std::string::npos);
}

TEST(FailureLines, LaunchersOwnCauses) {
  using scalebench::failure_lines;
  EXPECT_EQ(failure_lines(log_sample("srun-toomany.log")),
            "srun: error: Unable to create step for job 1: More processors requested than permitted");
  EXPECT_EQ(failure_lines(log_sample("mpirun-slots.log")),
            "There are not enough slots available in the system to satisfy the 4 slots that were requested by the "
            "application:");
  // The remote shell's line before Open MPI's help texts; of each text its first sentence and its
  // details ("Local host: node1"), not the advice ("This usually is caused by: * not finding ...").
  EXPECT_EQ(failure_lines(log_sample("mpirun-nohost.log")),
            "tests/cluster: cannot enter 10.77.1.9: no such host in /tmp/scalebench-cluster.q3Xk2P/hosts | ORTE was "
            "unable to reliably start one or more daemons. | A process or daemon was unable to complete a TCP "
            "connection to another process (Local host: node1; Remote host: vm)");
  // A rank killed on the second host: the signal, not "Primary job terminated normally".
  EXPECT_EQ(failure_lines(log_sample("mpirun-killed.log")),
            "mpirun noticed that process rank 1 with PID 12920 on node 10.77.1.2 exited on signal 9 (Killed).");
}

TEST(FailureLines, ScalebenchsOwnErrorFirst) {
  const std::string why = scalebench::failure_lines(log_sample("own-error.log"));
  EXPECT_EQ(why.rfind("scalebench: error: a GPU backend (gemm --backend cublas", 0), 0u) << why;
  EXPECT_TRUE(scalebench::has_scalebench_error(log_sample("own-error.log")));
  EXPECT_FALSE(scalebench::has_scalebench_error(log_sample("pmi-none.log")));
}

TEST(FailureLines, WithoutACauseTheLastLines) {
  // A rank that exits 1 saying nothing under srun: only the generic lines are left to show.
  const TempFile f("gemm: n=64, 2 ranks\n\nsrun: error: node1: task 0: Exited with exit code 1\n"
                   "srun: error: node2: task 1: Exited with exit code 1\n");
  EXPECT_EQ(scalebench::failure_lines(f.path), "gemm: n=64, 2 ranks | srun: error: node1: task 0: Exited with exit "
                                               "code 1 | srun: error: node2: task 1: Exited with exit code 1");
  const TempFile empty("");
  EXPECT_EQ(scalebench::failure_lines(empty.path), "");
  EXPECT_EQ(scalebench::failure_lines("/nonexistent/scalebench-no-such.log"), "");
}
