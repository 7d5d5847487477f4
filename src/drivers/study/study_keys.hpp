#pragma once
// The keys of a study file that place ranks, shared by the file's loader and the planner.
#include <string>

#include "scalebench/drivers/study.hpp"

namespace scalebench::study {

// The keys that place ranks (the launcher's), not options of the workload: ranks, nodes,
// ranks_per_node.
bool placement_key(const std::string& key);
// ranks, nodes, ranks_per_node: whole numbers >= 1 (UsageError naming the file and key).
int parse_count(const std::string& file, const std::string& key, const std::string& value);

}  // namespace scalebench::study
