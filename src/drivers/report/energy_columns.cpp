#include "energy_columns.hpp"

#include <cmath>
#include <string>

#include <fmt/format.h>

#include "report/figure_text.hpp"

namespace scalebench::report {
namespace {

// A finite number > 0 under `key`, none otherwise.
std::optional<double> positive(const nlohmann::json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number()) return std::nullopt;
  const double v = j[key].get<double>();
  if (!std::isfinite(v) || v <= 0) return std::nullopt;
  return v;
}

}  // namespace

nlohmann::json energy_json(const nlohmann::json& record) {
  if (!record.is_object() || !record.contains("energy") || !record["energy"].is_object()) return nullptr;
  const nlohmann::json& e = record["energy"];
  const bool cpu = e.contains("cpu") && e["cpu"].value("counted", false);
  const bool gpu = e.contains("gpu") && e["gpu"].value("counted", false);
  if (!e.contains("per_result_j")) {
    std::string why = "no counter";
    if (e.contains("cpu") && e.contains("gpu")) {
      why = "CPU: " + e["cpu"].value("reason", std::string()) + "; GPU: " + e["gpu"].value("reason", std::string());
    }
    return {{"reason", why}};
  }
  nlohmann::json j{{"j", e["per_result_j"]},
                   {"interval", kIntervalNotStated},
                   {"per_result_j", e["per_result_j"]},
                   {"mean_w", e.contains("mean_w") && e["mean_w"].is_number() ? e["mean_w"] : nlohmann::json()},
                   {"counted", cpu && gpu ? "cpu+gpu" : (gpu ? "gpu" : "cpu")}};
  // A record that gives the timed interval (timed_j, null where too short for the counters).
  if (e.contains("timed_j")) {
    j["interval"] = kIntervalRepeat;
    if (e["timed_j"].is_object() && e["timed_j"].contains("median")) {
      j["timed_j"] = e["timed_j"]["median"];
      j["j"] = e["timed_j"]["median"];
      j["interval"] = kIntervalTimed;
    }
    if (e.contains("timed_mean_w") && e["timed_mean_w"].is_number()) j["timed_mean_w"] = e["timed_mean_w"];
  }
  for (const char* k : {"gflop_per_j", "j_per_1e9_samples", "covers"}) {
    if (e.contains(k)) j[k] = e[k];
  }
  return j;
}

std::optional<ResultJoules> result_joules(const nlohmann::json& energy) {
  if (!energy.is_object()) return std::nullopt;
  if (!energy.contains("j")) {  // a summary from before "j": its per_result_j, interval not stated
    const auto j = positive(energy, "per_result_j");
    return j ? std::optional<ResultJoules>({*j, kIntervalNotStated}) : std::nullopt;
  }
  const auto j = positive(energy, "j");
  if (!j) return std::nullopt;
  const std::string interval = energy.contains("interval") && energy["interval"].is_string()
                                   ? energy["interval"].get<std::string>()
                                   : kIntervalNotStated;
  return ResultJoules{*j, interval == kIntervalTimed || interval == kIntervalRepeat ? interval : kIntervalNotStated};
}

std::string interval_words(const std::string& interval) {
  if (interval == kIntervalTimed) return "J of the timed interval";
  if (interval == kIntervalRepeat) return "J of the whole repeat with its check";
  return "J per verified result, interval not stated";
}

std::string energy_cell(const nlohmann::json& energy) {
  const auto r = result_joules(energy);
  if (!r) return "-";
  const std::string mark = r->interval == kIntervalTimed ? "" : (r->interval == kIntervalRepeat ? " rep" : " ?");
  const double j = r->joules;
  return (j >= 100 ? fixed_text(j, 0) : fmt::format("{:.3g}", j)) + mark;
}

std::string energy_marks_line(bool whole_repeat_shown, bool not_stated_shown) {
  if (!whole_repeat_shown && !not_stated_shown) return "";
  std::string marks;
  if (whole_repeat_shown) {
    marks = "rep: the whole repeat with its check (its timed interval too short for the counters)";
  }
  if (not_stated_shown) {
    marks += std::string(marks.empty() ? "" : "; ") +
             "?: an older record's joules per verified result, which do not say which interval they cover";
  }
  return "J timed: joules of each repeat's timed interval, the time column's; marked " + marks + "\n";
}

std::string energy_field(const nlohmann::json& energy) {
  const auto j = positive(energy, "per_result_j");
  return j ? fmt::format("{}", *j) : std::string();
}

std::string energy_timed_field(const nlohmann::json& energy) {
  const auto j = positive(energy, "timed_j");
  return j ? fmt::format("{}", *j) : std::string();
}

std::string energy_interval_field(const nlohmann::json& energy) {
  const auto r = result_joules(energy);
  return r ? r->interval : std::string();
}

std::string energy_reason(const nlohmann::json& energy) {
  if (!energy.is_object() || !energy.contains("reason") || !energy["reason"].is_string()) return "";
  return energy["reason"].get<std::string>();
}

std::string energy_not_counted_line(const std::string& reason) {
  return reason.empty() ? "energy not counted\n" : fmt::format("energy not counted ({})\n", reason);
}

}  // namespace scalebench::report
