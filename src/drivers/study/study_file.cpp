// A study file (jobs/*.yaml, docs/studies.md) read and checked: every key, value and count, with
// the file and line of anything wrong.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <string_view>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "scalebench/base/error.hpp"
#include "scalebench/base/input_file.hpp"
#include "scalebench/drivers/launch.hpp"
#include "scalebench/drivers/study.hpp"
#include "scalebench/workloads/workload.hpp"
#include "study/study_keys.hpp"
#include "study/yaml_keys.hpp"

namespace scalebench {
namespace {

using study::parse_count;
using study::placement_key;

constexpr const char* kKeys =
    "study, description, workload, args, sweep, baseline, mpirun_args, srun_args, hosts, hostfile, timeout_s";
const std::set<std::string> kKeySet = {"study",       "description", "workload", "args",     "sweep",    "baseline",
                                       "mpirun_args", "srun_args",   "hosts",    "hostfile", "timeout_s"};
// Early, cheap limits: a study file is a page of YAML, a sweep a few hundred runs at most in practice.
constexpr std::size_t kMaxStudyFileBytes = std::size_t{1} << 20;
constexpr std::size_t kMaxRuns = 10'000;

[[noreturn]] void bad(const std::string& file, const YAML::Node& at, const std::string& what) {
  const auto mark = at.Mark();
  if (mark.line >= 0) throw UsageError(fmt::format("{}:{}: {}", file, mark.line + 1, what));
  throw UsageError(fmt::format("{}: {}", file, what));
}

std::string scalar(const std::string& file, const YAML::Node& n, const std::string& what) {
  if (!n.IsScalar()) bad(file, n, fmt::format("{} must be a single value", what));
  return n.Scalar();
}

// A value that must say something: an empty string is refused (it would be an option without its
// value, a host or file without a name).
std::string nonempty_scalar(const std::string& file, const YAML::Node& n, const std::string& what) {
  std::string v = scalar(file, n, what);
  if (v.empty()) bad(file, n, fmt::format("{} is empty; give a value", what));
  return v;
}

std::vector<std::string> scalar_list(const std::string& file, const YAML::Node& n, const std::string& what) {
  if (!n.IsSequence()) bad(file, n, fmt::format("{} must be a list, e.g. [1, 2, 4]", what));
  std::vector<std::string> out;
  for (const auto& item : n) out.push_back(nonempty_scalar(file, item, fmt::format("a value of {}", what)));
  return out;
}

// A swept value as the run will read it: a whole number without its sign, digit separators and
// leading zeros ("01", "+1" and "1" are one run); any other value as written.
std::string run_value(const std::string& v) {
  const std::string_view digits = v.starts_with('+') ? std::string_view(v).substr(1) : std::string_view(v);
  if (digits.empty() || !std::all_of(digits.begin(), digits.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c)) != 0 || c == '_';
      })) {
    return v;
  }
  std::string out;
  for (const char c : digits) {
    if (c != '_' && !(out.empty() && c == '0')) out += c;
  }
  return out.empty() ? "0" : out;
}

// Options the study sets itself on every run.
bool reserved_option(const std::string& name) { return name == "json" || name == "dry-run" || name == "quiet"; }

// An option key of args or sweep: a plain option name (no leading --, no =value), not reserved;
// or a placement key.
std::string option_key(const std::string& file, const YAML::Node& key, const char* section) {
  const std::string& k = key.Scalar();
  if (placement_key(k)) return k;
  const bool plain = !k.empty() && std::isalnum(static_cast<unsigned char>(k[0])) != 0 &&
                     std::all_of(k.begin(), k.end(), [](unsigned char c) { return std::isalnum(c) != 0 || c == '-'; });
  if (!plain) {
    bad(file, key,
        fmt::format("{} key '{}' is not an option name: write it without leading '--' and without "
                    "'=value', e.g. `n: 4096`",
                    section, k));
  }
  if (reserved_option(k)) bad(file, key, fmt::format("'{}' is set by the study itself; remove it", k));
  return k;
}

bool valid_name(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) {
    return std::isalnum(c) != 0 || c == '-' || c == '_' || c == '.';
  }) && s[0] != '.';
}

