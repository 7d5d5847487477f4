#include "study/optima.hpp"

#include <map>
#include <set>

#include <fmt/format.h>

#include "report/energy_columns.hpp"
#include "report/figure_text.hpp"

namespace scalebench::study {
using report::interval_words;
using report::kIntervalNotStated;

namespace {

nlohmann::json energy_optimum(const std::vector<const SeriesRun*>& members, nlohmann::json& out) {
  std::set<std::string> counters, intervals;
  std::size_t counted = 0;
  const SeriesRun* best = nullptr;
  for (const SeriesRun* r : members) {
    if (!r->per_result_j) continue;
    ++counted;
    counters.insert(r->counted);
    intervals.insert(r->interval);
    if (best == nullptr || *r->per_result_j < *best->per_result_j) best = r;
  }
  if (counted == 0) return nullptr;
  if (counted < members.size()) {
    out["energy_reason"] = fmt::format("energy counted for {} of its {} runs", counted, members.size());
    return nullptr;
  }
  if (counters.size() > 1) {
    std::string names;
    for (const auto& c : counters) names += fmt::format("{}{}", names.empty() ? "" : ", ", c);
    out["energy_reason"] = fmt::format("its runs were counted by different counters ({})", names);
    return nullptr;
  }
  if (intervals.size() > 1) {
    std::string names;
    for (const auto& i : intervals) names += fmt::format("{}{}", names.empty() ? "" : ", ", i);
    out["energy_reason"] = fmt::format("its runs' joules cover different intervals ({})", names);
    return nullptr;
  }
  return {{"index", best->index},
          {"where", best->where},
          {"per_result_j", *best->per_result_j},
          {"interval", best->interval}};
}

}  // namespace

nlohmann::json series_optima(const std::vector<SeriesRun>& runs) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<const SeriesRun*>> by_series;
  for (const auto& r : runs) {
    if (by_series.count(r.series) == 0) order.push_back(r.series);
    by_series[r.series].push_back(&r);
  }
  nlohmann::json out = nlohmann::json::array();
  for (const auto& s : order) {
    const auto& members = by_series[s];
    if (members.size() < 2) continue;
    const SeriesRun* fastest = members.front();
    for (const SeriesRun* r : members) {
      if (r->time_s < fastest->time_s) fastest = r;
    }
    nlohmann::json j = {{"series", s},
                        {"runs", members.size()},
                        {"time_optimal",
                         {{"index", fastest->index}, {"where", fastest->where}, {"time_s", fastest->time_s}}}};
    nlohmann::json energy = energy_optimum(members, j);
    if (!energy.is_null()) {
      j["same_run"] = energy["index"] == fastest->index;
      j["energy_optimal"] = std::move(energy);
    }
    out.push_back(std::move(j));
  }
  return out;
}

std::string optima_lines(const nlohmann::json& optima) {
  std::string lines;
  for (const auto& o : optima) {
    const auto& t = o["time_optimal"];
    lines += fmt::format("  {}: fastest #{} ({}, {} s)", o["series"].get<std::string>(), t["index"].get<int>(),
                         t["where"].get<std::string>(), report::fixed_text(t["time_s"].get<double>(), 4));
    if (o.contains("energy_optimal")) {
      const auto& e = o["energy_optimal"];
      const std::string what = interval_words(e.value("interval", std::string(kIntervalNotStated)));
      lines += o["same_run"].get<bool>()
                   ? fmt::format("; also the least energy ({})", what)
                   : fmt::format("; least energy #{} ({}, {:.3g} {})", e["index"].get<int>(),
                                 e["where"].get<std::string>(), e["per_result_j"].get<double>(), what);
    } else if (o.contains("energy_reason")) {
      lines += fmt::format("; no energy optimum: {}", o["energy_reason"].get<std::string>());
    }
    lines += "\n";
  }
  return lines;
}

}  // namespace scalebench::study
