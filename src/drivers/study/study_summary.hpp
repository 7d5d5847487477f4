#pragma once
// A study's summary (summary.json, summary.csv, summary.md and the table on stdout) from every line
// of its runs.jsonl: for each planned run its newest finished line (ok preferred), compared with
// its baseline run.
#include <map>
#include <string>
#include <vector>

#include "results/results_store.hpp"
#include "scalebench/drivers/study.hpp"

namespace scalebench::study {

// What the summary says of the study's invocation besides its runs.
struct SummaryPlace {
  std::string launcher, out_dir;
  std::map<int, std::string> cannot_run;  // run index -> why this machine cannot hold it
};

// Writes summary.json, .csv and .md into the study's folder; sets result.summary and
// result.exit_code; returns the table for stdout.
std::string write_summary(const StudySpec& spec, const std::vector<StudyRun>& runs, const results::ResultsStore& store,
                          const SummaryPlace& place, StudyResult& result);

}  // namespace scalebench::study