// The study file as a YAML tree, after the cheap checks: a readable regular file of sane size, no
// unknown or repeated keys (found while streaming, before any tree is built).
YAML::Node load_yaml(const std::string& path) {
  std::string text;
  try {
    text = read_input_file(path, "study file", kMaxStudyFileBytes);
  } catch (const Error& e) {
    throw UsageError(e.what());  // the file named on the command line: the request's fault (exit 2)
  }
  // YAML is UTF-8 text, and every value of the file may end up in a record, a table or a page.
  if (const std::size_t at = bad_utf8_at(text); at != std::string::npos) {
    const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n');
    throw UsageError(fmt::format("{}:{}: byte {} is not UTF-8 text; save the study file as UTF-8", path, line, at));
  }
  try {
    std::istringstream in(text);
    study::check_yaml_keys(path, in, kKeySet);
    return YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw UsageError(fmt::format("{}:{}: not valid YAML: {}", path, e.mark.line + 1, e.msg));
  } catch (const YAML::Exception& e) {
    throw UsageError(fmt::format("cannot read study file {}: {}", path, e.what()));
  }
}

// The number of runs the sweep expands to; UsageError past kMaxRuns (counted without overflow).
void check_run_count(const StudySpec& s) {
  std::size_t runs = 1;
  for (const auto& [k, vs] : s.sweep) {
    if (runs * vs.size() > kMaxRuns) {  // no overflow: runs <= kMaxRuns, a list <= the file's size
      double total = 1;
      for (const auto& [k2, vs2] : s.sweep) total *= static_cast<double>(vs2.size());
      throw UsageError(fmt::format("{}: the sweep expands to {:.0f} runs; a study may have at most {}: split it into "
                                   "several studies or sweep fewer values",
                                   s.file, total, kMaxRuns));
    }
    runs *= vs.size();
  }
}

// baseline: {key: value, …}: each key swept, each value one of its swept values.
std::vector<std::pair<std::string, std::string>> load_baseline(
    const std::string& file, const YAML::Node& node,
    const std::vector<std::pair<std::string, std::vector<std::string>>>& sweep) {
  if (!node.IsMap() || node.size() == 0) {
    bad(file, node, "baseline must be a map of swept keys to the baseline's values, e.g. {backend: openblas}");
  }
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& kv : node) {
    const std::string k = kv.first.Scalar();
    const std::string v = nonempty_scalar(file, kv.second, fmt::format("baseline.{}", k));
    const auto swept = std::find_if(sweep.begin(), sweep.end(), [&](const auto& e) { return e.first == k; });
    if (swept == sweep.end()) {
      bad(file, kv.first,
          fmt::format("baseline key '{}' is not swept: name a key of sweep (the runs differ in it)", k));
    }
    if (std::find(swept->second.begin(), swept->second.end(), v) == swept->second.end()) {
      bad(file, kv.second, fmt::format("baseline {}={} is not one of the swept values of {}", k, v, k));
    }
    out.emplace_back(k, v);
  }
  return out;
}

// args and sweep: option keys (or placement keys), none in both, no swept value twice.
void load_options(const std::string& path, const YAML::Node& root, StudySpec& s) {
  std::set<std::string> seen;
  if (const auto args = root["args"]) {
    if (!args.IsMap()) bad(path, args, "args must be a map of options, e.g. {n: 4096, backend: openblas}");
    for (const auto& kv : args) {
      const std::string k = option_key(path, kv.first, "args");
      s.args.emplace_back(k, nonempty_scalar(path, kv.second, fmt::format("args.{}", k)));
      seen.insert(k);
    }
  }
  if (const auto sweep = root["sweep"]) {
    if (!sweep.IsMap()) bad(path, sweep, "sweep must be a map of lists, e.g. {ranks: [1, 2, 4]}");
    for (const auto& kv : sweep) {
      const std::string k = option_key(path, kv.first, "sweep");
      if (seen.count(k) != 0) bad(path, kv.first, fmt::format("'{}' is both in args and in sweep; keep one", k));
      auto values = scalar_list(path, kv.second, fmt::format("sweep.{}", k));
      if (values.empty()) bad(path, kv.second, fmt::format("sweep.{} is empty", k));
      // A value twice would plan the same run twice: two records for one run, timed against each other.
      std::map<std::string, std::string> listed;  // the value as the run reads it -> as written
      for (const auto& v : values) {
        if (const auto [it, fresh] = listed.emplace(run_value(v), v); !fresh) {
          bad(path, kv.second,
              it->second == v
                  ? fmt::format("sweep.{} lists {} twice; list each value once", k, v)
                  : fmt::format("sweep.{} lists {} and {}, the same value; list each value once", k, it->second, v));
        }
      }
      s.sweep.emplace_back(k, std::move(values));
      seen.insert(k);
    }
  }
}

