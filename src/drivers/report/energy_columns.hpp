#pragma once
// A run record's energy (the record's "energy" section) as the drivers' summaries carry it.
#include <nlohmann/json.hpp>

namespace scalebench::study {

// {"per_result_j", "mean_w", "gflop_per_j" or "j_per_1e9_samples", "counted": "cpu+gpu"|"cpu"|"gpu"},
// or {"reason": why none was counted}; null for a record without an energy section.
nlohmann::json energy_json(const nlohmann::json& record);

}  // namespace scalebench::study
