#include "scalebench/study.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "scalebench/error.hpp"
#include "scalebench/placement.hpp"
#include "scalebench/process.hpp"
#include "scalebench/record.hpp"
#include "study/files.hpp"

namespace scalebench {
namespace {

using study::csv_escape;
using study::first_line;
using study::last_error_line;
using study::RunFigures;
using study::human_rate;

constexpr const char* kKeys = "study, description, workload, args, sweep, mpirun_args, srun_args, timeout_s";

[[noreturn]] void bad(const std::string& file, const YAML::Node& at, const std::string& what) {
  const auto mark = at.Mark();
  if (mark.line >= 0) throw UsageError(fmt::format("{}:{}: {}", file, mark.line + 1, what));
  throw UsageError(fmt::format("{}: {}", file, what));
}

std::string scalar(const std::string& file, const YAML::Node& n, const std::string& what) {
  if (!n.IsScalar()) bad(file, n, fmt::format("{} must be a single value", what));
  return n.Scalar();
}

std::vector<std::string> scalar_list(const std::string& file, const YAML::Node& n, const std::string& what) {
  if (!n.IsSequence()) bad(file, n, fmt::format("{} must be a list, e.g. [1, 2, 4]", what));
  std::vector<std::string> out;
  for (const auto& item : n) out.push_back(scalar(file, item, fmt::format("each value of {}", what)));
  return out;
}

// Options the study sets itself on every run.
bool reserved_option(const std::string& name) { return name == "json" || name == "dry-run" || name == "quiet"; }

bool valid_name(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) {
    return std::isalnum(c) != 0 || c == '-' || c == '_' || c == '.';
  }) && s[0] != '.';
}

int parse_ranks(const std::string& file, const std::string& v) {
  char* end = nullptr;
  const long r = std::strtol(v.c_str(), &end, 10);
  if (end == v.c_str() || *end != '\0' || r < 1 || r > 1'000'000) {
    throw UsageError(fmt::format("{}: ranks must be whole numbers >= 1 (got '{}')", file, v));
  }
  return static_cast<int>(r);
}

// One line appended to runs.jsonl, in one write, flushed to disk before the next run starts: a
// study killed at any point keeps every run that finished.
void append_line(const std::string& path, const nlohmann::json& line) {
  const std::string text = line.dump() + "\n";
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) throw ResourceError(fmt::format("cannot append to {}: check permissions", path));
  const ssize_t n = ::write(fd, text.data(), text.size());
  const bool ok = n == static_cast<ssize_t>(text.size()) && ::fsync(fd) == 0;
  ::close(fd);
  if (!ok) throw ResourceError(fmt::format("cannot append to {}: disk full?", path));
}

std::vector<nlohmann::json> read_lines(const std::string& path, int& unreadable) {
  std::vector<nlohmann::json> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    try {
      out.push_back(nlohmann::json::parse(line));
    } catch (const std::exception&) {
      ++unreadable;  // a line cut by a crash mid-write: left in place, not used
    }
  }
  return out;
}

// Where the summary goes and what it says of the launch.
struct SummaryPlace {
  std::string launcher, out_dir, jsonl;
};

