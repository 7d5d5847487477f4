#pragma once
// Bounded failure across hosts (docs/cluster.md, "A host that disappears"): a run whose peer host
// goes silent (its link cut, the machine gone) ends within SCALEBENCH_PEER_TIMEOUT seconds instead
// of hanging in MPI. Each host's node leader sends a tiny UDP heartbeat every second to every rank
// on the other hosts, on their own sockets (addresses and ports exchanged once through MPI at
// start), from a thread that never touches MPI: heartbeats do not depend on MPI progress, so a
// long repeat never looks silent. Every rank watches the other hosts; when one has sent nothing
// for the timeout, the rank ends itself (ExitCode::timeout) and its node leader prints one line
// naming the silent host, so mpirun tears the job down on the hosts it can reach. Off (no thread,
// no socket) for single-host runs and with SCALEBENCH_PEER_TIMEOUT=0.
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace scalebench {

class Communicator;

// The default timeout in seconds, and the variable that sets it.
inline constexpr int kDefaultPeerTimeoutSeconds = 30;
inline constexpr const char* kPeerTimeoutVariable = "SCALEBENCH_PEER_TIMEOUT";

// SCALEBENCH_PEER_TIMEOUT: whole seconds, 0 (off) to 86400; unset or empty gives the default.
// Throws UsageError naming the variable for anything else.
int peer_timeout_seconds_from_env();

// What the watchdog found: the hosts (names and their world ranks, e.g. "4-7") that sent nothing
// for `silent_seconds`, and whether this host's own links carrying the exchanged addresses are
// down (then this host is the one cut off).
struct SilentHosts {
  std::vector<std::string> names;
  std::vector<std::string> ranks;
  int silent_seconds = 0;
  bool own_link_down = false;
  bool node_leader = false;
};

// The one line a node leader prints, without the "scalebench: error: " prefix:
// "host node2 (ranks 4-7) sent nothing for 30 s; ending the run".
std::string silent_hosts_message(const SilentHosts& s);

// The default reaction: the node leader prints the line; every rank ends with ExitCode::timeout
// without unwinding (the main thread may be blocked inside MPI). Never returns.
[[noreturn]] void end_run_for_silent_hosts(const SilentHosts& s);

struct PeerWatchdogOptions {
  double timeout_s = kDefaultPeerTimeoutSeconds;
  double period_s = 1.0;  // between heartbeats; capped at timeout_s / 4
  // Called on the watchdog thread when hosts go silent; they are then no longer watched. Tests
  // replace it; the default ends the rank.
  std::function<void(const SilentHosts&)> on_silent = end_run_for_silent_hosts;
};

class PeerWatchdog {
 public:
  PeerWatchdog();
  ~PeerWatchdog();  // stop()
  PeerWatchdog(const PeerWatchdog&) = delete;
  PeerWatchdog& operator=(const PeerWatchdog&) = delete;

  // Collective over `comm` across hosts; `host` groups the ranks of one host (normally
  // comm.node()). Starts nothing when every rank is on one host (then with no collective at all)
  // or timeout_s <= 0 (the same value on every rank). A failure on any rank (no socket) becomes
  // the same AgreedError on every rank.
  void start(const Communicator& comm, const Communicator& host, PeerWatchdogOptions options);
  // Local, idempotent: node leaders send a last "leaving" packet (peers then stop watching this
  // host), the thread is joined and the socket closed. With `say_goodbye` false the host just
  // falls silent (tests).
  void stop(bool say_goodbye = true);

  bool running() const noexcept { return thread_.joinable(); }
  int hosts() const noexcept { return hosts_; }
  // Heartbeats this rank received so far (any host).
  std::int64_t heartbeats_received() const noexcept { return received_.load(); }

  struct State;  // sockets and the peers' table (peer_watchdog.cpp)

 private:
  void run();
  std::unique_ptr<State> state_;
  std::thread thread_;
  std::atomic<std::int64_t> received_{0};
  int hosts_ = 1;
};

// What every MPI run does right after MPI_Init (run_mpi_command), with `timeout_seconds` read by
// peer_timeout_seconds_from_env() before MPI_Init (a bad value ends every rank there, as a usage
// error). On one host nothing happens beyond comm.node(), the split rank set-up uses too: no
// collective of its own. Across hosts rank 0's value applies (mpirun need not forward the
// variable to other hosts) and `watchdog` is started over comm's hosts.
void start_peer_watchdog(PeerWatchdog& watchdog, const Communicator& comm, int timeout_seconds);

}  // namespace scalebench
