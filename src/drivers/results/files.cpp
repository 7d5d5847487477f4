#include "results/files.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include <fmt/format.h>

#include "report/figure_text.hpp"
#include "results/results_dir.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/base/host.hpp"
#include "scalebench/base/output_file.hpp"

namespace scalebench::results {

std::string self_binary() {
  char buf[4096] = {};
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "scalebench";
}

std::string utc_stamp() {
  std::string s = utc_now_iso8601();  // 2026-01-02T03:04:05Z
  s.erase(std::remove(s.begin(), s.end(), '-'), s.end());
  s.erase(std::remove(s.begin(), s.end(), ':'), s.end());
  return s;
}

void make_dirs(const std::string& path) {
  std::string cur;
  std::stringstream ss(path);
  std::string part;
  if (!path.empty() && path[0] == '/') cur.push_back('/');
  while (std::getline(ss, part, '/')) {
    if (part.empty()) continue;
    cur += part;
    cur += '/';
    if (mkdir(cur.c_str(), 0755) != 0 && errno != EEXIST) {
      throw ResourceError(fmt::format("cannot create folder {}: check permissions or choose --out-dir", cur));
    }
  }
}

RunFigures run_figures(const nlohmann::json& r) {
  const Workload* w = find_workload(r.value("subcommand", std::string()));
  return w == nullptr ? RunFigures{} : w->figures(r);
}

std::string last_error_line(const std::string& log_path) {
  std::string last;
  std::istringstream log(read_run_output(log_path, "run log"));
  for (std::string line; std::getline(log, line);) {
    if (line.find("scalebench: error") != std::string::npos) last = line;
  }
  return last;
}

namespace {

// The folder a path is in ("." for a bare name).
std::string parent_of(const std::string& path) {
  const auto slash = path.find_last_of('/', path.size() > 1 ? path.size() - 2 : 0);
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// ResourceError when a part of `path` is longer than the file system allows.
void check_name_lengths(const std::string& path, const std::string& option) {
  if (path.size() >= PATH_MAX) {
    throw ResourceError(fmt::format("{}: the path is {} characters, more than the {} allowed; choose a shorter one",
                                    option, path.size(), PATH_MAX - 1));
  }
  std::stringstream ss(path);
  for (std::string part; std::getline(ss, part, '/');) {
    if (part.size() > NAME_MAX) {
      throw ResourceError(fmt::format("{}: the name '{}…' is {} characters, more than the {} a file name may have; "
                                      "choose a shorter one",
                                      option, part.substr(0, 24), part.size(), NAME_MAX));
    }
  }
}

// The nearest folder of `path` (itself included) that exists, and whether it is a folder.
std::string nearest_existing(std::string path, bool& is_dir) {
  struct stat st {};
  while (stat(path.c_str(), &st) != 0) path = parent_of(path);
  is_dir = S_ISDIR(st.st_mode);
  return path;
}

}  // namespace

void check_output_file(const std::string& path, const std::string& option) {
  const std::string named = fmt::format("{} {}", option, path);
  if (path.empty()) throw ResourceError(fmt::format("{} needs a file name", option));
  check_name_lengths(path, named);
  struct stat st {};
  if (path.back() == '/' || (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))) {
    throw ResourceError(fmt::format("{} is a folder; give a file name, e.g. {}/contrast.json", named,
                                    path.back() == '/' ? path.substr(0, path.size() - 1) : path));
  }
  // The folder must exist: only --out-dir is created.
  const std::string dir = parent_of(path);
  if (stat(dir.c_str(), &st) != 0) {
    throw ResourceError(fmt::format("{}: folder {} does not exist; create it or choose another path", named, dir));
  }
  check_output_dir(dir, named + ": its folder");
}

void check_output_dir(const std::string& path, const std::string& option) {
  check_name_lengths(path, option);
  bool is_dir = false;
  const std::string existing = nearest_existing(path, is_dir);
  if (!is_dir) {
    throw ResourceError(fmt::format("{} {}: {} is a file, not a folder; choose another path", option, path, existing));
  }
  if (access(existing.c_str(), W_OK | X_OK) != 0) {
    throw ResourceError(fmt::format("{} {}: folder {} is not writable; choose another path", option, path, existing));
  }
}

void prepare_step_files(const std::string& record_path, const std::string& log_path) {
  for (const std::string* path : {&record_path, &log_path}) {
    if (path->empty()) continue;
    check_results_file(*path);
    struct stat st {};
    if (lstat(path->c_str(), &st) == 0 && std::remove(path->c_str()) != 0) {
      throw ResourceError(fmt::format("cannot replace {} (a stopped run's leftover): {}", *path, std::strerror(errno)));
    }
  }
}

std::string unnamed_stem(const std::string& stem, const std::vector<nlohmann::json>& lines) {
  // By file name: a line names a file of this folder, whichever path the folder was given by.
  const auto base = [](const std::string& p) { return p.substr(p.find_last_of('/') + 1); };
  const auto named = [&](const std::string& s) {
    for (const auto& l : lines) {
      for (const char* field : {"record_path", "log_path"}) {
        const auto it = l.find(field);
        if (it == l.end() || !it->is_string()) continue;
        const std::string name = base(it->get<std::string>());
        if (name == base(s) + ".json" || name == base(s) + ".log") return true;
      }
    }
    return false;
  };
  std::string out = stem;
  for (int attempt = 2; named(out); ++attempt) out = fmt::format("{}-{}", stem, attempt);
  return out;
}

std::string human_rate(double v, const std::string& unit) {
  if (unit == "samples/s") {
    if (v >= 1e12) return report::fixed_text(v / 1e12, 2) + " T/s";
    if (v >= 1e9) return report::fixed_text(v / 1e9, 2) + " G/s";
    return report::fixed_text(v / 1e6, 1) + " M/s";
  }
  return report::fixed_text(v, 1) + " GFLOP/s";
}

std::string csv_escape(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

void allow_mpirun_as_root() {
  if (getuid() == 0 && !std::getenv("OMPI_ALLOW_RUN_AS_ROOT")) {
    setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
    setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  }
}

}  // namespace scalebench::results
