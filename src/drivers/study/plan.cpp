// A study's sweep planned into runs: the cartesian product of its swept values, each run placed
// (ranks, nodes, ranks per node) and keyed for resume.
#include <algorithm>
#include <cstdlib>
#include <map>

#include <fmt/format.h>

#include "scalebench/base/checked_size.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/drivers/study.hpp"
#include "scalebench/workloads/workload.hpp"
#include "study/study_keys.hpp"

namespace scalebench {
namespace study {

// The keys that place ranks (the launcher's), not options of the workload.
bool placement_key(const std::string& k) { return k == "ranks" || k == "nodes" || k == "ranks_per_node"; }

// The largest ranks, nodes or ranks_per_node a study names.
constexpr std::int64_t kMaxCount = 1'000'000;

// ranks, nodes, ranks_per_node: whole numbers in [1, kMaxCount].
int parse_count(const std::string& file, const std::string& key, const std::string& v) {
  char* end = nullptr;
  const long r = std::strtol(v.c_str(), &end, 10);
  if (end == v.c_str() || *end != '\0' || r < 1 || r > kMaxCount) {
    throw UsageError(fmt::format("{}: {} must be whole numbers >= 1, at most {} (got '{}')", file, key, kMaxCount, v));
  }
  return static_cast<int>(r);
}

}  // namespace study

namespace {

using study::parse_count;
using study::placement_key;

// Sets a run's nodes, ranks per node and ranks from the keys given (0: not given).
void place_run(const std::string& file, StudyRun& r, int ranks, int nodes, int per_node) {
  r.placed = nodes > 0 || per_node > 0;
  r.nodes = nodes > 0 ? nodes : 1;
  // Each count is at most kMaxCount, their product too (an int, never overflowed).
  if (per_node > 0) {
    product_within(file + ": nodes x ranks_per_node", {r.nodes, per_node}, study::kMaxCount, "the most ranks of a run");
  }
  if (per_node > 0 && ranks > 0 && ranks != r.nodes * per_node) {
    throw UsageError(fmt::format("{}: ranks {} is not nodes {} x ranks_per_node {}; give two of the three", file, ranks,
                                 r.nodes, per_node));
  }
  if (per_node == 0 && ranks > 0 && ranks % r.nodes != 0) {
    throw UsageError(
        fmt::format("{}: ranks {} do not split evenly over {} nodes; use ranks_per_node", file, ranks, r.nodes));
  }
  r.ranks_per_node = per_node > 0 ? per_node : ranks > 0 ? ranks / r.nodes : 1;
  r.ranks = r.nodes * r.ranks_per_node;
}
}  // namespace

std::vector<StudyRun> plan_study(const StudySpec& spec) {
  std::vector<StudyRun> runs;
  std::vector<std::size_t> at(spec.sweep.size(), 0);
  for (bool more = true; more;) {
    StudyRun r;
    r.index = static_cast<int>(runs.size()) + 1;
    std::map<std::string, int> counts;  // ranks, nodes, ranks_per_node as given
    auto take = [&](const std::string& k, const std::string& v) {
      if (placement_key(k)) {
        counts[k] = parse_count(spec.file, k, v);
      } else {
        r.options.emplace_back(k, v);
      }
    };
    for (const auto& [k, v] : spec.args) take(k, v);
    for (std::size_t i = 0; i < spec.sweep.size(); ++i) take(spec.sweep[i].first, spec.sweep[i].second[at[i]]);
    place_run(spec.file, r, counts["ranks"], counts["nodes"], counts["ranks_per_node"]);
    r.workload_argv.push_back(spec.workload);
    // --k=v: a value is never read as an option of its own, whatever it starts with.
    for (const auto& [k, v] : r.options) {
      if (v == "false") continue;
      r.workload_argv.push_back(v == "true" ? "--" + k : fmt::format("--{}={}", k, v));
    }
    // What the file neither sets nor sweeps is not given: the workload's own default (gemm's
    // schedule options: the model's `auto`, recorded as not given).
    auto sorted = r.options;
    std::sort(sorted.begin(), sorted.end());
    r.key = fmt::format("{} ranks={}", spec.workload, r.ranks);
    if (r.placed) r.key += fmt::format(" nodes={}", r.nodes);
    for (const auto& [k, v] : sorted) r.key += fmt::format(" {}={}", k, v);
    runs.push_back(std::move(r));
    // The last swept key varies fastest.
    more = false;
    for (std::size_t i = spec.sweep.size(); i-- > 0;) {
      if (++at[i] < spec.sweep[i].second.size()) {
        more = true;
        break;
      }
      at[i] = 0;
    }
  }
  return runs;
}

}  // namespace scalebench
