#pragma once
// Predicted against measured, as the drivers' tables and summaries show it (docs/model.md): a run
// record's "prediction" reduced to a column.
#include <string>

#include <nlohmann/json.hpp>

namespace scalebench::report {

struct PredictedFigures {
  bool available = false;
  double predicted_s = 0;   // end to end
  double miss = 0;          // |measured / predicted - 1|
  bool flagged = false;     // miss > 15%
  std::string worst_phase;  // the phase that missed most (seconds)
};
PredictedFigures predicted_figures(const nlohmann::json& record);
// "0.1234 +8%", "0.1234 -23%! compute" (a flagged miss names its worst phase), "-" without.
std::string predicted_cell(const PredictedFigures& p, double measured_s);
// {"predicted_s", "miss", "flagged", "worst_phase"}, or null without a prediction.
nlohmann::json predicted_json(const PredictedFigures& p);

}  // namespace scalebench::report
