// The record's energy section: counters read by one rank per node, summed over nodes on rank 0.
#include "energy_run.hpp"

#include <algorithm>
#include <chrono>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "scalebench/mpi/timing.hpp"

namespace scalebench {
namespace {

using nlohmann::json;

constexpr double kIdleSeconds = 0.3;
constexpr const char* kResolution =
    "per repeat and per run: RAPL counters refresh about every millisecond and NVML's GPU energy counter about "
    "every 100 ms, so a repeat's phases are not split (each phase's energy folds into its repeat)";

struct Split {
  double cpu = 0, gpu = 0;
};

Split split(const std::vector<EnergyDomain>& domains, const std::vector<double>& joules) {
  Split s;
  for (std::size_t i = 0; i < domains.size() && i < joules.size(); ++i)
    (domains[i].kind == "gpu" ? s.gpu : s.cpu) += joules[i];
  return s;
}

}  // namespace

EnergyRun::EnergyRun(const Communicator& comm, const std::string& gpu_pci_bus_id) : comm_(comm) {
  const Communicator& node = comm.node();
  const std::vector<std::string> buses = node.gather_strings(gpu_pci_bus_id);
  if (node.rank() != 0) return;
  std::set<std::string> unique;
  for (const auto& b : buses) {
    if (!b.empty()) unique.insert(b);  // a GPU shared by several ranks is counted once
  }
  meter_ = EnergyMeter::open({unique.begin(), unique.end()});
}

void EnergyRun::sample_idle() {
  if (!meter_ || meter_->domains().empty()) return;
  const EnergyReading a = meter_->read();
  std::this_thread::sleep_for(std::chrono::duration<double>(kIdleSeconds));
  const EnergyReading b = meter_->read();
  const Split idle = split(meter_->domains(), energy_between(meter_->domains(), a, b));
  const double seconds = std::max(1e-3, b.at_s - a.at_s);
  idle_cpu_w_ = idle.cpu / seconds;
  idle_gpu_w_ = idle.gpu / seconds;
}

void EnergyRun::mark() {
  if (meter_) marks_.push_back(meter_->read());
}

json EnergyRun::section(int warmup, const EnergyWork& work) const {
  const bool leader = meter_ != nullptr;
  const bool cpu_here = leader && meter_->cpu_reason().empty();
  const bool gpu_here = leader && meter_->gpu_reason().empty();
  // Every node counts the same way, or the sum is not a run's energy.
  const std::int64_t nodes = comm_.sum(static_cast<std::int64_t>(leader ? 1 : 0));
  const bool cpu = comm_.sum(static_cast<std::int64_t>(cpu_here ? 1 : 0)) == nodes;
  const bool gpu = comm_.sum(static_cast<std::int64_t>(gpu_here ? 1 : 0)) == nodes;
  const std::size_t repeats = marks_.empty() ? 0 : marks_.size() - 1;
  const std::int64_t timed = comm_.max(static_cast<std::int64_t>(repeats)) - warmup;
  std::vector<double> cpu_j, gpu_j;
  for (std::int64_t r = 0; r < timed; ++r) {
    Split s;
    const auto i = static_cast<std::size_t>(warmup + r);
    if (leader && i + 1 < marks_.size())
      s = split(meter_->domains(), energy_between(meter_->domains(), marks_[i], marks_[i + 1]));
    cpu_j.push_back(comm_.sum(cpu ? s.cpu : 0.0));
    gpu_j.push_back(comm_.sum(gpu ? s.gpu : 0.0));
  }
  const double idle_cpu = comm_.sum(cpu ? idle_cpu_w_ : 0.0), idle_gpu = comm_.sum(gpu ? idle_gpu_w_ : 0.0);
  if (!comm_.is_root()) return nullptr;

  json j{{"available", cpu || gpu}, {"nodes", nodes}, {"resolution", kResolution}};
  json domains = json::array();
  double limit_w = 0;
  for (const auto& d : meter_->domains()) {
    domains.push_back(d.name);
    limit_w += d.power_limit_w;
  }
  const std::string some = nodes > 1 ? " (on at least one node)" : "";
  j["cpu"] = {{"counted", cpu},
              {"reason", cpu ? "" : (cpu_here ? "not every node has RAPL counters" : meter_->cpu_reason() + some)}};
  j["gpu"] = {{"counted", gpu},
              {"reason", gpu ? "" : (gpu_here ? "not every node's GPUs have counters" : meter_->gpu_reason() + some)}};
  j["domains_rank0_node"] = domains;
  if (gpu && limit_w > 0) j["gpu"]["power_limit_w_rank0_node"] = limit_w;
  if (!(cpu || gpu) || timed <= 0) return j;
  std::vector<double> total(cpu_j.size());
  for (std::size_t i = 0; i < total.size(); ++i) total[i] = cpu_j[i] + gpu_j[i];
  double run_j = 0, cpu_run = 0, gpu_run = 0;
  for (std::size_t i = 0; i < total.size(); ++i) {
    run_j += total[i];
    cpu_run += cpu_j[i];
    gpu_run += gpu_j[i];
  }
  const double seconds = marks_.back().at_s - marks_[static_cast<std::size_t>(warmup)].at_s;
  j["idle_w"] = {{"cpu", idle_cpu}, {"gpu", idle_gpu}, {"total", idle_cpu + idle_gpu}};
  j["run_j"] = run_j;
  j["cpu_j"] = cpu_run;
  j["gpu_j"] = gpu_run;
  j["repeats"] = timed;
  j["repeat_j"] = {{"median", median_of(total)},
                   {"min", *std::min_element(total.begin(), total.end())},
                   {"max", *std::max_element(total.begin(), total.end())}};
  j["seconds"] = seconds;
  j["interval_unix"] = {marks_[static_cast<std::size_t>(warmup)].at_unix, marks_.back().at_unix};
  j["mean_w"] = seconds > 0 ? run_j / seconds : 0.0;
  j["per_result_j"] = run_j / static_cast<double>(timed);  // each repeat is one verified result
  const double per_result = j["per_result_j"];
  if (work.unit == "GFLOP" && per_result > 0) j["gflop_per_j"] = work.per_repeat / per_result;
  if (work.unit == "1e9 samples" && work.per_repeat > 0) j["j_per_1e9_samples"] = per_result / work.per_repeat;
  return j;
}

std::string EnergyRun::table_line(const json& e) {
  if (!e.is_object() || !e.contains("cpu") || !e.contains("gpu")) return "";
  const bool cpu = e["cpu"].value("counted", false), gpu = e["gpu"].value("counted", false);
  if (!e.contains("run_j")) {
    return fmt::format("energy: not counted (CPU: {}; GPU: {})\n", cpu ? "counted" : e["cpu"].value("reason", "-"),
                       gpu ? "counted" : e["gpu"].value("reason", "-"));
  }
  std::string eff;
  if (e.contains("gflop_per_j")) eff = fmt::format(", {:.3g} GFLOP/J", e["gflop_per_j"].get<double>());
  if (e.contains("j_per_1e9_samples")) {
    eff = fmt::format(", {:.3g} J per 1e9 samples", e["j_per_1e9_samples"].get<double>());
  }
  std::string parts = fmt::format("CPU {:.4g} J, GPU {:.4g} J over the run", e["cpu_j"].get<double>(),
                                  e["gpu_j"].get<double>());
  if (!cpu) parts += "; CPU not counted: " + e["cpu"].value("reason", std::string());
  if (!gpu) parts += "; GPU not counted: " + e["gpu"].value("reason", std::string());
  return fmt::format("energy: {:.4g} J per verified result{}, mean {:.4g} W, idle before {:.4g} W ({})\n",
                     e["per_result_j"].get<double>(), eff, e["mean_w"].get<double>(),
                     e["idle_w"]["total"].get<double>(), parts);
}

}  // namespace scalebench
