#include "compare/compare_runs.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "report/figure_text.hpp"
#include "results/record_check.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/base/json_field.hpp"
#include "scalebench/base/phases.hpp"

namespace scalebench::compare {
namespace {

using nlohmann::json;

// The longest text of one context value shown, in bytes.
constexpr std::size_t kMaxContextText = 160;
// The most distinct values of one field a side's context lists.
constexpr std::size_t kMaxSideValues = 8;

// `s` cut to at most kMaxContextText bytes at a character's start (a record's text is UTF-8, and
// stays so: --json cannot write half a character), "…" added when cut.
std::string shortened(std::string s) {
  if (s.size() <= kMaxContextText) return s;
  std::size_t end = kMaxContextText;
  while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) --end;
  s.resize(end);
  return s + "…";
}

// A JSON value as short text, whatever its kind (context values are shown, never computed with).
std::string as_text(const json& v) {
  std::string s;
  if (v.is_null()) {
    s = "(none)";
  } else if (v.is_string()) {
    s = v.get<std::string>();
  } else if (v.is_array() && std::all_of(v.begin(), v.end(), [](const json& e) { return e.is_string(); })) {
    for (const json& e : v) s += (s.empty() ? "" : ",") + e.get<std::string>();
  } else {
    s = v.dump();
  }
  return shortened(std::move(s));
}

// The leaves of an object by dotted path ("versions.openblas.config").
void leaves(const json& v, const std::string& path, std::map<std::string, std::string>& out) {
  if (v.is_object()) {
    for (const auto& [k, e] : v.items()) leaves(e, path + "." + k, out);
  } else {
    out[path] = as_text(v);
  }
}

const json& member(const json& record, const char* key) {
  static const json none;
  return record.is_object() && record.contains(key) ? record[key] : none;
}

// Each rank's host, allowed CPUs and binding: "0@h:0-3 pin=cores binding=scalebench; …".
std::string placement_text(const json& record) {
  const json& ranks = member(record, "rank_info");
  if (!ranks.is_array()) return "(none)";
  std::string s;
  for (const json& r : ranks) {
    if (!r.is_object()) continue;
    std::string one = fmt::format("{}@{}:{}", as_text(member(r, "rank")), as_text(member(r, "host")),
                                  as_text(member(r, "cpus_allowed")));
    const json& p = member(r, "placement");
    if (p.is_object())
      one += fmt::format(" pin={} binding={}", as_text(member(p, "pin")), as_text(member(p, "binding")));
    s += (s.empty() ? "" : "; ") + one;
  }
  return shortened(std::move(s));
}

std::vector<ContextDifference> context_differences(const json& a, const json& b) {
  std::map<std::string, std::string> la;
  std::map<std::string, std::string> lb;
  for (const char* section : {"versions", "config", "environment"}) {
    if (member(a, section).is_object()) leaves(member(a, section), section, la);
    if (member(b, section).is_object()) leaves(member(b, section), section, lb);
  }
  for (const char* field : {"hosts", "cpu_model", "ranks", "nodes", "ranks_per_node"}) {
    la[field] = as_text(member(a, field));
    lb[field] = as_text(member(b, field));
  }
  la["gpus.models"] = as_text(member(member(a, "gpus"), "models"));
  lb["gpus.models"] = as_text(member(member(b, "gpus"), "models"));
  la["placement"] = placement_text(a);
  lb["placement"] = placement_text(b);
  la["prediction.profile"] = as_text(member(member(a, "prediction"), "profile"));
  lb["prediction.profile"] = as_text(member(member(b, "prediction"), "profile"));
  // Which interval each joule figure covers: the whole repeat (per_result_j, mean_w; an older
  // record's are of an interval it does not state) and the timed interval (absent from older ones).
  for (const char* e : {"per_result_j", "mean_w", "timed_mean_w", "covers"}) {
    la[fmt::format("energy.{}", e)] = as_text(member(member(a, "energy"), e));
    lb[fmt::format("energy.{}", e)] = as_text(member(member(b, "energy"), e));
  }
  la["energy.timed_j.median"] = as_text(member(member(member(a, "energy"), "timed_j"), "median"));
  lb["energy.timed_j.median"] = as_text(member(member(member(b, "energy"), "timed_j"), "median"));
  for (const auto& kv : lb) la.try_emplace(kv.first, "(none)");
  std::vector<ContextDifference> out;
  for (const auto& [k, v] : la) {
    const auto it = lb.find(k);
    const std::string other = it == lb.end() ? "(none)" : it->second;
    if (v != other) out.push_back({k, v, other});
  }
  return out;
}

// The model's end-to-end prediction B/A, when both records carry one.
std::optional<double> predicted_ratio(const json& a, const json& b) {
  const auto predicted = [](const json& r) -> double {
    const json& p = member(r, "prediction");
    if (!p.is_object() || member(p, "available") != true) return -1;
    const json& s = member(member(p, "end_to_end"), "predicted_s");
    return s.is_number() ? s.get<double>() : -1;
  };
  const double pa = predicted(a);
  const double pb = predicted(b);
  if (!(pb >= 0)) return std::nullopt;
  return report::finite_ratio(pb, pa);
}

json optional_number(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

// The distinct values of one field over a side's runs (`section`.`field`, or `field` at the top
// when `section` is null; each item of a list apart), in the order first seen; beyond
// kMaxSideValues, a last item says how many more there are.
json distinct_values(const Side& s, const char* section, const char* field) {
  std::vector<std::string> seen;
  std::set<std::string> more;
  for (const SideRun& r : s.runs) {
    const json& v = member(section != nullptr ? member(r.record, section) : r.record, field);
    std::vector<std::string> values;
    if (v.is_array()) {
      for (const json& e : v) values.push_back(as_text(e));
    } else if (!v.is_null()) {
      values.push_back(as_text(v));
    }
    for (std::string& t : values) {
      if (std::find(seen.begin(), seen.end(), t) != seen.end()) continue;
      if (seen.size() < kMaxSideValues) {
        seen.push_back(std::move(t));
      } else {
        more.insert(std::move(t));
      }
    }
  }
  json out = seen;
  if (!more.empty()) out.push_back(fmt::format("(and {} more)", more.size()));
  return out;
}

}  // namespace

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::same: return "same";
    case Verdict::faster: return "faster";
    case Verdict::slower: return "slower";
    case Verdict::too_few: return "too few repeats";
  }
  return "same";
}

