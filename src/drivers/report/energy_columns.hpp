#pragma once
// A run record's energy (the record's "energy" section) as the drivers' summaries carry it, and
// the summaries' energy column. Each joule figure says which interval it covers: the timed
// interval (the time column's), the whole repeat with its check, or — a record from before the
// record said so — an interval not stated.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace scalebench::report {

// The intervals a summary's joules may cover (energy_json's "interval").
inline constexpr const char* kIntervalTimed = "timed";         // the timed interval of each repeat
inline constexpr const char* kIntervalRepeat = "repeat";       // each whole repeat with its check
inline constexpr const char* kIntervalNotStated = "unstated";  // an older record's per_result_j

// {"j": the joules of one verified result the column shows, "interval": which one they cover,
// "per_result_j" (the whole repeat's), "timed_j" (the timed interval's median, where the record
// gives it), "mean_w", "timed_mean_w", "gflop_per_j" or "j_per_1e9_samples", "counted":
// "cpu+gpu"|"cpu"|"gpu", "covers"}, or {"reason": why none was counted}; null for a record without
// an energy section. "j" is the timed interval's where the record gives it, else the whole
// repeat's ("repeat": the timed interval too short for the counters; "unstated": an older record).
nlohmann::json energy_json(const nlohmann::json& record);

// The joules of one verified result a summary's energy (energy_json's) shows, and their interval,
// when a counter counted them (a finite number > 0); nullopt otherwise. A summary written before
// "j" was kept (only "per_result_j") gives that, its interval not stated.
struct ResultJoules {
  double joules = 0;
  std::string interval;  // kIntervalTimed, kIntervalRepeat or kIntervalNotStated
};
std::optional<ResultJoules> result_joules(const nlohmann::json& energy);

// What an interval's joules are, for sentences: "J of the timed interval", "J of the whole repeat
// with its check", "J per verified result, interval not stated".
std::string interval_words(const std::string& interval);

// The energy column ("J timed") cell: the joules ("0.0123", "41.7", "1234"), marked " rep" where
// they cover the whole repeat and " ?" where the record does not say; "-" when none was counted.
std::string energy_cell(const nlohmann::json& energy);

// The line under a table whose energy column marks a figure (" rep", " ?"), saying what the marks
// mean; "" when it marks none.
std::string energy_marks_line(bool whole_repeat_shown, bool not_stated_shown);

// The CSV fields: the whole repeat's joules per verified result (per_result_j), the timed
// interval's (timed_j), at full precision, and the interval the table shows; "" where none.
std::string energy_field(const nlohmann::json& energy);
std::string energy_timed_field(const nlohmann::json& energy);
std::string energy_interval_field(const nlohmann::json& energy);

// Why a summary's energy was not counted ("" when it was or when the record had no energy section).
std::string energy_reason(const nlohmann::json& energy);

// The line said once under a summary where no run counted energy: "energy not counted (REASON)".
std::string energy_not_counted_line(const std::string& reason);

}  // namespace scalebench::report
