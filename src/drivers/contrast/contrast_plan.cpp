// contrast-plan.json: what a contrast runs (its host, the options that decide its rows, the sizes
// of every row), written before its first row and read back by a contrast run again on the folder
// (docs/studies.md, "Resuming a contrast"). A resume continues that plan or is refused: another
// host, another option, or a plan whose fields are not what a contrast writes.
#include <cstdio>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "contrast/contrast_steps.hpp"
#include "results/results_dir.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/base/host.hpp"
#include "scalebench/base/input_file.hpp"
#include "scalebench/base/output_file.hpp"
#include "scalebench/base/parse.hpp"
#include "scalebench/workloads/run_context.hpp"

namespace scalebench::contrast {
namespace {

using nlohmann::json;

const char* type_of(const json& j) {
  if (j.is_null()) return "null";
  if (j.is_string()) return "a string";
  if (j.is_boolean()) return "a boolean";
  if (j.is_number()) return "a number";
  return j.is_array() ? "an array" : "an object";
}

// A plan field that is not what a contrast writes: the rows it sized can no longer be trusted.
[[noreturn]] void bad_field(const std::string& path, const std::string& field, const std::string& what) {
  throw ResourceError(fmt::format("{}: field {} {}; it is not a plan this contrast wrote: restore it, or run the "
                                  "contrast on a new --out-dir",
                                  path, field, what));
}

const json& field_of(const std::string& path, const json& obj, const std::string& name, const std::string& shown,
                     bool (json::*test)() const noexcept, const char* wanted) {
  const auto it = obj.find(name);
  if (it == obj.end()) bad_field(path, shown, fmt::format("is missing (it must be {})", wanted));
  if (!((*it).*test)()) bad_field(path, shown, fmt::format("is {}, not {}", type_of(*it), wanted));
  return *it;
}

// The options that decide a contrast's rows, as the plan keeps them.
json plan_options(const ContrastOptions& o) {
  json names = json::array();
  for (const Workload* w : o.workloads) names.push_back(name_of(*w));
  return {{"workloads", names}, {"modes", o.rows},    {"precision", o.precision},
          {"reps", o.reps},     {"warmup", o.warmup}, {"peer", o.peer}};
}

std::string joined(const json& list, const char* none) {
  std::string out;
  for (const auto& v : list) {
    if (!out.empty()) out += ',';
    out += v.get<std::string>();
  }
  return out.empty() ? none : out;
}

// The options of `plan` in the words of the command line ("--reps 3").
std::string option_words(const std::string& option, const json& v) {
  if (option == "--workload") return fmt::format("--workload {}", joined(v, "all"));
  if (option == "--modes") return fmt::format("--modes {}", joined(v, "(every row)"));
  if (option == "--peer") return fmt::format("--peer {}", v.get<std::string>().empty() ? "none" : v.get<std::string>());
  return fmt::format("{} {}", option, v.is_string() ? v.get<std::string>() : v.dump());
}

constexpr std::pair<const char*, const char*> kPlanOptions[] = {{"workloads", "--workload"},  {"modes", "--modes"},
                                                                {"precision", "--precision"}, {"reps", "--reps"},
                                                                {"warmup", "--warmup"},       {"peer", "--peer"}};

// The plan's "options", each of the type a contrast writes.
json checked_options(const std::string& path, const json& plan) {
  // A copy, not a reference (so too "sizes" below): GCC 13 takes a reference bound to the result of a call given
  // temporaries for a possibly dangling one (-Wdangling-reference).
  json opts = field_of(path, plan, "options", "\"options\"", &json::is_object, "an object");
  for (const auto& [key, option] : kPlanOptions) {
    const std::string shown = fmt::format("\"options\".\"{}\"", key);
    const std::string k = key;
    if (k == "workloads" || k == "modes") {
      for (const auto& v : field_of(path, opts, k, shown, &json::is_array, "an array of names")) {
        if (!v.is_string()) bad_field(path, shown, fmt::format("holds {}, not a name", type_of(v)));
      }
    } else if (k == "reps" || k == "warmup") {
      const json& v = field_of(path, opts, k, shown, &json::is_number_integer, "a whole number");
      if (v.get<long long>() < (k == "reps" ? 1 : 0) || v.get<long long>() > 1'000'000'000) {
        bad_field(path, shown, fmt::format("is {}, out of range", v.dump()));
      }
    } else {
      field_of(path, opts, k, shown, &json::is_string, "a string");
    }
  }
  return opts;
}

// The plan's "sizes": for each workload an object of "cpu", "gpu", "naive", each a size string
// ("" for the workload's own naive size).
void check_sizes(const std::string& path, const json& plan) {
  const json sizes = field_of(path, plan, "sizes", "\"sizes\"", &json::is_object, "an object");
  for (const auto& [workload, entry] : sizes.items()) {
    const std::string shown = fmt::format("\"sizes\".\"{}\"", workload);
    if (!entry.is_object()) bad_field(path, shown, fmt::format("is {}, not an object", type_of(entry)));
    for (const char* part : {"cpu", "gpu", "naive"}) {
      const std::string where = fmt::format("{}.\"{}\"", shown, part);
      const std::string v = field_of(path, entry, part, where, &json::is_string, "a size string").get<std::string>();
      if (v.empty() && std::string(part) == "naive") continue;
      try {
        (void)parse_positive_count(where, v);
      } catch (const UsageError&) {
        bad_field(path, where, fmt::format("is '{}', not a whole number > 0", v));
      }
    }
  }
}

// This contrast's options must be the plan's: a row of other options is another contrast.
void refuse_other_options(const ContrastOptions& o, const std::string& out_dir, const json& saved) {
  const json mine = plan_options(o);
  for (const auto& [key, option] : kPlanOptions) {
    if (mine[key] == saved[key]) continue;
    throw UsageError(fmt::format("--out-dir {} holds a contrast run with {}; this one asks {}: give {} to go on with "
                                 "it, or a new --out-dir for the new options (its finished rows are never replaced)",
                                 out_dir, option_words(option, saved[key]), option_words(option, mine[key]),
                                 option_words(option, saved[key])));
  }
}

// The sizes given must be the plan's; those left open are taken from it. Returns them as words.
std::string take_sizes(ContrastOptions& o, const std::string& out_dir, const json& sizes) {
  std::string words;
  for (const Workload* w : o.workloads) {
    const auto saved = sizes.find(name_of(*w));
    if (saved == sizes.end()) continue;
    const ContrastSizing sizing = w->contrast_sizing();
    ContrastSizes& mine = o.sizes[name_of(*w)];
    for (auto [field, value, option] : {std::tuple{"cpu", &mine.cpu, &sizing.cpu_option},
                                        {"gpu", &mine.gpu, &sizing.gpu_option},
                                        {"naive", &mine.naive, &sizing.naive_option}}) {
      // The naive row's "" is the workload's own naive size.
      const std::string saved_value = (*saved)[field].get<std::string>();
      const std::string was = saved_value.empty() ? w->contrast_sizing().naive : saved_value;
      if (!value->empty() && parse_positive_count(option->name, *value) != parse_positive_count(option->name, was)) {
        throw UsageError(fmt::format("--out-dir {} holds a contrast run with {} {}; this one asks {} {}: leave {} out "
                                     "(or give {}) to go on with it, or give a new --out-dir for the new size (its "
                                     "finished rows are never replaced)",
                                     out_dir, option->name, was, option->name, *value, option->name, was));
      }
      if (value->empty()) *value = saved_value;
      words += fmt::format(" {} {}", option->name, was);
    }
  }
  return words;
}

}  // namespace

json continue_plan(ContrastOptions& o, const std::string& out_dir, std::size_t earlier_lines) {
  const std::string path = out_dir + "/" + kPlanFileName;
  if (!check_input_file(path, std::string(kPlanFileName))) {
    if (earlier_lines == 0) return json::object();
    throw ResourceError(fmt::format("{} is missing while {}/runs.jsonl holds {} rows: the host and sizes of those "
                                    "rows are unknown; restore it, or run the contrast on a new --out-dir",
                                    path, out_dir, earlier_lines));
  }
  const json plan = json::parse(read_input_file(path, kPlanFileName), nullptr, false);
  if (!plan.is_object()) {
    throw ResourceError(fmt::format("{} is not a contrast's plan (not a JSON object); restore it, or run the contrast "
                                    "on a new --out-dir",
                                    path));
  }
  const std::string host = field_of(path, plan, "host", "\"host\"", &json::is_string, "a host name").get<std::string>();
  const json options = checked_options(path, plan);
  check_sizes(path, plan);
  if (plan.contains("sizing") && !plan["sizing"].is_object()) {
    bad_field(path, "\"sizing\"", fmt::format("is {}, not an object", type_of(plan["sizing"])));
  }
  if (host != host_name()) {
    throw ResourceError(fmt::format("--out-dir {} was measured on host {} ({}); this is host {}: its rows would not "
                                    "compare with rows run here; go on with it on {}, or run the contrast on a new "
                                    "--out-dir",
                                    out_dir, host, kPlanFileName, host_name(), host));
  }
  refuse_other_options(o, out_dir, options);
  const std::string sizes = take_sizes(o, out_dir, plan["sizes"]);
  json sizing = json::object();
  for (const Workload* w : o.workloads) {
    if (plan.contains("sizing") && plan["sizing"].contains(name_of(*w))) {
      sizing[name_of(*w)] = plan["sizing"][name_of(*w)];
    }
  }
  if (o.quiet) return sizing;
  std::string words;
  for (const auto& [key, option] : kPlanOptions) words += fmt::format(" {}", option_words(option, options[key]));
  std::printf("scalebench contrast: continuing %s on host %s:%s%s\n", out_dir.c_str(), host.c_str(), words.c_str(),
              sizes.c_str());
  std::fflush(stdout);
  return sizing;
}

void save_sizes(const ContrastOptions& o, const std::string& out_dir, const json& sizing) {
  json sizes = json::object();
  for (const Workload* w : o.workloads) {
    const auto it = o.sizes.find(name_of(*w));
    if (it == o.sizes.end()) continue;
    sizes[name_of(*w)] = {{"cpu", it->second.cpu}, {"gpu", it->second.gpu}, {"naive", it->second.naive}};
  }
  write_results_json(out_dir + "/" + kPlanFileName, {{"schema_version", kSchemaVersion},
                                                     {"subcommand", "contrast"},
                                                     {"host", host_name()},
                                                     {"options", plan_options(o)},
                                                     {"sizes", sizes},
                                                     {"sizing", sizing}});
}

}  // namespace scalebench::contrast