std::vector<std::pair<std::string, std::vector<double>>> phase_repeats(const SideRun& run) {
  const JsonField phases = JsonField(run.record, JsonOrigin{run.where, ""}).sub("phases");
  std::vector<std::pair<std::string, std::vector<double>>> out;
  for (const std::string& name : phases.keys()) {
    if (name.starts_with("setup_")) continue;
    const JsonField p = phases.sub(name);
    // Measured times by the record rule (record_check.hpp): 0 or within its bounds, so that every
    // ratio of two is a finite number.
    std::vector<double> times;
    if (p.has("per_repeat_max_s")) {
      for (const JsonField& t : p.list("per_repeat_max_s")) {
        results::check_measured_seconds(t, "");
        times.push_back(t.raw().get<double>());
      }
    }
    if (times.empty()) {
      results::check_measured_seconds(p, "median_s");
      times.push_back(p.at("median_s").get<double>());
    }
    out.emplace_back(name, std::move(times));
  }
  return out;
}

PhaseComparison compare_phase(const std::string& phase, std::vector<double> a, std::vector<double> b,
                              const CompareOptions& o) {
  PhaseComparison c;
  c.phase = phase;
  c.median_a = median_of(a);
  c.median_b = median_of(b);
  if (c.median_a > 0) {
    c.ratio = report::finite_ratio(c.median_b, c.median_a);
  } else if (c.median_b == 0) {
    c.ratio = 1.0;
  }
  c.test = mann_whitney(a, b);
  c.interval = ratio_interval(a, b, o.confidence);
  c.a = std::move(a);
  c.b = std::move(b);
  const int n = static_cast<int>(c.a.size());
  const int m = static_cast<int>(c.b.size());
  if (smallest_p(n, m) >= o.p_max) {
    c.verdict = Verdict::too_few;
  } else if (c.test.p < o.p_max) {
    const double up = 1 + o.min_change;
    const bool slower = c.ratio ? *c.ratio >= up : true;  // only A took no time
    const bool faster = c.ratio && *c.ratio <= 1 / up;
    c.verdict = slower ? Verdict::slower : faster ? Verdict::faster : Verdict::same;
  }
  return c;
}

