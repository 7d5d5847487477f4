#include "results/jsonl.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "report/prediction_columns.hpp"
#include "results/files.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/base/input_file.hpp"
#include "scalebench/base/output_file.hpp"

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
  check_results_file(path);  // a link or a device in its place is refused, and so is a linked folder
  // O_NOFOLLOW: a link put there since is refused too (ELOOP), never appended through.
  const Fd f{::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644)};
  if (f.fd < 0) {
    throw ResourceError(fmt::format("cannot append to {}: {}", path,
                                    errno == ELOOP
                                        ? "it is a symbolic link; remove it (results are never written "
                                          "through a link)"
                                        : std::string(std::strerror(errno)) + "; check the folder is writable"));
  }
  struct stat st {};
  if (::flock(f.fd, LOCK_EX) != 0 || ::fstat(f.fd, &st) != 0) {
    throw ResourceError(fmt::format("cannot lock {}: {}", path, std::strerror(errno)));
  }
  if (!S_ISREG(st.st_mode)) throw ResourceError(fmt::format("cannot append to {}: it is not a regular file", path));
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

namespace {

// The summary's figures can be read from the record (its fields have their types).
bool readable_record(const nlohmann::json& record) {
  try {
    run_figures(record);
    predicted_figures(record);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

// A line a study can use: an object whose fields the summary reads have their types (a line that
// is JSON but of another shape, say written by hand or by another program, is not used).
bool usable_line(const nlohmann::json& j) {
  if (!j.is_object()) return false;
  const auto is = [&](const char* k, bool (nlohmann::json::*test)() const noexcept) {
    return !j.contains(k) || (j[k].*test)();
  };
  return j.contains("key") && j["key"].is_string() && j.contains("status") && j["status"].is_string() &&
         is("reason", &nlohmann::json::is_string) && is("record_path", &nlohmann::json::is_string) &&
         is("launch_failed", &nlohmann::json::is_boolean) &&
         (!j.contains("record") || j["record"].is_null() || (j["record"].is_object() && readable_record(j["record"])));
}

}  // namespace

JsonlContents read_jsonl(const std::string& path, const std::string& origin) {
  JsonlContents out;
  if (!check_input_file(path, origin)) return out;
  const std::string text = read_input_file(path, origin);
  int number = 0;
  for (std::size_t start = 0; start < text.size();) {
    const std::size_t end = text.find('\n', start);
    const std::string line = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    start = end == std::string::npos ? text.size() : end + 1;
    ++number;
    if (line.empty()) continue;
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (usable_line(j)) {
      out.lines.push_back(std::move(j));
    } else {
      out.unusable.push_back(number);
    }
  }
  return out;
}

}  // namespace scalebench::study