// summary.json, .csv and .md from every line of runs.jsonl (for each planned run, its newest
// finished line, ok preferred); sets result.summary and result.exit_code; returns the table.
std::string write_summary(const StudySpec& spec, const std::vector<StudyRun>& runs,
                          const std::vector<nlohmann::json>& lines, const std::map<int, std::string>& cannot_run,
                          int unreadable, const SummaryPlace& where, StudyResult& result) {
  const std::string& launcher = where.launcher;
  const std::string& out_dir = where.out_dir;
  const std::string& jsonl = where.jsonl;
  // The summary: for each planned run, its newest finished line (ok preferred).
  std::map<std::string, const nlohmann::json*> newest;
  for (const auto& l : lines) {
    const std::string key = l.value("key", std::string());
    auto it = newest.find(key);
    const bool ok = l.value("status", std::string()) == "ok";
    if (it == newest.end() || ok || it->second->value("status", std::string()) != "ok") newest[key] = &l;
  }
  struct Row {
    const StudyRun* run;
    const nlohmann::json* line;
    RunFigures f;
    std::string series;  // the options other than ranks and threads
  };
  std::vector<Row> rows;
  for (const auto& r : runs) {
    Row row{&r, nullptr, {}, {}};
    if (auto it = newest.find(r.key); it != newest.end()) {
      row.line = it->second;
      if (!(*row.line)["record"].is_null()) row.f = study::run_figures((*row.line)["record"]);
    }
    for (const auto& [k, v] : r.options) {
      if (k != "threads") row.series += fmt::format("{}={} ", k, v);
    }
    rows.push_back(row);
  }
  // Baseline of a series: its ok run with the fewest cores (or GPUs).
  std::map<std::string, const Row*> base;
  for (const auto& row : rows) {
    if (row.line == nullptr || (*row.line)["status"] != "ok" || row.f.time_s <= 0) continue;
    auto it = base.find(row.series);
    if (it == base.end() || row.f.resources() < it->second->f.resources()) base[row.series] = &row;
  }

  std::vector<std::string> swept;
  for (const auto& [k, vs] : spec.sweep) swept.push_back(k);
  nlohmann::json out_rows = nlohmann::json::array();
  std::string table =
      fmt::format("scalebench study {}: {} runs ({} run now, {} from earlier, {} failed, {} cannot run here); {}\n",
                  spec.name, runs.size(), result.ran, result.from_earlier, result.failed, cannot_run.size(), jsonl);
  std::string head = fmt::format("{:>4}", "#");
  for (const auto& k : swept) head += fmt::format(" {:>10}", k);
  head += fmt::format(" {:>7} {:>10} {:>16} {:>9} {:>6}  {:<22} {}\n", "cores", "time s", "rate", "speed-up", "eff.",
                      "compute/comm/transfer", "status");
  table += head;
  std::string csv = "index,key,ranks";
  for (const auto& k : swept) {
    if (k != "ranks") csv += "," + csv_escape(k);
  }
  csv += ",resources,gpu,time_s,rate,rate_unit,compute_s,communication_s,transfer_s,speedup,efficiency,status,reason\n";
  std::string md = fmt::format("# Study {}\n\n{}\n\n| # | ", spec.name, spec.description);
  for (const auto& k : swept) md += k + " | ";
  md += "cores or GPUs | time s | rate | speed-up | efficiency | compute / comm / transfer s | status |\n|";
  for (std::size_t i = 0; i < swept.size() + 8; ++i) md += " --- |";
  md += "\n";

  for (const auto& row : rows) {
    const auto& r = *row.run;
    const auto skip = cannot_run.find(r.index);
    const std::string status = row.line               ? (*row.line)["status"].get<std::string>()
                               : skip != cannot_run.end() ? "skipped"
                                                          : "not run";
    nlohmann::json j = {{"index", r.index}, {"key", r.key}, {"ranks", r.ranks}, {"status", status}};
    nlohmann::json opts = nlohmann::json::object();
    for (const auto& [k, v] : r.options) opts[k] = v;
    j["options"] = opts;
    double speedup = 0, eff = 0;
    if (status == "ok") {
      j["time_s"] = row.f.time_s;
      j["rate"] = row.f.rate;
      j["rate_unit"] = row.f.rate_unit;
      j["resources"] = row.f.resources();
      j["gpu"] = row.f.gpu;
      j["phases_s"] = {{"compute", row.f.compute_s}, {"communication", row.f.comm_s}, {"transfer", row.f.transfer_s}};
      if (auto it = base.find(row.series); it != base.end() && row.f.time_s > 0) {
        const Row& b = *it->second;
        speedup = b.f.time_s / row.f.time_s;
        eff = row.f.resources() > 0 ? speedup * b.f.resources() / row.f.resources() : 0.0;
        j["baseline_index"] = b.run->index;
        j["speedup"] = speedup;
        j["efficiency"] = eff;
      }
      j["record_path"] = (*row.line)["record_path"];
    } else if (row.line) {
      j["reason"] = (*row.line)["reason"];
    } else if (skip != cannot_run.end()) {
      j["reason"] = "cannot run here: " + skip->second;
    }
    out_rows.push_back(j);

    auto swept_value = [&](const std::string& k) {
      if (k == "ranks") return std::to_string(r.ranks);
      for (const auto& [ok, ov] : r.options) {
        if (ok == k) return ov;
      }
      return std::string("-");
    };
    const bool ok = status == "ok";
    std::string line = fmt::format("{:>4}", r.index);
    for (const auto& k : swept) line += fmt::format(" {:>10}", swept_value(k));
    const std::string shares = ok ? fmt::format("{:.3f}/{:.3f}/{:.3f}", row.f.compute_s, row.f.comm_s, row.f.transfer_s)
                                  : "-";
    line += fmt::format(" {:>7} {:>10} {:>16} {:>9} {:>6}  {:<22} {}\n",
                        ok ? fmt::format("{}{}", row.f.resources(), row.f.gpu ? "G" : "") : "-",
                        ok ? fmt::format("{:.4f}", row.f.time_s) : "-", ok ? human_rate(row.f.rate, row.f.rate_unit) : "-",
                        speedup > 0 ? fmt::format("{:.2f}x", speedup) : "-", eff > 0 ? fmt::format("{:.0f}%", 100 * eff) : "-",
                        shares, ok ? status : status + (j.contains("reason") ? ": " + j["reason"].get<std::string>() : ""));
    table += line;
    csv += fmt::format("{},{},{}", r.index, csv_escape(r.key), r.ranks);
    for (const auto& k : swept) {
      if (k != "ranks") csv += "," + csv_escape(swept_value(k));
    }
    csv += ok ? fmt::format(",{},{},{},{},{},{},{},{},{},{},{},\n", row.f.resources(), row.f.gpu ? 1 : 0, row.f.time_s,
                            row.f.rate, row.f.rate_unit, row.f.compute_s, row.f.comm_s, row.f.transfer_s,
                            speedup > 0 ? fmt::format("{}", speedup) : "", eff > 0 ? fmt::format("{}", eff) : "", status)
              : fmt::format(",,,,,,,,,,,{},{}\n", status, csv_escape(j.value("reason", std::string())));
    md += fmt::format("| {} | ", r.index);
    for (const auto& k : swept) md += swept_value(k) + " | ";
    md += ok ? fmt::format("{}{} | {:.4f} | {} | {} | {} | {} | {} |\n", row.f.resources(), row.f.gpu ? " GPU" : "",
                           row.f.time_s, human_rate(row.f.rate, row.f.rate_unit),
                           speedup > 0 ? fmt::format("{:.2f}×", speedup) : "—",
                           eff > 0 ? fmt::format("{:.0f}%", 100 * eff) : "—", shares, status)
             : fmt::format("— | — | — | — | — | — | {} |\n", status);
  }
  if (unreadable > 0) {
    table += fmt::format("note: {} unreadable line(s) in {} left in place and not used\n", unreadable, jsonl);
  }

  result.exit_code = result.failed > 0 ? static_cast<int>(ExitCode::partial) : 0;
  result.summary = {{"schema_version", kSchemaVersion},
                    {"subcommand", "study"},
                    {"study", spec.name},
                    {"description", spec.description},
                    {"file", spec.file},
                    {"workload", spec.workload},
                    {"launcher", launcher},
                    {"command_line", command_line()},
                    {"runs_file", jsonl},
                    {"runs", out_rows},
                    {"ran_now", result.ran},
                    {"from_earlier", result.from_earlier},
                    {"failed_now", result.failed},
                    {"cannot_run_here", static_cast<int>(cannot_run.size())},
                    {"definitions",
                     "time_s: median end-to-end of the run; speedup = baseline time / time, baseline = the run of the "
                     "same series (options other than ranks and threads) with the fewest cores, or GPUs; efficiency "
                     "= speedup x baseline cores / cores"},
                    {"finished_at", utc_now_iso8601()}};
  write_json_atomic(out_dir + "/summary.json", result.summary);
  write_file_atomic(out_dir + "/summary.csv", csv);
  write_file_atomic(out_dir + "/summary.md", md);
  return table;
}

}  // namespace

