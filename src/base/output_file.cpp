// Output files (--json, --csv, summaries): what a path names decides how it is written.
//  * a regular file, or a path that does not exist yet: written to a fresh file in the same
//    folder, then renamed over the path, so readers never see a partial file;
//  * a symbolic link: followed; its final target is treated as above (the link stays a link);
//  * a character device or a pipe (/dev/null, /dev/stdout, a FIFO): written in place;
//  * a folder or anything else: refused, before any work, with the reason.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>

#include <fmt/format.h>

#include "scalebench/base/error.hpp"
#include "scalebench/base/json_field.hpp"
#include "scalebench/base/output_file.hpp"

namespace scalebench {
namespace {

enum class TargetKind { create, regular, stream };

struct OutputTarget {
  std::string path;   // where the bytes go: the path with its symbolic links followed
  std::string shown;  // how messages name it
  TargetKind kind = TargetKind::create;
  mode_t mode = 0;  // a regular file's permissions, kept when it is replaced
};

std::string folder_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string name_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The path with every symbolic link followed (a dangling link gives the path it points to).
std::string follow_links(const std::string& path, const std::string& shown) {
  std::string p = path;
  for (int hops = 0; hops < 40; ++hops) {
    struct stat st {};
    if (lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return p;
    char buf[PATH_MAX];
    const ssize_t n = readlink(p.c_str(), buf, sizeof buf);
    if (n <= 0 || n == static_cast<ssize_t>(sizeof buf)) return p;
    const std::string target(buf, static_cast<std::size_t>(n));
    p = target.front() == '/' ? target : folder_of(p) + "/" + target;
  }
  throw ResourceError(fmt::format("cannot write {}: more than 40 symbolic links in a row; point it at a file", shown));
}

// A new file can be made in the folder of `path` (the atomic replace makes one there).
void check_folder_takes_file(const std::string& path, const std::string& shown) {
  const std::string dir = folder_of(path);
  struct stat st {};
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    throw ResourceError(
        fmt::format("cannot write {}: folder {} does not exist; create it or choose another path", shown, dir));
  }
  if (access(dir.c_str(), W_OK | X_OK) != 0) {
    throw ResourceError(fmt::format("cannot write {}: folder {} is not writable ({}); choose another path", shown, dir,
                                    std::strerror(errno)));
  }
  // The write makes a file beside the target and renames it: try making one now, so that a folder
  // that takes none (/proc, /sys, a read-only mount, which access() calls writable for root) is
  // refused before the work, not after it.
  std::string probe = dir + "/.scalebench-XXXXXX";
  const int fd = mkstemp(probe.data());
  if (fd < 0) {
    throw ResourceError(fmt::format("cannot write {}: folder {} takes no new file ({}); choose another path", shown,
                                    dir, std::strerror(errno)));
  }
  close(fd);
  unlink(probe.c_str());
  const long name_max = pathconf(dir.c_str(), _PC_NAME_MAX);
  const std::string name = name_of(path);
  if (name_max > 0 && static_cast<long>(name.size()) > name_max) {
    throw ResourceError(fmt::format("cannot write {}: its file name is {} characters, the file system of {} allows {}; "
                                    "use a shorter name",
                                    shown, name.size(), dir, name_max));
  }
}

OutputTarget classify(const std::string& path, std::string_view option) {
  if (path.empty()) throw UsageError(fmt::format("{} needs a file name (got an empty string)", option));
  OutputTarget t;
  t.shown = fmt::format("{} {}", option, path);
  if (path.size() >= PATH_MAX) {
    throw ResourceError(
        fmt::format("cannot write {}: the path is {} characters, the limit is {}", t.shown, path.size(), PATH_MAX - 1));
  }
  if (path.back() == '/') throw ResourceError(fmt::format("{} names a folder; give a file name", t.shown));
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    // Nothing there yet, or a dangling link: the file is made where the links lead.
    const int err = errno;
    if (err != ENOENT && err != ENAMETOOLONG) {
      throw ResourceError(fmt::format("cannot write {}: {}", t.shown, std::strerror(err)));
    }
    t.path = follow_links(path, t.shown);
    if (t.path != path) t.shown = fmt::format("{} (a link to {})", t.shown, t.path);
    check_folder_takes_file(t.path, t.shown);  // says which name is too long
    if (err != ENOENT) throw ResourceError(fmt::format("cannot write {}: {}", t.shown, std::strerror(err)));
    return t;
  }
  if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
    // Opened through the path as given: the kernel follows links (/dev/stdout -> /proc/self/fd/1).
    if (access(path.c_str(), W_OK) != 0) {
      throw ResourceError(fmt::format("cannot write {}: {}", t.shown, std::strerror(errno)));
    }
    t.path = path;
    t.kind = TargetKind::stream;
    return t;
  }
  if (S_ISREG(st.st_mode)) {
    // Renamed over the file the links lead to, so that the links stay links.
    char real[PATH_MAX];
    t.path = realpath(path.c_str(), real) != nullptr ? std::string(real) : path;
    if (t.path != path) t.shown = fmt::format("{} (a link to {})", t.shown, t.path);
    t.kind = TargetKind::regular;
    t.mode = st.st_mode & 07777;
    check_folder_takes_file(t.path, t.shown);
    return t;
  }
  const char* what = S_ISDIR(st.st_mode) ? "a folder" : S_ISBLK(st.st_mode) ? "a block device" : "a socket";
  throw ResourceError(fmt::format("cannot write {}: it is {}; give a regular file (or a character device or pipe, "
                                  "written in place)",
                                  t.shown, what));
}

