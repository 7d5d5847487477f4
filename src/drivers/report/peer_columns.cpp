// The run against its library peer for the contrast and study tables (peer_columns.hpp).
#include "report/peer_columns.hpp"

#include <fmt/format.h>

#include "report/figure_text.hpp"

namespace scalebench::report {

nlohmann::json peer_json(const nlohmann::json& record) {
  if (!record.is_object() || !record.contains("peers") || !record["peers"].contains("scalapack")) return nullptr;
  const auto& p = record["peers"]["scalapack"];
  nlohmann::json out = {{"library", "scalapack"},
                        {"call", p.value("call", std::string())},
                        {"grid", p.value("grid", nlohmann::json())},
                        {"block_width", p.value("block_width", 0)}};
  for (const char* v : {"tuned", "shipped"}) {
    const auto& variant = p["variants"][v];
    out[v] = {{"k_step", variant.value("k_step", 0)},
              {"pre_distributed_s", variant["pre_distributed"].value("median_s", 0.0)},
              {"end_to_end_s", variant["end_to_end"].value("median_s", 0.0)},
              {"ratio_run_vs_peer", variant.value("ratio_run_vs_peer", 0.0)},
              {"ratio_end_to_end_run_vs_peer", variant.value("ratio_end_to_end_run_vs_peer", 0.0)}};
  }
  return out;
}

std::string peer_cell(const nlohmann::json& peer) {
  if (!peer.is_object()) return "-";
  return fmt::format("{}x ({}x)", fixed_text(peer["tuned"]["ratio_run_vs_peer"].get<double>(), 2),
                     fixed_text(peer["shipped"]["ratio_run_vs_peer"].get<double>(), 2));
}

std::string peer_ratio_field(const nlohmann::json& peer, const char* variant) {
  if (!peer.is_object()) return "";
  return fmt::format("{}", peer[variant]["ratio_run_vs_peer"].get<double>());
}

}  // namespace scalebench::report
