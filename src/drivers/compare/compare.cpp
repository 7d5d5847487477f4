// `scalebench compare A B`: the runs of two sides matched by key, each phase's repeats compared
// (compare_runs.hpp), printed as one block per run, the unmatched runs listed, --json and --report
// written.
#include "scalebench/drivers/compare.hpp"

#include <cstdio>
#include <map>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "compare/compare_inputs.hpp"
#include "compare/compare_output.hpp"
#include "compare/compare_runs.hpp"
#include "compare/compare_table.hpp"
#include "scalebench/base/env.hpp"
#include "scalebench/base/error.hpp"

namespace scalebench {
namespace compare {
namespace {

using nlohmann::json;

struct Matched {
  std::vector<std::pair<const SideRun*, const SideRun*>> pairs;
  std::vector<std::string> only_a, only_b;
};

// By key; two sides of one run each are matched whatever their keys (two records of one command).
Matched match_runs(const Side& a, const Side& b) {
  Matched m;
  if (a.runs.size() == 1 && b.runs.size() == 1) {
    m.pairs.emplace_back(&a.runs[0], &b.runs[0]);
    return m;
  }
  std::map<std::string, const SideRun*> in_b;
  for (const SideRun& r : b.runs) in_b.emplace(r.key, &r);
  for (const SideRun& r : a.runs) {
    const auto it = in_b.find(r.key);
    if (it == in_b.end()) {
      m.only_a.push_back(r.key);
    } else {
      m.pairs.emplace_back(&r, it->second);
      in_b.erase(it);
    }
  }
  for (const SideRun& r : b.runs) {
    if (in_b.contains(r.key)) m.only_b.push_back(r.key);
  }
  return m;
}

}  // namespace
}  // namespace compare

int compare_sides(const std::string& a_path, const std::string& b_path, const CompareOptions& o) {
  using namespace compare;
  const Side a = read_side(a_path, "A");
  const Side b = read_side(b_path, "B");
  const Matched m = match_runs(a, b);
  if (m.pairs.empty()) {
    throw UsageError(fmt::format("compare: no run of A ({}, {} runs) has the key of a run of B ({}, {} runs); compare "
                                 "runs of the same study or contrast, or two records",
                                 a.path, a.runs.size(), b.path, b.runs.size()));
  }
  std::vector<const SideRun*> compared;
  for (const auto& [ra, rb] : m.pairs) compared.insert(compared.end(), {ra, rb});
  check_named_phases(o, compared);
  std::vector<RunComparison> runs;
  for (const auto& [ra, rb] : m.pairs) runs.push_back(compare_pair(*ra, *rb, o));
  int counts[4] = {0, 0, 0, 0};
  for (const RunComparison& r : runs) ++counts[static_cast<int>(r.verdict)];
  const int code = counts[static_cast<int>(Verdict::slower)] > 0 ? kCompareSlowerExit : 0;

  for (const std::string& w : a.warnings) std::fprintf(stderr, "scalebench compare: warning: %s\n", w.c_str());
  for (const std::string& w : b.warnings) std::fprintf(stderr, "scalebench compare: warning: %s\n", w.c_str());
  std::string out = comparison_header(a, b, o);
  for (const RunComparison& r : runs) out += run_block(r, o);
  out += unmatched_lines(a, b, m.only_a, m.only_b);
  out += fmt::format("\n{} slower, {} faster, {} same, {} too few repeats ({} matched runs){}\n",
                     counts[static_cast<int>(Verdict::slower)], counts[static_cast<int>(Verdict::faster)],
                     counts[static_cast<int>(Verdict::same)], counts[static_cast<int>(Verdict::too_few)], runs.size(),
                     code != 0 ? fmt::format("; exit {}", code) : "");
  std::fputs(out.c_str(), stdout);

  json jr = json::array();
  for (const RunComparison& r : runs) jr.push_back(to_json(r));
  const json doc = {{"schema_version", 1},
                    {"subcommand", "compare"},
                    {"command_line", command_line()},
                    {"a", to_json(a)},
                    {"b", to_json(b)},
                    {"options", options_json(o)},
                    {"runs", jr},
                    {"only_in_a", m.only_a},
                    {"only_in_b", m.only_b},
                    {"counts",
                     {{"slower", counts[static_cast<int>(Verdict::slower)]},
                      {"faster", counts[static_cast<int>(Verdict::faster)]},
                      {"same", counts[static_cast<int>(Verdict::same)]},
                      {"too_few_repeats", counts[static_cast<int>(Verdict::too_few)]}}},
                    {"exit_code", code}};
  write_outputs(doc, o);
  return code;
}

}  // namespace scalebench
