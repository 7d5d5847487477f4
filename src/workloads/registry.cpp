// The workload registry: one entry per workload, each defined in its own folder.
#include <algorithm>

#include <fmt/format.h>

#include "scalebench/base/error.hpp"
#include "scalebench/base/phases.hpp"
#include "scalebench/workloads/workload.hpp"

namespace scalebench {

// A workload registers here: its folder defines the function, the list names it. (An explicit
// list, not self-registering statics: the linker drops unreferenced objects of a static library.)
const Workload& gemm_workload();
const Workload& montecarlo_workload();

const std::vector<const Workload*>& workloads() {
  static const std::vector<const Workload*> all = {&gemm_workload(), &montecarlo_workload()};
  return all;
}

const Workload* find_workload(std::string_view name) {
  const auto& all = workloads();
  const auto it = std::find_if(all.begin(), all.end(), [&](const Workload* w) { return w->name() == name; });
  return it == all.end() ? nullptr : *it;
}

const Workload& workload(std::string_view name, std::string_view what) {
  if (const Workload* w = find_workload(name)) return *w;
  throw UsageError(fmt::format("unknown {} '{}'; use {}", what, name, workload_names()));
}

std::string workload_names(std::string_view last) {
  const auto& all = workloads();
  std::string out;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (i > 0) out += i + 1 == all.size() ? std::string(last) : std::string(", ");
    out += all[i]->name();
  }
  return out;
}

double record_number(const nlohmann::json& record, std::initializer_list<const char*> path) {
  const nlohmann::json* cur = &record;
  for (const char* p : path) {
    if (!cur->is_object() || !cur->contains(p)) return 0.0;
    cur = &(*cur)[p];
  }
  return cur->is_number() ? cur->get<double>() : 0.0;
}

RunFigures common_figures(const nlohmann::json& r, std::initializer_list<std::string_view> gpu_backends) {
  RunFigures f;
  f.ranks = r.value("ranks", 0);
  f.threads = static_cast<int>(record_number(r, {"config", "threads_per_rank"}));
  const std::string backend = r.contains("config") ? r["config"].value("backend", std::string()) : std::string();
  f.gpu = std::find(gpu_backends.begin(), gpu_backends.end(), backend) != gpu_backends.end();
  phase::KindSums sums;
  if (r.contains("phases") && r["phases"].is_object()) {
    for (const auto& [name, st] : r["phases"].items()) sums.add(name, st.is_object() ? st.value("median_s", 0.0) : 0.0);
  }
  f.compute_s = sums.computation;
  f.comm_s = sums.communication;
  f.transfer_s = sums.transfer;
  const double e2e = record_number(r, {"phases", phase::end_to_end, "median_s"});
  f.time_s = e2e > 0 ? e2e : f.compute_s;
  return f;
}

}  // namespace scalebench
