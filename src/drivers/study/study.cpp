#include "scalebench/drivers/study.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "scalebench/base/env.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/base/host.hpp"
#include "scalebench/base/input_file.hpp"
#include "scalebench/base/output_file.hpp"
#include "scalebench/drivers/launch.hpp"
#include "scalebench/drivers/process.hpp"
#include "scalebench/drivers/report.hpp"
#include "scalebench/topology/placement.hpp"
#include "scalebench/workloads/run_context.hpp"
#include "scalebench/workloads/workload.hpp"
#include "study/baseline.hpp"
#include "study/files.hpp"
#include "study/jsonl.hpp"
#include "study/prediction_columns.hpp"
#include "study/results_dir.hpp"
#include "study/time_left.hpp"
#include "study/yaml_keys.hpp"

namespace scalebench {
namespace {

using study::csv_escape;
using study::human_rate;
using study::RunFigures;

constexpr const char* kKeys =
    "study, description, workload, args, sweep, baseline, mpirun_args, srun_args, hosts, hostfile, timeout_s";
const std::set<std::string> kKeySet = {"study",       "description", "workload", "args",     "sweep",    "baseline",
                                       "mpirun_args", "srun_args",   "hosts",    "hostfile", "timeout_s"};
// Early, cheap limits: a study file is a page of YAML, a sweep a few hundred runs at most in practice.
constexpr std::size_t kMaxStudyFileBytes = std::size_t{1} << 20;
constexpr std::size_t kMaxRuns = 10'000;
// Up to this many runs, every run is checked with --dry-run before the first starts; above it, a
// covering set (see runs_to_check).
constexpr std::size_t kCheckEveryRunUpTo = 16;
// Baseline runs that did not finish ok, each named with its reason under the table up to this many.
constexpr std::size_t kBaselineLinesShown = 3;

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

// Options the study sets itself on every run.
bool reserved_option(const std::string& name) { return name == "json" || name == "dry-run" || name == "quiet"; }

// The keys that place ranks (the launcher's), not options of the workload.
bool placement_key(const std::string& k) { return k == "ranks" || k == "nodes" || k == "ranks_per_node"; }

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

// ranks, nodes, ranks_per_node: whole numbers >= 1.
int parse_count(const std::string& file, const std::string& key, const std::string& v) {
  char* end = nullptr;
  const long r = std::strtol(v.c_str(), &end, 10);
  if (end == v.c_str() || *end != '\0' || r < 1 || r > 1'000'000) {
    throw UsageError(fmt::format("{}: {} must be whole numbers >= 1 (got '{}')", file, key, v));
  }
  return static_cast<int>(r);
}

// Sets a run's nodes, ranks per node and ranks from the keys given (0: not given).
void place_run(const std::string& file, StudyRun& r, int ranks, int nodes, int per_node) {
  r.placed = nodes > 0 || per_node > 0;
  r.nodes = nodes > 0 ? nodes : 1;
  if (per_node > 0 && ranks > 0 && ranks != r.nodes * per_node) {
    throw UsageError(fmt::format("{}: ranks {} is not nodes {} x ranks_per_node {}; give two of the three", file, ranks,
                                 r.nodes, per_node));
  }
  if (per_node == 0 && ranks > 0 && ranks % r.nodes != 0) {
    throw UsageError(
        fmt::format("{}: ranks {} do not split evenly over {} nodes; use ranks_per_node", file, ranks, r.nodes));
  }
  r.ranks_per_node = per_node > 0 ? per_node : ranks > 0 ? ranks / r.nodes : 1;
  r.ranks = r.nodes * r.ranks_per_node;
}

// One planned run in the summary: its newest line and the figures of its record.
struct Row {
  const StudyRun* run;
  const nlohmann::json* line;
  RunFigures f;
  std::string series;  // the options other than ranks and threads
  bool ok() const { return line != nullptr && (*line)["status"] == "ok" && f.time_s > 0; }
};

// Every key that tells runs apart: the options and the placement keys.
std::map<std::string, std::string> coordinates(const StudyRun& r) {
  std::map<std::string, std::string> c(r.options.begin(), r.options.end());
  c["ranks"] = std::to_string(r.ranks);
  if (r.placed) {
    c["nodes"] = std::to_string(r.nodes);
    c["ranks_per_node"] = std::to_string(r.ranks_per_node);
  }
  return c;
}

// The run each row is compared with (nullptr: none finished ok). With a named baseline, the run
// with the baseline's values and the same other coordinates; without, the series' ok run with the
// fewest cores (or GPUs).
std::vector<const Row*> baselines(const StudySpec& spec, const std::vector<Row>& rows) {
  std::vector<const Row*> out(rows.size(), nullptr);
  if (!spec.baseline.empty()) {
    std::map<std::map<std::string, std::string>, const Row*> by_coordinates;
    for (const auto& row : rows) {
      if (row.ok()) by_coordinates[coordinates(*row.run)] = &row;
    }
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const auto it = by_coordinates.find(study::baseline_coordinates(coordinates(*rows[i].run), spec.baseline));
      if (it != by_coordinates.end()) out[i] = it->second;
    }
    return out;
  }
  std::map<std::string, const Row*> base;
  for (const auto& row : rows) {
    if (!row.ok()) continue;
    auto it = base.find(row.series);
    if (it == base.end() || row.f.resources() < it->second->f.resources()) base[row.series] = &row;
  }
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (auto it = base.find(rows[i].series); it != base.end()) out[i] = it->second;
  }
  return out;
}