RunComparison compare_pair(const SideRun& a, const SideRun& b, const CompareOptions& o) {
  RunComparison r;
  r.key = a.key;
  r.key_b = b.key;
  const auto pa = phase_repeats(a);
  const auto pb = phase_repeats(b);
  bool tested = false;
  bool slower = false;
  bool faster = false;
  for (const auto& phase_a : pa) {
    const std::string& name = phase_a.first;
    if (!o.phases.empty() && std::find(o.phases.begin(), o.phases.end(), name) == o.phases.end()) continue;
    const auto it = std::find_if(pb.begin(), pb.end(), [&](const auto& p) { return p.first == name; });
    if (it == pb.end()) continue;
    r.phases.push_back(compare_phase(name, phase_a.second, it->second, o));
    const Verdict v = r.phases.back().verdict;
    tested = tested || v != Verdict::too_few;
    slower = slower || v == Verdict::slower;
    faster = faster || v == Verdict::faster;
  }
  // end_to_end first, then the phases in the record's order.
  std::stable_partition(r.phases.begin(), r.phases.end(),
                        [](const PhaseComparison& p) { return p.phase == phase::end_to_end; });
  r.verdict = slower ? Verdict::slower : faster ? Verdict::faster : tested ? Verdict::same : Verdict::too_few;
  r.context = context_differences(a.record, b.record);
  r.predicted_ratio = predicted_ratio(a.record, b.record);
  return r;
}

json to_json(const PhaseComparison& p) {
  json j = {{"phase", p.phase},
            {"a", {{"repeats", p.a.size()}, {"median_s", p.median_a}, {"times_s", p.a}}},
            {"b", {{"repeats", p.b.size()}, {"median_s", p.median_b}, {"times_s", p.b}}},
            {"ratio", optional_number(p.ratio)},
            {"interval", nullptr},
            {"u", p.test.u},
            {"p", p.test.p},
            {"p_method", p.test.exact ? "exact" : "normal approximation, tie and continuity corrected"},
            {"smallest_p", smallest_p(static_cast<int>(p.a.size()), static_cast<int>(p.b.size()))},
            {"verdict", verdict_name(p.verdict)}};
  if (p.interval) j["interval"] = {p.interval->lo, p.interval->hi};
  return j;
}

json to_json(const RunComparison& r) {
  json phases = json::array();
  for (const PhaseComparison& p : r.phases) phases.push_back(to_json(p));
  json context = json::array();
  for (const ContextDifference& d : r.context) context.push_back({{"what", d.what}, {"a", d.a}, {"b", d.b}});
  json j = {{"key", r.key},
            {"verdict", verdict_name(r.verdict)},
            {"phases", phases},
            {"context", context},
            {"predicted_ratio", optional_number(r.predicted_ratio)}};
  if (r.key_b != r.key) j["key_b"] = r.key_b;
  return j;
}

json to_json(const Side& s) {
  return {{"path", s.path},
          {"kind", s.kind},
          {"runs", s.runs.size()},
          {"no_ok_run", s.not_ok},
          {"context",
           {{"hosts", distinct_values(s, nullptr, "hosts")},
            {"cpu_model", distinct_values(s, nullptr, "cpu_model")},
            {"gpu_models", distinct_values(s, "gpus", "models")},
            {"scalebench", distinct_values(s, "versions", "scalebench")},
            {"git", distinct_values(s, "versions", "git")},
            {"mpi_library", distinct_values(s, "versions", "mpi_library")}}}};
}

void check_named_phases(const CompareOptions& o, const std::vector<const SideRun*>& runs) {
  if (o.phases.empty()) return;
  std::set<std::string> timed;
  for (const SideRun* r : runs) {
    for (const auto& [name, times] : phase_repeats(*r)) timed.insert(name);
  }
  for (const std::string& name : o.phases) {
    if (timed.contains(name)) continue;
    std::string have;
    for (const std::string& t : timed) have += (have.empty() ? "" : ",") + t;
    throw UsageError(fmt::format("--phases names {}, which no compared run times; they time {}", name,
                                 have.empty() ? std::string("no phase over repeats") : have));
  }
}

}  // namespace scalebench::compare
