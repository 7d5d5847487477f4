// The peer-host watchdog (peer_watchdog.hpp): UDP heartbeats among hosts on a thread of its own.
#include "scalebench/mpi/peer_watchdog.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "scalebench/base/error.hpp"
#include "scalebench/base/host.hpp"
#include "scalebench/base/parse.hpp"
#include "scalebench/mpi/mpi.hpp"

namespace scalebench {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::uint32_t kMagic = 0x53424842;  // "SBHB"
constexpr std::uint32_t kBeat = 1;
constexpr std::uint32_t kLeaving = 2;
constexpr int kMaxAddresses = 8;
constexpr int kMaxTimeoutSeconds = 86400;

struct Packet {
  std::uint32_t magic;
  std::uint32_t kind;
  std::uint64_t token;  // the run's (rank 0 draws it): packets of other runs are ignored
  std::uint32_t host;   // the sender's host index
  std::uint32_t seq;
};

// What each rank tells the others at start (allgathered as bytes).
struct RankCard {
  std::uint32_t host;  // index of its host (the host's leader's world rank)
  std::uint16_t port;  // its UDP port, network order
  std::uint16_t addresses;
  std::array<std::uint32_t, kMaxAddresses> address;  // IPv4, network order
  std::array<char, 64> name;                         // host name, NUL-terminated
};

// Open MPI's choice of networks for its TCP traffic (OMPI_MCA_btl_tcp_if_include, else
// OMPI_MCA_oob_tcp_if_include): comma-separated interface names or IPv4 subnets a.b.c.d/n. Empty
// when neither is set. Interface names and subnets it cannot read are kept as names.
std::vector<std::string> mpi_networks() {
  for (const char* var : {"OMPI_MCA_btl_tcp_if_include", "OMPI_MCA_oob_tcp_if_include"}) {
    const char* v = std::getenv(var);
    if (v == nullptr || *v == '\0') continue;
    std::vector<std::string> out;
    std::string item;
    for (const char* c = v;; ++c) {
      if (*c == ',' || *c == '\0') {
        if (!item.empty()) out.push_back(item);
        item.clear();
        if (*c == '\0') break;
      } else {
        item += *c;
      }
    }
    return out;
  }
  return {};
}

// Whether an interface (name, IPv4 address in network order) is one of `networks`.
bool in_networks(const std::vector<std::string>& networks, const std::string& name, std::uint32_t address) {
  for (const std::string& n : networks) {
    const auto slash = n.find('/');
    if (slash == std::string::npos) {
      if (n == name) return true;
      continue;
    }
    in_addr net{};
    char* end = nullptr;
    const long bits = std::strtol(n.c_str() + slash + 1, &end, 10);
    if (inet_pton(AF_INET, n.substr(0, slash).c_str(), &net) != 1 || *end != '\0' || bits < 0 || bits > 32) continue;
    const std::uint32_t mask = bits == 0 ? 0U : ~std::uint32_t{0} << (32 - bits);
    if ((ntohl(address) & mask) == (ntohl(net.s_addr) & mask)) return true;
  }
  return false;
}

// The IPv4 addresses heartbeats for this rank may arrive on: those of this host's interfaces that
// are up and not loopback (only those on Open MPI's networks when it was given some and they
// match here), at most 8; loopback only when there is nothing else (one machine).
std::vector<std::uint32_t> local_addresses() {
  const std::vector<std::string> networks = mpi_networks();
  std::vector<std::uint32_t> chosen;
  std::vector<std::uint32_t> outside;
  std::vector<std::uint32_t> loopback;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return {};
  for (const ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET || (i->ifa_flags & IFF_UP) == 0) continue;
    sockaddr_in sin{};
    std::memcpy(&sin, i->ifa_addr, sizeof sin);
    if ((i->ifa_flags & IFF_LOOPBACK) != 0) {
      loopback.push_back(sin.sin_addr.s_addr);
      continue;
    }
    outside.push_back(sin.sin_addr.s_addr);
    if (in_networks(networks, i->ifa_name, sin.sin_addr.s_addr)) chosen.push_back(sin.sin_addr.s_addr);
  }
  freeifaddrs(list);
  // A network setting that matches nothing here must not silence a healthy host: all of them then.
  if (chosen.empty()) chosen = outside;
  if (chosen.empty()) chosen = loopback;
  outside = chosen;
  if (outside.size() > static_cast<std::size_t>(kMaxAddresses)) outside.resize(kMaxAddresses);
  return outside;
}

