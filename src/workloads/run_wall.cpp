// Where a run's wall time goes (run_wall.hpp).
#include "run_wall.hpp"

#include <fmt/format.h>

#include "scalebench/base/host.hpp"
#include "scalebench/mpi/mpi.hpp"

namespace scalebench {

RunWall::RunWall() {
  const double now = process_age_seconds();
  if (now < 0) return;
  const auto [before, after] = MpiEnvironment::init_ages();
  if (before >= 0 && after >= before && now >= after) {
    parts_.push_back({"start", before, {}});  // exec, shared libraries, options
    parts_.push_back({"mpi_init", after - before, {}});
    parts_.push_back({"command", now - after, {}});
  } else {
    parts_.push_back({"start", now, {}});
  }
  last_age_ = now;
}

void RunWall::mark(const std::string& part) {
  if (last_age_ < 0) return;
  const double now = process_age_seconds();
  if (now < 0) return;
  parts_.push_back({part, now - last_age_, {}});
  last_age_ = now;
}

void RunWall::note_within(const std::string& what, double seconds) {
  if (!parts_.empty()) parts_.back().within.emplace_back(what, seconds);
}

nlohmann::json RunWall::section() const {
  if (last_age_ < 0) return nullptr;
  nlohmann::json parts = nlohmann::json::array();
  for (const Part& p : parts_) {
    nlohmann::json j = {{"part", p.name}, {"s", p.seconds}};
    for (const auto& [what, s] : p.within) j["within"][what] = s;
    parts.push_back(std::move(j));
  }
  return {{"parts", std::move(parts)},
          {"to_record_s", last_age_},
          {"covers", "rank 0, from the process's start (exec) to its record; launching the ranks before and "
                     "the process's exit after are not in it"}};
}

std::string RunWall::line(const nlohmann::json& wall) {
  if (!wall.is_object()) return "";
  std::string out = fmt::format("wall: {:.1f} s from the process's start to the record:",
                                wall["to_record_s"].get<double>());
  const char* sep = " ";
  for (const auto& p : wall["parts"]) {
    out += fmt::format("{}{} {:.2f}", sep, p["part"].get<std::string>(), p["s"].get<double>());
    if (p.contains("within")) {
      const char* inner = " (";
      for (const auto& [what, s] : p["within"].items()) {
        out += fmt::format("{}{} {:.2f}", inner, what, s.get<double>());
        inner = ", ";
      }
      out += ")";
    }
    sep = ", ";
  }
  return out + "\n";
}

}  // namespace scalebench
