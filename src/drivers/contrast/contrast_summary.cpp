// The contrast's summary: one row per step (contrast.json's "runs"), rendered as the table on
// stdout and as contrast.csv by the shared writers (summary_table.hpp).
#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "contrast/contrast_steps.hpp"
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

namespace scalebench::contrast {
using report::Align;
using report::Cells;
using report::TextColumn;

namespace {

// The single-core rate of each workload: the speed-ups are rate ratios (naive runs a smaller problem).
std::map<std::string, double> single_core_rates(const std::vector<ContrastStep>& steps) {
  std::map<std::string, double> rates;
  for (const auto& s : steps) {
    if (s.mode == Mode::single_core && s.exit_code == 0) rates[name_of(*s.workload)] = s.summary.value("rate", 0.0);
  }
  return rates;
}

// A row of contrast.json: the step's summary, its size, status and launch, its speed-up over
// single-core and efficiency per core.
nlohmann::json contrast_row(const ContrastOptions& o, const ContrastStep& s,
                            const std::map<std::string, double>& base_rates) {
  nlohmann::json row = s.summary.is_null() ? nlohmann::json{{"workload", name_of(*s.workload)}, {"mode", row_mode(s)}}
                                           : s.summary;
  row["size"] = s.workload->size_text(row_size(o, s));
  row["status"] = s.skipped ? "skipped" : s.exit_code == 0 ? "ok" : s.timed_out ? "timeout" : "failed";
  if (!s.reason.empty()) row["reason"] = s.reason;
  if (!s.skipped) {
    row["nodes"] = s.nodes;
    row["command"] = join_args(s.argv);
    row["record"] = s.record_path;
    row["exit_code"] = s.exit_code;
  }
  if (s.from_earlier) row["from_earlier"] = true;
  const auto base = base_rates.find(name_of(*s.workload));
  const double rate = row.value("rate", 0.0);
  // Guarded: a ratio beyond a double's range is left out (shown as "-"), never inf or nan.
  const std::optional<double> speedup = base != base_rates.end() && rate > 0 && s.exit_code == 0
                                            ? report::finite_ratio(rate, base->second)
                                            : std::nullopt;
  if (speedup) {
    row["speedup_vs_single_core"] = *speedup;
    const int cores = row.value("ranks", 0) * row.value("threads_per_rank", 0);
    if (!s.on_gpus && s.mode != Mode::naive && cores > 0) {
      row["parallel_efficiency"] = *speedup / cores;
    }
  }
  return row;
}

const std::vector<TextColumn>& text_columns() {
  static const std::vector<TextColumn> columns = {{"workload", 11, Align::left, ""},
                                                  {"mode", 14, Align::left, ""},
                                                  {"nodes", 5, Align::right, ""},
                                                  {"size", 14, Align::left, "  "},
                                                  {"ranks x thr", 13, Align::left, ""},
                                                  {"time s", 11, Align::right, ""},
                                                  {"predicted s, miss", 24, Align::left, "  "},
                                                  {"rate", 18, Align::right, ""},
                                                  {"speed-up", 10, Align::right, ""},
                                                  {"eff.", 7, Align::right, ""},
                                                  {"J timed", 12, Align::right, ""},
                                                  {"compute/comm/transfer", 28, Align::left, "  "},
                                                  {"run/pdgemm", 15, Align::left, ""},
                                                  {"status", 0, Align::left, ""}};
  return columns;
}

// A row's energy (energy_columns.hpp), null when the row has none.
const nlohmann::json& energy_of(const nlohmann::json& row) {
  static const nlohmann::json none;
  const auto it = row.find("energy");
  return it == row.end() ? none : *it;
}

Cells text_cells(const ContrastStep& s, const nlohmann::json& row) {
  const bool ok = s.exit_code == 0;
  std::string where = "-";
  if (row.contains("share")) {
    where = fmt::format("{}% / {}% / {}%", report::fixed_text(100 * row["share"]["compute"].get<double>(), 0),
                        report::fixed_text(100 * row["share"]["communication"].get<double>(), 0),
                        report::fixed_text(100 * row["share"]["transfer"].get<double>(), 0));
  }
  const std::string status = row["status"].get<std::string>();
  return {row["workload"].get<std::string>(),
          row["mode"].get<std::string>(),
          row.contains("nodes") ? std::to_string(row["nodes"].get<int>()) : "-",
          row["size"].get<std::string>(),
          row.contains("ranks")
              ? fmt::format("{}x{}{}", row["ranks"].get<int>(), row["threads_per_rank"].get<int>(),
                            row.value("gpus", 0) > 0 ? fmt::format(" {}GPU", row["gpus"].get<int>()) : "")
              : "-",
          row.contains("time_s") && ok ? report::fixed_text(row["time_s"].get<double>(), 4) : "-",
          ok ? report::predicted_cell(report::predicted_figures(s.record), row.value("time_s", 0.0)) : "-",
          row.contains("rate") && ok ? results::human_rate(row.value("rate", 0.0), row["rate_unit"].get<std::string>())
                                     : "-",
          row.contains("speedup_vs_single_core")
              ? report::fixed_text(row["speedup_vs_single_core"].get<double>(), 2) + "x"
              : "-",
          row.contains("parallel_efficiency")
              ? report::fixed_text(100 * row["parallel_efficiency"].get<double>(), 0) + "%"
              : "-",
          ok ? report::energy_cell(energy_of(row)) : "-",
          where,
          ok ? report::peer_cell(row.value("peer", nlohmann::json())) : "-",
          status == "ok" ? status : status + ": " + s.reason};
}

Cells csv_heads() {
  return {"workload",
          "mode",
          "nodes",
          "ranks",
          "threads_per_rank",
          "gpus",
          "size",
          "time_s",
          "rate",
          "rate_unit",
          "speedup_vs_single_core",
          "parallel_efficiency",
          "compute_share",
          "communication_share",
          "transfer_share",
          "status",
          "reason",
          "predicted_s",
          "prediction_miss",
          "worst_phase",
          "energy_per_result_j",
          "run_vs_pdgemm_tuned",
          "run_vs_pdgemm_shipped",
          "energy_timed_j",
          "energy_interval"};
}

Cells csv_cells(const nlohmann::json& row) {
  auto num = [&](const char* k) { return row.contains(k) ? fmt::format("{}", row[k].get<double>()) : std::string(); };
  auto share = [&](const char* k) {
    return row.contains("share") ? fmt::format("{}", row["share"][k].get<double>()) : std::string();
  };
  const nlohmann::json& pr = row.contains("predicted") ? row["predicted"] : nlohmann::json();
  auto predicted = [&](const char* k) { return pr.is_object() ? pr[k].dump() : std::string(); };
  return {row["workload"].get<std::string>(),
          row["mode"].get<std::string>(),
          num("nodes"),
          num("ranks"),
          num("threads_per_rank"),
          num("gpus"),
          row.value("size", std::string()),
          num("time_s"),
          num("rate"),
          row.value("rate_unit", std::string()),
          num("speedup_vs_single_core"),
          num("parallel_efficiency"),
          share("compute"),
          share("communication"),
          share("transfer"),
          row["status"].get<std::string>(),
          row.value("reason", std::string()),
          predicted("predicted_s"),
          predicted("miss"),
          pr.is_object() ? pr["worst_phase"].get<std::string>() : std::string(),
          row["status"] == "ok" ? report::energy_field(energy_of(row)) : std::string(),
          report::peer_ratio_field(row.value("peer", nlohmann::json()), "tuned"),
          report::peer_ratio_field(row.value("peer", nlohmann::json()), "shipped"),
          row["status"] == "ok" ? report::energy_timed_field(energy_of(row)) : std::string(),
          row["status"] == "ok" ? report::energy_interval_field(energy_of(row)) : std::string()};
}

// The line under the table: where no finished row counted energy, why (said once); else what the
// energy column's marks mean, where it marks a figure ("" when none, or when no row finished).
std::string energy_note(const nlohmann::json& rows) {
  std::string reason;
  bool finished = false, counted = false, whole = false, not_stated = false;
  for (const auto& row : rows) {
    if (row["status"] != "ok") continue;
    finished = true;
    if (const auto j = report::result_joules(energy_of(row))) {
      counted = true;
      whole = whole || j->interval == report::kIntervalRepeat;
      not_stated = not_stated || j->interval == report::kIntervalNotStated;
    } else if (reason.empty()) {
      reason = report::energy_reason(energy_of(row));
    }
  }
  if (counted) return report::energy_marks_line(whole, not_stated);
  return finished ? report::energy_not_counted_line(reason) : "";
}

std::string table_title(const SummaryContext& ctx) {
  const Topology& topo = *ctx.topo;
  return fmt::format("scalebench contrast on {} ({} cores, {} NUMA domain{}, {} GPU{}); results in {}\n", topo.host(),
                     topo.cores().size(), topo.cpu_numa_domains().size(),
                     topo.cpu_numa_domains().size() == 1 ? "" : "s", topo.visible_gpus().size(),
                     topo.visible_gpus().size() == 1 ? "" : "s", ctx.out_dir);
}

nlohmann::json report_document(const SummaryContext& ctx, const ContrastResult& result, nlohmann::json rows) {
  return {{"schema_version", kSchemaVersion},
          {"subcommand", "contrast"},
          {"command_line", command_line()},
          {"host", ctx.topo->host()},
          {"launcher", ctx.setup->launcher},
          {"nodes", ctx.setup->nodes},
          {"nodes_from", ctx.setup->nodes_from},
          {"sizing", ctx.sizing},
          {"calibration", ctx.calibration},
          {"out_dir", ctx.out_dir},
          {"runs_file", ctx.out_dir + "/runs.jsonl"},
          {"from_earlier", ctx.from_earlier},
          {"runs", std::move(rows)},
          {"ok", ctx.failed == 0},
          {"exit_code", result.exit_code},
          {"finished_at", utc_now_iso8601()}};
}

}  // namespace

// One contrast row from a run record.
nlohmann::json summarize(const ContrastStep& s) {
  const auto& r = s.record;
  nlohmann::json row = {{"workload", name_of(*s.workload)}, {"mode", row_mode(s)}};
  if (r.is_null()) return row;
  const RunFigures f = s.workload->figures(r);
  row["ranks"] = f.ranks;
  row["threads_per_rank"] = f.threads;
  row["gpus"] = s.on_gpus ? f.ranks : 0;
  row["time_s"] = f.time_s;
  row["rate"] = f.rate;
  row["compute_rate"] = f.compute_rate;
  row["rate_unit"] = f.rate_unit;
  const double total = f.compute_s + f.comm_s + f.transfer_s;
  row["share"] = {{"compute", total > 0 ? f.compute_s / total : 0.0},
                  {"communication", total > 0 ? f.comm_s / total : 0.0},
                  {"transfer", total > 0 ? f.transfer_s / total : 0.0}};
  row["ok"] = r.value("ok", false);
  row["predicted"] = report::predicted_json(report::predicted_figures(r));
  row["energy"] = report::energy_json(r);
  if (const nlohmann::json peer = report::peer_json(r); !peer.is_null()) row["peer"] = peer;
  return row;
}

void write_contrast_summary(const ContrastOptions& o, const SummaryContext& ctx, ContrastResult& result) {
  const auto base_rates = single_core_rates(result.steps);
  nlohmann::json rows = nlohmann::json::array();
  std::string table = table_title(ctx) + report::text_header(text_columns());
  std::string csv = report::csv_row(csv_heads());
  for (const auto& s : result.steps) {
    rows.push_back(contrast_row(o, s, base_rates));
    table += report::text_row(text_columns(), text_cells(s, rows.back()));
    csv += report::csv_row(csv_cells(rows.back()));
  }
  if (std::any_of(result.steps.begin(), result.steps.end(), [](const auto& s) { return s.mode == Mode::naive; })) {
    table += "naive rows run a smaller problem (the size column): compare their rates, not their times\n";
  }
  table += energy_note(rows);
  if (!o.quiet) {
    std::fputs(table.c_str(), stdout);
    std::fflush(stdout);
  }
  result.report = report_document(ctx, result, std::move(rows));
  write_results_json(ctx.out_dir + "/contrast.json", result.report);
  write_results_file(ctx.out_dir + "/contrast.csv", csv);
  if (o.json_path) write_json_atomic(*o.json_path, result.report);
  if (o.csv_path) write_file_atomic(*o.csv_path, csv);
}

}  // namespace scalebench::contrast
