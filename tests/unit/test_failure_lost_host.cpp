// A host lost mid-run is one line naming the host, not Open MPI's start-up text; the same text at
// start-up (no run under way) stays what it says.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "scalebench/drivers/launch.hpp"

namespace {

std::string log_sample(const std::string& name) {
  return std::string(SCALEBENCH_TEST_DATA_DIR) + "/launch-logs/" + name;
}

// A log of `text` in a file of its own, removed at the end.
struct LogFile {
  std::string path;
  explicit LogFile(const std::string& text) {
    char name[] = "/tmp/scalebench-lost-host-XXXXXX";
    const int fd = mkstemp(name);
    if (fd >= 0) close(fd);
    path = name;
    std::ofstream(path) << text;
  }
  ~LogFile() { std::remove(path.c_str()); }
  LogFile(const LogFile&) = delete;
  LogFile& operator=(const LogFile&) = delete;
};

const char* const kRule = "--------------------------------------------------------------------------\n";
const char* const kProgress = "scalebench gemm: repeat 3/6 done (timed), 9.0 s elapsed\n";

}  // namespace

TEST(FailureLostHost, DaemonLinkLostNamesTheRemoteHost) {
  EXPECT_EQ(scalebench::failure_lines(log_sample("mpirun-node-died.log")),
            "host node2 was lost during the run (the host went down, or its network link or Open MPI's daemon there "
            "failed)");
}

TEST(FailureLostHost, StartUpTextAfterTheRunStartedIsALostHost) {
  // Open MPI prints "unable to reliably start one or more daemons" when the remote shell holding a
  // daemon ends, even mid-run: after a progress line it is the host the remote shell names.
  const std::string why = scalebench::failure_lines(log_sample("mpirun-shell-ended.log"));
  EXPECT_EQ(why, "host 10.77.1.2 was lost during the run (the host went down, or its network link or Open MPI's "
                 "daemon there failed)");
  EXPECT_EQ(why.find("unable to reliably start"), std::string::npos);
  // ssh's timeout names the host too; without any line naming it, the line says so.
  const LogFile timeout(std::string(kProgress) + "Timeout, server node7 not responding.\n" + kRule +
                        "ORTE was unable to reliably start one or more daemons.\nThis usually is caused by:\n" + kRule);
  EXPECT_EQ(scalebench::failure_lines(timeout.path).rfind("host node7 was lost during the run", 0), 0u);
  const LogFile silent(std::string(kProgress) + kRule +
                       "ORTE was unable to reliably start one or more daemons.\nThis usually is caused by:\n" + kRule);
  EXPECT_EQ(scalebench::failure_lines(silent.path).rfind("a remote host was lost during the run", 0), 0u);
}

TEST(FailureLostHost, RemoteShellsTimeoutAloneIsALostHost) {
  // Without a progress line (a short or quiet run): the remote shell's keepalive giving up, then
  // Open MPI's start-up text, as docs/cluster.md measured with ssh and the test cluster's agent.
  const std::string tail = std::string(kRule) +
                           "ORTE was unable to reliably start one or more daemons.\nThis usually is caused by:\n" +
                           kRule;
  const LogFile ssh("Timeout, server node2 not responding.\n" + tail);
  EXPECT_EQ(scalebench::failure_lines(ssh.path).rfind("host node2 was lost during the run", 0), 0u)
      << scalebench::failure_lines(ssh.path);
  const LogFile agent("tests/cluster/rsh: host node2 (10.77.1.2) did not answer for 5 s; closing its session\n" + tail);
  EXPECT_EQ(scalebench::failure_lines(agent.path).rfind("host node2 was lost during the run", 0), 0u)
      << scalebench::failure_lines(agent.path);
}

TEST(FailureLostHost, OlderDaemonDiedTextNamesItsNode) {
  const LogFile died(std::string(kRule) +
                     "The system has lost communication with the following daemon:\n\nDaemon: [[1234,0],1]\n"
                     "Node:   node3\n\nThe reason for the lost communication channel is unknown.\n" +
                     kRule);
  EXPECT_EQ(scalebench::failure_lines(died.path).rfind("host node3 was lost during the run", 0), 0u)
      << scalebench::failure_lines(died.path);
}

TEST(FailureLostHost, StartUpFailureIsNotALostHost) {
  // No run under way: the start-up text and the remote shell's cause stay as they are.
  const std::string why = scalebench::failure_lines(log_sample("mpirun-nohost.log"));
  EXPECT_NE(why.find("ORTE was unable to reliably start one or more daemons."), std::string::npos) << why;
  EXPECT_EQ(why.find("lost during the run"), std::string::npos) << why;
  // scalebench's own error still comes first.
  const LogFile own(std::string(kProgress) +
                    "scalebench: error: host node2 (ranks 1) sent nothing for 30 s; ending "
                    "the run\n" +
                    kRule + "ORTE has lost communication with a remote daemon.\n" + kRule);
  EXPECT_EQ(scalebench::failure_lines(own.path).rfind("scalebench: error: host node2", 0), 0u);
}
