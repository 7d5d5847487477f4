#include "scalebench/drivers/process.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "scalebench/mpi/timing.hpp"

extern char** environ;

namespace scalebench {
namespace {

// Seconds a stopped step may take to end after its signal before the rest of it is SIGKILLed.
constexpr double kStopGraceDriver = 5.0;
constexpr double kStopGraceWatchdog = 2.0;

volatile sig_atomic_t g_stop_signal = 0;
constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP};
struct sigaction g_saved[std::size(kStopSignals)];

void on_stop_signal(int sig) {
  if (g_stop_signal == 0) g_stop_signal = sig;
}

// --- The processes of a session, found through /proc. Everything here is async-signal-safe
// (no allocation, plain system calls): the watchdog uses it in a forked child.

// The state and session of process `pid_name` (digits); false when it is gone.
bool read_state(const char* pid_name, char& state, long& session) {
  char path[64] = "/proc/";
  std::size_t len = std::strlen(path);
  for (const char* c = pid_name; *c != '\0' && len < sizeof path - 6; ++c) path[len++] = *c;
  std::memcpy(path + len, "/stat", 6);
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[512];
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return false;
  buf[n] = '\0';
  // "pid (comm) state ppid pgrp session ...": comm may hold spaces and ')'.
  const char* p = std::strrchr(buf, ')');
  if (p == nullptr || p[1] == '\0') return false;
  state = p[2];
  p += 3;
  for (int field = 0; field < 2; ++field) {  // ppid, pgrp
    while (*p == ' ') ++p;
    while (*p != ' ' && *p != '\0') ++p;
  }
  session = std::strtol(p, nullptr, 10);
  return true;
}

// Sends `sig` (0: none, just count) to every live process of session `sid`; returns how many.
int signal_session(pid_t sid, int sig) {
  const int dir = ::open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return 0;
  alignas(dirent64) char buf[8192];
  int count = 0;
  for (ssize_t n; (n = getdents64(dir, buf, sizeof buf)) > 0;) {
    for (ssize_t off = 0; off < n;) {
      const auto* d = reinterpret_cast<const dirent64*>(buf + off);
      off += d->d_reclen;
      if (d->d_name[0] < '1' || d->d_name[0] > '9') continue;
      char state = 0;
      long session = 0;
      if (!read_state(d->d_name, state, session) || session != sid || state == 'Z') continue;
      ++count;
      if (sig != 0) ::kill(static_cast<pid_t>(std::strtol(d->d_name, nullptr, 10)), sig);
    }
  }
  ::close(dir);
  return count;
}

void sleep_ms(long ms) {
  timespec t{ms / 1000, (ms % 1000) * 1'000'000};
  while (::nanosleep(&t, &t) != 0 && errno == EINTR) {
  }
}

// --- The watchdog: a process of its own (own session, deaf to the stop signals) that waits on a
// pipe from the driver. A byte means the step ended; end of file without one means the driver
// died, and the watchdog stops the step's session: SIGTERM to the leader, then SIGKILL to all.

// The descriptor every watchdog keeps (keep_in_watchdogs), -1: none.
int g_watchdog_keeps = -1;

[[noreturn]] void watchdog_main(int read_fd, pid_t sid) {
  // Out of the way of the descriptors set up below; kept as 4 (the driver's folder lock).
  const int keep = g_watchdog_keeps >= 0 ? ::fcntl(g_watchdog_keeps, F_DUPFD_CLOEXEC, 100) : -1;
  ::setsid();
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  for (int s : kStopSignals) ::sigaction(s, &ignore, nullptr);
  const int null_fd = ::open("/dev/null", O_RDWR);
  for (int fd = 0; fd < 3; ++fd) ::dup2(null_fd, fd);
  ::dup2(read_fd, 3);
  if (keep >= 0) ::dup2(keep, 4);
  // The driver's other pipes (a caller reading its output) stay unheld.
  ::close_range(keep >= 0 ? 5 : 4, ~0U, 0);
  char c = 0;
  ssize_t n = 0;
  do {
    n = ::read(3, &c, 1);
  } while (n < 0 && errno == EINTR);
  if (n == 1) ::_exit(0);
  ::kill(sid, SIGTERM);
  for (int waited = 0; waited < kStopGraceWatchdog * 1000 && signal_session(sid, 0) > 0; waited += 50) sleep_ms(50);
  signal_session(sid, SIGKILL);
  ::_exit(0);
}

struct Watchdog {
  pid_t pid = -1;
  int fd = -1;  // write end; closing it without a byte fires the watchdog
};

}  // namespace

