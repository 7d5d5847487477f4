#pragma once
// tests/data/profile-synthetic.json, the profile the model's hand-worked tests start from, loaded
// once per test program (SCALEBENCH_SOURCE_DIR names the source tree; else the working folder).
#include <cstdlib>
#include <string>

#include "scalebench/workloads/model.hpp"

namespace scalebench {

inline std::string synthetic_profile_path() {
  const char* src = std::getenv("SCALEBENCH_SOURCE_DIR");
  return std::string(src ? src : ".") + "/tests/data/profile-synthetic.json";
}

inline const Profile& synthetic() {
  static const Profile p = load_profile(synthetic_profile_path());
  return p;
}

}  // namespace scalebench
