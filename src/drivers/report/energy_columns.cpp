#include "energy_columns.hpp"

#include <cmath>
#include <string>

#include <fmt/format.h>

namespace scalebench::study {

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
  nlohmann::json j{{"per_result_j", e["per_result_j"]},
                   {"mean_w", e.contains("mean_w") && e["mean_w"].is_number() ? e["mean_w"] : nlohmann::json()},
                   {"counted", cpu && gpu ? "cpu+gpu" : (gpu ? "gpu" : "cpu")}};
  for (const char* k : {"gflop_per_j", "j_per_1e9_samples"}) {
    if (e.contains(k)) j[k] = e[k];
  }
  return j;
}

std::optional<double> per_result_j(const nlohmann::json& energy) {
  if (!energy.is_object() || !energy.contains("per_result_j") || !energy["per_result_j"].is_number()) {
    return std::nullopt;
  }
  const double j = energy["per_result_j"].get<double>();
  if (!std::isfinite(j) || j <= 0) return std::nullopt;
  return j;
}

std::string energy_cell(const nlohmann::json& energy) {
  const auto j = per_result_j(energy);
  if (!j) return "-";
  return *j >= 100 ? fmt::format("{:.0f}", *j) : fmt::format("{:.3g}", *j);
}

std::string energy_field(const nlohmann::json& energy) {
  const auto j = per_result_j(energy);
  return j ? fmt::format("{}", *j) : std::string();
}

std::string energy_reason(const nlohmann::json& energy) {
  if (!energy.is_object() || !energy.contains("reason") || !energy["reason"].is_string()) return "";
  return energy["reason"].get<std::string>();
}

std::string energy_not_counted_line(const std::string& reason) {
  return reason.empty() ? "energy not counted\n" : fmt::format("energy not counted ({})\n", reason);
}

}  // namespace scalebench::study
