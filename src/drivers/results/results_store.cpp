#include "results/results_store.hpp"

#include <cstdio>

#include "results/files.hpp"

namespace scalebench::results {
namespace {

std::string origin(DriverKind kind) {
  return kind == DriverKind::study ? "the study's runs.jsonl" : "the contrast's runs.jsonl";
}

// The folder exists before its lock can be taken in it.
const std::string& made(const std::string& dir) {
  make_dirs(dir);
  return dir;
}

}  // namespace

std::string results_jsonl(const std::string& dir) { return dir + "/runs.jsonl"; }

JsonlContents read_results(const std::string& dir, DriverKind kind) {
  return read_jsonl(results_jsonl(dir), origin(kind));
}

ResultsStore::ResultsStore(const std::string& dir, DriverKind kind, const std::string& option)
    : lock_(made(dir), kind, option), jsonl_(results_jsonl(dir)), contents_(read_results(dir, kind)) {
  for (std::size_t i = 0; i < contents_.unusable.size(); ++i) {
    std::fprintf(stderr,
                 "scalebench: warning: %s line %d is cut or garbled, or not a %s's line: %s (a crash or a full "
                 "disk mid-write, an edit); left in place and not used\n",
                 jsonl_.c_str(), contents_.unusable[i], kind == DriverKind::study ? "study" : "contrast",
                 contents_.why[i].c_str());
  }
}

const nlohmann::json* ResultsStore::shown(const std::string& key) const {
  const nlohmann::json* found = nullptr;
  for (const auto& l : contents_.lines) {
    if (l["key"] != key) continue;
    if (found == nullptr || l["status"] == "ok" || (*found)["status"] != "ok") found = &l;
  }
  return found;
}

void ResultsStore::append(nlohmann::json line) {
  append_jsonl(jsonl_, line);
  contents_.lines.push_back(std::move(line));
}

}  // namespace scalebench::results
