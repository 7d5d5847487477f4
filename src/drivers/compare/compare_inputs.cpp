#include "compare/compare_inputs.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "results/jsonl.hpp"
#include "results/record_check.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/base/input_file.hpp"
#include "scalebench/base/json_field.hpp"

namespace scalebench::compare {
namespace {

using nlohmann::json;

// As deep as a runs.jsonl line may nest (jsonl.cpp).
constexpr int kMaxRecordDepth = 64;

// The record's JSON (a UsageError naming the file when it is not JSON, holds a key twice or is not
// an object), checked by the record rule.
json parse_record(const std::string& text, const std::string& path, const std::string& label) {
  if (json_text_depth(text) > kMaxRecordDepth) {
    throw UsageError(
        fmt::format("compare {}: {} nests more than {} levels deep; not a run record", label, path, kMaxRecordDepth));
  }
  std::vector<std::set<std::string>> keys;
  std::string twice;
  const json::parser_callback_t note_keys = [&](int, json::parse_event_t e, json& v) {
    if (e == json::parse_event_t::object_start) keys.emplace_back();
    if (e == json::parse_event_t::object_end && !keys.empty()) keys.pop_back();
    if (e == json::parse_event_t::key && !keys.empty() && !keys.back().insert(v.get<std::string>()).second &&
        twice.empty()) {
      twice = v.get<std::string>();
    }
    return true;
  };
  json j = json::parse(text, note_keys, false);
  if (j.is_discarded()) {
    throw UsageError(fmt::format("compare {}: {} is not valid JSON (cut short, garbled, not UTF-8, NaN or Infinity, "
                                 "or a number beyond a double's range); give a run record, a runs.jsonl or a "
                                 "results folder",
                                 label, path));
  }
  if (!twice.empty()) {
    throw UsageError(
        fmt::format("compare {}: {} holds the key \"{}\" twice in one object", label, path, twice.substr(0, 80)));
  }
  const JsonField f(j, JsonOrigin{fmt::format("compare {}: {}", label, path), "give a run record's --json file"});
  if (!j.is_object()) f.fail("", fmt::format("must be a run record, a JSON object (got {})", json_kind(j)));
  (void)f.text("subcommand");
  (void)f.sub("phases");
  results::check_run_record(f);
  return j;
}

Side read_lines(const std::string& jsonl, Side side, const std::string& label) {
  const results::JsonlContents c = results::read_jsonl(jsonl, fmt::format("runs.jsonl of compare {}", label));
  for (std::size_t i = 0; i < c.unusable.size(); ++i) {
    side.warnings.push_back(fmt::format("{} line {} is cut or garbled, or not a driver's line: {}; not compared", jsonl,
                                        c.unusable[i], c.why[i]));
  }
  std::map<std::string, std::size_t> at;  // key -> index in side.runs
  std::map<std::string, std::string> last_status;
  std::vector<std::string> order;
  for (const json& l : c.lines) {
    const std::string key = l["key"].get<std::string>();
    if (!last_status.contains(key)) order.push_back(key);
    last_status[key] = l["status"].get<std::string>();
    if (l["status"] != "ok" || !l["record"].is_object()) continue;
    SideRun r{key, fmt::format("{} ({})", jsonl, key), l["record"]};
    (void)JsonField(r.record, JsonOrigin{r.where, ""}).sub("phases");
    if (const auto it = at.find(key); it != at.end()) {
      side.runs[it->second] = std::move(r);  // the newest ok line of a key
    } else {
      at.emplace(key, side.runs.size());
      side.runs.push_back(std::move(r));
    }
  }
  for (const std::string& key : order) {
    if (!at.contains(key)) side.not_ok.push_back(fmt::format("{} ({})", key, last_status[key]));
  }
  if (side.runs.empty()) {
    throw UsageError(fmt::format("compare {}: {} holds no finished run (no \"ok\" line with a record){}", label, jsonl,
                                 c.unusable.empty() ? "" : fmt::format("; {} lines left out", c.unusable.size())));
  }
  return side;
}

}  // namespace

std::string record_key(const json& record) {
  std::string key = record.value("subcommand", std::string("run"));
  if (record.contains("ranks") && record["ranks"].is_number_integer()) {
    key += fmt::format(" ranks={}", record["ranks"].get<long long>());
  }
  std::vector<std::string> args;
  if (record.contains("command_line") && record["command_line"].is_array()) {
    for (const json& a : record["command_line"]) {
      if (a.is_string()) args.push_back(a.get<std::string>());
    }
  }
  std::vector<std::string> options;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (!args[i].starts_with("--")) continue;
    std::string name = args[i].substr(2);
    std::string value;
    if (const auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name.resize(eq);
    } else if (i + 1 < args.size() && !args[i + 1].starts_with("--")) {
      value = args[++i];
    }
    if (name == "json" || name == "quiet") continue;
    options.push_back(value.empty() ? name : fmt::format("{}={}", name, value));
  }
  std::sort(options.begin(), options.end());
  for (const std::string& o : options) key += " " + o;
  return key;
}

Side read_side(const std::string& path, const std::string& label) {
  if (path.empty())
    throw UsageError(fmt::format("compare {}: the path is empty; name a record, runs.jsonl or folder", label));
  Side side;
  side.path = path;
  const std::string kind = path_kind(path);
  if (kind.empty()) {
    throw ResourceError(
        fmt::format("compare {}: {} does not exist; name a run record, a runs.jsonl or a results folder", label, path));
  }
  if (kind == "a folder") {
    side.kind = "results folder";
    const std::string jsonl = path + "/runs.jsonl";
    if (path_kind(jsonl).empty()) {
      throw UsageError(
          fmt::format("compare {}: {} is not a study or contrast folder (no runs.jsonl in it)", label, path));
    }
    return read_lines(jsonl, std::move(side), label);
  }
  if (path.ends_with(".jsonl")) {
    side.kind = "runs.jsonl";
    (void)check_input_file(path, fmt::format("compare {}", label));
    return read_lines(path, std::move(side), label);
  }
  side.kind = "record";
  const std::string text = read_input_file(path, fmt::format("compare {}", label));
  json record = parse_record(text, path, label);
  side.runs.push_back({record_key(record), path, std::move(record)});
  return side;
}

}  // namespace scalebench::compare
