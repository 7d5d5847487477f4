#pragma once
// A run record's energy (the record's "energy" section) as the drivers' summaries carry it, and
// the summaries' energy column: joules per verified result.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace scalebench::study {

// {"per_result_j", "mean_w", "gflop_per_j" or "j_per_1e9_samples", "counted": "cpu+gpu"|"cpu"|"gpu"},
// or {"reason": why none was counted}; null for a record without an energy section.
nlohmann::json energy_json(const nlohmann::json& record);

// Joules per verified result of a summary's energy (energy_json's), when a counter counted them
// (a finite number > 0); nullopt otherwise.
std::optional<double> per_result_j(const nlohmann::json& energy);

// The energy column's cell: joules per verified result ("0.0123", "41.7", "1234"), "-" when none
// was counted.
std::string energy_cell(const nlohmann::json& energy);

// The CSV field: joules per verified result at full precision, "" when none was counted.
std::string energy_field(const nlohmann::json& energy);

// Why a summary's energy was not counted ("" when it was or when the record had no energy section).
std::string energy_reason(const nlohmann::json& energy);

// The line said once under a summary where no run counted energy: "energy not counted (REASON)".
std::string energy_not_counted_line(const std::string& reason);

}  // namespace scalebench::study
