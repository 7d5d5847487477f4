#pragma once
// A driver's results store: its folder held locked (results_dir.hpp) and its runs.jsonl (jsonl.hpp),
// only ever appended to, one line a finished run. Resume is by run key: a run whose key has an
// "ok" line is done and is not run again (the rule is launch/sweep.hpp sweep_to_do, for both
// drivers); a killed driver loses at most the run it was running.
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "results/jsonl.hpp"
#include "results/results_dir.hpp"

namespace scalebench::results {

class ResultsStore {
 public:
  // Makes the folder, takes its lock (FolderLock: ResourceError when another driver holds it or
  // it is not `kind`'s), then reads runs.jsonl and warns on stderr of each line it cannot use.
  ResultsStore(const std::string& dir, DriverKind kind, const std::string& option);

  const std::string& jsonl_path() const { return jsonl_; }
  // Every usable line, earlier ones first, then those appended by this driver.
  const std::vector<nlohmann::json>& lines() const { return contents_.lines; }
  int unusable() const { return static_cast<int>(contents_.unusable.size()); }
  // The line a summary shows for `key`: its newest ok line, else its newest line; nullptr if none.
  const nlohmann::json* shown(const std::string& key) const;
  // Appends the line (append_jsonl: all or nothing) and keeps it.
  void append(nlohmann::json line);

 private:
  FolderLock lock_;
  std::string jsonl_;
  JsonlContents contents_;
};

// Reads runs.jsonl of `dir` without taking the lock (for --dry-run and the checks made before it).
JsonlContents read_results(const std::string& dir, DriverKind kind);
// The path of a results folder's runs.jsonl.
std::string results_jsonl(const std::string& dir);

}  // namespace scalebench::results
