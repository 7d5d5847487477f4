#pragma once
// What `scalebench compare` writes besides its table, both from one JSON document (docs/compare.md):
// --json, that document, and --report, one self-contained HTML page drawn from it.
#include <nlohmann/json.hpp>

#include "scalebench/drivers/compare.hpp"

namespace scalebench::compare {

// Writes o.json_path, then o.report_path, when given, each by the output-file rule (their places
// were checked before any work). ResourceError (exit 3) naming the option when one cannot be
// written; Stopped (exit 128 + the signal) when a stop signal comes while the page is drawn, with no
// page, partial page or temporary file left.
void write_outputs(const nlohmann::json& doc, const CompareOptions& o);

}  // namespace scalebench::compare