void write_all(int fd, const std::string& text, const OutputTarget& t) {
  for (std::size_t done = 0; done < text.size();) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw ResourceError(fmt::format("writing {} failed: {}", t.shown, std::strerror(errno)));
    done += static_cast<std::size_t>(n);
  }
}

// A device or pipe: no rename (that would replace the device node with a regular file).
void write_in_place(const OutputTarget& t, const std::string& text) {
  // Non-blocking open: a pipe nobody reads is an error, not a hang.
  const int fd = open(t.path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    throw ResourceError(errno == ENXIO ? fmt::format("cannot write {}: no process reads the pipe", t.shown)
                                       : fmt::format("cannot write {}: {}", t.shown, std::strerror(errno)));
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  try {
    write_all(fd, text, t);
  } catch (...) {
    close(fd);
    throw;
  }
  close(fd);
}

void replace_atomically(const OutputTarget& t, const std::string& text) {
  std::string tmp = folder_of(t.path) + "/.scalebench-XXXXXX";
  const int fd = mkstemp(tmp.data());
  if (fd < 0) throw ResourceError(fmt::format("cannot write {}: {}", t.shown, std::strerror(errno)));
  mode_t mode = t.mode;
  if (t.kind == TargetKind::create) {
    const mode_t mask = umask(0);
    umask(mask);
    mode = 0666 & ~mask;
  }
  try {
    fchmod(fd, mode);
    write_all(fd, text, t);
    if (fsync(fd) != 0) throw ResourceError(fmt::format("writing {} failed: {}", t.shown, std::strerror(errno)));
  } catch (...) {
    close(fd);
    unlink(tmp.c_str());
    throw;
  }
  close(fd);
  if (std::rename(tmp.c_str(), t.path.c_str()) != 0) {
    const int err = errno;
    unlink(tmp.c_str());
    throw ResourceError(fmt::format("cannot write {}: {}", t.shown, std::strerror(err)));
  }
}

}  // namespace

void check_output_path(const std::string& path, std::string_view option) { classify(path, option); }

void write_file_atomic(const std::string& path, const std::string& text) {
  const OutputTarget t = classify(path, "output file");
  if (t.kind == TargetKind::stream) {
    write_in_place(t, text);
  } else {
    replace_atomically(t, text);
  }
}

void write_json_atomic(const std::string& path, const nlohmann::json& j) {
  write_file_atomic(path, json_text(j, 2) + "\n");
}

namespace {

// What lstat finds at `path`, in words ("" when nothing is there).
std::string lstat_kind(const std::string& path, struct stat& st) {
  if (lstat(path.c_str(), &st) != 0) return "";
  if (S_ISLNK(st.st_mode)) {
    char buf[PATH_MAX];
    const ssize_t n = readlink(path.c_str(), buf, sizeof buf - 1);
    return n > 0 ? fmt::format("a symbolic link (to {})", std::string(buf, static_cast<std::size_t>(n)))
                 : std::string("a symbolic link");
  }
  if (S_ISREG(st.st_mode)) return "a regular file";
  if (S_ISDIR(st.st_mode)) return "a folder";
  if (S_ISFIFO(st.st_mode)) return "a FIFO";
  if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) return "a device";
  return "a socket";
}

}  // namespace

void check_results_folder(const std::string& dir, std::string_view option) {
  std::string bare = dir;  // "x/" names the link's target: lstat the link itself
  while (bare.size() > 1 && bare.back() == '/') bare.pop_back();
  struct stat st {};
  const std::string kind = lstat_kind(bare, st);
  if (kind.empty() || !S_ISLNK(st.st_mode)) return;  // missing, a folder, or what the callers' own checks refuse
  char real[PATH_MAX];
  const bool resolved = realpath(dir.c_str(), real) != nullptr;
  throw ResourceError(fmt::format("{} {} is {}; a results folder is written only where it is, never through a link: "
                                  "give {} itself",
                                  option, dir, kind, resolved ? std::string(real) : "the folder it names"));
}

void check_results_file(const std::string& path) {
  struct stat st {};
  const std::string dir = folder_of(path);
  const std::string dir_kind = lstat_kind(dir, st);
  if (dir_kind != "a folder") {
    throw ResourceError(fmt::format("cannot write {}: its folder {} is {}; results are written only in a real folder, "
                                    "never through a link",
                                    path, dir, dir_kind.empty() ? "missing" : dir_kind));
  }
  const std::string kind = lstat_kind(path, st);
  if (kind.empty() || S_ISREG(st.st_mode)) return;
  throw ResourceError(fmt::format("cannot write {}: it is {}; a results folder's files are written there, never "
                                  "through a link or into a device: remove it",
                                  path, kind));
}

void write_results_file(const std::string& path, const std::string& text) {
  check_results_file(path);
  OutputTarget t;
  t.path = path;
  t.shown = path;
  struct stat st {};
  if (lstat(path.c_str(), &st) == 0) {
    t.kind = TargetKind::regular;
    t.mode = st.st_mode & 07777;
  }
  replace_atomically(t, text);
}

void write_results_json(const std::string& path, const nlohmann::json& j) {
  write_results_file(path, json_text(j, 2) + "\n");
}

}  // namespace scalebench
