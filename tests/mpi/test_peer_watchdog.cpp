// The peer watchdog (peer_watchdog.hpp) on one machine, each rank posing as a host of its own:
// a healthy run whose main thread makes no MPI progress for longer than the timeout never fires;
// a rank that falls silent is named by the others within the timeout; one that leaves says so and
// is not reported; every watchdog joins at stop; one real host starts nothing and spends no
// collective on it (counted through the MPI profiling interface).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

#include "scalebench/base/error.hpp"
#include "scalebench/base/host.hpp"
#include "scalebench/mpi/mpi.hpp"
#include "scalebench/mpi/peer_watchdog.hpp"

using namespace scalebench;

namespace {

// What the handler saw (it runs on the watchdog thread).
struct Seen {
  std::mutex mutex;
  std::vector<SilentHosts> calls;
  std::size_t count() {
    const std::lock_guard<std::mutex> lock(mutex);
    return calls.size();
  }
};

PeerWatchdogOptions options_for(Seen& seen, double timeout_s) {
  PeerWatchdogOptions o;
  o.timeout_s = timeout_s;
  o.period_s = 0.1;
  o.on_silent = [&seen](const SilentHosts& s) {
    const std::lock_guard<std::mutex> lock(seen.mutex);
    seen.calls.push_back(s);
  };
  return o;
}

// Each rank its own "host": the watchdog runs among the ranks of this machine.
Communicator rank_per_host(const Communicator& world) { return world.split(world.rank(), 0); }

void sleep_s(double s) { std::this_thread::sleep_for(std::chrono::duration<double>(s)); }

// Collectives this process entered (the profiling interface: these definitions take the place of
// the library's, which they call through PMPI_).
std::atomic<int> g_collectives{0};

}  // namespace

extern "C" {
int MPI_Bcast(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  ++g_collectives;
  return PMPI_Bcast(buffer, count, type, root, comm);
}
int MPI_Allreduce(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  ++g_collectives;
  return PMPI_Allreduce(send, recv, count, type, op, comm);
}
int MPI_Allgather(const void* send, int send_count, MPI_Datatype send_type, void* recv, int recv_count,
                  MPI_Datatype recv_type, MPI_Comm comm) {
  ++g_collectives;
  return PMPI_Allgather(send, send_count, send_type, recv, recv_count, recv_type, comm);
}
int MPI_Barrier(MPI_Comm comm) {
  ++g_collectives;
  return PMPI_Barrier(comm);
}
int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm* out) {
  ++g_collectives;
  return PMPI_Comm_split_type(comm, split_type, key, info, out);
}
}

TEST(PeerWatchdog, HealthyRunWithoutMpiProgressNeverFiresAndJoins) {
  const auto world = Communicator::world();
  if (world.size() < 2) GTEST_SKIP() << "needs 2 ranks or more";
  Seen seen;
  PeerWatchdog w;
  w.start(world, rank_per_host(world), options_for(seen, 1.0));
  EXPECT_TRUE(w.running());
  EXPECT_EQ(w.hosts(), world.size());
  // Three timeouts with no MPI call: heartbeats come from the watchdog threads alone.
  sleep_s(3.0);
  world.barrier();
  EXPECT_EQ(seen.count(), 0U);
  EXPECT_GE(w.heartbeats_received(), 10 * (world.size() - 1));
  world.barrier();  // nobody leaves before every rank has checked
  w.stop();
  EXPECT_FALSE(w.running());
  w.stop();  // idempotent
}

TEST(PeerWatchdog, SilentRankIsNamedWithinTheTimeout) {
  const auto world = Communicator::world();
  if (world.size() < 2) GTEST_SKIP() << "needs 2 ranks or more";
  const int silent = world.size() - 1;
  Seen seen;
  PeerWatchdog w;
  w.start(world, rank_per_host(world), options_for(seen, 1.0));
  world.barrier();
  const auto t0 = std::chrono::steady_clock::now();
  if (world.rank() == silent) w.stop(false);  // falls silent without a word
  while (world.rank() != silent && seen.count() == 0 &&
         std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5)) {
    sleep_s(0.05);
  }
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  sleep_s(1.5);  // would any other host be reported too?
  w.stop();
  if (world.rank() != silent) {
    ASSERT_EQ(seen.count(), 1U);
    const SilentHosts& s = seen.calls.front();
    ASSERT_EQ(s.names.size(), 1U);
    EXPECT_EQ(s.names[0], host_name());
    EXPECT_EQ(s.ranks[0], std::to_string(silent));
    EXPECT_EQ(s.silent_seconds, 1);
    EXPECT_FALSE(s.own_link_down);
    EXPECT_TRUE(s.node_leader);
    EXPECT_GE(waited, 0.8);
    EXPECT_LE(waited, 2.5);
    EXPECT_EQ(silent_hosts_message(s),
              "host " + host_name() + " (ranks " + std::to_string(silent) + ") sent nothing for 1 s; ending the run");
  }
  world.barrier();
}

