#pragma once
// A run against the library peer it timed beside it (gemm --peer scalapack: the record's
// peers.scalapack, docs/output.md), as the drivers' tables and summaries show it.
#include <string>

#include <nlohmann/json.hpp>

namespace scalebench::report {

// {"library": "scalapack", "call", "grid", "block_width", "tuned": {run/peer ratios, the peer's
// seconds}, "shipped": {...}}, or null when the record has no peer section.
nlohmann::json peer_json(const nlohmann::json& record);
// "0.93x (1.21x)": the run's time over the tuned peer's (over the shipped one's) on pre-distributed
// inputs; "-" without a peer.
std::string peer_cell(const nlohmann::json& peer);
// One variant's ratio for the CSV ("tuned" or "shipped"); "" without a peer.
std::string peer_ratio_field(const nlohmann::json& peer, const char* variant);

}  // namespace scalebench::report
