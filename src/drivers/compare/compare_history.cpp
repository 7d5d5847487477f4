// `scalebench compare --history DIR...`: each run's trend per phase over many folders of one study
// (oldest first), each folder against the first folder that holds the run, and the first folder
// where a phase changed (slower or faster by the rule of `compare A B`).
#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "compare/compare_inputs.hpp"
#include "compare/compare_output.hpp"
#include "compare/compare_runs.hpp"
#include "compare/compare_table.hpp"
#include "report/figure_text.hpp"
#include "scalebench/base/env.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/drivers/compare.hpp"

namespace scalebench {
namespace compare {
namespace {

using nlohmann::json;

// One phase of one run across the folders: its median in each (none where the run or phase is
// missing) and its comparison with the first folder that holds it.
struct PhaseTrend {
  std::string phase;
  std::vector<std::optional<double>> medians;
  std::vector<std::optional<PhaseComparison>> against_first;
  int first_change = -1;  // index of the first folder whose verdict is slower or faster
  bool slower_at_last = false;
};

struct RunTrend {
  std::string key;
  std::vector<PhaseTrend> phases;
};

// The run `key` in each side (null where missing).
std::vector<const SideRun*> run_in_each(const std::vector<Side>& sides, const std::string& key) {
  std::vector<const SideRun*> out;
  for (const Side& s : sides) {
    const SideRun* found = nullptr;
    for (const SideRun& r : s.runs) {
      if (r.key == key) found = &r;
    }
    out.push_back(found);
  }
  return out;
}

PhaseTrend phase_trend(const std::string& phase, const std::vector<std::optional<std::vector<double>>>& times,
                       const CompareOptions& o) {
  PhaseTrend t;
  t.phase = phase;
  int first = -1;
  int last = -1;
  for (std::size_t i = 0; i < times.size(); ++i) {
    t.medians.emplace_back(times[i] ? std::optional<double>(median_of(*times[i])) : std::nullopt);
    t.against_first.emplace_back();
    if (!times[i]) continue;
    last = static_cast<int>(i);
    if (first < 0) {
      first = static_cast<int>(i);
      continue;
    }
    t.against_first[i] = compare_phase(phase, *times[first], *times[i], o);
    const Verdict v = t.against_first[i]->verdict;
    if (t.first_change < 0 && (v == Verdict::slower || v == Verdict::faster)) t.first_change = static_cast<int>(i);
  }
  t.slower_at_last = last > first && t.against_first[last]->verdict == Verdict::slower;
  return t;
}

RunTrend run_trend(const std::vector<Side>& sides, const std::string& key, const CompareOptions& o) {
  RunTrend r{key, {}};
  std::vector<std::vector<std::pair<std::string, std::vector<double>>>> per_side;
  std::vector<std::string> names;
  for (const SideRun* run : run_in_each(sides, key)) {
    per_side.push_back(run ? phase_repeats(*run) : std::vector<std::pair<std::string, std::vector<double>>>{});
    for (const auto& phase : per_side.back()) {
      if (std::find(names.begin(), names.end(), phase.first) == names.end()) names.push_back(phase.first);
    }
  }
  for (const std::string& name : names) {
    if (!o.phases.empty() && std::find(o.phases.begin(), o.phases.end(), name) == o.phases.end()) continue;
    std::vector<std::optional<std::vector<double>>> times;
    for (const auto& phases : per_side) {
      const auto it = std::find_if(phases.begin(), phases.end(), [&](const auto& p) { return p.first == name; });
      times.emplace_back(it == phases.end() ? std::nullopt : std::optional<std::vector<double>>(it->second));
    }
    r.phases.push_back(phase_trend(name, times, o));
  }
  std::stable_partition(r.phases.begin(), r.phases.end(), [](const PhaseTrend& p) { return p.phase == "end_to_end"; });
  return r;
}

// A folder's cell: the median, marked + slower, - faster, ~ too few repeats against the first.
std::string cell(const PhaseTrend& t, std::size_t i) {
  if (!t.medians[i]) return "-";
  const char* mark = "";
  if (t.against_first[i]) {
    const Verdict v = t.against_first[i]->verdict;
    mark = v == Verdict::slower ? "+" : v == Verdict::faster ? "-" : v == Verdict::too_few ? "~" : "";
  }
  return fmt::format("{:.4g}{}", *t.medians[i], mark);
}

std::string change_text(const PhaseTrend& t) {
  if (t.first_change < 0) return "no change";
  const PhaseComparison& c = *t.against_first[t.first_change];
  return fmt::format("#{}: {} ×{} (p {:.2g})", t.first_change + 1, verdict_name(c.verdict),
                     c.ratio ? report::fixed_text(*c.ratio, 3) : "-", c.test.p);
}

std::string trend_block(const RunTrend& r, std::size_t folders) {
  std::string s = fmt::format("\n{}\n  {:<12}", r.key, "phase");
  for (std::size_t i = 0; i < folders; ++i) s += fmt::format(" {:>11}", fmt::format("#{} s", i + 1));
  s += "  first change\n";
  for (const PhaseTrend& t : r.phases) {
    s += fmt::format("  {:<12}", t.phase);
    for (std::size_t i = 0; i < folders; ++i) s += fmt::format(" {:>11}", cell(t, i));
    s += "  " + change_text(t) + "\n";
  }
  return s;
}

json trend_json(const RunTrend& r) {
  json phases = json::array();
  for (const PhaseTrend& t : r.phases) {
    json medians = json::array();
    json against = json::array();
    for (std::size_t i = 0; i < t.medians.size(); ++i) {
      medians.push_back(t.medians[i] ? json(*t.medians[i]) : json(nullptr));
      against.push_back(t.against_first[i] ? to_json(*t.against_first[i]) : json(nullptr));
    }
    phases.push_back({{"phase", t.phase},
                      {"medians_s", medians},
                      {"against_first", against},
                      {"first_change", t.first_change < 0 ? json(nullptr) : json(t.first_change)},
                      {"slower_at_last", t.slower_at_last}});
  }
  return {{"key", r.key}, {"phases", phases}};
}

}  // namespace
}  // namespace compare

int compare_history(const std::vector<std::string>& folders, const CompareOptions& o) {
  using namespace compare;
  if (folders.size() < 2) throw UsageError("compare --history needs at least two folders, oldest first");
  std::vector<Side> sides;
  std::vector<std::string> keys;
  for (std::size_t i = 0; i < folders.size(); ++i) {
    sides.push_back(read_side(folders[i], fmt::format("folder {}", i + 1)));
    for (const SideRun& r : sides.back().runs) {
      if (std::find(keys.begin(), keys.end(), r.key) == keys.end()) keys.push_back(r.key);
    }
  }
  std::vector<const SideRun*> all;
  for (const Side& s : sides) {
    for (const SideRun& r : s.runs) all.push_back(&r);
  }
  check_named_phases(o, all);
  std::vector<RunTrend> trends;
  bool slower = false;
  for (const std::string& key : keys) {
    trends.push_back(run_trend(sides, key, o));
    for (const PhaseTrend& t : trends.back().phases) slower = slower || t.slower_at_last;
  }
  const int code = slower ? kCompareSlowerExit : 0;
  for (const Side& s : sides) {
    for (const std::string& w : s.warnings) std::fprintf(stderr, "scalebench compare: warning: %s\n", w.c_str());
  }
  std::string out = fmt::format("scalebench compare --history: {} folders, each against the first that holds the run; "
                                "{}; + slower, - faster, ~ too few repeats\n",
                                folders.size(), rule_text(o));
  for (std::size_t i = 0; i < folders.size(); ++i) {
    out += fmt::format("  #{} {} ({} runs)\n", i + 1, folders[i], sides[i].runs.size());
  }
  for (const RunTrend& r : trends) out += trend_block(r, folders.size());
  out += fmt::format("\n{}\n", slower
                                   ? fmt::format("a run is slower in its last folder than in its first; exit {}", code)
                                   : "no run is slower in its last folder than in its first");
  std::fputs(out.c_str(), stdout);
  json jt = json::array();
  for (const RunTrend& r : trends) jt.push_back(trend_json(r));
  json js = json::array();
  for (const Side& s : sides) js.push_back(to_json(s));
  write_outputs({{"schema_version", 1},
                 {"subcommand", "compare"},
                 {"mode", "history"},
                 {"command_line", command_line()},
                 {"folders", folders},
                 {"sides", js},
                 {"options", options_json(o)},
                 {"runs", jt},
                 {"exit_code", code}},
                o);
  return code;
}

}  // namespace scalebench