void keep_in_watchdogs(int fd) noexcept { g_watchdog_keeps = fd; }

namespace {

Watchdog start_watchdog(pid_t sid) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return {};
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[1]);
    watchdog_main(fds[0], sid);
  }
  ::close(fds[0]);
  if (pid < 0) {
    ::close(fds[1]);
    return {};
  }
  return {pid, fds[1]};
}

void end_watchdog(const Watchdog& w) {
  if (w.pid < 0) return;
  const char done = 'd';
  [[maybe_unused]] const ssize_t n = ::write(w.fd, &done, 1);
  ::close(w.fd);
  while (::waitpid(w.pid, nullptr, 0) < 0 && errno == EINTR) {
  }
}

pid_t spawn_session_leader(const std::vector<std::string>& argv, const std::string& log_path) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_path.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Default dispositions and no blocked signals in the step, whatever the driver set up.
  sigset_t none, stops;
  sigemptyset(&none);
  sigemptyset(&stops);
  for (int s : kStopSignals) sigaddset(&stops, s);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &stops);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, args[0], &actions, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  return rc == 0 ? pid : -1;
}

// Waits for the step; stops it at its time limit or on a stop signal. Returns its wait status.
int wait_step(pid_t pid, double t0, double timeout_s, StepOutcome& out) {
  int status = 0;
  int stopping = 0;  // the signal sent to the leader
  bool killed = false;
  double stop_time = 0;
  while (true) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid || (r < 0 && errno != EINTR)) break;
    const double now = wall_seconds();
    if (stopping == 0) {
      if (g_stop_signal != 0) {
        stopping = out.stopped_by = g_stop_signal;
      } else if (timeout_s > 0 && now - t0 > timeout_s) {
        stopping = SIGTERM;
        out.timed_out = true;
      }
      if (stopping != 0) {
        ::kill(pid, stopping);
        stop_time = now;
      }
    } else if (!killed && now - stop_time > kStopGraceDriver) {
      signal_session(pid, SIGKILL);
      killed = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return status;
}

}  // namespace

bool program_available(const std::string& program) {
  if (program.find('/') != std::string::npos) return access(program.c_str(), X_OK) == 0;
  const char* path = std::getenv("PATH");
  std::string p = path ? path : "/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= p.size()) {
    const std::size_t end = p.find(':', start);
    const std::string dir = p.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (!dir.empty() && access((dir + "/" + program).c_str(), X_OK) == 0) return true;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return false;
}

StepOutcome run_step(const std::vector<std::string>& argv, const std::string& log_path, double timeout_s) {
  StepOutcome out;
  if (argv.empty()) throw Error(ExitCode::internal, "run_step without a program");
  const double t0 = wall_seconds();
  const pid_t pid = program_available(argv[0]) ? spawn_session_leader(argv, log_path) : -1;
  if (pid < 0) {
    out.not_found = true;
    out.exit_code = 127;
    return out;
  }
  const Watchdog watchdog = start_watchdog(pid);
  const int status = wait_step(pid, t0, timeout_s, out);
  signal_session(pid, SIGKILL);  // what the leader left behind
  end_watchdog(watchdog);
  out.seconds = wall_seconds() - t0;
  if (out.timed_out) {
    out.exit_code = 124;
  } else if (WIFEXITED(status)) {
    out.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    out.exit_code = 128 + WTERMSIG(status);
  }
  return out;
}

StopSignals::StopSignals() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: a waiting driver wakes up
  for (std::size_t i = 0; i < std::size(kStopSignals); ++i) ::sigaction(kStopSignals[i], &sa, &g_saved[i]);
}

StopSignals::~StopSignals() {
  for (std::size_t i = 0; i < std::size(kStopSignals); ++i) ::sigaction(kStopSignals[i], &g_saved[i], nullptr);
}

int stop_signal() noexcept { return g_stop_signal; }

Stopped::Stopped(int signal, const std::string& what)
    : Error(static_cast<ExitCode>(128 + signal), what), signal_(signal) {}

void throw_if_stopped(const std::string& what) {
  const int sig = stop_signal();
  if (sig == 0) return;
  const char* name = sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" : "a signal";
  throw Stopped(sig, fmt::format("stopped by {} (exit code {}): {}", name, 128 + sig, what));
}

}  // namespace scalebench
