// Predicted against measured in a run record (docs/model.md, "In records"): the run's own
// prediction of the configuration it holds, never one rebuilt from the record.
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "scalebench/base/error.hpp"
#include "scalebench/base/phases.hpp"
#include "scalebench/workloads/model.hpp"

namespace scalebench {
namespace {

using nlohmann::json;

json no_prediction(const std::string& reason) { return {{"available", false}, {"reason", reason}}; }

}  // namespace

MachineLayout layout_of_record(const json& record) {
  MachineLayout m;
  const int ranks = record.value("ranks", 1);
  std::set<std::string> hosts;
  if (record.contains("rank_info")) {
    for (const auto& r : record.at("rank_info")) hosts.insert(r.value("host", std::string("unknown")));
  }
  m.nodes = std::max<int>(1, static_cast<int>(hosts.size()));
  m.ranks_per_node = (ranks + m.nodes - 1) / m.nodes;
  return m;
}

json compare_with_record(const Prediction& pred, const json& record, const std::string& source) {
  // A time that is not > 0 matches nothing: no miss is computed from it (a negative prediction
  // once read as a perfect match).
  if (!std::isfinite(pred.end_to_end) || pred.end_to_end <= 0) {
    return no_prediction(
        fmt::format("the model's end-to-end from profile {} is {} s, not a time > 0", source, pred.end_to_end));
  }
  const json& measured = record.at("phases");
  auto entry = [](double predicted, double got) {
    return json{{"predicted_s", predicted},
                {"measured_s", got},
                {"ratio", predicted > 0 ? json(got / predicted) : json(nullptr)}};
  };
  json phases = json::object();
  std::string worst;
  double worst_error = -1;
  for (const auto& [name, predicted] : pred.phases) {
    if (!measured.contains(name)) continue;
    const double got = measured.at(name).value("median_s", 0.0);
    phases[name] = entry(predicted, got);
    if (std::fabs(got - predicted) > worst_error) {
      worst_error = std::fabs(got - predicted);
      worst = name;
    }
  }
  const double e2e = measured.contains(phase::end_to_end) ? measured.at(phase::end_to_end).value("median_s", 0.0) : 0.0;
  const double miss = std::fabs(e2e / pred.end_to_end - 1.0);
  const auto [low, high] = pred.band();  // the flag uses the band (docs/model.md, "Bands")
  return {{"available", true},
          {"profile", source},
          {"phases", phases},
          {phase::end_to_end, entry(pred.end_to_end, e2e)},
          {"miss", miss},
          {"band", {{"low_s", low}, {"high_s", high}}},
          {"miss_outside_band", miss_outside_band(pred, e2e)},
          {"flagged", prediction_flagged(pred, e2e)},
          {"worst_phase", worst},
          {"notes", pred.notes}};
}

void attach_prediction(json& record, json& warnings, const RecordPredictor& predict) {
  const char* env = std::getenv("SCALEBENCH_PROFILE");
  const bool named = env && *env;
  std::string path;
  try {
    const ProfileSource source = default_profile_source();
    path = source.path;
    // symlink_status: a dangling link is "there" (and then refused by name when read).
    std::error_code ec;
    if (!std::filesystem::exists(std::filesystem::symlink_status(path, ec))) {
      record["prediction"] = no_prediction(fmt::format("no profile at {}; run `scalebench calibrate`", path));
      if (named)
        warnings.push_back(fmt::format("no prediction: SCALEBENCH_PROFILE names {}, which does not exist", path));
      return;
    }
    // Read without blocking (a FIFO or device is refused by kind), bounded, every figure checked.
    const Profile p = load_profile(path, source.origin);
    const std::string host = record.at("rank_info").at(0).value("host", std::string("unknown"));
    if (const std::string why = profile_mismatch(p, host, record.at("versions")); !why.empty()) {
      const std::string reason = fmt::format("profile {} is stale: {}; run `scalebench calibrate` again", path, why);
      record["prediction"] = no_prediction(reason);
      warnings.push_back("no prediction: " + reason);
      return;
    }
    if (!predict) {
      record["prediction"] = no_prediction("this run's workload has no model");
      return;
    }
    MachineLayout m = layout_of_record(record);
    m.gpus_per_node = p.gpu.present ? p.gpu.count : 0;
    // The configuration that ran, as the run holds it (threads resolved, the scheme that ran).
    const Prediction pred = predict(p, m);
    record["prediction"] = compare_with_record(pred, record, path);
    if (!record["prediction"].value("available", false)) {
      warnings.push_back("no prediction: " + record["prediction"].value("reason", std::string()));
    }
  } catch (const std::exception& e) {
    const std::string what = e.what();
    const std::string reason = what.find(path) != std::string::npos ? what : fmt::format("profile {}: {}", path, what);
    record["prediction"] = no_prediction(reason);
    warnings.push_back("no prediction: " + reason);
  }
}

}  // namespace scalebench