// With a named baseline: each group's ratio to it per size and its crossover, as summary.json's
// "baseline" and as lines for the table (and summary.md).
nlohmann::json baseline_section(const StudySpec& spec, const std::vector<Row>& rows,
                                const std::vector<const Row*>& base_of, const std::vector<std::string>& why_not,
                                std::string& lines) {
  const std::string size_key = study::size_key_of(spec.workload);
  const bool size_swept = std::any_of(spec.sweep.begin(), spec.sweep.end(),
                                      [&](const auto& e) { return e.first == size_key && e.second.size() > 1; });
  std::set<std::string> hidden{size_key};
  std::string named;
  for (const auto& [k, v] : spec.baseline) {
    hidden.insert(k);
    named += fmt::format("{}{}={}", named.empty() ? "" : " ", k, v);
  }
  std::vector<study::ComparedRun> compared;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& row = rows[i];
    if (!row.ok() || base_of[i] == nullptr || base_of[i] == &row) continue;
    std::string group;
    const auto c = coordinates(*row.run);
    for (const auto& [k, vs] : spec.sweep) {
      const auto it = c.find(k);
      if (k == size_key || it == c.end()) continue;
      group += fmt::format("{}{}={}", group.empty() ? "" : " ", k, it->second);
    }
    const auto size = c.find(size_key);
    compared.push_back({group.empty() ? "runs" : group, size == c.end() ? 0.0 : study::size_value(size->second),
                        base_of[i]->f.time_s / row.f.time_s, row.run->index});
  }
  nlohmann::json groups = study::summarize_groups(compared, size_key, size_swept);
  lines += fmt::format("speed-up = baseline time / time; baseline: the run with {} and the same other values\n", named);
  for (const auto& g : groups) {
    std::string ratios;
    for (const auto& p : g["points"]) {
      ratios += fmt::format("{}{:.2f}x", ratios.empty() ? "" : ", ", p["ratio"].get<double>());
      if (size_swept) ratios += fmt::format(" at {}={:g}", size_key, p["size"].get<double>());
    }
    lines += fmt::format("  {} against {}: {}", g["group"].get<std::string>(), named, ratios);
    if (g.contains("crossover")) lines += "; crossover " + g["crossover"]["text"].get<std::string>();
    lines += "\n";
  }
  // The baseline runs that did not finish ok (skipped here, failed, not run): the runs compared with
  // them have no speed-up, and the summary says why.
  nlohmann::json missing = nlohmann::json::array();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto c = coordinates(*rows[i].run);
    if (rows[i].ok() || study::baseline_coordinates(c, spec.baseline) != c) continue;
    missing.push_back({{"index", rows[i].run->index}, {"key", rows[i].run->key}, {"reason", why_not[i]}});
    // The first few in the table; every one in summary.json.
    if (missing.size() <= kBaselineLinesShown) {
      lines += fmt::format("  baseline run {} ({}) is {}: the runs compared with it have no speed-up\n",
                           rows[i].run->index, rows[i].run->key, why_not[i]);
    }
  }
  if (missing.size() > kBaselineLinesShown) {
    lines +=
        fmt::format("  and {} more baseline runs did not finish ok (summary.json baseline.baseline_runs_missing)\n",
                    missing.size() - kBaselineLinesShown);
  }
  nlohmann::json options = nlohmann::json::object();
  for (const auto& [k, v] : spec.baseline) options[k] = v;
  return {{"options", options}, {"size_key", size_key}, {"groups", groups}, {"baseline_runs_missing", missing}};
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
  const std::vector<const Row*> base_of = baselines(spec, rows);

  std::vector<std::string> swept;
  for (const auto& [k, vs] : spec.sweep) {
    if (k != "nodes") swept.push_back(k);  // nodes has its own column
  }
  nlohmann::json out_rows = nlohmann::json::array();
  std::string table =
      fmt::format("scalebench study {}: {} runs ({} run now, {} from earlier, {} failed, {} cannot run here); {}\n",
                  spec.name, runs.size(), result.ran, result.from_earlier, result.failed, cannot_run.size(), jsonl);
  std::string head = fmt::format("{:>4} {:>5}", "#", "nodes");
  for (const auto& k : swept) head += fmt::format(" {:>10}", k);
  head += fmt::format(" {:>7} {:>10}  {:<24} {:>16} {:>9} {:>6}  {:<22} {}\n", "cores", "time s", "predicted s, miss",
                      "rate", "speed-up", "eff.", "compute/comm/transfer", "status");
  table += head;
  std::string csv = "index,key,ranks,nodes,ranks_per_node";
  for (const auto& k : swept) {
    if (k != "ranks" && k != "ranks_per_node") csv += fmt::format(",{}", csv_escape(k));
  }
  csv += ",resources,gpu,time_s,rate,rate_unit,compute_s,communication_s,transfer_s,speedup,efficiency,status,reason,"
         "predicted_s,prediction_miss,worst_phase\n";
  std::string md = fmt::format("# Study {}\n\n{}\n\n| # | nodes | ", spec.name, spec.description);
  for (const auto& k : swept) md += k + " | ";
  md += "cores or GPUs | time s | predicted s, miss | rate | speed-up | efficiency | compute / comm / transfer s | "
        "status |\n|";
  for (std::size_t i = 0; i < swept.size() + 10; ++i) md += " --- |";
  md += "\n";

  std::vector<std::string> why_not;  // each row's status and reason, for the baseline's lines
  for (const auto& row : rows) {
    const auto& r = *row.run;
    const auto skip = cannot_run.find(r.index);
    const std::string status = row.line                   ? (*row.line)["status"].get<std::string>()
                               : skip != cannot_run.end() ? "skipped"
                                                          : "not run";
    nlohmann::json j = {{"index", r.index},
                        {"key", r.key},
                        {"ranks", r.ranks},
                        {"nodes", r.nodes},
                        {"ranks_per_node", r.ranks_per_node},
                        {"status", status}};
    nlohmann::json opts = nlohmann::json::object();
    for (const auto& [k, v] : r.options) opts[k] = v;
    j["options"] = opts;
    double speedup = 0, eff = 0;
    const study::PredictedFigures predicted = row.line ? study::predicted_figures((*row.line)["record"])
                                                       : study::PredictedFigures{};
    if (status == "ok") {
      j["time_s"] = row.f.time_s;
      j["rate"] = row.f.rate;
      j["rate_unit"] = row.f.rate_unit;
      j["resources"] = row.f.resources();
      j["gpu"] = row.f.gpu;
      j["phases_s"] = {{"compute", row.f.compute_s}, {"communication", row.f.comm_s}, {"transfer", row.f.transfer_s}};
      if (const Row* bp = base_of[static_cast<std::size_t>(&row - rows.data())]; bp != nullptr && row.f.time_s > 0) {
        const Row& b = *bp;
        speedup = b.f.time_s / row.f.time_s;
        // Cores against GPUs have no common unit: no efficiency across kinds.
        eff = row.f.resources() > 0 && b.f.gpu == row.f.gpu ? speedup * b.f.resources() / row.f.resources() : 0.0;
        j["baseline_index"] = b.run->index;
        j["speedup"] = speedup;
        j["efficiency"] = eff;
      }
      j["record_path"] = (*row.line)["record_path"];
      j["predicted"] = study::predicted_json(predicted);
    } else if (row.line) {
      j["reason"] = row.line->value("reason", std::string());
    } else if (skip != cannot_run.end()) {
      j["reason"] = "cannot run here: " + skip->second;
    }
    out_rows.push_back(j);
    why_not.push_back(!j.value("reason", std::string()).empty()
                          ? fmt::format("{}: {}", status, j["reason"].get<std::string>())
                          : status);

    auto swept_value = [&](const std::string& k) {
      if (k == "ranks") return std::to_string(r.ranks);
      if (k == "ranks_per_node") return std::to_string(r.ranks_per_node);
      for (const auto& [ok, ov] : r.options) {
        if (ok == k) return ov;
      }
      return std::string("-");
    };
    const bool ok = status == "ok";
    std::string line = fmt::format("{:>4} {:>5}", r.index, r.nodes);
    for (const auto& k : swept) line += fmt::format(" {:>10}", swept_value(k));
    const std::string shares = ok ? fmt::format("{:.3f}/{:.3f}/{:.3f}", row.f.compute_s, row.f.comm_s, row.f.transfer_s)
                                  : "-";
    const std::string predicted_text = ok ? study::predicted_cell(predicted, row.f.time_s) : "-";
    line += fmt::format(" {:>7} {:>10}  {:<24} {:>16} {:>9} {:>6}  {:<22} {}\n",
                        ok ? fmt::format("{}{}", row.f.resources(), row.f.gpu ? "G" : "") : "-",
                        ok ? fmt::format("{:.4f}", row.f.time_s) : "-", predicted_text,
                        ok ? human_rate(row.f.rate, row.f.rate_unit) : "-",
                        speedup > 0 ? fmt::format("{:.2f}x", speedup) : "-",
                        eff > 0 ? fmt::format("{:.0f}%", 100 * eff) : "-", shares,
                        ok ? status : status + (j.contains("reason") ? ": " + j.value("reason", std::string()) : ""));
    table += line;
    csv += fmt::format("{},{},{},{},{}", r.index, csv_escape(r.key), r.ranks, r.nodes, r.ranks_per_node);
    for (const auto& k : swept) {
      if (k != "ranks" && k != "ranks_per_node") csv += fmt::format(",{}", csv_escape(swept_value(k)));
    }
    const std::string predicted_csv = predicted.available ? fmt::format(",{},{},{}", predicted.predicted_s,
                                                                        predicted.miss, predicted.worst_phase)
                                                          : ",,,";
    csv += ok ? fmt::format(",{},{},{},{},{},{},{},{},{},{},{},{}\n", row.f.resources(), row.f.gpu ? 1 : 0,
                            row.f.time_s, row.f.rate, row.f.rate_unit, row.f.compute_s, row.f.comm_s, row.f.transfer_s,
                            speedup > 0 ? fmt::format("{}", speedup) : "", eff > 0 ? fmt::format("{}", eff) : "",
                            status, predicted_csv)
              : fmt::format(",,,,,,,,,,,{},{},,,\n", status, csv_escape(j.value("reason", std::string())));
    md += fmt::format("| {} | {} | ", r.index, r.nodes);
    for (const auto& k : swept) md += swept_value(k) + " | ";
    md += ok ? fmt::format("{}{} | {:.4f} | {} | {} | {} | {} | {} | {} |\n", row.f.resources(),
                           row.f.gpu ? " GPU" : "", row.f.time_s, predicted_text,
                           human_rate(row.f.rate, row.f.rate_unit), speedup > 0 ? fmt::format("{:.2f}×", speedup) : "—",
                           eff > 0 ? fmt::format("{:.0f}%", 100 * eff) : "—", shares, status)
             : fmt::format("— | — | — | — | — | — | — | {} |\n", status);
  }
  nlohmann::json baseline = nullptr;
  if (!spec.baseline.empty()) {
    std::string notes;
    baseline = baseline_section(spec, rows, base_of, why_not, notes);
    table += notes;
    md += "\n" + notes;
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
                    {"baseline", baseline},
                    {"definitions",
                     "time_s: median end-to-end of the run; speedup = baseline time / time, baseline = the run named "
                     "by the study's baseline (its values for those keys, the same other values), else the run of the "
                     "same series (options other than ranks and threads) with the fewest cores, or GPUs; efficiency "
                     "= speedup x baseline cores / cores (cores against cores, GPUs against GPUs)"},
                    {"finished_at", utc_now_iso8601()}};
  write_json_atomic(out_dir + "/summary.json", result.summary);
  write_file_atomic(out_dir + "/summary.csv", csv);
  write_file_atomic(out_dir + "/summary.md", md);
  return table;
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
      std::set<std::string> listed;
      for (const auto& v : values) {
        if (!listed.insert(v).second)
          bad(path, kv.second, fmt::format("sweep.{} lists {} twice; list each value once", k, v));
      }
      s.sweep.emplace_back(k, std::move(values));
      seen.insert(k);
    }
  }
  if (const auto b = root["baseline"]) s.baseline = load_baseline(path, b, s.sweep);
  if (const auto a = root["mpirun_args"]) s.mpirun_args = scalar_list(path, a, "mpirun_args");
  if (const auto a = root["srun_args"]) s.srun_args = scalar_list(path, a, "srun_args");
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
  if (const auto t = root["timeout_s"]) {
    const std::string v = scalar(path, t, "timeout_s");
    char* end = nullptr;
    s.timeout_s = std::strtod(v.c_str(), &end);
    if (end == v.c_str() || *end != '\0' || !(s.timeout_s > 0))
      bad(path, t, "timeout_s must be a number of seconds > 0");
  }
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

