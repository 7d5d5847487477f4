// A driver's results folder: what it holds, its lock, the kinds of the paths in it.
#include "results/results_dir.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "scalebench/base/error.hpp"
#include "scalebench/base/host.hpp"
#include "scalebench/base/input_file.hpp"
#include "scalebench/base/output_file.hpp"
#include "scalebench/drivers/process.hpp"

namespace scalebench::results {
namespace {

const char* name_of(DriverKind k) { return k == DriverKind::study ? "study" : "contrast"; }

// What a folder holds: the driver whose results are there ("" when none), the entries that say so
// and the entries that belong to no driver.
struct FolderContents {
  std::string driver;
  std::vector<std::string> evidence, foreign;
};

// The driver named in a lock file's first line ("" when none can be read).
nlohmann::json lock_holder(int fd) {
  char buf[1024];
  const ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
  if (n <= 0) return nullptr;
  const std::string text(buf, static_cast<std::size_t>(n));
  const nlohmann::json j = nlohmann::json::parse(text.substr(0, text.find('\n')), nullptr, false);
  return j.is_object() ? j : nlohmann::json();
}

std::string driver_in_lock_file(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return "";
  struct stat st {};
  nlohmann::json j;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) j = lock_holder(fd);
  close(fd);
  return j.is_object() && j.contains("driver") && j["driver"].is_string() ? j["driver"].get<std::string>() : "";
}

FolderContents contents_of(const std::string& dir) {
  FolderContents c;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return c;
  // runs/ alone says nothing (a contrast may be told --out-dir x/runs); a study's lock file does.
  static const std::set<std::string> study_names = {"runs.jsonl", "summary.json", "summary.csv", "summary.md"};
  static const std::set<std::string> contrast_names = {"contrast.json", "contrast.csv", "contrast-plan.json"};
  bool study = false, contrast = false;
  std::vector<std::string> study_evidence, contrast_evidence;
  for (const dirent* e = readdir(d); e != nullptr; e = readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    if (name == kLockFileName) {
      const std::string holder = driver_in_lock_file(dir + "/" + name);
      if (holder == "study") study = true;
      if (holder == "contrast") contrast = true;
      continue;
    }
    // A report and the temporary files of an interrupted atomic write belong to either driver.
    if (name == "report.html" || name.rfind(".scalebench-", 0) == 0) continue;
    if (study_names.count(name) != 0) {
      study_evidence.push_back(name);
    } else if (contrast_names.count(name) != 0) {
      contrast_evidence.push_back(name);
    } else {
      c.foreign.push_back(name);
    }
  }
  closedir(d);
  std::sort(c.foreign.begin(), c.foreign.end());
  if (!contrast_evidence.empty() || (contrast && study_evidence.empty())) {
    c.driver = "contrast";
    c.evidence = contrast_evidence;
  } else if (!study_evidence.empty() || study) {
    c.driver = "study";
    c.evidence = study_evidence;
  }
  return c;
}

std::string listed(std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < 3; ++i) out += (i > 0 ? ", " : "") + names[i];
  if (names.size() > 3) out += fmt::format(" and {} more", names.size() - 3);
  return out;
}

void refuse_if_not_ours(const std::string& dir, DriverKind kind, const std::string& option) {
  const FolderContents c = contents_of(dir);
  const std::string mine = name_of(kind);
  if (!c.driver.empty() && c.driver != mine) {
    throw ResourceError(fmt::format("{} {} holds a {}'s results ({}); a {} never writes into another driver's folder: "
                                    "choose another {}",
                                    option, dir, c.driver, c.evidence.empty() ? kLockFileName : listed(c.evidence),
                                    mine, option));
  }
  if (c.driver.empty() && !c.foreign.empty()) {
    throw ResourceError(fmt::format("{} {} is not empty and holds no {} results (it holds {}); choose a new or empty "
                                    "folder, or the {}'s own",
                                    option, dir, mine, listed(c.foreign), mine));
  }
}

}  // namespace

void check_folder_is_ours(const std::string& dir, DriverKind kind, const std::string& option) {
  struct stat st {};
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return;  // new: check_output_dir says the rest
  refuse_if_not_ours(dir, kind, option);
}

void check_not_in_results_folder(const std::string& path, const std::string& option, const std::string& own_dir) {
  const auto slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  struct stat st {
  }, own{};
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return;  // check_output_file says why
  if (stat(own_dir.c_str(), &own) == 0 && own.st_dev == st.st_dev && own.st_ino == st.st_ino) return;
  const FolderContents c = contents_of(dir);
  if (c.driver.empty()) return;
  throw ResourceError(fmt::format("cannot write {} {}: folder {} holds a {}'s results ({}); a driver never writes "
                                  "into another driver's folder: choose another path",
                                  option, path, dir, c.driver,
                                  c.evidence.empty() ? kLockFileName : listed(c.evidence)));
}