StudySpec load_study(const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    throw UsageError(fmt::format("cannot read study file {}: check the path (study files live in jobs/)", path));
  } catch (const YAML::ParserException& e) {
    throw UsageError(fmt::format("{}:{}: not valid YAML: {}", path, e.mark.line + 1, e.msg));
  }
  StudySpec s;
  s.file = path;
  if (!root.IsMap()) {
    throw UsageError(fmt::format("{}: a study file is a map with the keys {}", path, kKeys));
  }
  for (const auto& kv : root) {
    const std::string k = kv.first.Scalar();
    const std::set<std::string> known = {"study", "description", "workload", "args", "sweep",
                                         "mpirun_args", "srun_args", "timeout_s"};
    if (known.count(k) == 0) bad(path, kv.first, fmt::format("unknown key '{}'; a study has {}", k, kKeys));
  }
  if (!root["study"]) throw UsageError(fmt::format("{}: 'study: <name>' is missing (results go to results/<name>)", path));
  s.name = scalar(path, root["study"], "study");
  if (!valid_name(s.name)) {
    bad(path, root["study"], fmt::format("study name '{}' must be letters, digits, '-', '_' or '.' (it names a folder)",
                                         s.name));
  }
  if (root["description"]) s.description = scalar(path, root["description"], "description");
  if (!root["workload"]) throw UsageError(fmt::format("{}: 'workload: gemm' or 'workload: montecarlo' is missing", path));
  s.workload = scalar(path, root["workload"], "workload");
  if (s.workload != "gemm" && s.workload != "montecarlo") {
    bad(path, root["workload"], fmt::format("unknown workload '{}'; use gemm or montecarlo", s.workload));
  }
  std::set<std::string> seen;
  if (const auto args = root["args"]) {
    if (!args.IsMap()) bad(path, args, "args must be a map of options, e.g. {n: 4096, backend: openblas}");
    for (const auto& kv : args) {
      const std::string k = kv.first.Scalar();
      if (reserved_option(k)) bad(path, kv.first, fmt::format("'{}' is set by the study itself; remove it", k));
      s.args.emplace_back(k, scalar(path, kv.second, fmt::format("args.{}", k)));
      seen.insert(k);
    }
  }
  if (const auto sweep = root["sweep"]) {
    if (!sweep.IsMap()) bad(path, sweep, "sweep must be a map of lists, e.g. {ranks: [1, 2, 4]}");
    for (const auto& kv : sweep) {
      const std::string k = kv.first.Scalar();
      if (reserved_option(k)) bad(path, kv.first, fmt::format("'{}' is set by the study itself; remove it", k));
      if (seen.count(k) != 0) bad(path, kv.first, fmt::format("'{}' is both in args and in sweep; keep one", k));
      auto values = scalar_list(path, kv.second, fmt::format("sweep.{}", k));
      if (values.empty()) bad(path, kv.second, fmt::format("sweep.{} is empty", k));
      s.sweep.emplace_back(k, std::move(values));
      seen.insert(k);
    }
  }
  if (const auto a = root["mpirun_args"]) s.mpirun_args = scalar_list(path, a, "mpirun_args");
  if (const auto a = root["srun_args"]) s.srun_args = scalar_list(path, a, "srun_args");
  if (const auto t = root["timeout_s"]) {
    const std::string v = scalar(path, t, "timeout_s");
    char* end = nullptr;
    s.timeout_s = std::strtod(v.c_str(), &end);
    if (end == v.c_str() || *end != '\0' || !(s.timeout_s > 0)) bad(path, t, "timeout_s must be a number of seconds > 0");
  }
  // Rank counts are checked here, the workload's own options by the runs' --dry-run.
  for (const auto& [k, v] : s.args) {
    if (k == "ranks") parse_ranks(path, v);
  }
  for (const auto& [k, vs] : s.sweep) {
    if (k == "ranks") {
      for (const auto& v : vs) parse_ranks(path, v);
    }
  }
  return s;
}

