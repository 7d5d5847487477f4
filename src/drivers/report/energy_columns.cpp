#include "energy_columns.hpp"

#include <string>

namespace scalebench::study {

nlohmann::json energy_json(const nlohmann::json& record) {
  if (!record.is_object() || !record.contains("energy") || !record["energy"].is_object()) return nullptr;
  const nlohmann::json& e = record["energy"];
  const bool cpu = e.contains("cpu") && e["cpu"].value("counted", false);
  const bool gpu = e.contains("gpu") && e["gpu"].value("counted", false);
  if (!e.contains("per_result_j")) {
    std::string why = "no counter";
    if (e.contains("cpu") && e.contains("gpu")) {
      why = "CPU: " + e["cpu"].value("reason", std::string()) + "; GPU: " + e["gpu"].value("reason", std::string());
    }
    return {{"reason", why}};
  }
  nlohmann::json j{{"per_result_j", e["per_result_j"]},
                   {"mean_w", e.value("mean_w", 0.0)},
                   {"counted", cpu && gpu ? "cpu+gpu" : (gpu ? "gpu" : "cpu")}};
  for (const char* k : {"gflop_per_j", "j_per_1e9_samples"}) {
    if (e.contains(k)) j[k] = e[k];
  }
  return j;
}

}  // namespace scalebench::study
