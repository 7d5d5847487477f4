#pragma once
// A study's named baseline (`baseline: {backend: openblas}`): every run is compared with the run
// that has the baseline's values for those keys and the same values for every other key; a
// group (the runs alike in everything but their size) gets its ratio to the baseline at each
// size and the size where that ratio reaches 1, the crossover.
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace scalebench::study {

// One run of a group: its size (n, samples) and its ratio to the baseline (baseline time / time).
struct RatioPoint {
  double size = 0;
  double ratio = 0;
};

// Where a group first overtakes its baseline, going up in size.
struct Crossover {
  enum class Kind { none, at, below_smallest, not_reached };
  Kind kind = Kind::none;
  double size = 0;   // at: interpolated in log(size) against log(ratio)
  double below = 0;  // at: the sizes tried around it; below_smallest: the smallest size;
  double above = 0;  // not_reached: the largest size
  // "n ≈ 1448 (between 1024 and 2048)", "below the smallest n tried (512)",
  // "not reached up to the largest n tried (16384)", "" for none.
  std::string text(const std::string& size_key) const;
  nlohmann::json to_json(const std::string& size_key) const;
  // The same crossover as far as the sizes tried tell: the same kind between the same sizes (the
  // interpolated size aside).
  bool same_as(const Crossover& other) const;
};

// The first size where the ratio goes from below 1 to 1 or more, with the sizes on either side
// (points need not be sorted; points with a size or ratio <= 0 are ignored).
Crossover find_crossover(std::vector<RatioPoint> points);

// The key that measures a workload's size (Workload::size_key: n for gemm, samples for montecarlo).
std::string size_key_of(const std::string& name);

// "1e9", "4096", "1_000_000" as a number; 0 when it is not one.
double size_value(const std::string& text);

// The coordinates of a run (its options and its placement keys) with the baseline's values put
// in: the coordinates of the run it is compared with.
std::map<std::string, std::string> baseline_coordinates(
    std::map<std::string, std::string> coordinates, const std::vector<std::pair<std::string, std::string>>& baseline);

}  // namespace scalebench::study

namespace scalebench::study {

// A run compared with its baseline, for the group summary.
struct ComparedRun {
  std::string group;              // the run's swept values but the size, "backend=cublas"
  double size = 0;                // 0 when the study does not sweep the size
  double ratio = 0;               // baseline time / time
  int index = 0;                  // the run's index in the study
  double energy_ratio = 0;        // baseline joules per verified result / the run's; 0 when either was not counted,
                                  // or their joules cover different intervals
  std::string energy_interval{};  // the interval both joules cover (energy_columns.hpp), "" without a ratio
};

// The groups in the order first seen: [{"group", "points": [{"index", "size", "ratio",
// "energy_ratio", "energy_interval"}], "crossover": {…}, "energy_crossover": {…, "same_as_time",
// "interval"}}], the crossovers only when the study sweeps the size; "energy_ratio" where both runs
// counted their energy over the same interval, and the crossover in energy (where the ratio of
// joules per verified result reaches 1) only when every point of the group has one, all over one
// interval.
nlohmann::json summarize_groups(const std::vector<ComparedRun>& runs, const std::string& size_key, bool size_swept);

}  // namespace scalebench::study