FolderLock::FolderLock(const std::string& dir, DriverKind kind, const std::string& option) {
  const std::string path = dir + "/" + kLockFileName;
  fd_ = open(path.c_str(), O_RDWR | O_CREAT | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd_ < 0) {
    const int err = errno;
    const std::string what = path_kind(path);
    throw ResourceError(fmt::format("cannot lock {} {}: {}{}: {}; remove it or choose another {}", option, dir, path,
                                    what.empty() ? "" : " (" + what + ")", std::strerror(err), option));
  }
  struct stat st {};
  if (fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd_);
    fd_ = -1;
    throw ResourceError(
        fmt::format("cannot lock {} {}: {} is {}, not a regular file; remove it", option, dir, path, path_kind(path)));
  }
  if (flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    // The holder writes its name right after it takes the lock: wait a moment for it.
    nlohmann::json holder = lock_holder(fd_);
    for (int i = 0; i < 20 && !holder.is_object() && err == EWOULDBLOCK; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      holder = lock_holder(fd_);
    }
    close(fd_);
    fd_ = -1;
    if (err != EWOULDBLOCK) throw ResourceError(fmt::format("cannot lock {}: {}", path, std::strerror(err)));
    const auto field = [&](const char* k) {
      return holder.is_object() && holder.contains(k)
                 ? (holder[k].is_string() ? holder[k].get<std::string>() : holder[k].dump())
                 : std::string("unknown");
    };
    // A holder of this host that is gone: its watchdog holds the lock while it stops its last run.
    const long holder_pid = std::atol(field("pid").c_str());
    const bool gone = field("host") == host_name() && holder_pid > 0 && kill(static_cast<pid_t>(holder_pid), 0) != 0 &&
                      errno == ESRCH;
    throw ResourceError(fmt::format("{} {} is in use by another scalebench {} (pid {} on host {}, since {}{}); one "
                                    "driver a folder: wait for it to end or choose another {}",
                                    option, dir, field("driver") == "unknown" ? "driver" : field("driver"),
                                    field("pid"), field("host"), field("started_at"),
                                    gone ? "; it has ended and its last run is being stopped" : "", option));
  }
  try {
    refuse_if_not_ours(dir, kind, option);  // again, now that no other driver can change it
  } catch (...) {
    close(fd_);
    fd_ = -1;
    throw;
  }
  const std::string line = nlohmann::json{{"driver", name_of(kind)},
                                          {"pid", static_cast<long>(getpid())},
                                          {"host", host_name()},
                                          {"started_at", utc_now_iso8601()}}
                               .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
                           "\n";
  if (ftruncate(fd_, 0) != 0 || pwrite(fd_, line.data(), line.size(), 0) != static_cast<ssize_t>(line.size())) {
    const int err = errno;
    close(fd_);
    fd_ = -1;
    throw ResourceError(fmt::format("cannot write {}: {}", path, std::strerror(err)));
  }
  keep_in_watchdogs(fd_);  // a driver killed mid-step keeps the folder until its step is stopped
}

FolderLock::~FolderLock() {
  if (fd_ < 0) return;
  keep_in_watchdogs(-1);
  close(fd_);
}

void check_own_file(const std::string& path, const std::string& what) {
  struct stat st {};
  if (lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    char target[4096];
    const ssize_t n = readlink(path.c_str(), target, sizeof target - 1);
    throw ResourceError(fmt::format("cannot write {} {}: it is a symbolic link{}; a results folder's files are written "
                                    "there, never through a link: remove it or choose another --out-dir",
                                    what, path,
                                    n > 0 ? " (to " + std::string(target, static_cast<std::size_t>(n)) + ")" : ""));
  }
  const std::string kind = path_kind(path);
  if (!kind.empty() && kind != "a regular file") {
    throw ResourceError(fmt::format("cannot write {} {}: it is {}, not a regular file; remove it or choose another "
                                    "--out-dir",
                                    what, path, kind));
  }
  check_results_file(path);  // its folder a real folder, not a link
  check_output_path(path, what);
}

void check_own_folder(const std::string& path, const std::string& what) {
  struct stat st {};
  const bool link = lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
  const std::string kind = link ? "a symbolic link" : path_kind(path);
  if (!kind.empty() && kind != "a folder") {
    throw ResourceError(fmt::format("cannot use {} {}: it is {}, not a folder; results are written only in a real "
                                    "folder: remove it or choose another --out-dir",
                                    what, path, kind));
  }
}

std::string read_run_output(const std::string& path, const std::string& what) {
  try {
    if (!check_input_file(path, what)) return "";
    return read_input_file(path, what);
  } catch (const Error&) {
    return "";
  }
}

}  // namespace scalebench::results
