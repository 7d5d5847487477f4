#pragma once
// A cheap first pass over a study file, before it is loaded into a tree: it streams the YAML
// events and stops at the first key that is not a plain name, is given twice in one map (YAML
// loaders keep the first and drop the other silently), or is not one of the top-level keys.
#include <istream>
#include <set>
#include <string>

namespace scalebench::study {

// UsageError "<file>:<line>: …" for the first bad key.
void check_yaml_keys(const std::string& file, std::istream& in, const std::set<std::string>& top_level_keys);

}  // namespace scalebench::study
