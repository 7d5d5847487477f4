#pragma once
// The optima of a study's series (the runs alike in every option but ranks and threads, placed
// differently): the time-optimal run (the shortest median end-to-end) and the energy-optimal run
// (the fewest joules per verified result, over the same interval in every run of the series),
// which need not be the same run: four GPUs may finish first while one GPU spends fewer joules on
// the same result.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace scalebench::study {

// One finished (ok) run of a series.
struct SeriesRun {
  std::string series;  // the series' swept values, "backend=cublas n=32768" ("runs" when none)
  int index = 0;       // the run's index in the study
  std::string where;   // what tells it apart in its series: "4 GPUs", "8 cores"
  double time_s = 0;
  std::optional<double> per_result_j;  // none: no counter counted this run
  std::string counted;                 // which counters: "cpu", "gpu", "cpu+gpu"; "" for none
  std::string interval = "unstated";   // what per_result_j covers (energy_columns.hpp: timed, repeat, unstated)
};

// For each series of two runs or more, in the order first seen:
// {"series", "runs", "time_optimal": {"index", "where", "time_s"}, and either
// "energy_optimal": {"index", "where", "per_result_j", "interval"} with "same_run" (whether one run
// is both), or "energy_reason" (why the series has no energy optimum: some of its runs were not
// counted, were counted by different counters, or their joules cover different intervals) —
// neither where none of its runs was counted.
nlohmann::json series_optima(const std::vector<SeriesRun>& runs);

// The optima as lines under the table, one per series, "" for none:
//   "  backend=cublas n=32768: fastest #4 (4 GPUs, 1.2300 s); least energy #1 (1 GPU, 456 J of the
//   timed interval)".
std::string optima_lines(const nlohmann::json& optima);

}  // namespace scalebench::study
