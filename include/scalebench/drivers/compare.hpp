#pragma once
// `scalebench compare A B` and `scalebench compare --history DIR...` (docs/compare.md): is a run
// slower than another, or is it noise? Runs of two sides (records, runs.jsonl files, results
// folders) are matched by key; each phase's repeats are compared by the Mann–Whitney U test, with
// the ratio of medians and its Hodges–Lehmann interval, and a verdict per phase and run.
#include <string>
#include <vector>

namespace scalebench {

// The exit code of a comparison in which a matched run got slower (README.md, "Exit codes"): not a
// failure class of error.hpp but the comparison's verdict, so that CI can gate on it.
inline constexpr int kCompareSlowerExit = 10;

struct CompareOptions {
  double min_change = 0.05;         // --min-change (percent / 100): the least ratio change called slower or faster
  double p_max = 0.01;              // --p-max: the test's p-value must be below it
  double confidence = 0.95;         // --confidence: of the ratio's interval
  std::string json_path;            // --json: the comparison as JSON (empty: none)
  std::string report_path;          // --report: the comparison as one HTML page (empty: none)
  std::vector<std::string> phases;  // --phases: the phases compared (empty: every phase timed over repeats)
};

// Prints the comparison of `a` with `b` (B against A: a ratio above 1 is B slower) and writes
// --json and --report. Returns 0 when no matched run got slower, kCompareSlowerExit when one did
// (the page is written either way). Throws Error (one line, its exit code) for an input that cannot
// be read or used, when no run matches, or when --json or --report cannot be written; Stopped on a
// stop signal while the page is drawn.
int compare_sides(const std::string& a, const std::string& b, const CompareOptions& o);

// Prints each run's trend per phase over `folders` (oldest first; at least two), each folder
// against the first that holds the run, and the first folder where it changed; writes --json and
// --report as compare_sides does. Returns kCompareSlowerExit when a run is slower in the last
// folder holding it than in the first.
int compare_history(const std::vector<std::string>& folders, const CompareOptions& o);

}  // namespace scalebench