TEST(PeerWatchdog, SuspendedJobIsNotReportedOnResume) {
  const auto world = Communicator::world();
  if (world.size() < 2) GTEST_SKIP() << "needs 2 ranks or more";
  std::vector<std::int64_t> pids(static_cast<std::size_t>(world.size()));
  const std::int64_t me = ::getpid();
  SCALEBENCH_MPI(MPI_Allgather(&me, 1, MPI_INT64_T, pids.data(), 1, MPI_INT64_T, world.get()));
  Seen seen;
  PeerWatchdog w;
  w.start(world, rank_per_host(world), options_for(seen, 1.0));
  world.barrier();
  if (world.is_root()) {
    // As a job suspended (ctrl-Z, a scheduler's suspend) for 2.5 timeouts and resumed.
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      for (const auto pid : pids) ::kill(static_cast<pid_t>(pid), SIGSTOP);
      ::usleep(2500000);
      for (const auto pid : pids) ::kill(static_cast<pid_t>(pid), SIGCONT);
      ::_exit(0);
    }
    int status = 0;
    ::waitpid(child, &status, 0);
  }
  sleep_s(3.5);  // covers the stop (2.5 s) and a timeout after it
  world.barrier();
  w.stop();
  EXPECT_EQ(seen.count(), 0U);
}

TEST(PeerWatchdog, RankThatLeavesIsNotReported) {
  const auto world = Communicator::world();
  if (world.size() < 2) GTEST_SKIP() << "needs 2 ranks or more";
  Seen seen;
  PeerWatchdog w;
  w.start(world, rank_per_host(world), options_for(seen, 1.0));
  world.barrier();
  if (world.rank() == 0) w.stop();  // says it leaves
  sleep_s(2.5);
  world.barrier();
  w.stop();
  EXPECT_EQ(seen.count(), 0U);
}

TEST(PeerWatchdog, OneHostOrTimeoutZeroStartsNothing) {
  const auto world = Communicator::world();
  Seen seen;
  PeerWatchdog one_host;
  one_host.start(world, world.split(0, world.rank()), options_for(seen, 1.0));
  EXPECT_FALSE(one_host.running());
  EXPECT_EQ(one_host.hosts(), 1);
  PeerWatchdog off;
  off.start(world, rank_per_host(world), options_for(seen, 0.0));
  EXPECT_FALSE(off.running());
}

TEST(PeerWatchdog, OneHostRunSpendsNoCollectiveOnIt) {
  const auto world = Communicator::world();
  const int before_split = g_collectives.load();
  const Communicator& node = world.node();  // the split rank set-up makes and shares
  // MPI's shared-memory split and the one all-gather that checks it against the host names.
  EXPECT_EQ(g_collectives.load() - before_split, 2);
  ASSERT_EQ(node.size(), world.size()) << "the ranks of this test are on one host";
  EXPECT_TRUE(world.one_node());
  const int before = g_collectives.load();
  PeerWatchdog w;
  start_peer_watchdog(w, world, 30);
  EXPECT_FALSE(w.running());
  EXPECT_EQ(w.hosts(), 1);
  EXPECT_EQ(&world.node(), &node) << "the node split is made once";
  EXPECT_EQ(g_collectives.load() - before, 0);
  // The counting itself works: the multi-host path's first step is a collective.
  const int before_start = g_collectives.load();
  Seen seen;
  PeerWatchdog across;
  across.start(world, rank_per_host(world), options_for(seen, 1.0));
  EXPECT_GT(g_collectives.load() - before_start, 0);
}

TEST(PeerWatchdog, TimeoutFromTheEnvironment) {
  ::unsetenv(kPeerTimeoutVariable);
  EXPECT_EQ(peer_timeout_seconds_from_env(), kDefaultPeerTimeoutSeconds);
  ::setenv(kPeerTimeoutVariable, "0", 1);
  EXPECT_EQ(peer_timeout_seconds_from_env(), 0);
  ::setenv(kPeerTimeoutVariable, "12", 1);
  EXPECT_EQ(peer_timeout_seconds_from_env(), 12);
  for (const char* bad : {"-1", "ten", "1.5", "86401"}) {
    ::setenv(kPeerTimeoutVariable, bad, 1);
    try {
      (void)peer_timeout_seconds_from_env();
      ADD_FAILURE() << bad << " was accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(kPeerTimeoutVariable), std::string::npos) << e.what();
    }
  }
  ::unsetenv(kPeerTimeoutVariable);
}
