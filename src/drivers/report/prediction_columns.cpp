// Predicted-against-measured columns for the contrast and study tables.
#include "report/prediction_columns.hpp"

#include <optional>

#include <fmt/format.h>

#include "report/figure_text.hpp"
#include "scalebench/base/phases.hpp"

namespace scalebench::report {

PredictedFigures predicted_figures(const nlohmann::json& record) {
  PredictedFigures p;
  if (!record.is_object() || !record.contains("prediction")) return p;
  const auto& pr = record.at("prediction");
  if (!pr.value("available", false)) return p;
  p.available = true;
  p.predicted_s = pr.at(phase::end_to_end).value("predicted_s", 0.0);
  p.miss = pr.value("miss", 0.0);
  p.flagged = pr.value("flagged", false);
  p.worst_phase = pr.value("worst_phase", std::string());
  return p;
}

std::string predicted_cell(const PredictedFigures& p, double measured_s) {
  if (!p.available || p.predicted_s <= 0) return "-";
  const std::optional<double> ratio = finite_ratio(measured_s, p.predicted_s);
  const std::string cell = fmt::format("{} {}", fixed_text(p.predicted_s, 4), ratio ? signed_percent(*ratio - 1) : "-");
  return p.flagged ? fmt::format("{}! {}", cell, p.worst_phase) : cell;
}

nlohmann::json predicted_json(const PredictedFigures& p) {
  if (!p.available) return nullptr;
  return {{"predicted_s", p.predicted_s}, {"miss", p.miss}, {"flagged", p.flagged}, {"worst_phase", p.worst_phase}};
}

}  // namespace scalebench::report
