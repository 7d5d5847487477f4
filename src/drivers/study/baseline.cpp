#include "study/baseline.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>

#include <fmt/format.h>

#include "scalebench/workloads/workload.hpp"

namespace scalebench::study {

std::string Crossover::text(const std::string& size_key) const {
  switch (kind) {
    case Kind::at: return fmt::format("{} ≈ {:.0f} (between {:.0f} and {:.0f})", size_key, size, below, above);
    case Kind::below_smallest: return fmt::format("below the smallest {} tried ({:.0f})", size_key, below);
    case Kind::not_reached: return fmt::format("not reached up to the largest {} tried ({:.0f})", size_key, above);
    case Kind::none: break;
  }
  return "";
}

nlohmann::json Crossover::to_json(const std::string& size_key) const {
  static const char* const kinds[] = {"none", "at", "below_smallest", "not_reached"};
  nlohmann::json j = {{"kind", kinds[static_cast<int>(kind)]}, {"text", text(size_key)}};
  if (kind == Kind::at) j["size"] = size;
  if (kind == Kind::at || kind == Kind::below_smallest) j["below"] = below;
  if (kind == Kind::at || kind == Kind::not_reached) j["above"] = above;
  return j;
}

bool Crossover::same_as(const Crossover& other) const {
  return kind == other.kind && below == other.below && above == other.above;
}

Crossover find_crossover(std::vector<RatioPoint> points) {
  points.erase(std::remove_if(points.begin(), points.end(),
                              [](const RatioPoint& p) { return !(p.size > 0) || !(p.ratio > 0); }),
               points.end());
  std::sort(points.begin(), points.end(), [](const RatioPoint& a, const RatioPoint& b) { return a.size < b.size; });
  Crossover c;
  if (points.empty()) return c;
  if (points.front().ratio >= 1) {
    c.kind = Crossover::Kind::below_smallest;
    c.below = points.front().size;
    return c;
  }
  for (std::size_t i = 1; i < points.size(); ++i) {
    const RatioPoint& lo = points[i - 1];
    const RatioPoint& hi = points[i];
    if (lo.ratio < 1 && hi.ratio >= 1) {
      // log(ratio) is close to linear in log(size) between two sizes a factor 2 apart.
      const double t = -std::log(lo.ratio) / (std::log(hi.ratio) - std::log(lo.ratio));
      c.kind = Crossover::Kind::at;
      c.size = std::exp(std::log(lo.size) + t * (std::log(hi.size) - std::log(lo.size)));
      c.below = lo.size;
      c.above = hi.size;
      return c;
    }
  }
  c.kind = Crossover::Kind::not_reached;
  c.above = points.back().size;
  return c;
}

std::string size_key_of(const std::string& name) { return std::string(workload(name).size_key()); }

double size_value(const std::string& text) {
  std::string s;
  std::copy_if(text.begin(), text.end(), std::back_inserter(s), [](char c) { return c != '_'; });
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  return end != s.c_str() && *end == '\0' && std::isfinite(v) ? v : 0.0;
}

std::map<std::string, std::string> baseline_coordinates(
    std::map<std::string, std::string> coordinates, const std::vector<std::pair<std::string, std::string>>& baseline) {
  for (const auto& [k, v] : baseline) coordinates[k] = v;
  return coordinates;
}

}  // namespace scalebench::study

namespace scalebench::study {

nlohmann::json summarize_groups(const std::vector<ComparedRun>& runs, const std::string& size_key, bool size_swept) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<const ComparedRun*>> by_group;
  for (const auto& r : runs) {
    if (by_group.count(r.group) == 0) order.push_back(r.group);
    by_group[r.group].push_back(&r);
  }
  nlohmann::json out = nlohmann::json::array();
  for (const auto& g : order) {
    auto members = by_group[g];
    std::sort(members.begin(), members.end(),
              [](const ComparedRun* a, const ComparedRun* b) { return a->size < b->size; });
    nlohmann::json points = nlohmann::json::array();
    std::vector<RatioPoint> ratios, energy_ratios;
    std::set<std::string> intervals;
    for (const ComparedRun* r : members) {
      points.push_back({{"index", r->index}, {"size", r->size}, {"ratio", r->ratio}});
      ratios.push_back({r->size, r->ratio});
      if (r->energy_ratio > 0) {
        points.back()["energy_ratio"] = r->energy_ratio;
        points.back()["energy_interval"] = r->energy_interval;
        energy_ratios.push_back({r->size, r->energy_ratio});
        intervals.insert(r->energy_interval);
      }
    }
    nlohmann::json j = {{"group", g}, {"points", points}};
    if (size_swept) {
      const Crossover in_time = find_crossover(ratios);
      j["crossover"] = in_time.to_json(size_key);
      if (!energy_ratios.empty() && energy_ratios.size() == ratios.size() && intervals.size() == 1) {
        const Crossover in_energy = find_crossover(energy_ratios);
        j["energy_crossover"] = in_energy.to_json(size_key);
        j["energy_crossover"]["same_as_time"] = in_energy.same_as(in_time);
        j["energy_crossover"]["interval"] = *intervals.begin();
      }
    }
    out.push_back(j);
  }
  return out;
}

}  // namespace scalebench::study
