#include "launch/sweep.hpp"

#include <chrono>
#include <cstdio>
#include <set>

#include <fmt/format.h>

#include "launch/time_left.hpp"
#include "results/files.hpp"
#include "scalebench/drivers/process.hpp"

namespace scalebench::launch {
using results::prepare_step_files;
using results::ResultsStore;

namespace {

// "[3/10] (about 2 min 10 s left) <label>", or without the estimate before one can be made.
std::string progress_line(const Sweep& sweep, int i, std::size_t n, const std::string& eta, const std::string& label) {
  return fmt::format("scalebench {}: [{}/{}]{} {}\n", sweep.driver, i, n, eta.empty() ? "" : " (" + eta + ")", label);
}

// Runs one item's step and appends its line; returns its result.
StepResult run_item(const Sweep& sweep, std::size_t i, const SweepItem& item, ResultsStore& store) {
  const StepRequest q = sweep.request(i);
  prepare_step_files(q.record_path, q.log_path);  // never through a link; a killed run's leftover goes
  StepResult r = run_one_step(q);
  nlohmann::json line = step_line(item.key, q, r, sweep.skip_cannot_run);
  if (sweep.finished) sweep.finished(i, r, line);
  store.append(std::move(line));
  return r;
}

}  // namespace

std::vector<std::size_t> sweep_to_do(const std::vector<std::string>& keys, const std::vector<nlohmann::json>& earlier,
                                     bool rerun) {
  std::set<std::string> done;
  for (const auto& l : earlier) {
    if (l["status"] == "ok") done.insert(l["key"].get<std::string>());
  }
  std::vector<std::size_t> todo;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (rerun || done.count(keys[i]) == 0) todo.push_back(i);
  }
  return todo;
}

SweepCounts run_sweep(const Sweep& sweep, const std::vector<SweepItem>& items, ResultsStore& store) {
  double work_to_come = 0;
  for (const auto& item : items) work_to_come += item.work;
  TimeLeft left;
  SweepCounts counts;
  for (std::size_t i = 0; i < items.size(); ++i) {
    throw_if_stopped(sweep.stopped);
    ++counts.ran;
    if (!sweep.quiet) {
      const std::string line = progress_line(sweep, counts.ran, items.size(), left.text(work_to_come), items[i].label);
      std::fputs(line.c_str(), stderr);
    }
    const auto start = std::chrono::steady_clock::now();
    const StepResult r = run_item(sweep, i, items[i], store);
    left.finished(items[i].work, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    work_to_come -= items[i].work;
    const std::string status = r.status(sweep.skip_cannot_run);
    if (status == "skipped") {
      ++counts.skipped;
    } else if (status != "ok") {
      ++counts.failed;
    }
    if (r.launch_failed) ++counts.launch_failed;
  }
  return counts;
}

}  // namespace scalebench::launch
