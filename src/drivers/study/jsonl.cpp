#include "study/jsonl.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "scalebench/base/error.hpp"

namespace scalebench::study {
namespace {

// Closes the file when it goes (and so releases its lock).
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

bool ends_without_newline(int fd, off_t size) {
  char last = '\n';
  return size > 0 && ::pread(fd, &last, 1, size - 1) == 1 && last != '\n';
}

// Writes all of `text` at the end; false (errno set) on a failed or short write.
bool write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = ENOSPC;
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

void append_jsonl(const std::string& path, const nlohmann::json& line) {
  const Fd f{::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644)};
  if (f.fd < 0) {
    throw ResourceError(
        fmt::format("cannot append to {}: {}; check the folder is writable", path, std::strerror(errno)));
  }
  struct stat st {};
  if (::flock(f.fd, LOCK_EX) != 0 || ::fstat(f.fd, &st) != 0) {
    throw ResourceError(fmt::format("cannot lock {}: {}", path, std::strerror(errno)));
  }
  std::string text;
  if (ends_without_newline(f.fd, st.st_size)) text += '\n';  // close a line an earlier crash cut
  text += line.dump();
  text += '\n';
  if (!write_all(f.fd, text) || ::fsync(f.fd) != 0) {
    const int err = errno;
    const bool cut = ::ftruncate(f.fd, st.st_size) == 0;
    throw ResourceError(fmt::format("cannot append to {}: {}; {}; free space and run the study again (every run "
                                    "recorded before is kept)",
                                    path, std::strerror(err),
                                    cut ? "the file is as it was before this run" : "cutting it back failed too"));
  }
}

JsonlContents read_jsonl(const std::string& path) {
  JsonlContents out;
  std::ifstream in(path, std::ios::binary);
  if (!in) return out;
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  int number = 0;
  for (std::size_t start = 0; start < text.size();) {
    const std::size_t end = text.find('\n', start);
    const std::string line = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    start = end == std::string::npos ? text.size() : end + 1;
    ++number;
    if (line.empty()) continue;
    try {
      nlohmann::json j = nlohmann::json::parse(line);
      if (!j.is_object()) throw std::runtime_error("not an object");
      out.lines.push_back(std::move(j));
    } catch (const std::exception&) {
      out.unusable.push_back(number);
    }
  }
  return out;
}

}  // namespace scalebench::study
