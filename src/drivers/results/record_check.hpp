#pragma once
// A run record read back by the drivers (a run's --json file, the record in a runs.jsonl line), by
// `compare` and by tools/report.py: the fields any of them reads, checked for kind and range before
// any is used (docs/output.md, "Reading runs.jsonl"; tools/report.py's check_run_record is the same
// list with the same bounds).
#include "scalebench/base/json_field.hpp"

namespace scalebench::results {

// The bounds of the figures a record may hold (docs/output.md, "Reading runs.jsonl", says why):
// a measured time in seconds is 0 or in [kMinSeconds, kMaxSeconds] — no clock a run reads resolves
// less than a nanosecond, and no run lasts a century —; a predicted time is in [0, kMaxSeconds];
// every other figure (a rate, joules, watts, a ratio) in [0, kMaxFigure]. Within them a ratio,
// sum or product of two figures is a finite double.
inline constexpr double kMinSeconds = 1e-12;
inline constexpr double kMaxSeconds = 3.2e9;
inline constexpr double kMaxFigure = 1e18;

// JsonFieldError naming the first field of the wrong kind or range; nothing when every field read
// back is absent or right.
void check_run_record(const JsonField& record);

// JsonFieldError unless `t` (an entry of a list, `key` empty, or the field `key` of an object) is a
// measured time: 0, or seconds in [kMinSeconds, kMaxSeconds].
void check_measured_seconds(const JsonField& t, std::string_view key);

}  // namespace scalebench::results