// True when every non-loopback interface carrying one of `addresses` has lost its link (down or
// no carrier) and there was at least one: this host is the one cut off.
bool own_links_down(const std::vector<std::uint32_t>& addresses) {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return false;
  int carrying = 0;
  int running = 0;
  for (const ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET || (i->ifa_flags & IFF_LOOPBACK) != 0) continue;
    sockaddr_in sin{};
    std::memcpy(&sin, i->ifa_addr, sizeof sin);
    if (std::find(addresses.begin(), addresses.end(), sin.sin_addr.s_addr) == addresses.end()) continue;
    ++carrying;
    if ((i->ifa_flags & IFF_UP) != 0 && (i->ifa_flags & IFF_RUNNING) != 0) ++running;
  }
  freeifaddrs(list);
  return carrying > 0 && running == 0;
}

// "0-3,8" from sorted ranks.
std::string rank_list(const std::vector<int>& ranks) { return format_cpu_list(ranks); }

// Where heartbeats for the rank of `card` go: its addresses, less those this host has too (a
// docker0-like bridge on every host: a packet there would stay here), unless all of them are
// (ranks on one machine posing as hosts).
std::vector<std::uint32_t> peer_targets(const RankCard& card, const std::vector<std::uint32_t>& mine) {
  const auto n = static_cast<std::size_t>(std::min<int>(card.addresses, kMaxAddresses));
  std::vector<std::uint32_t> all(card.address.begin(), card.address.begin() + static_cast<std::ptrdiff_t>(n));
  std::vector<std::uint32_t> elsewhere;
  for (const std::uint32_t a : all) {
    if (std::find(mine.begin(), mine.end(), a) == mine.end()) elsewhere.push_back(a);
  }
  return elsewhere.empty() ? all : elsewhere;
}

}  // namespace

struct PeerWatchdog::State {
  int sock = -1;
  std::array<int, 2> wake{-1, -1};  // stop() writes to wake[1]
  std::atomic<bool> stopping{false};
  bool say_goodbye = true;
  PeerWatchdogOptions options;
  std::uint64_t token = 0;
  std::uint32_t my_host = 0;
  bool leader = false;
  std::vector<std::uint32_t> my_addresses;
  // Per other host: its name, its ranks, and where its node leader's heartbeats must arrive.
  struct Host {
    std::string name;
    std::vector<int> ranks;
    std::vector<sockaddr_in> targets;  // every address of every rank of that host
    Clock::time_point last_heard;
    bool watched = true;
  };
  std::map<std::uint32_t, Host> others;

  ~State() {
    for (const int fd : {sock, wake[0], wake[1]}) {
      if (fd >= 0) ::close(fd);
    }
  }
};

int peer_timeout_seconds_from_env() {
  const char* v = std::getenv(kPeerTimeoutVariable);
  if (v == nullptr || *v == '\0') return kDefaultPeerTimeoutSeconds;
  return static_cast<int>(parse_integer(kPeerTimeoutVariable, v, 0, kMaxTimeoutSeconds));
}

std::string silent_hosts_message(const SilentHosts& s) {
  std::string who;
  for (std::size_t i = 0; i < s.names.size(); ++i) {
    who += fmt::format("{}{} (ranks {})", i == 0 ? "" : ", ", s.names[i], s.ranks[i]);
  }
  std::string line = fmt::format("{} {} sent nothing for {} s; ending the run", s.names.size() == 1 ? "host" : "hosts",
                                 who, s.silent_seconds);
  if (s.own_link_down) line += fmt::format(" (the network link of this host, {}, is down)", host_name());
  return line;
}

