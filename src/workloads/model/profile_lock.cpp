// One calibration a profile at a time (model.hpp, ProfileLock): an flock(2) on the profile's lock
// file, rank 0 polling it while the other ranks wait quietly.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "calibrate_steps.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/base/host.hpp"
#include "scalebench/mpi/mpi.hpp"
#include "scalebench/workloads/profile_lock.hpp"

namespace scalebench {
namespace {

// The holder's line in the lock file ("pid 123 on host a since t"), "" when none can be read.
std::string holder_of(int fd) {
  char buf[512];
  const ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return "";
  std::string text(buf, static_cast<std::size_t>(n));
  text = text.substr(0, text.find('\n'));
  for (char& c : text) {
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';  // a hostile lock file prints no control characters
  }
  return text;
}

// Opens the lock file and takes its lock, polling every 100 ms for at most `wait_s` seconds.
int take_lock(const std::string& path, double wait_s, bool quiet) {
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
  if (fd < 0) {
    throw ResourceError(fmt::format("cannot open the profile's lock file {}: {}{}", path, std::strerror(errno),
                                    errno == ELOOP ? " (it is a symbolic link; remove it)" : ""));
  }
  const auto start = std::chrono::steady_clock::now();
  bool said = false;
  while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const std::string holder = holder_of(fd);
    if (err != EWOULDBLOCK || waited >= wait_s) {
      close(fd);
      if (err != EWOULDBLOCK) throw ResourceError(fmt::format("cannot lock {}: {}", path, std::strerror(err)));
      throw ResourceError(fmt::format("another calibration ({}) has held {} for over {:.0f} s; wait for it to end, "
                                      "or calibrate into another file with --out",
                                      holder.empty() ? "unknown" : holder, path, wait_s));
    }
    // Said once, when the holder has written its line (it does right after taking the lock).
    if (!said && !quiet && (!holder.empty() || waited > 1.0)) {
      std::fprintf(stderr,
                   "calibrate: another calibration (%s) is writing this profile; waiting for it (%s, at most "
                   "%.0f s)\n",
                   holder.empty() ? "unknown" : holder.c_str(), path.c_str(), wait_s);
      said = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const std::string line = fmt::format("pid {} on host {} since {}\n", static_cast<long>(getpid()), host_name(),
                                       utc_now_iso8601());
  // Unwritten, the lock is held all the same; only a waiting calibration's message is the poorer.
  [[maybe_unused]] const bool written = ftruncate(fd, 0) == 0 &&
                                        pwrite(fd, line.data(), line.size(), 0) == static_cast<ssize_t>(line.size());
  return fd;
}

}  // namespace

ProfileLock::ProfileLock(const Communicator& comm, const std::string& profile, bool quiet) {
  std::string error;
  struct stat st {};
  // A profile written in place (a device, a FIFO: output_file.hpp) is no file to guard.
  const bool in_place = comm.is_root() && stat(profile.c_str(), &st) == 0 && !S_ISREG(st.st_mode);
  if (comm.is_root() && !in_place) {
    try {
      fd_ = take_lock(profile + ".lock", kProfileLockWaitS, quiet);
    } catch (const ResourceError& e) {
      error = e.what();
    }
  }
  wait_quietly(comm);  // the others leave the cores to the calibration being waited for
  agree(comm, [&] {
    if (!error.empty()) throw ResourceError(error);
  });
}

ProfileLock::~ProfileLock() {
  if (fd_ >= 0) close(fd_);
}

}  // namespace scalebench
