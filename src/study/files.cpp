#include "study/files.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "scalebench/error.hpp"
#include "scalebench/record.hpp"

namespace scalebench::study {

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

double number_at(const nlohmann::json& j, std::initializer_list<const char*> path) {
  const nlohmann::json* cur = &j;
  for (const char* p : path) {
    if (!cur->is_object() || !cur->contains(p)) return 0.0;
    cur = &(*cur)[p];
  }
  return cur->is_number() ? cur->get<double>() : 0.0;
}

double phase_median(const nlohmann::json& record, const char* phase) {
  return number_at(record, {"phases", phase, "median_s"});
}

RunFigures run_figures(const nlohmann::json& r) {
  RunFigures f;
  f.ranks = r.value("ranks", 0);
  f.threads = static_cast<int>(number_at(r, {"config", "threads_per_rank"}));
  const std::string backend = r.contains("config") ? r["config"].value("backend", std::string()) : std::string();
  f.gpu = backend == "cublas" || backend == "cuda";
  const double e2e = phase_median(r, "end_to_end");
  f.compute_s = phase_median(r, "compute");
  f.time_s = e2e > 0 ? e2e : f.compute_s;
  if (r.value("subcommand", std::string()) == "gemm") {
    f.rate = number_at(r, {"rates", "end_to_end_gflops"});
    f.compute_rate = number_at(r, {"rates", "compute_gflops"});
    f.rate_unit = "GFLOP/s";
    f.comm_s = phase_median(r, "scatter") + phase_median(r, "broadcast") + phase_median(r, "gather");
    f.transfer_s = phase_median(r, "h2d") + phase_median(r, "d2h");
  } else {
    f.compute_rate = number_at(r, {"rates", "samples_per_s"});
    f.rate = number_at(r, {"rates", "end_to_end_samples_per_s"});
    if (f.rate <= 0) f.rate = f.compute_rate;
    f.rate_unit = "samples/s";
    f.comm_s = phase_median(r, "reduce");
  }
  return f;
}

std::string last_error_line(const std::string& log_path) {
  std::string last;
  std::ifstream log(log_path);
  for (std::string line; std::getline(log, line);) {
    if (line.find("scalebench: error") != std::string::npos) last = line;
  }
  return last;
}

std::string first_line(const std::string& log_path) {
  std::ifstream log(log_path);
  for (std::string line; std::getline(log, line);) {
    if (line.find_first_not_of(" \t-*=") != std::string::npos) return line;
  }
  return "no output";
}

std::string human_rate(double v, const std::string& unit) {
  if (unit == "samples/s") {
    if (v >= 1e12) return fmt::format("{:.2f} T/s", v / 1e12);
    if (v >= 1e9) return fmt::format("{:.2f} G/s", v / 1e9);
    return fmt::format("{:.1f} M/s", v / 1e6);
  }
  return fmt::format("{:.1f} GFLOP/s", v);
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

}  // namespace scalebench::study
