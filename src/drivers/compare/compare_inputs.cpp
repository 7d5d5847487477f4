#include "compare/compare_inputs.hpp"

#include <algorithm>
#include <limits>
#include <map>
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

// The record's JSON (a UsageError naming the file when it breaks the JSON rule every record and
// runs.jsonl line is read by — a byte-order mark, a key twice, too deep, not JSON — or is not an
// object), checked by the record rule; a record of a run that failed its check is refused too.
json parse_record(const std::string& text, const std::string& path, const std::string& label) {
  json j;
  if (const std::string why = results::json_text_problem(text, j); !why.empty()) {
    throw UsageError(
        fmt::format("compare {}: {} {}; give a run record, a runs.jsonl or a results folder", label, path, why));
  }
  const JsonField f(j, JsonOrigin{fmt::format("compare {}: {}", label, path), "give a run record's --json file"});
  if (!j.is_object()) f.fail("", fmt::format("must be a run record, a JSON object (got {})", json_kind(j)));
  (void)f.text("subcommand");
  (void)f.sub("phases");
  results::check_run_record(f);
  if (!f.flag_or("ok", true)) {
    throw UsageError(fmt::format("compare {}: {} is the record of a run that failed its check (\"ok\": false): its "
                                 "times measure no correct result; compare runs that verified",
                                 label, path));
  }
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
  // The record rule has checked these fields' kinds (ranks a whole number, command_line a list of
  // strings): none is dropped from the key.
  const JsonField f(record, JsonOrigin{"record", ""});
  std::string key = f.text_or("subcommand", "run");
  if (f.has("ranks")) key += fmt::format(" ranks={}", f.whole("ranks", 0, std::numeric_limits<int>::max()));
  const std::vector<std::string> args = f.has("command_line") ? f.texts("command_line") : std::vector<std::string>{};
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
