#pragma once
// The one sweep loop both drivers (contrast, study) run their runs through, and the one resume
// rule that says which of them an earlier invocation finished.
//
// The driver plans its items (a contrast row, a study run), each with its key in the results store
// (results_store.hpp), its estimated work (time_left.hpp run_work) and the words its progress line
// names it by; sweep_to_do keeps those still to run; run_sweep runs them in order. For each item:
// the stop signal is checked (Stopped, saying `Sweep::stopped`: every line appended before it is
// kept), the progress line "scalebench <driver>: [i/N] (about … left) <label>" goes to stderr
// (unless quiet), the driver's StepRequest is asked for, its record and log are prepared (never
// through a link; a stopped run's leftover goes), the step runs (step_runner.hpp run_one_step),
// its line (step_line plus the driver's fields) is appended to the store, and it is counted.
// Nothing else is said or written: what a driver prints before or after its runs is its own.
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "launch/step_runner.hpp"
#include "results/results_store.hpp"

namespace scalebench::launch {

// One run of a sweep, as the loop sees it.
struct SweepItem {
  std::string key;    // its key in the results store
  double work = 0;    // its estimated work (run_work; 0: it neither feeds nor takes part in the estimate)
  std::string label;  // what its progress line says after "[i/N]"
};

// What differs between the drivers' sweeps.
struct Sweep {
  std::string driver;            // the progress lines' word: "contrast", "study"
  bool quiet = false;            // no progress lines
  bool skip_cannot_run = false;  // a run scalebench says this machine cannot hold is "skipped", not failed
  std::string stopped;           // what a stop signal between two runs says was kept
  // Item i's step (its command, record and log, time limit, what a stop during it says), asked for
  // just before it runs, after its progress line.
  std::function<StepRequest(std::size_t i)> request;
  // Item i ran: the driver keeps what it needs of `r` and adds its own fields to `line`, which is
  // then appended to the store. May be empty.
  std::function<void(std::size_t i, const StepResult& r, nlohmann::json& line)> finished;
};

struct SweepCounts {
  int ran = 0;            // runs started
  int failed = 0;         // of those, lines neither "ok" nor "skipped"
  int skipped = 0;        // of those, "skipped": this machine cannot hold them (Sweep::skip_cannot_run)
  int launch_failed = 0;  // of those, failed without scalebench's own error: the launcher's failure
};

// The one resume rule: an item whose key has an "ok" line among `earlier` (the store's lines) was
// finished by an earlier invocation and is not run again; a failed, timed-out or skipped line
// does not count, so such a run is tried again. With `rerun` (study --rerun) every item is run
// again and its new line appended beside the old ones. Returns the indexes of the items to run, in
// order.
std::vector<std::size_t> sweep_to_do(const std::vector<std::string>& keys, const std::vector<nlohmann::json>& earlier,
                                     bool rerun);

// Runs `items` in order as said at the top, each line appended to `store` as its run finishes.
// Stopped (process.hpp) ends it between or during runs; a line that cannot be appended ends it
// with ResourceError.
SweepCounts run_sweep(const Sweep& sweep, const std::vector<SweepItem>& items, results::ResultsStore& store);

}  // namespace scalebench::launch