void end_run_for_silent_hosts(const SilentHosts& s) {
  if (s.node_leader) {
    std::fflush(stdout);
    std::fprintf(stderr, "scalebench: error: %s\n", silent_hosts_message(s).c_str());
    std::fflush(stderr);
  }
  std::_Exit(static_cast<int>(ExitCode::timeout));
}

void start_peer_watchdog(PeerWatchdog& watchdog, const Communicator& comm, int timeout_seconds) {
  if (comm.one_node()) return;
  std::int64_t seconds = timeout_seconds;
  bcast(&seconds, 1, 0, comm);
  PeerWatchdogOptions options;
  options.timeout_s = static_cast<double>(seconds);
  watchdog.start(comm, comm.node(), std::move(options));
}

PeerWatchdog::PeerWatchdog() = default;
PeerWatchdog::~PeerWatchdog() { stop(); }

void PeerWatchdog::start(const Communicator& comm, const Communicator& host, PeerWatchdogOptions options) {
  stop();
  hosts_ = 1;
  // Every rank in `host`: the same answer everywhere, and no collective to find it.
  if (host.size() == comm.size() || options.timeout_s <= 0) return;
  const bool leader = host.rank() == 0;
  hosts_ = static_cast<int>(comm.sum(static_cast<std::int64_t>(leader ? 1 : 0)));

  auto st = std::make_unique<State>();
  st->options = std::move(options);
  st->options.period_s = std::min(st->options.period_s, st->options.timeout_s / 4);
  st->leader = leader;
  std::int64_t leader_rank = comm.rank();
  bcast(&leader_rank, 1, 0, host);
  st->my_host = static_cast<std::uint32_t>(leader_rank);
  std::uint64_t token = 0;
  if (comm.is_root()) token = (std::uint64_t{std::random_device{}()} << 32U) ^ std::random_device{}();
  bcast(&token, 1, 0, comm);
  st->token = token;

  RankCard mine{};
  agree(comm, [&] {
    st->sock = ::socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (st->sock < 0 || ::pipe2(st->wake.data(), O_NONBLOCK | O_CLOEXEC) != 0) {
      throw RuntimeLibraryError(
          fmt::format("peer watchdog: cannot open a UDP socket on {}: {} (set {}=0 to run without it)", host_name(),
                      std::strerror(errno), kPeerTimeoutVariable));
    }
    sockaddr_in any{};
    any.sin_family = AF_INET;
    any.sin_addr.s_addr = htonl(INADDR_ANY);
    socklen_t len = sizeof any;
    if (::bind(st->sock, reinterpret_cast<const sockaddr*>(&any), sizeof any) != 0 ||
        ::getsockname(st->sock, reinterpret_cast<sockaddr*>(&any), &len) != 0) {
      throw RuntimeLibraryError(
          fmt::format("peer watchdog: cannot bind a UDP port on {}: {} (set {}=0 to run without it)", host_name(),
                      std::strerror(errno), kPeerTimeoutVariable));
    }
    st->my_addresses = local_addresses();
    mine.host = st->my_host;
    mine.port = any.sin_port;
    mine.addresses = static_cast<std::uint16_t>(st->my_addresses.size());
    std::copy(st->my_addresses.begin(), st->my_addresses.end(), mine.address.begin());
    const std::string name = host_name();
    std::snprintf(mine.name.data(), mine.name.size(), "%s", name.c_str());
  });

  std::vector<RankCard> cards(static_cast<std::size_t>(comm.size()));
  SCALEBENCH_MPI(MPI_Allgather(&mine, sizeof mine, MPI_BYTE, cards.data(), sizeof mine, MPI_BYTE, comm.get()));

  const auto now = Clock::now();
  for (int r = 0; r < comm.size(); ++r) {
    const RankCard& c = cards[static_cast<std::size_t>(r)];
    if (c.host == st->my_host) continue;
    State::Host& h = st->others[c.host];
    if (h.ranks.empty()) h.name = std::string(c.name.data(), strnlen(c.name.data(), c.name.size()));
    h.ranks.push_back(r);
    h.last_heard = now;
    for (const std::uint32_t address : peer_targets(c, st->my_addresses)) {
      sockaddr_in to{};
      to.sin_family = AF_INET;
      to.sin_port = c.port;
      to.sin_addr.s_addr = address;
      h.targets.push_back(to);
    }
  }
  state_ = std::move(st);
  thread_ = std::thread([this] { run(); });
}

