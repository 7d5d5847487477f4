// Input files: the kind is checked on the opened descriptor (open never blocks: O_NONBLOCK, so a
// FIFO with no writer opens at once and is then refused by kind), the size before reading.
#include "scalebench/base/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "scalebench/base/error.hpp"

namespace scalebench {
namespace {

std::string kind_of(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a file";
}

std::string shown(std::string_view origin, const std::string& path) {
  return origin.empty() ? path : fmt::format("{} {}", origin, path);
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

// Opens without blocking and checks the kind; returns the descriptor and its size.
int open_checked(const std::string& path, std::string_view origin, off_t& size) {
  if (path.empty()) {
    throw UsageError(origin.empty() ? std::string("an input file name is empty")
                                    : fmt::format("{} is empty; give a file name", origin));
  }
  const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) throw ResourceError(fmt::format("cannot read {}: no such file", shown(origin, path)));
    throw ResourceError(fmt::format("cannot read {}: {}", shown(origin, path), std::strerror(err)));
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const std::string kind = kind_of(st.st_mode);
    close(fd);
    throw ResourceError(fmt::format("cannot read {}: it is {}, not a regular file", shown(origin, path), kind));
  }
  size = st.st_size;
  return fd;
}

}  // namespace

std::string path_kind(const std::string& path) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) return "";
  if (S_ISLNK(st.st_mode) && stat(path.c_str(), &st) != 0) return "a dangling symbolic link";
  return kind_of(st.st_mode);
}

bool check_input_file(const std::string& path, std::string_view origin) {
  if (!path.empty()) {
    struct stat st {};
    if (stat(path.c_str(), &st) != 0 && errno == ENOENT) return false;
  }
  off_t size = 0;
  const Fd fd(open_checked(path, origin, size));
  return true;
}

std::string read_input_file(const std::string& path, std::string_view origin, std::size_t max_bytes) {
  off_t size = 0;
  const Fd fd(open_checked(path, origin, size));
  if (size > 0 && static_cast<std::size_t>(size) > max_bytes) {
    throw ResourceError(fmt::format("cannot read {}: it holds {} bytes, more than the {} bytes such a file may hold",
                                    shown(origin, path), size, max_bytes));
  }
  // A regular file never blocks; the read still stops at the limit (files that grow, /proc).
  std::string text;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw ResourceError(fmt::format("reading {} failed: {}", shown(origin, path), std::strerror(errno)));
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > max_bytes) {
      throw ResourceError(fmt::format("cannot read {}: it holds more than the {} bytes such a file may hold",
                                      shown(origin, path), max_bytes));
    }
  }
  return text;
}

}  // namespace scalebench
