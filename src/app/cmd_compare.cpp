// `scalebench compare A B` and `scalebench compare --history DIR...`: is a run slower than another,
// or is it noise (docs/compare.md)?
#include <sys/stat.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "commands.hpp"
#include "run_support.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/base/output_file.hpp"
#include "scalebench/base/parse.hpp"
#include "scalebench/drivers/compare.hpp"

namespace scalebench::app {
namespace {

struct CompareCli {
  std::vector<std::string> paths;
  bool history = false;
  std::string min_change = "5", p_max = "0.01", confidence = "0.95", json, report, phases;
};

// A real number in (lo, hi) (`hi` included when `hi_in`), else UsageError naming the option.
double real_in(const std::string& option, const std::string& text, double lo, double hi, bool hi_in, const char* what) {
  const double v = parse_real(option, text);
  if (!(v > lo && (hi_in ? v <= hi : v < hi))) {
    throw UsageError(fmt::format("{} '{}' must be {} in ({:g}, {:g}{}", option, text, what, lo, hi, hi_in ? "]" : ")"));
  }
  return v;
}

// Whether `a` and `b` name one regular file, or one new path (a device or FIFO may take both).
bool same_regular_file(const std::string& a, const std::string& b) {
  struct stat sa {};
  struct stat sb {};
  const bool has_a = ::stat(a.c_str(), &sa) == 0;
  const bool has_b = ::stat(b.c_str(), &sb) == 0;
  if (!has_a || !has_b) return !has_a && !has_b && a == b;
  return S_ISREG(sa.st_mode) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

CompareOptions options_of(const CompareCli& c) {
  CompareOptions o;
  o.min_change = real_in("--min-change", c.min_change, 0, 1000, true, "a percentage") / 100;
  o.p_max = real_in("--p-max", c.p_max, 0, 1, false, "a p-value");
  o.confidence = real_in("--confidence", c.confidence, 0, 1, false, "a confidence level");
  o.json_path = c.json;
  o.report_path = c.report;
  for (std::size_t start = 0; !c.phases.empty() && start <= c.phases.size();) {
    const std::size_t end = std::min(c.phases.find(',', start), c.phases.size());
    const std::string name = c.phases.substr(start, end - start);
    if (name.empty())
      throw UsageError(fmt::format("--phases '{}' has an empty item; name phases, e.g. end_to_end,compute", c.phases));
    o.phases.push_back(name);
    start = end + 1;
  }
  return o;
}

}  // namespace

Subcommand register_compare(CLI::App& root) {
  auto c = std::make_shared<CompareCli>();
  auto* app = root.add_subcommand(
      "compare",
      "Is B slower than A, or is it noise? A and B are run records, runs.jsonl files or results folders (a study's "
      "or a contrast's); runs are matched by key (two single runs whatever their keys), unmatched ones listed. Per "
      "matched run and phase: the ratio of medians B/A with its Hodges-Lehmann interval, the Mann-Whitney U p-value "
      "over the repeats (exact up to 20 repeats a side without ties), and a verdict: slower, faster, same or too "
      "few repeats; and what differs in the runs' context (versions, hosts, placement, profile, energy). With "
      "--history DIR...: each run's trend per phase over folders of one study, oldest first, and the first folder "
      "where it changed. --report FILE: the comparison as one self-contained HTML page (each run's phases side by side "
      "with a figure, or its trend; needs python3). Exit codes: 0 nothing slower; 10 a matched run got slower "
      "(history: slower in its last folder than in its first; the page is written either way); 2 an input that is "
      "not valid (JSON, a field's type, not a results folder, no finished run, no run matched), a bad option; 3 an "
      "input that is missing or not a regular file, an unwritable --json or --report, no Python to draw the page; "
      "128+n stopped by signal n while the page is drawn");
  app->add_option("paths", c->paths, "A and B (with --history: the folders, oldest first)")->required();
  app->add_flag("--history", c->history, "Trend over the folders given, each against the first that holds the run");
  app->add_option("--min-change", c->min_change,
                  "The least change of the ratio of medians called slower (>= 1 + x/100) or faster (<= 1/(1 + x/100)), "
                  "in percent [5]");
  app->add_option("--p-max", c->p_max, "The Mann-Whitney p-value must be below it for slower or faster [0.01]");
  app->add_option("--confidence", c->confidence, "Of the ratio's Hodges-Lehmann interval [0.95]");
  app->add_option("--phases", c->phases,
                  "Compare only these phases (comma-separated) [every phase timed over repeats]");
  app->add_option("--json", c->json, "Write the comparison as JSON (output-file rule)");
  app->add_option("--report", c->report,
                  "Write the comparison as one self-contained HTML page (output-file rule): what was compared, "
                  "each run's phases side by side (A, B, the ratio with its interval, p, the verdict) with a "
                  "figure, the unmatched runs; with --history each run's trend per phase");
  Subcommand sub;
  sub.app = app;
  sub.run = [c]() {
    try {
      const CompareOptions o = options_of(*c);
      if (!c->json.empty()) check_output_path(c->json, "--json");
      if (!c->report.empty()) check_output_path(c->report, "--report");
      if (!c->json.empty() && same_regular_file(c->json, c->report)) {
        throw UsageError(fmt::format("--json and --report both name {}: the page would replace the JSON; give two "
                                     "files",
                                     c->report));
      }
      if (c->history) return compare_history(c->paths, o);
      if (c->paths.size() != 2) {
        throw UsageError(fmt::format("compare takes two paths, A and B (got {}); for a trend over many folders "
                                     "give --history",
                                     c->paths.size()));
      }
      return compare_sides(c->paths[0], c->paths[1], o);
    } catch (const Error& e) {
      print_error(e.what());
      return static_cast<int>(e.code());
    }
  };
  return sub;
}

}  // namespace scalebench::app