void PeerWatchdog::stop(bool say_goodbye) {
  if (!state_) return;
  if (thread_.joinable()) {
    state_->say_goodbye = say_goodbye;
    state_->stopping.store(true);
    const char byte = 1;
    (void)!::write(state_->wake[1], &byte, 1);
    thread_.join();
  }
  state_.reset();
}

// The watchdog thread: waits for packets or the next heartbeat, never longer than a period; a
// node leader sends its heartbeats; every rank checks the other hosts against the timeout.
void PeerWatchdog::run() {
  State& st = *state_;
  const auto period = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(st.options.period_s));
  const auto timeout = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(st.options.timeout_s));
  std::uint32_t seq = 0;
  auto send_all = [&](std::uint32_t kind) {
    const Packet p{kMagic, kind, st.token, st.my_host, seq++};
    for (const auto& [index, h] : st.others) {
      for (const sockaddr_in& to : h.targets) {
        // Best effort: a full buffer or an unreachable address is what the peer's timeout is for.
        (void)::sendto(st.sock, &p, sizeof p, MSG_DONTWAIT, reinterpret_cast<const sockaddr*>(&to), sizeof to);
      }
    }
  };
  auto next_beat = Clock::now();
  auto last_turn = next_beat;
  while (!st.stopping.load()) {
    auto now = Clock::now();
    if (st.leader && now >= next_beat) {
      send_all(kBeat);
      next_beat = now + period;
    }
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(
        (st.leader ? std::min(next_beat - now, period) : period));
    std::array<pollfd, 2> fds{{{st.sock, POLLIN, 0}, {st.wake[0], POLLIN, 0}}};
    (void)::poll(fds.data(), fds.size(), static_cast<int>(std::max<std::int64_t>(1, wait.count())));
    if (st.stopping.load()) break;
    // This thread did not run for half a timeout (the job suspended, the machine stalled): what
    // it did not hear meanwhile says nothing about the peers, who get a full timeout again.
    const auto woke = Clock::now();
    if (woke - last_turn > timeout / 2) {
      for (auto& [index, h] : st.others) h.last_heard = woke;
    }
    last_turn = woke;
    Packet p{};
    while (::recv(st.sock, &p, sizeof p, MSG_DONTWAIT) == static_cast<ssize_t>(sizeof p)) {
      if (p.magic != kMagic || p.token != st.token) continue;
      const auto it = st.others.find(p.host);
      if (it == st.others.end()) continue;
      it->second.last_heard = Clock::now();
      if (p.kind == kLeaving) it->second.watched = false;
      received_.fetch_add(1);
    }
    // Judged at `woke`, after the check above: a stop between the two cannot count against peers.
    now = woke;
    SilentHosts silent;
    for (auto& [index, h] : st.others) {
      if (!h.watched || now - h.last_heard < timeout) continue;
      h.watched = false;
      silent.names.push_back(h.name);
      silent.ranks.push_back(rank_list(h.ranks));
    }
    if (!silent.names.empty()) {
      silent.silent_seconds = static_cast<int>(st.options.timeout_s);
      silent.own_link_down = own_links_down(st.my_addresses);
      silent.node_leader = st.leader;
      st.options.on_silent(silent);
    }
  }
  if (st.leader && st.say_goodbye) send_all(kLeaving);
}

}  // namespace scalebench