std::vector<StudyRun> plan_study(const StudySpec& spec) {
  std::vector<StudyRun> runs;
  std::vector<std::size_t> at(spec.sweep.size(), 0);
  for (bool more = true; more;) {
    StudyRun r;
    r.index = static_cast<int>(runs.size()) + 1;
    auto take = [&](const std::string& k, const std::string& v) {
      if (k == "ranks") {
        r.ranks = parse_ranks(spec.file, v);
      } else {
        r.options.emplace_back(k, v);
      }
    };
    for (const auto& [k, v] : spec.args) take(k, v);
    for (std::size_t i = 0; i < spec.sweep.size(); ++i) take(spec.sweep[i].first, spec.sweep[i].second[at[i]]);
    r.workload_argv.push_back(spec.workload);
    for (const auto& [k, v] : r.options) {
      if (v == "false") continue;
      r.workload_argv.push_back("--" + k);
      if (v != "true") r.workload_argv.push_back(v);
    }
    auto sorted = r.options;
    std::sort(sorted.begin(), sorted.end());
    r.key = fmt::format("{} ranks={}", spec.workload, r.ranks);
    for (const auto& [k, v] : sorted) r.key += fmt::format(" {}={}", k, v);
    runs.push_back(std::move(r));
    // The last swept key varies fastest.
    more = false;
    for (std::size_t i = spec.sweep.size(); i-- > 0;) {
      if (++at[i] < spec.sweep[i].second.size()) {
        more = true;
        break;
      }
      at[i] = 0;
    }
  }
  return runs;
}

