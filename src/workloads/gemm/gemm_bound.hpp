#pragma once
// The gemm record's `comm_bound` section (docs/output.md): the words the run moved and the words
// its grid's schedule must move, each against the lower bound for this m, n, k and p
// (problem/comm_bound.hpp), and the table's line for it.
#include <string>

#include <nlohmann/json.hpp>

#include "scalebench/workloads/gemm/gemm_config.hpp"

namespace scalebench {

// From rank 0's record, after the algorithm wrote its `distribution` and `partition`.
nlohmann::json comm_bound_section(const GemmConfig& cfg, int ranks, const nlohmann::json& record);
// "communication bound: ..." lines; empty for one rank.
std::string comm_bound_lines(const nlohmann::json& bound);

}  // namespace scalebench