// hosts (a list or "a,b:4") and hostfile, not both.
void load_hosts(const std::string& path, const YAML::Node& root, StudySpec& s) {
  if (const auto h = root["hosts"]) {
    s.hosts = h.IsSequence() ? [&] {
      std::string joined;
      for (const auto& name : scalar_list(path, h, "hosts")) joined += (joined.empty() ? "" : ",") + name;
      return joined;
    }() : nonempty_scalar(path, h, "hosts");
    if (s.hosts.empty()) bad(path, h, "hosts is empty; name at least one host, or leave the key out");
    try {
      parse_hosts(s.hosts);
    } catch (const UsageError& e) {
      bad(path, h, e.what());
    }
  }
  if (const auto h = root["hostfile"]) s.hostfile = nonempty_scalar(path, h, "hostfile");
  if (!s.hosts.empty() && !s.hostfile.empty()) {
    throw UsageError(fmt::format("{}: give hosts or hostfile, not both", path));
  }
}

double load_timeout(const std::string& path, const YAML::Node& t) {
  const std::string v = scalar(path, t, "timeout_s");
  char* end = nullptr;
  const double seconds = std::strtod(v.c_str(), &end);
  if (end == v.c_str() || *end != '\0' || !(seconds > 0)) bad(path, t, "timeout_s must be a number of seconds > 0");
  return seconds;
}

}  // namespace

StudySpec load_study(const std::string& path) {
  const YAML::Node root = load_yaml(path);
  StudySpec s;
  s.file = path;
  if (!root.IsMap()) {
    throw UsageError(fmt::format("{}: a study file is a map with the keys {}", path, kKeys));
  }
  if (!root["study"])
    throw UsageError(fmt::format("{}: 'study: <name>' is missing (results go to results/<name>)", path));
  s.name = scalar(path, root["study"], "study");
  if (!valid_name(s.name)) {
    bad(path, root["study"],
        fmt::format("study name '{}' must be letters, digits, '-', '_' or '.' (it names a folder)", s.name));
  }
  if (root["description"]) s.description = scalar(path, root["description"], "description");
  if (!root["workload"]) {
    throw UsageError(fmt::format("{}: 'workload: <name>' is missing; use {}", path, workload_names()));
  }
  s.workload = scalar(path, root["workload"], "workload");
  if (find_workload(s.workload) == nullptr) {
    bad(path, root["workload"], fmt::format("unknown workload '{}'; use {}", s.workload, workload_names()));
  }
  load_options(path, root, s);
  if (const auto b = root["baseline"]) s.baseline = load_baseline(path, b, s.sweep);
  if (const auto a = root["mpirun_args"]) s.mpirun_args = scalar_list(path, a, "mpirun_args");
  if (const auto a = root["srun_args"]) s.srun_args = scalar_list(path, a, "srun_args");
  load_hosts(path, root, s);
  if (const auto t = root["timeout_s"]) s.timeout_s = load_timeout(path, t);
  // Rank and node counts are checked here, the workload's own options by the runs' --dry-run.
  for (const auto& [k, v] : s.args) {
    if (placement_key(k)) parse_count(path, k, v);
  }
  for (const auto& [k, vs] : s.sweep) {
    if (placement_key(k)) {
      for (const auto& v : vs) parse_count(path, k, v);
    }
  }
  check_run_count(s);
  return s;
}

}  // namespace scalebench