StudyResult run_study(const StudyOptions& o) {
  if (std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMIX_RANK")) {
    throw UsageError("run `scalebench study` directly, not under mpirun: it launches each run itself");
  }
  const StudySpec spec = load_study(o.file);
  const auto runs = plan_study(spec);
  const bool in_slurm = std::getenv("SLURM_JOB_ID") != nullptr;
  std::string launcher = o.launcher == "auto" ? (in_slurm ? "srun" : "mpirun") : o.launcher;
  if (launcher != "mpirun" && launcher != "srun") {
    throw UsageError(fmt::format("unknown --launcher '{}'; use auto, mpirun or srun", o.launcher));
  }
  std::string program = launcher;
  if (launcher == "mpirun") {
    if (const char* m = std::getenv("SCALEBENCH_MPIEXEC"); m && *m) program = m;
    study::allow_mpirun_as_root();
  }
  if (!o.dry_run && !program_available(program)) {
    throw ResourceError(fmt::format("launcher '{}' not found; install {} or set SCALEBENCH_MPIEXEC", program,
                                    launcher == "srun" ? "slurm-client" : "openmpi-bin"));
  }
  const std::string binary = o.binary.empty() ? study::self_binary() : o.binary;
  const std::string out_dir = o.out_dir.empty() ? "results/" + spec.name : o.out_dir;
  const std::string jsonl = out_dir + "/runs.jsonl";
  const double timeout = o.timeout_s > 0 ? o.timeout_s : spec.timeout_s;

  auto launch = [&](const StudyRun& r) {
    std::vector<std::string> argv = {program};
    if (launcher == "mpirun") {
      argv.insert(argv.end(), {"-np", std::to_string(r.ranks)});
      argv.insert(argv.end(), spec.mpirun_args.begin(), spec.mpirun_args.end());
    } else {
      argv.insert(argv.end(), {"-n", std::to_string(r.ranks)});
      argv.insert(argv.end(), spec.srun_args.begin(), spec.srun_args.end());
    }
    argv.push_back(binary);
    argv.insert(argv.end(), r.workload_argv.begin(), r.workload_argv.end());
    return argv;
  };

  // What earlier invocations finished: runs.jsonl is only ever appended to.
  int unreadable = 0;
  std::vector<nlohmann::json> lines = read_lines(jsonl, unreadable);
  std::set<std::string> done;
  for (const auto& l : lines) {
    if (l.value("status", std::string()) == "ok") done.insert(l.value("key", std::string()));
  }
  std::vector<const StudyRun*> todo;
  for (const auto& r : runs) {
    if (o.rerun || done.count(r.key) == 0) todo.push_back(&r);
  }

  StudyResult result;
  result.from_earlier = static_cast<int>(runs.size() - todo.size());
  if (o.dry_run) {
    std::string out = fmt::format("scalebench study {} --dry-run: {} runs, {} already in {}; nothing is run\n", spec.name,
                                  runs.size(), result.from_earlier, jsonl);
    for (const auto& r : runs) {
      const bool will = std::find(todo.begin(), todo.end(), &r) != todo.end();
      out += fmt::format("  [{}] {:<8} {}\n", r.index, will ? "to run" : "done", join_args(launch(r)));
    }
    std::fputs(out.c_str(), stdout);
    return result;
  }

  study::make_dirs(out_dir + "/runs");
  // Every run checked first (--dry-run under the launcher): a bad option stops the study here,
  // before anything is run or written to runs.jsonl; a run this machine cannot hold (a resource
  // error: memory, launcher slots) is skipped with its reason, as contrast skips modes.
  std::map<int, std::string> cannot_run;
  for (const StudyRun* r : todo) {
    auto argv = launch(*r);
    argv.insert(argv.end(), {"--dry-run", "--quiet"});
    const std::string log = fmt::format("{}/runs/check-{}.log", out_dir, r->index);
    std::remove(log.c_str());
    const StepOutcome out = run_step(argv, log, 120);
    if (out.exit_code == static_cast<int>(ExitCode::usage)) {
      const std::string why = last_error_line(log);
      throw UsageError(fmt::format("study {}: run {} ({}) cannot start: {}; fix {} (nothing was run)", spec.name,
                                   r->index, r->key, why.empty() ? "see " + log : why, spec.file));
    }
    if (out.exit_code != 0) {
      // Not the file's fault: this machine cannot hold the run (memory, GPUs, launcher slots).
      std::string why = last_error_line(log);
      if (why.empty()) why = first_line(log);
      cannot_run[r->index] = fmt::format("{} (exit code {}; {})", why, out.exit_code, log);
      continue;
    }
    std::remove(log.c_str());
  }
  todo.erase(std::remove_if(todo.begin(), todo.end(), [&](const StudyRun* r) { return cannot_run.count(r->index) != 0; }),
             todo.end());

  const std::string stamp = study::utc_stamp();
  for (const StudyRun* r : todo) {
    const std::string stem = fmt::format("{}/runs/{}-{}-{}", out_dir, r->index, stamp, static_cast<long>(getpid()));
    auto argv = launch(*r);
    argv.insert(argv.end(), {"--quiet", "--json", stem + ".json"});
    ++result.ran;
    if (!o.quiet) {
      std::fprintf(stderr, "scalebench study: [%d/%zu] %s\n", result.ran, todo.size(), join_args(argv).c_str());
    }
    const std::string started = utc_now_iso8601();
    const StepOutcome out = run_step(argv, stem + ".log", timeout);
    nlohmann::json record = nullptr;
    if (std::ifstream in(stem + ".json"); in) {
      try {
        in >> record;
      } catch (const std::exception&) {
        record = nullptr;
      }
    }
    const int code = out.timed_out ? static_cast<int>(ExitCode::timeout) : out.exit_code;
    std::string status = code == 0 ? "ok" : out.timed_out ? "timeout" : "failed";
    std::string reason;
    if (code != 0) {
      ++result.failed;
      const std::string why = last_error_line(stem + ".log");
      reason = out.timed_out ? fmt::format("timed out after {:.0f} s", timeout)
               : why.empty() ? fmt::format("exit code {} (see {}.log)", code, stem)
                             : why;
    }
    nlohmann::json opts = nlohmann::json::object();
    for (const auto& [k, v] : r->options) opts[k] = v;
    nlohmann::json line = {{"study", spec.name},  {"index", r->index},        {"key", r->key},
                           {"ranks", r->ranks},   {"options", opts},          {"command", join_args(argv)},
                           {"started_at", started}, {"finished_at", utc_now_iso8601()},
                           {"exit_code", code},   {"status", status},         {"reason", reason},
                           {"record_path", stem + ".json"}, {"log_path", stem + ".log"}, {"record", record}};
    append_line(jsonl, line);
    lines.push_back(std::move(line));
  }

  const std::string table =
      write_summary(spec, runs, lines, cannot_run, unreadable, {launcher, out_dir, jsonl}, result);
  if (!o.quiet) {
    std::fputs(table.c_str(), stdout);
    std::fflush(stdout);
  }
  if (result.failed > 0) {
    std::fprintf(stderr, "scalebench: error: %d of %d study runs failed (marked in the table); logs in %s/runs\n",
                 result.failed, result.ran, out_dir.c_str());
  }
  return result;
}

}  // namespace scalebench
