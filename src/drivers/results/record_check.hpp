#pragma once
// A run record read back by the drivers (a run's --json file, the record in a runs.jsonl line) and
// by tools/report.py: the fields any of them reads, checked for kind and range before any is used
// (docs/output.md, "Reading runs.jsonl"; tools/report.py's check_run_record is the same list).
#include "scalebench/base/json_field.hpp"

namespace scalebench::results {

// JsonFieldError naming the first field of the wrong kind or range; nothing when every field read
// back is absent or right.
void check_run_record(const JsonField& record);

}  // namespace scalebench::results
