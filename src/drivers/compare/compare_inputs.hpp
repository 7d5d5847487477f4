#pragma once
// What `scalebench compare` reads (docs/compare.md, "What it reads"): a run record, a runs.jsonl
// file or a results folder (a study's or a contrast's, by its runs.jsonl), each a "side" of runs
// known by their key. Read as every input is (docs/inputs.md): the kind of each file checked before
// a byte is read, runs.jsonl by the drivers' one rule, every field through JsonField.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace scalebench::compare {

struct SideRun {
  std::string key;        // the runs.jsonl line's key, or record_key() of a bare record
  std::string where;      // "results/x/runs.jsonl line 4", or the record's path
  nlohmann::json record;  // an object, checked by the record rule (record_check.hpp)
};

struct Side {
  std::string path;
  std::string kind;                   // "record", "runs.jsonl", "results folder"
  std::vector<SideRun> runs;          // one a key: its newest "ok" line, in the order of first appearance
  std::vector<std::string> not_ok;    // keys with lines but no "ok" one: "key (status)"
  std::vector<std::string> warnings;  // lines left out, as the drivers name them
};

// Reads one side. A folder is read by its runs.jsonl (a folder without one is a UsageError: not a
// study or contrast folder); a file whose name ends in .jsonl is a runs.jsonl; any other file is one
// run record. Missing, a FIFO, device or socket, or a folder where a file must be: ResourceError
// (exit 3); not JSON, a field of the wrong kind, no run in it: UsageError (exit 2). `label` names the
// side in messages ("A", "B", "folder 3").
Side read_side(const std::string& path, const std::string& label);

// The key of a bare record, as a study keys its runs: "<subcommand> ranks=<R>" and its command
// line's options sorted ("--n 512" as n=512; --json and --quiet left out).
std::string record_key(const nlohmann::json& record);

}  // namespace scalebench::compare
