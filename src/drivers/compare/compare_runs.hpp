#pragma once
// One matched pair of runs compared (docs/compare.md, "The verdict"): per phase timed over repeats,
// the ratio of medians B/A, its Hodges–Lehmann interval, the Mann–Whitney p-value and a verdict;
// the run's verdict from its phases; and what differs in the two runs' context.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compare/compare_inputs.hpp"
#include "compare/compare_stats.hpp"
#include "scalebench/drivers/compare.hpp"

namespace scalebench::compare {

enum class Verdict { same, faster, slower, too_few };
// "same", "faster", "slower", "too few repeats".
const char* verdict_name(Verdict v);

struct PhaseComparison {
  std::string phase;
  std::vector<double> a, b;  // the repeats' times (per_repeat_max_s; the median alone without it)
  double median_a = 0, median_b = 0;
  std::optional<double> ratio;  // median_b / median_a (both 0: 1; only A 0: none)
  std::optional<RatioInterval> interval;
  RankTest test;
  Verdict verdict = Verdict::same;
};

struct ContextDifference {
  std::string what;  // "versions.git", "hosts", "placement", "energy.per_result_j"
  std::string a, b;  // as text; "(none)" when absent on a side
};

struct RunComparison {
  std::string key;  // A's key (B's when they differ: matched as each side's only run)
  std::string key_b;
  std::vector<PhaseComparison> phases;
  Verdict verdict = Verdict::same;
  std::vector<ContextDifference> context;
  std::optional<double> predicted_ratio;  // the model's end-to-end B/A, when both runs carry one
};

// The phases of a run timed over repeats, by name, with their repeats' times; set-up phases
// ("setup_…", timed once) are left out. JsonFieldError (exit 2) for a field of the wrong kind.
std::vector<std::pair<std::string, std::vector<double>>> phase_repeats(const SideRun& run);

// --phases: UsageError for a name that no run of `runs` times (a typo would compare nothing and
// pass), listing the phases they have.
void check_named_phases(const CompareOptions& o, const std::vector<const SideRun*>& runs);

// One phase's verdict: too few repeats when the test cannot reach p < p_max with these counts;
// slower when p < p_max and the ratio is at least 1 + min_change; faster when p < p_max and the
// ratio is at most 1 / (1 + min_change); else the same.
PhaseComparison compare_phase(const std::string& phase, std::vector<double> a, std::vector<double> b,
                              const CompareOptions& o);

// Every phase both runs timed (those of o.phases when given), the run's verdict (slower when a
// phase is; else faster when one is; too few repeats when no phase could be tested; else same),
// and the context.
RunComparison compare_pair(const SideRun& a, const SideRun& b, const CompareOptions& o);

nlohmann::json to_json(const PhaseComparison& p);
nlohmann::json to_json(const RunComparison& r);
// A side as --json records it: its path, kind, runs and keys without an ok run, and `context`:
// where its runs ran and what built them (hosts, CPU and GPU models, scalebench version, git hash,
// MPI library), each field's distinct values over its runs, as text, at most eight of each.
nlohmann::json to_json(const Side& s);

}  // namespace scalebench::compare
