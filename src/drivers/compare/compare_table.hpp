#pragma once
// The text `scalebench compare` prints (docs/compare.md, "The table"), and the options as its JSON
// records them.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compare/compare_inputs.hpp"
#include "compare/compare_runs.hpp"

namespace scalebench::compare {

// What was compared with what, and by which rule.
std::string comparison_header(const Side& a, const Side& b, const CompareOptions& o);
// One run: its verdict line, a line per phase, the model's expectation, what differs in its context.
std::string run_block(const RunComparison& r, const CompareOptions& o);
// The runs of one side only, and the keys without an ok run.
std::string unmatched_lines(const Side& a, const Side& b, const std::vector<std::string>& only_a,
                            const std::vector<std::string>& only_b);
// The rule in words: "slower or faster at >= 5% and p < 0.01".
std::string rule_text(const CompareOptions& o);
nlohmann::json options_json(const CompareOptions& o);

}  // namespace scalebench::compare