std::vector<StudyRun> plan_study(const StudySpec& spec) {
  std::vector<StudyRun> runs;
  std::vector<std::size_t> at(spec.sweep.size(), 0);
  for (bool more = true; more;) {
    StudyRun r;
    r.index = static_cast<int>(runs.size()) + 1;
    std::map<std::string, int> counts;  // ranks, nodes, ranks_per_node as given
    auto take = [&](const std::string& k, const std::string& v) {
      if (placement_key(k)) {
        counts[k] = parse_count(spec.file, k, v);
      } else {
        r.options.emplace_back(k, v);
      }
    };
    for (const auto& [k, v] : spec.args) take(k, v);
    for (std::size_t i = 0; i < spec.sweep.size(); ++i) take(spec.sweep[i].first, spec.sweep[i].second[at[i]]);
    place_run(spec.file, r, counts["ranks"], counts["nodes"], counts["ranks_per_node"]);
    r.workload_argv.push_back(spec.workload);
    // --k=v: a value is never read as an option of its own, whatever it starts with.
    for (const auto& [k, v] : r.options) {
      if (v == "false") continue;
      r.workload_argv.push_back(v == "true" ? "--" + k : fmt::format("--{}={}", k, v));
    }
    auto sorted = r.options;
    std::sort(sorted.begin(), sorted.end());
    r.key = fmt::format("{} ranks={}", spec.workload, r.ranks);
    if (r.placed) r.key += fmt::format(" nodes={}", r.nodes);
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

namespace {

bool names_option(const std::vector<std::string>& args, std::initializer_list<const char*> options) {
  return std::any_of(args.begin(), args.end(), [&](const std::string& a) {
    return std::any_of(options.begin(), options.end(), [&](const char* o) { return a == o; });
  });
}

// How a study launches its runs: the launch (launcher, hosts, extra arguments), this binary.
struct StudyLauncher {
  const StudySpec* spec;
  LaunchSetup setup;
  std::string binary;
  int cpus_per_node = 0;  // what this host or allocation gives (0: unknown)

  // A run's launch command, without --json or --dry-run. With nodes, ranks per node or hosts,
  // mpirun places ranks_per_node ranks on each node (--map-by ppr:K:node) and leaves the binding
  // to the ranks (--pin), unless mpirun_args say otherwise; srun always says how many nodes.
  std::vector<std::string> argv(const StudyRun& r) const {
    const LaunchSetup& s = setup;
    std::vector<std::string> a = {s.program};
    const std::string k = std::to_string(r.ranks_per_node);
    if (s.launcher == "mpirun") {
      a.insert(a.end(), {"-np", std::to_string(r.ranks)});
      if (r.placed || !s.hosts.empty()) {
        if (!names_option(s.extra, {"--map-by", "-map-by", "--npernode", "-npernode"})) {
          a.insert(a.end(), {"--map-by", fmt::format("ppr:{}:node", k)});
        }
        if (!names_option(s.extra, {"--bind-to", "-bind-to"})) a.insert(a.end(), {"--bind-to", "none"});
        const auto h = host_args(s, r.nodes, r.ranks_per_node);
        a.insert(a.end(), h.begin(), h.end());
      }
    } else {
      a.insert(a.end(), {"-n", std::to_string(r.ranks), fmt::format("--nodes={}", r.nodes),
                         fmt::format("--ntasks-per-node={}", k)});
    }
    a.insert(a.end(), s.extra.begin(), s.extra.end());
    a.push_back(binary);
    a.insert(a.end(), r.workload_argv.begin(), r.workload_argv.end());
    return a;
  }

  // Why the launch cannot hold a run (more nodes than given, more ranks per node than the CPUs of
  // this host or allocation without --oversubscribe); empty when it can.
  std::string limit(const StudyRun& r) const {
    const LaunchSetup& s = setup;
    if (r.nodes > s.nodes) return fmt::format("needs {} nodes; {} gives {}", r.nodes, s.nodes_from, s.nodes);
    const bool local = s.launcher == "srun" || s.hosts.empty();
    if (local && cpus_per_node > 0 && r.ranks_per_node > cpus_per_node &&
        !names_option(s.extra, {"--oversubscribe", "-oversubscribe", "--overcommit", "-O"})) {
      return fmt::format("{} ranks per node but {} gives {} CPUs per node (add --oversubscribe to mpirun_args to "
                         "run them anyway)",
                         r.ranks_per_node, s.nodes_from, cpus_per_node);
    }
    return "";
  }
};

StudyLauncher make_launcher(const StudyOptions& o, const StudySpec& spec) {
  LaunchRequest request;
  request.launcher = o.launcher;
  const bool cli_hosts = !o.hosts.empty() || !o.hostfile.empty();
  request.hosts = cli_hosts ? o.hosts : spec.hosts;
  request.hostfile = cli_hosts ? o.hostfile : spec.hostfile;
  request.hostfile_origin = cli_hosts ? "--hostfile" : fmt::format("hostfile of {}", spec.file);
  request.mpirun_args = spec.mpirun_args;
  request.srun_args = spec.srun_args;
  request.dry_run = o.dry_run;
  StudyLauncher l{&spec, resolve_launch(request), o.binary.empty() ? study::self_binary() : o.binary, 0};
  l.cpus_per_node = allocation_cpus(std::getenv("SLURM_CPUS_ON_NODE"), std::getenv("SLURM_JOB_CPUS_PER_NODE"),
                                    static_cast<int>(allowed_cpus().size()));
  return l;
}

void progress(const StudyOptions& o, const std::string& line) {
  if (!o.quiet) std::fprintf(stderr, "scalebench study: %s\n", line.c_str());
}

// The runs checked with --dry-run before the first starts: all of a small study; of a large one,
// enough that every value of every swept option (ranks included) is checked at least once, plus
// the last run (in sweep order usually the largest). The others are checked by running them.
std::vector<const StudyRun*> runs_to_check(const std::vector<const StudyRun*>& todo) {
  if (todo.size() <= kCheckEveryRunUpTo) return todo;
  std::vector<const StudyRun*> out;
  std::set<std::string> seen;
  for (const StudyRun* r : todo) {
    bool adds = r == todo.back();
    for (const auto& [k, v] : r->options) adds = seen.insert(k + "=" + v).second || adds;
    adds = seen.insert(fmt::format("ranks={}", r->ranks)).second || adds;
    adds = seen.insert(fmt::format("nodes={}", r->nodes)).second || adds;
    if (adds) out.push_back(r);
  }
  return out;
}

// scalebench's own exit codes that say this machine cannot hold a run (memory, GPUs, CUDA), not
// that the run or the study is wrong.
bool cannot_run_here(int exit_code) {
  return exit_code == static_cast<int>(ExitCode::resource) || exit_code == static_cast<int>(ExitCode::no_cuda);
}

// Checks the runs (--dry-run under the launcher): a bad option stops the study here, before
// anything is run or written to runs.jsonl; a run this machine cannot hold (a resource error:
// memory, launcher slots) is returned with its reason, to be skipped as contrast skips modes.
std::map<int, std::string> check_runs(const StudyOptions& o, const StudyLauncher& l, const std::string& out_dir,
                                      const std::vector<const StudyRun*>& todo) {
  const auto checked = runs_to_check(todo);
  if (checked.size() < todo.size()) {
    progress(o, fmt::format("checking {} of {} runs first (every value of every swept option at least once); the "
                            "others are checked as they run",
                            checked.size(), todo.size()));
  }
  std::map<int, std::string> cannot_run;
  for (const StudyRun* r : todo) {
    if (const std::string why = l.limit(*r); !why.empty()) cannot_run[r->index] = why;
  }
  int k = 0;
  for (const StudyRun* r : checked) {
    if (cannot_run.count(r->index) != 0) continue;
    throw_if_stopped("nothing was run");
    progress(o, fmt::format("[{}/{}] checking run {} ({})", ++k, checked.size(), r->index, r->key));
    auto argv = l.argv(*r);
    argv.insert(argv.end(), {"--dry-run", "--quiet"});
    const std::string log = fmt::format("{}/runs/check-{}.log", out_dir, r->index);
    std::remove(log.c_str());
    const StepOutcome out = run_step(argv, log, 120);
    throw_if_stopped("nothing was run");
    const bool own = has_scalebench_error(log);
    if (out.exit_code == static_cast<int>(ExitCode::usage) && own) {
      throw UsageError(fmt::format("study {}: run {} ({}) cannot start: {}; fix {} (nothing was run)", l.spec->name,
                                   r->index, r->key, failure_lines(log), l.spec->file));
    }
    if (out.exit_code != 0 && cannot_run_here(out.exit_code) && own) {
      // Not the file's fault: this machine cannot hold the run (memory, GPUs, CUDA), as scalebench says.
      cannot_run[r->index] = fmt::format("{} (exit code {}; {})", failure_lines(log), out.exit_code, log);
      continue;
    }
    if (out.exit_code != 0) {
      // The launch itself failed (launcher, PMI, MPI start-up): no run can be trusted to start.
      const std::string why = out.timed_out ? "the check timed out after 120 s" : failure_lines(log);
      throw LaunchError(fmt::format("study {}: run {} ({}) could not be launched: {} (exit code {}; {}); no run was "
                                    "started: fix the launch (srun_args, mpirun_args, hosts) and run the study again",
                                    l.spec->name, r->index, r->key, why.empty() ? "no output" : why, out.exit_code,
                                    log));
    }
    std::remove(log.c_str());
  }
  return cannot_run;
}

// Runs one run and returns its runs.jsonl line; nothing of it is kept when a stop signal came.
nlohmann::json run_one(const StudyLauncher& l, const StudyRun& r, const std::string& stem, double timeout) {
  auto argv = l.argv(r);
  argv.insert(argv.end(), {"--json", stem + ".json"});
  const std::string started = utc_now_iso8601();
  const StepOutcome out = run_step(argv, stem + ".log", timeout);
  if (out.stopped_by != 0) std::remove((stem + ".json").c_str());
  throw_if_stopped(fmt::format("run {} was stopped and not recorded; runs.jsonl keeps every run finished before it: "
                               "run the study again to go on",
                               r.index));
  nlohmann::json record = nlohmann::json::parse(study::read_run_output(stem + ".json", "record"), nullptr, false);
  if (!record.is_object()) record = nullptr;
  const int code = out.timed_out ? static_cast<int>(ExitCode::timeout) : out.exit_code;
  const bool own = code != 0 && !out.timed_out && has_scalebench_error(stem + ".log");
  // A run not checked before (a large study checks a covering set) may still find that this
  // machine cannot hold it: skipped with the reason, as the check would have, not failed.
  const bool cannot_run = own && cannot_run_here(code);
  std::string reason;
  if (code != 0) {
    const std::string why = failure_lines(stem + ".log");
    reason = out.timed_out ? fmt::format("timed out after {:.0f} s", timeout)
             : why.empty() ? fmt::format("exit code {} (see {}.log)", code, stem)
             : cannot_run  ? fmt::format("cannot run here: {} (exit code {}; {}.log)", why, code, stem)
                           : why;
  }
  nlohmann::json opts = nlohmann::json::object();
  for (const auto& [k, v] : r.options) opts[k] = v;
  const bool launch_failed = code != 0 && !out.timed_out && !own;
  return {{"study", l.spec->name},
          {"index", r.index},
          {"key", r.key},
          {"ranks", r.ranks},
          {"nodes", r.nodes},
          {"launch_failed", launch_failed},
          {"options", opts},
          {"command", join_args(argv)},
          {"started_at", started},
          {"finished_at", utc_now_iso8601()},
          {"exit_code", code},
          {"status", code == 0       ? "ok"
                     : out.timed_out ? "timeout"
                     : cannot_run    ? "skipped"
                                     : "failed"},
          {"reason", reason},
          {"record_path", stem + ".json"},
          {"log_path", stem + ".log"},
          {"record", record}};
}

// A run's work for the estimate of the time left: its size, repeats and workers (ranks x threads).
double run_work(const StudySpec& spec, const StudyRun& r) {
  std::string size, reps = "5", warmup = "1", threads = "1";
  const std::string size_key = study::size_key_of(spec.workload);
  for (const auto& [k, v] : r.options) {
    if (k == size_key) size = v;
    if (k == "reps") reps = v;
    if (k == "warmup") warmup = v;
    if (k == "threads") threads = v;
  }
  const int repeats = static_cast<int>(study::size_value(reps) + study::size_value(warmup));
  return study::run_work(spec.workload, size, repeats,
                         r.ranks * std::max(1, static_cast<int>(study::size_value(threads))));
}

std::string dry_run_listing(const StudyLauncher& l, const std::vector<StudyRun>& runs,
                            const std::vector<const StudyRun*>& todo, const std::string& jsonl) {
  std::string out = fmt::format("scalebench study {} --dry-run: {} runs, {} already in {}; nothing is run\n",
                                l.spec->name, runs.size(), runs.size() - todo.size(), jsonl);
  const std::set<const StudyRun*> will_run(todo.begin(), todo.end());
  for (const auto& r : runs) {
    const bool will = will_run.count(&r) != 0;
    out += fmt::format("  [{}] {:<8} {}\n", r.index, will ? "to run" : "done", join_args(l.argv(r)));
  }
  return out;
}

// The runs not done yet (every run with --rerun): those without an ok line in runs.jsonl.
std::vector<const StudyRun*> runs_to_do(const StudyOptions& o, const std::vector<StudyRun>& runs,
                                        const study::JsonlContents& earlier) {
  std::set<std::string> done;
  for (const auto& l : earlier.lines) {
    if (l["status"] == "ok") done.insert(l["key"].get<std::string>());
  }
  std::vector<const StudyRun*> todo;
  for (const auto& r : runs) {
    if (o.rerun || done.count(r.key) == 0) todo.push_back(&r);
  }
  return todo;
}

// A study's folder holds one study: runs.jsonl lines of another study (another `study:` name) mean
// the folder is that study's, and its runs would be mixed with this one's.
void check_same_study(const StudySpec& spec, const std::string& out_dir, const study::JsonlContents& earlier) {
  for (const auto& l : earlier.lines) {
    if (l.contains("study") && l["study"].is_string() && l["study"] != spec.name) {
      throw ResourceError(fmt::format("--out-dir {} holds the runs of study '{}' (runs.jsonl), not of '{}' ({}); a "
                                      "folder holds one study: choose another --out-dir",
                                      out_dir, l["study"].get<std::string>(), spec.name, spec.file));
    }
  }
}

// Every path of the study's folder, checked by kind before anything is made or run: runs.jsonl
// (read and appended to), the summaries and the report (written), runs/ and the check logs in it.
// A run's own record and log carry this invocation's time and pid and so are new files.
void check_study_paths(const std::string& out_dir, const std::vector<StudyRun>& runs) {
  const std::string jsonl = out_dir + "/runs.jsonl";
  if (path_kind(out_dir) != "a folder") return;  // new: check_output_dir checked where it goes
  check_input_file(jsonl, std::string("the study's runs.jsonl"));
  study::check_own_file(jsonl, "runs.jsonl");
  for (const char* name : {"summary.json", "summary.csv", "summary.md", "report.html"}) {
    study::check_own_file(out_dir + "/" + name, name);
  }
  study::check_own_file(out_dir + "/" + study::kLockFileName, "lock file");
  study::check_own_folder(out_dir + "/runs", "runs folder");
  if (path_kind(out_dir + "/runs") != "a folder") return;
  for (const auto& r : runs) {
    study::check_own_file(fmt::format("{}/runs/check-{}.log", out_dir, r.index), "check log");
  }
}

}  // namespace

StudyResult run_study(const StudyOptions& o) {
  if (std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMIX_RANK")) {
    throw UsageError("run `scalebench study` directly, not under mpirun: it launches each run itself");
  }
  const StopSignals stop_signals;
  const StudySpec spec = load_study(o.file);
  const auto runs = plan_study(spec);
  const StudyLauncher launcher = make_launcher(o, spec);
  const std::string out_dir = o.out_dir.empty() ? "results/" + spec.name : o.out_dir;
  const std::string jsonl = out_dir + "/runs.jsonl";
  const std::string jsonl_origin = std::string("the study's runs.jsonl");
  const double timeout = o.timeout_s > 0 ? o.timeout_s : spec.timeout_s;
  study::check_output_dir(out_dir, "--out-dir");
  study::check_folder_is_ours(out_dir, study::DriverKind::study, "--out-dir");
  check_same_study(spec, out_dir, study::read_jsonl(jsonl, jsonl_origin));
  if (o.dry_run) {
    const study::JsonlContents earlier = study::read_jsonl(jsonl, jsonl_origin);
    const auto todo = runs_to_do(o, runs, earlier);
    std::fputs(dry_run_listing(launcher, runs, todo, jsonl).c_str(), stdout);
    StudyResult result;
    result.from_earlier = static_cast<int>(runs.size() - todo.size());
    return result;
  }
  check_study_paths(out_dir, runs);  // every path read or written, by kind, before the folder is made

  study::make_dirs(out_dir);
  const study::FolderLock lock(out_dir, study::DriverKind::study, "--out-dir");
  study::make_dirs(out_dir + "/runs");
  // What earlier invocations finished, read under the lock: runs.jsonl is only ever appended to.
  study::JsonlContents earlier = study::read_jsonl(jsonl, jsonl_origin);
  check_same_study(spec, out_dir, earlier);
  for (int n : earlier.unusable) {
    std::fprintf(stderr,
                 "scalebench: warning: %s line %d is cut or garbled, or not a study's line (a crash or a full "
                 "disk mid-write, an edit); left in place and not used\n",
                 jsonl.c_str(), n);
  }
  std::vector<nlohmann::json>& lines = earlier.lines;
  std::vector<const StudyRun*> todo = runs_to_do(o, runs, earlier);
  StudyResult result;
  result.from_earlier = static_cast<int>(runs.size() - todo.size());

  const std::size_t to_do = todo.size();
  std::map<int, std::string> cannot_run = check_runs(o, launcher, out_dir, todo);
  todo.erase(std::remove_if(todo.begin(), todo.end(),
                            [&](const StudyRun* r) { return cannot_run.count(r->index) != 0; }),
             todo.end());

  const std::string stamp = study::utc_stamp();
  double work_to_come = 0;
  for (const StudyRun* r : todo) work_to_come += run_work(spec, *r);
  study::TimeLeft left;
  for (const StudyRun* r : todo) {
    throw_if_stopped("runs.jsonl keeps every run finished before; run the study again to go on");
    const std::string stem = fmt::format("{}/runs/{}-{}-{}", out_dir, r->index, stamp, static_cast<long>(getpid()));
    const std::string eta = left.text(work_to_come);
    progress(o, fmt::format("[{}/{}]{} run {} ({})", ++result.ran, todo.size(), eta.empty() ? "" : " (" + eta + ")",
                            r->index, r->key));
    const auto start = std::chrono::steady_clock::now();
    nlohmann::json line = run_one(launcher, *r, stem, timeout);
    left.finished(run_work(spec, *r), std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    work_to_come -= run_work(spec, *r);
    if (line["status"] == "skipped") {
      cannot_run[r->index] = line["reason"].get<std::string>();
    } else if (line["status"] != "ok") {
      ++result.failed;
    }
    if (line["launch_failed"].get<bool>()) ++result.launch_failed;
    study::append_jsonl(jsonl, line);
    lines.push_back(std::move(line));
  }

  const std::string table = write_summary(spec, runs, lines, cannot_run, static_cast<int>(earlier.unusable.size()),
                                          {launcher.setup.launcher, out_dir, jsonl}, result);
  if (!o.quiet) {
    std::fputs(table.c_str(), stdout);
    std::fflush(stdout);
  }
  const auto& summary_runs = result.summary["runs"];
  if (o.report && std::any_of(summary_runs.begin(), summary_runs.end(),
                              [](const nlohmann::json& r) { return r.value("status", std::string()) == "ok"; })) {
    write_report_after_run(out_dir, o.quiet);
  }
  if (to_do > 0 && cannot_run.size() >= to_do) {
    result.exit_code = static_cast<int>(ExitCode::launch);
    std::fprintf(stderr,
                 "scalebench: error: none of the %zu runs of study %s to do can run here (%s); see the "
                 "table\n",
                 to_do, spec.name.c_str(), cannot_run.begin()->second.c_str());
  } else if (result.failed > 0) {
    if (result.launch_failed > 0) result.exit_code = static_cast<int>(ExitCode::launch);
    std::fprintf(stderr, "scalebench: error: %d of %d study runs failed%s (marked in the table); logs in %s/runs\n",
                 result.failed, result.ran, result.launch_failed > 0 ? ", some to launch" : "", out_dir.c_str());
  }
  return result;
}

}  // namespace scalebench
