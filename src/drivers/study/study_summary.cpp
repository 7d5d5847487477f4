#include "study/study_summary.hpp"

#include <algorithm>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "report/energy_columns.hpp"
#include "report/figure_text.hpp"
#include "report/peer_columns.hpp"
#include "report/prediction_columns.hpp"
#include "report/summary_table.hpp"
#include "results/files.hpp"
#include "scalebench/base/env.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/base/host.hpp"
#include "scalebench/base/output_file.hpp"
#include "scalebench/workloads/run_context.hpp"
#include "study/baseline.hpp"
#include "study/optima.hpp"

namespace scalebench::study {
using report::Align;
using report::Cells;
using report::csv_row;
using report::energy_cell;
using report::energy_field;
using report::energy_interval_field;
using report::energy_json;
using report::energy_marks_line;
using report::energy_not_counted_line;
using report::energy_reason;
using report::energy_timed_field;
using report::finite_ratio;
using report::fixed_text;
using report::interval_words;
using report::kIntervalNotStated;
using report::kIntervalRepeat;
using report::markdown_header;
using report::markdown_row;
using report::peer_json;
using report::predicted_cell;
using report::predicted_figures;
using report::predicted_json;
using report::PredictedFigures;
using report::result_joules;
using report::text_header;
using report::text_row;
using report::TextColumn;
using results::human_rate;
using results::ResultsStore;
using results::run_figures;

namespace {

// Baseline runs that did not finish ok, each named with its reason under the table up to this many.
constexpr std::size_t kBaselineLinesShown = 3;

// One planned run in the summary: its newest line and the figures of its record.
struct Row {
  const StudyRun* run;
  const nlohmann::json* line;
  RunFigures f;
  std::string series;     // the options other than ranks and threads
  nlohmann::json energy;  // energy_json of its record (null without one)
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
    // Joules against joules of the same interval only.
    const auto joules = result_joules(row.energy), base_joules = result_joules(base_of[i]->energy);
    const bool alike = joules && base_joules && joules->interval == base_joules->interval;
    const std::optional<double> ratio = finite_ratio(base_of[i]->f.time_s, row.f.time_s);
    const std::optional<double> energy_ratio = alike ? finite_ratio(base_joules->joules, joules->joules)
                                                     : std::optional<double>();
    if (!ratio) continue;
    compared.push_back({group.empty() ? "runs" : group, size == c.end() ? 0.0 : study::size_value(size->second), *ratio,
                        row.run->index, energy_ratio.value_or(0.0), energy_ratio ? joules->interval : ""});
  }
  nlohmann::json groups = study::summarize_groups(compared, size_key, size_swept);
  lines += fmt::format("speed-up = baseline time / time; baseline: the run with {} and the same other values\n", named);
  for (const auto& g : groups) {
    std::string ratios;
    for (const auto& p : g["points"]) {
      ratios += fmt::format("{}{}x", ratios.empty() ? "" : ", ", fixed_text(p["ratio"].get<double>(), 2));
      if (size_swept) ratios += fmt::format(" at {}={:g}", size_key, p["size"].get<double>());
    }
    lines += fmt::format("  {} against {}: {}", g["group"].get<std::string>(), named, ratios);
    if (g.contains("crossover")) lines += "; crossover " + g["crossover"]["text"].get<std::string>();
    if (g.contains("energy_crossover")) {
      const auto& e = g["energy_crossover"];
      const std::string what = interval_words(e.value("interval", std::string(kIntervalNotStated)));
      lines += e["same_as_time"].get<bool>() ? "; the same in energy (" + what + ")"
                                             : "; in energy (" + what + ") " + e["text"].get<std::string>();
    }
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

// The rows of the summary, one per planned run in plan order, with the line shown for it.
std::vector<Row> summary_rows(const std::vector<StudyRun>& runs, const ResultsStore& store) {
  std::vector<Row> rows;
  for (const auto& r : runs) {
    Row row{&r, store.shown(r.key), {}, {}, nullptr};
    if (row.line != nullptr && !(*row.line)["record"].is_null()) {
      row.f = run_figures((*row.line)["record"]);
      row.energy = energy_json((*row.line)["record"]);
    }
    for (const auto& [k, v] : r.options) {
      if (k != "threads") row.series += fmt::format("{}={} ", k, v);
    }
    rows.push_back(row);
  }
  return rows;
}

// A row of summary.json: the run, its status and, when ok, its figures against its baseline.
nlohmann::json row_json(const Row& row, const Row* base, const std::map<int, std::string>& cannot_run) {
  const auto& r = *row.run;
  const auto skip = cannot_run.find(r.index);
  const std::string status = row.line                   ? (*row.line)["status"].get<std::string>()
                             : skip != cannot_run.end() ? "skipped"
                                                        : "not run";
  nlohmann::json j = {
      {"index", r.index}, {"key", r.key}, {"ranks", r.ranks}, {"nodes", r.nodes}, {"ranks_per_node", r.ranks_per_node},
      {"status", status}};
  nlohmann::json opts = nlohmann::json::object();
  for (const auto& [k, v] : r.options) opts[k] = v;
  j["options"] = opts;
  if (status == "ok") {
    j["time_s"] = row.f.time_s;
    j["rate"] = row.f.rate;
    j["rate_unit"] = row.f.rate_unit;
    j["resources"] = row.f.resources();
    j["gpu"] = row.f.gpu;
    j["phases_s"] = {{"compute", row.f.compute_s}, {"communication", row.f.comm_s}, {"transfer", row.f.transfer_s}};
    // Guarded: a figure that is not a finite number is left out (shown as "-"), never inf or nan.
    if (const std::optional<double> speedup = base != nullptr ? finite_ratio(base->f.time_s, row.f.time_s)
                                                              : std::optional<double>()) {
      j["baseline_index"] = base->run->index;
      j["speedup"] = *speedup;
      // Cores against GPUs have no common unit: no efficiency across kinds.
      j["efficiency"] = row.f.resources() > 0 && base->f.gpu == row.f.gpu
                            ? finite_ratio(*speedup * base->f.resources(), row.f.resources()).value_or(0.0)
                            : 0.0;
    }
    j["record_path"] = (*row.line)["record_path"];
    j["predicted"] = predicted_json(predicted_figures((*row.line)["record"]));
    j["energy"] = row.energy;
    // gemm --peer scalapack: the run against PDGEMM, shipped and tuned (peer_columns.hpp).
    if (row.line != nullptr) {
      if (nlohmann::json peer = peer_json((*row.line)["record"]); !peer.is_null()) j["peer"] = std::move(peer);
    }
  } else if (row.line) {
    j["reason"] = row.line->value("reason", std::string());
  } else if (skip != cannot_run.end()) {
    j["reason"] = "cannot run here: " + skip->second;
  }
  return j;
}

// The swept keys shown as columns (nodes has its own column).
std::vector<std::string> swept_columns(const StudySpec& spec) {
  std::vector<std::string> swept;
  for (const auto& [k, vs] : spec.sweep) {
    if (k != "nodes") swept.push_back(k);
  }
  return swept;
}

std::string swept_value(const StudyRun& r, const std::string& k) {
  if (k == "ranks") return std::to_string(r.ranks);
  if (k == "ranks_per_node") return std::to_string(r.ranks_per_node);
  for (const auto& [ok, ov] : r.options) {
    if (ok == k) return ov;
  }
  return "-";
}

// The finished runs as their series' optima see them: the series named by its swept values other
// than the placement keys (the runs of a series differ only in those), each run by its cores or GPUs.
std::vector<SeriesRun> series_runs(const StudySpec& spec, const std::vector<Row>& rows) {
  static const std::set<std::string> placement = {"ranks", "threads", "nodes", "ranks_per_node"};
  std::vector<SeriesRun> out;
  for (const auto& row : rows) {
    if (!row.ok()) continue;
    std::string series;
    for (const auto& [k, vs] : spec.sweep) {
      if (placement.count(k) == 0)
        series += fmt::format("{}{}={}", series.empty() ? "" : " ", k, swept_value(*row.run, k));
    }
    const int n = row.f.resources();
    std::string where = fmt::format("{} {}{}", n, row.f.gpu ? "GPU" : "core", n == 1 ? "" : "s");
    if (row.run->nodes > 1) where += fmt::format(" on {} nodes", row.run->nodes);
    const auto joules = result_joules(row.energy);
    out.push_back({series.empty() ? "runs" : series, row.run->index, where, row.f.time_s,
                   joules ? std::optional<double>(joules->joules) : std::nullopt,
                   joules ? row.energy.value("counted", std::string()) : std::string(),
                   joules ? joules->interval : std::string(kIntervalNotStated)});
  }
  return out;
}

// The optima of each series: marked on their rows of summary.json, and the lines under the table
// (with "energy not counted" said once where no finished run counted its energy).
nlohmann::json mark_optima(const StudySpec& spec, const std::vector<Row>& rows, nlohmann::json& out_rows,
                           std::string& lines) {
  const std::vector<SeriesRun> finished = series_runs(spec, rows);
  nlohmann::json optima = series_optima(finished);
  for (auto& j : out_rows) {
    for (const auto& o : optima) {
      if (o["time_optimal"]["index"] == j["index"]) j["time_optimal"] = true;
      if (o.contains("energy_optimal") && o["energy_optimal"]["index"] == j["index"]) j["energy_optimal"] = true;
    }
  }
  const bool counted = std::any_of(finished.begin(), finished.end(), [](const SeriesRun& r) { return r.per_result_j; });
  if (!optima.empty()) {
    lines += counted ? "fastest run (time s *) and least energy (J timed *) of each series:\n"
                     : "fastest run of each series (time s *):\n";
    lines += optima_lines(optima);
  }
  if (counted) {
    const auto shown = [&](const char* interval) {
      return std::any_of(finished.begin(), finished.end(),
                         [&](const SeriesRun& r) { return r.per_result_j && r.interval == interval; });
    };
    lines += energy_marks_line(shown(kIntervalRepeat), shown(kIntervalNotStated));
  }
  if (!finished.empty() && !counted) {
    std::string reason;
    for (const auto& row : rows) {
      if (row.ok() && reason.empty()) reason = energy_reason(row.energy);
    }
    lines += energy_not_counted_line(reason);
  }
  return optima;
}

// What the three formats show of one row.
struct RowTexts {
  bool ok = false;
  bool has_reason = false;
  std::string status, reason, shares, predicted;
  double speedup = 0, efficiency = 0;
  bool fastest = false, least_energy = false;  // the optima of its series (optima.hpp)
};

RowTexts row_texts(const Row& row, const nlohmann::json& j) {
  RowTexts t;
  t.status = j["status"].get<std::string>();
  t.ok = t.status == "ok";
  t.has_reason = j.contains("reason");
  t.reason = j.value("reason", std::string());
  t.speedup = j.value("speedup", 0.0);
  t.efficiency = j.value("efficiency", 0.0);
  t.fastest = j.value("time_optimal", false);
  t.least_energy = j.value("energy_optimal", false);
  if (t.ok) {
    t.shares = fmt::format("{}/{}/{}", fixed_text(row.f.compute_s, 3), fixed_text(row.f.comm_s, 3),
                           fixed_text(row.f.transfer_s, 3));
    t.predicted = predicted_cell(predicted_figures((*row.line)["record"]), row.f.time_s);
  }
  return t;
}

std::vector<TextColumn> text_columns(const std::vector<std::string>& swept) {
  std::vector<TextColumn> c = {{"#", 4, Align::right, ""}, {"nodes", 5}};
  for (const auto& k : swept) c.push_back({k, 10});
  const std::vector<TextColumn> rest = {
      {"cores", 7}, {"time s", 10},  {"predicted s, miss", 24, Align::left, "  "},     {"rate", 16}, {"speed-up", 9},
      {"eff.", 6},  {"J timed", 12}, {"compute/comm/transfer", 22, Align::left, "  "}, {"status", 0}};
  c.insert(c.end(), rest.begin(), rest.end());
  return c;
}

Cells text_cells(const Row& row, const RowTexts& t, const std::vector<std::string>& swept) {
  const auto& r = *row.run;
  Cells c = {std::to_string(r.index), std::to_string(r.nodes)};
  for (const auto& k : swept) c.push_back(swept_value(r, k));
  const auto dash = [&](const std::string& s) { return t.ok ? s : std::string("-"); };
  c.push_back(dash(fmt::format("{}{}", row.f.resources(), row.f.gpu ? "G" : "")));
  c.push_back(dash(fixed_text(row.f.time_s, 4) + (t.fastest ? "*" : "")));
  c.push_back(dash(t.predicted));
  c.push_back(dash(human_rate(row.f.rate, row.f.rate_unit)));
  c.push_back(t.speedup > 0 ? fixed_text(t.speedup, 2) + "x" : "-");
  c.push_back(t.efficiency > 0 ? fixed_text(100 * t.efficiency, 0) + "%" : "-");
  c.push_back(dash(energy_cell(row.energy) + (t.least_energy ? "*" : "")));
  c.push_back(dash(t.shares));
  c.push_back(t.ok || !t.has_reason ? t.status : t.status + ": " + t.reason);
  return c;
}

Cells csv_heads(const std::vector<std::string>& swept) {
  Cells h = {"index", "key", "ranks", "nodes", "ranks_per_node"};
  for (const auto& k : swept) {
    if (k != "ranks" && k != "ranks_per_node") h.push_back(k);
  }
  for (const char* k : {"resources", "gpu", "time_s", "rate", "rate_unit", "compute_s", "communication_s", "transfer_s",
                        "speedup", "efficiency", "status", "reason", "predicted_s", "prediction_miss", "worst_phase",
                        "energy_per_result_j", "optimal", "energy_timed_j", "energy_interval"}) {
    h.emplace_back(k);
  }
  return h;
}

Cells csv_cells(const Row& row, const RowTexts& t, const std::vector<std::string>& swept) {
  const auto& r = *row.run;
  Cells c = {std::to_string(r.index), r.key, std::to_string(r.ranks), std::to_string(r.nodes),
             std::to_string(r.ranks_per_node)};
  for (const auto& k : swept) {
    if (k != "ranks" && k != "ranks_per_node") c.push_back(swept_value(r, k));
  }
  const auto num = [](double v) { return v > 0 ? fmt::format("{}", v) : std::string(); };
  if (!t.ok) {
    c.resize(c.size() + 10);
    c.insert(c.end(), {t.status, t.reason, "", "", "", "", "", "", ""});
    return c;
  }
  const PredictedFigures p = predicted_figures((*row.line)["record"]);
  c.insert(c.end(), {std::to_string(row.f.resources()), row.f.gpu ? "1" : "0", fmt::format("{}", row.f.time_s),
                     fmt::format("{}", row.f.rate), row.f.rate_unit, fmt::format("{}", row.f.compute_s),
                     fmt::format("{}", row.f.comm_s), fmt::format("{}", row.f.transfer_s), num(t.speedup),
                     num(t.efficiency), t.status, ""});
  if (p.available) {
    c.insert(c.end(), {fmt::format("{}", p.predicted_s), fmt::format("{}", p.miss), p.worst_phase});
  } else {
    c.insert(c.end(), {"", "", ""});
  }
  c.push_back(energy_field(row.energy));
  c.emplace_back(t.fastest && t.least_energy ? "time+energy" : t.fastest ? "time" : t.least_energy ? "energy" : "");
  c.push_back(energy_timed_field(row.energy));
  c.push_back(energy_interval_field(row.energy));
  return c;
}

Cells markdown_heads(const std::vector<std::string>& swept) {
  Cells h = {"#", "nodes"};
  h.insert(h.end(), swept.begin(), swept.end());
  for (const char* k : {"cores or GPUs", "time s", "predicted s, miss", "rate", "speed-up", "efficiency", "J timed",
                        "compute / comm / transfer s", "status"}) {
    h.emplace_back(k);
  }
  return h;
}

Cells markdown_cells(const Row& row, const RowTexts& t, const std::vector<std::string>& swept) {
  Cells c = {std::to_string(row.run->index), std::to_string(row.run->nodes)};
  for (const auto& k : swept) c.push_back(swept_value(*row.run, k));
  if (!t.ok) {
    c.insert(c.end(), 8, "—");
    c.push_back(t.status);
    return c;
  }
  const std::string joules = energy_cell(row.energy);
  c.insert(c.end(), {fmt::format("{}{}", row.f.resources(), row.f.gpu ? " GPU" : ""),
                     fixed_text(row.f.time_s, 4) + (t.fastest ? " *" : ""), t.predicted,
                     human_rate(row.f.rate, row.f.rate_unit), t.speedup > 0 ? fixed_text(t.speedup, 2) + "×" : "—",
                     t.efficiency > 0 ? fixed_text(100 * t.efficiency, 0) + "%" : "—",
                     (joules == "-" ? "—" : joules) + (t.least_energy ? " *" : ""), t.shares, t.status});
  return c;
}

// The three renderings of the summary, filled row by row.
struct Rendered {
  std::string table, csv, md;
};

Rendered render(const StudySpec& spec, const std::vector<Row>& rows, const nlohmann::json& out_rows) {
  const std::vector<std::string> swept = swept_columns(spec);
  const auto columns = text_columns(swept);
  Rendered out{text_header(columns), csv_row(csv_heads(swept)),
               fmt::format("# Study {}\n\n{}\n\n", spec.name, spec.description) +
                   markdown_header(markdown_heads(swept))};
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const RowTexts t = row_texts(rows[i], out_rows[i]);
    out.table += text_row(columns, text_cells(rows[i], t, swept));
    out.csv += csv_row(csv_cells(rows[i], t, swept));
    out.md += markdown_row(markdown_cells(rows[i], t, swept));
  }
  return out;
}

nlohmann::json summary_document(const StudySpec& spec, const SummaryPlace& place, const std::string& jsonl,
                                const StudyResult& result, nlohmann::json out_rows, nlohmann::json baseline) {
  return {{"schema_version", kSchemaVersion},
          {"subcommand", "study"},
          {"study", spec.name},
          {"description", spec.description},
          {"file", spec.file},
          {"workload", spec.workload},
          {"launcher", place.launcher},
          {"command_line", command_line()},
          {"runs_file", jsonl},
          {"runs", std::move(out_rows)},
          {"ran_now", result.ran},
          {"from_earlier", result.from_earlier},
          {"failed_now", result.failed},
          {"cannot_run_here", static_cast<int>(place.cannot_run.size())},
          {"baseline", std::move(baseline)},
          {"definitions",
           "time_s: median end-to-end of the run; speedup = baseline time / time, baseline = the run named "
           "by the study's baseline (its values for those keys, the same other values), else the run of the "
           "same series (options other than ranks and threads) with the fewest cores, or GPUs; efficiency "
           "= speedup x baseline cores / cores (cores against cores, GPUs against GPUs); energy.j: the joules of "
           "one verified result (one timed repeat) the table shows, over energy.interval: timed (the timed "
           "interval, the time column's), repeat (the whole repeat with its check: the timed interval too short "
           "for the counters) or unstated (an older record); energy.per_result_j: the whole repeat's, "
           "energy.timed_j: the timed interval's; optima: per series (runs alike but "
           "in ranks, threads and nodes) of two runs or more, the run with the least time_s and the one with "
           "the least energy.per_result_j; baseline.groups[].energy_crossover: where baseline joules / joules "
           "reaches 1"},
          {"finished_at", utc_now_iso8601()}};
}

}  // namespace

std::string write_summary(const StudySpec& spec, const std::vector<StudyRun>& runs, const ResultsStore& store,
                          const SummaryPlace& place, StudyResult& result) {
  const std::string& jsonl = store.jsonl_path();
  const std::vector<Row> rows = summary_rows(runs, store);
  const std::vector<const Row*> base_of = baselines(spec, rows);
  nlohmann::json out_rows = nlohmann::json::array();
  std::vector<std::string> why_not;  // each row's status and reason, for the baseline's lines
  for (std::size_t i = 0; i < rows.size(); ++i) {
    out_rows.push_back(row_json(rows[i], base_of[i], place.cannot_run));
    const nlohmann::json& j = out_rows.back();
    const std::string status = j["status"].get<std::string>(), reason = j.value("reason", std::string());
    why_not.push_back(reason.empty() ? status : fmt::format("{}: {}", status, reason));
  }
  std::string optima_notes;
  nlohmann::json optima = mark_optima(spec, rows, out_rows, optima_notes);
  Rendered out = render(spec, rows, out_rows);
  out.table += optima_notes;
  if (!optima_notes.empty()) out.md += "\n" + optima_notes;
  out.table = fmt::format("scalebench study {}: {} runs ({} run now, {} from earlier, {} failed, {} cannot run here); "
                          "{}\n",
                          spec.name, runs.size(), result.ran, result.from_earlier, result.failed,
                          place.cannot_run.size(), jsonl) +
              out.table;
  nlohmann::json baseline = nullptr;
  if (!spec.baseline.empty()) {
    std::string notes;
    baseline = baseline_section(spec, rows, base_of, why_not, notes);
    out.table += notes;
    out.md += "\n" + notes;
  }
  if (store.unusable() > 0) {
    out.table += fmt::format("note: {} unreadable line(s) in {} left in place and not used\n", store.unusable(), jsonl);
  }
  result.exit_code = result.failed > 0 ? static_cast<int>(ExitCode::partial) : 0;
  result.summary = summary_document(spec, place, jsonl, result, std::move(out_rows), std::move(baseline));
  result.summary["optima"] = std::move(optima);
  write_results_json(place.out_dir + "/summary.json", result.summary);
  write_results_file(place.out_dir + "/summary.csv", out.csv);
  write_results_file(place.out_dir + "/summary.md", out.md);
  return out.table;
}

}  // namespace scalebench::study
