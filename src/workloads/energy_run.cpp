// The record's energy section: counters read by one rank per node, summed over nodes on rank 0.
#include "energy_run.hpp"

#include <algorithm>
#include <chrono>
#include <set>

#include <fmt/format.h>

#include "energy_timeline.hpp"
#include "scalebench/base/json_field.hpp"
#include "scalebench/base/phases.hpp"

namespace scalebench {
namespace {

using nlohmann::json;

constexpr double kIdleSeconds = 0.3;
constexpr double kSamplePeriod = 0.02;  // the sampler thread's reading interval
constexpr double kRaplRefresh = 0.001;  // how often RAPL's counters advance
constexpr double kNvmlRefresh = 0.1;    // and NVML's GPU energy counter
constexpr double kRefreshesPerPhase = 5;
constexpr const char* kResolution =
    "the counters are read before each repeat's barrier and, by a thread on each node's reader, every 20 ms; RAPL "
    "advances about every millisecond and NVML's GPU energy about every 100 ms. A timed interval or a phase whose "
    "median lasts at least 5 of the slowest counted counter's steps (and the sampler's 20 ms) gets the joules of its "
    "own intervals; a shorter one folds into its repeat. Phases that overlap (--overlap) share the joules of their "
    "common time";
// The two intervals the section gives joules for (the record's `intervals`).
constexpr const char* kTimedInterval =
    "timed_j, timed_mean_w, gflop_per_j, j_per_1e9_samples: each timed repeat from the end of its barrier for as long "
    "as its slowest rank's end to end, the interval of the time column and the rate";
constexpr const char* kWholeRepeat =
    "per_result_j, repeat_j, run_j, cpu_j, gpu_j, mean_w: each timed repeat whole, from the reading before its "
    "barrier to the next: barrier, timed work and its check";

struct Split {
  double cpu = 0, gpu = 0;
};

// The joules of one interval, CPU and GPU apart, and why a kind is not counted ("" when it is).
struct CheckedSplit {
  Split joules;
  std::string cpu_why, gpu_why;
};

CheckedSplit checked_split(const std::vector<EnergyDomain>& domains, const EnergyReading& a, const EnergyReading& b) {
  const std::vector<EnergyDelta> d = energy_between(domains, a, b);
  const EnergyDelta cpu = joules_of_kind(domains, d, "cpu"), gpu = joules_of_kind(domains, d, "gpu");
  return {{cpu.joules.value_or(0.0), gpu.joules.value_or(0.0)}, cpu.why, gpu.why};
}

// The step of the slowest counted counter (and of the sampler): an interval gets joules of its own
// when it lasts kRefreshesPerPhase of them.
double resolved_step(bool cpu, bool gpu) {
  return std::max({kSamplePeriod, cpu ? kRaplRefresh : 0.0, gpu ? kNvmlRefresh : 0.0});
}

// The phases whose joules are asked: rank 0's (every rank reduces the same list; a rank's own may
// differ), but the repeat itself. Collective.
std::vector<std::string> energy_phases(const PhaseRecorder& timed, const Communicator& comm) {
  std::vector<std::string> out;
  for (const auto& p : agreed_phases(timed, comm)) {
    if (p != phase::end_to_end) out.push_back(p);
  }
  return out;
}

// Adds one span's joules of a kind to a sum of spans; a span not counted leaves the sum not
// counted, with its reason.
void add_span(std::optional<double>& sum, std::string& why, const std::optional<double>& part,
              const std::string& part_why) {
  if (!sum) return;
  if (part) {
    *sum += *part;
  } else {
    sum = std::nullopt;
    why = part_why;
  }
}

// Joules of `phase` in timed repeat `repeat` on this node: the union of its spans there; a kind
// not counted in one span is not counted for the phase.
IntervalJoules phase_joules(const EnergyTimeline& line, const PhaseRecorder& timed, const std::string& name,
                            int repeat) {
  std::vector<std::pair<double, double>> spans;
  for (const auto& s : timed.spans()) {
    if (s.repeat == repeat && s.phase == name && s.t1 > s.t0) spans.emplace_back(s.t0, s.t1);
  }
  std::sort(spans.begin(), spans.end());
  IntervalJoules total{0.0, 0.0, "", ""};
  double covered = -1e300;  // the end of the union so far
  for (const auto& [t0, t1] : spans) {
    const double from = std::max(t0, covered);
    if (t1 <= from) continue;
    const IntervalJoules d = line.between(from, t1);
    add_span(total.cpu, total.cpu_why, d.cpu, d.cpu_why);
    add_span(total.gpu, total.gpu_why, d.gpu, d.gpu_why);
    covered = t1;
  }
  return total;
}

bool has_spans(const PhaseRecorder& timed, const std::string& name) {
  return std::any_of(timed.spans().begin(), timed.spans().end(), [&](const PhaseSpan& s) { return s.phase == name; });
}

// Where this rank's timed repeat `repeat` began (after its barrier), none when it was not kept.
std::optional<double> timed_start(const PhaseRecorder& timed, int repeat) {
  for (const auto& s : timed.spans()) {
    if (s.repeat == repeat && s.phase == phase::end_to_end) return s.t0;
  }
  return std::nullopt;
}

void allreduce_in_place(std::vector<double>& v, MPI_Op op, const Communicator& comm) {
  if (v.empty()) return;
  SCALEBENCH_MPI(MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_DOUBLE, op, comm.get()));
}

// What every node's reader adds up, as one vector summed over ranks: the counted flags, the idle
// watts and their flags, each timed repeat's joules (whole, then its timed interval) and each
// phase's joules per timed repeat (CPU and GPU apart), and the nodes whose reader timed each phase
// with its intervals.
struct NodeSums {
  // leaders, CPU counted, GPU counted, idle CPU W, idle GPU W, idle CPU counted, idle GPU counted
  static constexpr std::size_t kHead = 7;
  std::size_t repeats = 0, phases = 0;
  std::vector<double> v;

  NodeSums(std::size_t r, std::size_t p) : repeats(r), phases(p), v(kHead + 4 * r + 2 * r * p + p, 0.0) {}
  double& repeat(std::size_t r, bool gpu) { return v[kHead + 2 * r + (gpu ? 1 : 0)]; }
  double& timed(std::size_t r, bool gpu) { return v[kHead + 2 * repeats + 2 * r + (gpu ? 1 : 0)]; }
  double& phase(std::size_t p, std::size_t r, bool gpu) {
    return v[kHead + 4 * repeats + 2 * (p * repeats + r) + (gpu ? 1 : 0)];
  }
  double& spans(std::size_t p) { return v[kHead + 4 * repeats + 2 * repeats * phases + p]; }
};

// Why each kind is not counted on one node ("" when it is): `cpu`, `gpu` (the counters absent,
// or an interval of the run not counted), and the warnings of its reader (an interval not
// counted while the counters were there, the idle interval's included). Sent to rank 0 as JSON.
json node_why(const EnergyMeter& m, const std::string& cpu_late, const std::string& gpu_late,
              const std::string& idle_cpu, const std::string& idle_gpu) {
  const std::string cpu = m.cpu_reason().empty() ? cpu_late : m.cpu_reason();
  const std::string gpu = m.gpu_reason().empty() ? gpu_late : m.gpu_reason();
  json warnings = json::array();
  for (const std::string* w : {&idle_cpu, &idle_gpu}) {
    if (!w->empty()) warnings.push_back(*w);
  }
  if (m.cpu_reason().empty() && !cpu_late.empty()) warnings.push_back("CPU energy not counted: " + cpu_late);
  if (m.gpu_reason().empty() && !gpu_late.empty()) warnings.push_back("GPU energy not counted: " + gpu_late);
  return {{"cpu", cpu}, {"gpu", gpu}, {"warnings", warnings}};
}

// Rank 0: every node's reasons, gathered (`gathered[rank]`: that rank's node_why, "" off readers).
struct Whys {
  std::string cpu, gpu;  // the first node's that gave one
  json warnings = json::array();
};

Whys gather_whys(const std::vector<std::string>& gathered, std::int64_t nodes) {
  Whys out;
  for (std::size_t r = 0; r < gathered.size(); ++r) {
    if (gathered[r].empty()) continue;
    const json j = json::parse(gathered[r]);
    const std::string where = nodes > 1 ? fmt::format(" (on the node of rank {})", r) : "";
    const auto cpu = j.at("cpu").get<std::string>(), gpu = j.at("gpu").get<std::string>();
    if (out.cpu.empty() && !cpu.empty()) out.cpu = cpu + where;
    if (out.gpu.empty() && !gpu.empty()) out.gpu = gpu + where;
    for (const auto& w : j.at("warnings")) out.warnings.push_back(w.get<std::string>() + where);
  }
  return out;
}

// The record's per-phase joules: each phase long enough for the counters, the others folded. A
// phase some node's reader timed without its intervals folds too: its joules there are unknown.
void add_phases(json& j, NodeSums& sums, const std::vector<std::string>& phases, const std::vector<double>& median_s,
                bool cpu, bool gpu) {
  const double step = resolved_step(cpu, gpu);
  const double least = kRefreshesPerPhase * step;
  const double nodes = sums.v[0];
  json split_phases = json::object(), folded = json::object();
  for (std::size_t p = 0; p < phases.size(); ++p) {
    if (sums.spans(p) < nodes) {
      folded[phases[p]] = sums.spans(p) <= 0 ? "timed without its intervals: its joules fold into its repeat"
                                             : "timed without its intervals on some node's reader: its joules fold "
                                               "into its repeat";
      continue;
    }
    if (median_s[p] < least) {
      folded[phases[p]] = fmt::format("its median {:.3g} s is under {:.3g} s ({} steps of {:.3g} s): its joules fold "
                                      "into its repeat",
                                      median_s[p], least, kRefreshesPerPhase, step);
      continue;
    }
    std::vector<double> per_repeat;
    for (std::size_t r = 0; r < sums.repeats; ++r) {
      per_repeat.push_back((cpu ? sums.phase(p, r, false) : 0.0) + (gpu ? sums.phase(p, r, true) : 0.0));
    }
    const double median_j = median_of(per_repeat);
    split_phases[phases[p]] = {{"median_j", median_j}, {"median_s", median_s[p]}, {"mean_w", median_j / median_s[p]}};
  }
  j["phases"] = split_phases;
  j["phases_folded"] = folded;
}

// The first interval of each kind not counted on a node's reader: its reason and where it lies in
// the run ("" while every one is counted).
struct NodeGaps {
  std::string cpu, gpu;
  void note(const IntervalJoules& j, const std::string& where) {
    if (cpu.empty() && !j.cpu) cpu = fmt::format("{} ({})", j.cpu_why, where);
    if (gpu.empty() && !j.gpu) gpu = fmt::format("{} ({})", j.gpu_why, where);
  }
};

// What a node's reader integrates the counters over, per timed repeat.
struct Intervals {
  const std::vector<EnergyReading>& marks;  // the readings before each repeat's barrier and after the last
  int warmup = 0;
  const std::vector<double>& timed_s;  // each timed repeat's timed interval: its slowest rank's end to end
  const PhaseRecorder& timed;
};

// A node's reader: each timed repeat's joules (whole, and over its timed interval: from this
// rank's start after the barrier, as long as the slowest rank's end to end) and each phase's per
// repeat, from the timeline of every reading. A kind is counted on the node only when each of
// these intervals is; the first one not counted is returned with where it lies. A kind not
// counted adds 0 to the sums, which its flag keeps from every figure.
NodeGaps add_node(const EnergyTimeline& line, const Intervals& in, NodeSums& sums,
                  const std::vector<std::string>& phases) {
  NodeGaps gaps;
  for (std::size_t r = 0; r < sums.repeats; ++r) {
    const std::size_t i = static_cast<std::size_t>(in.warmup) + r;
    const std::string repeat = fmt::format("timed repeat {}", r + 1);
    const std::optional<double> t0 = timed_start(in.timed, static_cast<int>(r));
    const IntervalJoules timed = t0 ? line.between(*t0, *t0 + in.timed_s[r])
                                    : IntervalJoules{std::nullopt, std::nullopt, "its start was not kept: not counted",
                                                     "its start was not kept: not counted"};
    gaps.note(timed, "in the timed interval of " + repeat);
    const IntervalJoules whole = line.between(in.marks[i].at_s, in.marks[i + 1].at_s);
    gaps.note(whole, "in " + repeat + ", outside its timed interval: its barrier or its check");
    sums.repeat(r, false) = whole.cpu.value_or(0.0);
    sums.repeat(r, true) = whole.gpu.value_or(0.0);
    sums.timed(r, false) = timed.cpu.value_or(0.0);
    sums.timed(r, true) = timed.gpu.value_or(0.0);
    for (std::size_t p = 0; p < phases.size(); ++p) {
      const IntervalJoules ph = phase_joules(line, in.timed, phases[p], static_cast<int>(r));
      gaps.note(ph, fmt::format("in phase {} of {}", phases[p], repeat));
      sums.phase(p, r, false) = ph.cpu.value_or(0.0);
      sums.phase(p, r, true) = ph.gpu.value_or(0.0);
    }
  }
  for (std::size_t p = 0; p < phases.size(); ++p) sums.spans(p) = has_spans(in.timed, phases[p]) ? 1 : 0;
  return gaps;
}

// Watts of a counted kind, or null: a kind not counted, or its idle interval not counted.
json idle_watts(bool counted, double flags, double nodes, double watts) {
  return counted && flags == nodes ? json(watts) : json(nullptr);
}

// What the joules cover, from the kinds counted (the domains named from rank 0's node's): the
// parts measured, never the node at the wall.
std::string covers_text(const std::vector<EnergyDomain>& domains, bool cpu, bool gpu, std::int64_t nodes) {
  std::string parts;
  if (cpu) {
    const bool dram = std::any_of(domains.begin(), domains.end(), [](const EnergyDomain& d) {
      return d.kind == "cpu" && d.name.find("/dram") != std::string::npos;
    });
    parts = dram ? "CPU packages and their DRAM (RAPL)" : "CPU packages (RAPL)";
  }
  if (gpu) parts += std::string(parts.empty() ? "" : " + ") + "GPU boards (NVML)";
  if (parts.empty()) return "nothing: no counter counted";
  return nodes > 1 ? fmt::format("{} of {} nodes, not the nodes at the wall", parts, nodes)
                   : parts + ", not the node at the wall";
}

// Rank 0: the section's head (what is counted, why not, what it covers, the warnings); `meter`
// is rank 0's node's.
json section_head(const EnergyMeter& meter, const NodeSums& sums, const Whys& whys) {
  // Every node counts the same way, or the sum is not a run's energy.
  const auto nodes = static_cast<std::int64_t>(sums.v[0]);
  const bool cpu = sums.v[1] == sums.v[0], gpu = sums.v[2] == sums.v[0];
  json j{{"available", cpu || gpu}, {"nodes", nodes}, {"resolution", kResolution}, {"sample_period_s", kSamplePeriod}};
  json domains = json::array();
  double limit_w = 0;
  for (const auto& d : meter.domains()) {
    domains.push_back(d.name);
    limit_w += d.power_limit_w;
  }
  j["cpu"] = {{"counted", cpu},
              {"reason", cpu ? "" : (whys.cpu.empty() ? "not every node has RAPL counters" : whys.cpu)}};
  j["gpu"] = {{"counted", gpu},
              {"reason", gpu ? "" : (whys.gpu.empty() ? "not every node's GPUs have counters" : whys.gpu)}};
  j["domains_rank0_node"] = domains;
  j["covers"] = covers_text(meter.domains(), cpu, gpu, nodes);
  if (gpu && limit_w > 0) j["gpu"]["power_limit_w_rank0_node"] = limit_w;
  if (!whys.warnings.empty()) j["warnings"] = whys.warnings;
  return j;
}

json spread(const std::vector<double>& v) {
  return {{"median", median_of(v)},
          {"min", *std::min_element(v.begin(), v.end())},
          {"max", *std::max_element(v.begin(), v.end())}};
}

// Rank 0: the timed interval's figures, and the efficiency from them (the time column's interval:
// GFLOP/s and GFLOP/J describe the same work over the same time). An interval shorter than the
// counters resolve has no joules of its own: null, and why.
void add_timed(json& j, NodeSums& sums, const std::vector<double>& timed_s, const EnergyWork& work, bool cpu,
               bool gpu) {
  std::vector<double> per_repeat;
  double joules = 0, seconds = 0;
  for (std::size_t r = 0; r < sums.repeats; ++r) {
    per_repeat.push_back((cpu ? sums.timed(r, false) : 0.0) + (gpu ? sums.timed(r, true) : 0.0));
    joules += per_repeat.back();
    seconds += timed_s[r];
  }
  j["timed_s"] = spread(timed_s);
  const double median_s = median_of(timed_s), step = resolved_step(cpu, gpu), least = kRefreshesPerPhase * step;
  if (median_s < least) {
    j["timed_j"] = nullptr;
    j["timed_mean_w"] = nullptr;
    j["timed_reason"] = fmt::format("its median {:.3g} s is under {:.3g} s ({} steps of {:.3g} s), too short for the "
                                    "counters: only the whole repeat's joules are given (per_result_j)",
                                    median_s, least, kRefreshesPerPhase, step);
    return;
  }
  j["timed_j"] = spread(per_repeat);
  j["timed_mean_w"] = seconds > 0 ? json(joules / seconds) : json(nullptr);
  const double median_j = median_of(per_repeat);
  if (work.unit == "GFLOP" && median_j > 0) j["gflop_per_j"] = work.per_repeat / median_j;
  if (work.unit == "1e9 samples" && work.per_repeat > 0) j["j_per_1e9_samples"] = median_j / work.per_repeat;
}

// Rank 0: the section from the nodes' sums (`meter` and `marks` are rank 0's node's). A kind not
// counted has no joules (null), never 0 J.
json summarize(const EnergyMeter& meter, const std::vector<EnergyReading>& marks, NodeSums& sums, const Whys& whys,
               const std::vector<std::string>& phases, const std::vector<double>& median_s,
               const std::vector<double>& timed_s, int warmup, const EnergyWork& work) {
  json j = section_head(meter, sums, whys);
  const bool cpu = j["cpu"]["counted"].get<bool>(), gpu = j["gpu"]["counted"].get<bool>();
  if (!(cpu || gpu) || sums.repeats == 0 || marks.size() <= static_cast<std::size_t>(warmup)) return j;
  std::vector<double> per_repeat;
  double cpu_run = 0, gpu_run = 0;
  for (std::size_t r = 0; r < sums.repeats; ++r) {
    const double c = cpu ? sums.repeat(r, false) : 0.0, g = gpu ? sums.repeat(r, true) : 0.0;
    cpu_run += c;
    gpu_run += g;
    per_repeat.push_back(c + g);
  }
  const double run_j = cpu_run + gpu_run;
  const json idle_cpu = idle_watts(cpu, sums.v[5], sums.v[0], sums.v[3]);
  const json idle_gpu = idle_watts(gpu, sums.v[6], sums.v[0], sums.v[4]);
  const bool idle_known = (!cpu || idle_cpu.is_number()) && (!gpu || idle_gpu.is_number());
  const double seconds = marks.back().at_s - marks[static_cast<std::size_t>(warmup)].at_s;
  j["intervals"] = {{"timed", kTimedInterval}, {"repeat", kWholeRepeat}};
  j["idle_w"] = {{"cpu", idle_cpu},
                 {"gpu", idle_gpu},
                 {"total", idle_known ? json((cpu ? sums.v[3] : 0.0) + (gpu ? sums.v[4] : 0.0)) : json(nullptr)}};
  j["run_j"] = run_j;
  j["cpu_j"] = cpu ? json(cpu_run) : json(nullptr);
  j["gpu_j"] = gpu ? json(gpu_run) : json(nullptr);
  j["repeats"] = sums.repeats;
  j["repeat_j"] = spread(per_repeat);
  j["seconds"] = seconds;
  j["interval_unix"] = {marks[static_cast<std::size_t>(warmup)].at_unix, marks.back().at_unix};
  j["mean_w"] = seconds > 0 ? json(run_j / seconds) : json(nullptr);
  j["per_result_j"] = run_j / static_cast<double>(sums.repeats);  // each repeat is one verified result
  add_timed(j, sums, timed_s, work, cpu, gpu);
  add_phases(j, sums, phases, median_s, cpu, gpu);
  return j;
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

EnergyRun::~EnergyRun() { stop_sampling(); }

EnergyReading EnergyRun::read() {
  const std::lock_guard<std::mutex> lock(read_mutex_);
  return meter_->read();
}

void EnergyRun::sample_idle() {
  if (!meter_ || meter_->domains().empty()) return;
  const EnergyReading a = read();
  std::this_thread::sleep_for(std::chrono::duration<double>(kIdleSeconds));
  const EnergyReading b = read();
  const CheckedSplit idle = checked_split(meter_->domains(), a, b);
  const double seconds = std::max(1e-3, b.at_s - a.at_s);
  if (idle.cpu_why.empty()) idle_cpu_w_ = idle.joules.cpu / seconds;
  if (idle.gpu_why.empty()) idle_gpu_w_ = idle.joules.gpu / seconds;
  // Only counters that are there have an idle interval to warn of.
  if (meter_->cpu_reason().empty() && !idle.cpu_why.empty()) idle_cpu_why_ = "idle power: " + idle.cpu_why;
  if (meter_->gpu_reason().empty() && !idle.gpu_why.empty()) idle_gpu_why_ = "idle power: " + idle.gpu_why;
}

void EnergyRun::start_sampling() {
  if (!meter_ || meter_->domains().empty() || sampler_.joinable()) return;
  sampler_ = std::thread([this] {
    std::unique_lock<std::mutex> lock(stop_mutex_);
    while (!stop_) {
      lock.unlock();
      EnergyReading r = read();
      timeline_.push_back(std::move(r));
      lock.lock();
      stop_cv_.wait_for(lock, std::chrono::duration<double>(kSamplePeriod), [this] { return stop_; });
    }
  });
}

void EnergyRun::stop_sampling() {
  if (!sampler_.joinable()) return;
  {
    const std::lock_guard<std::mutex> lock(stop_mutex_);
    stop_ = true;
  }
  stop_cv_.notify_all();
  sampler_.join();
}

void EnergyRun::mark() {
  if (meter_) marks_.push_back(read());
}

json EnergyRun::section(int total, int warmup, const EnergyWork& work, const PhaseRecorder& timed) {
  stop_sampling();
  const bool leader = meter_ != nullptr;
  const auto repeats = static_cast<std::size_t>(std::max(0, total - warmup));
  const std::vector<std::string> phases = energy_phases(timed, comm_);
  std::vector<double> median_s;
  for (const auto& p : phases) median_s.push_back(median_of(timed.samples(p)));
  allreduce_in_place(median_s, MPI_MAX, comm_);
  // Each timed repeat's timed interval lasts as long as its slowest rank's end to end: the time
  // column's interval.
  std::vector<double> timed_s = timed.samples(phase::end_to_end);
  timed_s.resize(repeats, 0.0);
  allreduce_in_place(timed_s, MPI_MAX, comm_);

  NodeSums sums(repeats, phases.size());
  std::string mine;  // this node's reasons and warnings, on its reader
  if (leader) {
    std::string cpu_late = "the counters were not read around every repeat", gpu_late = cpu_late;
    if (marks_.size() == static_cast<std::size_t>(total) + 1) {
      std::vector<EnergyReading> all = timeline_;
      all.insert(all.end(), marks_.begin(), marks_.end());
      const EnergyTimeline line(meter_->domains(), std::move(all));
      const NodeGaps gaps = add_node(line, {marks_, warmup, timed_s, timed}, sums, phases);
      cpu_late = gaps.cpu;
      gpu_late = gaps.gpu;
    }
    const json why = node_why(*meter_, cpu_late, gpu_late, idle_cpu_why_, idle_gpu_why_);
    sums.v[0] = 1;
    sums.v[1] = why["cpu"].get<std::string>().empty() ? 1 : 0;
    sums.v[2] = why["gpu"].get<std::string>().empty() ? 1 : 0;
    sums.v[3] = idle_cpu_w_.value_or(0.0);
    sums.v[4] = idle_gpu_w_.value_or(0.0);
    sums.v[5] = idle_cpu_w_ ? 1 : 0;
    sums.v[6] = idle_gpu_w_ ? 1 : 0;
    mine = json_text(why);
  }
  allreduce_in_place(sums.v, MPI_SUM, comm_);
  const std::vector<std::string> gathered = comm_.gather_strings(mine);
  if (!comm_.is_root()) return nullptr;
  const Whys whys = gather_whys(gathered, static_cast<std::int64_t>(sums.v[0]));
  return summarize(*meter_, marks_, sums, whys, phases, median_s, timed_s, warmup, work);
}

namespace {

// "12.5 W", or "not counted" for a figure that is not a number (null: not counted).
std::string figure(const json& e, const char* key, const char* unit) {
  if (!e.is_object() || !e.contains(key) || !e[key].is_number()) return "not counted";
  return fmt::format("{:.4g} {}", e[key].get<double>(), unit);
}

// The joules of each counted kind, and why the others are not counted.
std::string kind_parts(const json& e) {
  std::string counted, not_counted;
  struct Kind {
    const char *key, *label, *joules;
  };
  for (const Kind& k : {Kind{"cpu", "CPU", "cpu_j"}, Kind{"gpu", "GPU", "gpu_j"}}) {
    if (e[k.key].value("counted", false)) {
      counted += fmt::format("{}{} {}", counted.empty() ? "" : ", ", k.label, figure(e, k.joules, "J"));
    } else {
      not_counted += fmt::format("; {} not counted: {}", k.label, e[k.key].value("reason", std::string()));
    }
  }
  return counted + " over the run" + not_counted;
}

// The timed interval's joules and efficiency, or why it has none of its own.
std::string timed_part(const json& e) {
  if (!e.contains("timed_j")) return "timed interval not kept (an older record)";
  if (!e["timed_j"].is_object()) {
    return fmt::format("timed interval not counted apart ({})", e.value("timed_reason", std::string("-")));
  }
  std::string eff;
  if (e.contains("gflop_per_j")) eff = fmt::format(", {:.3g} GFLOP/J", e["gflop_per_j"].get<double>());
  if (e.contains("j_per_1e9_samples")) {
    eff = fmt::format(", {:.3g} J per 1e9 samples", e["j_per_1e9_samples"].get<double>());
  }
  return fmt::format("timed interval {:.4g} J median (mean {}){}", e["timed_j"].value("median", 0.0),
                     figure(e, "timed_mean_w", "W"), eff);
}

}  // namespace

std::string EnergyRun::table_line(const json& e) {
  if (!e.is_object() || !e.contains("cpu") || !e.contains("gpu")) return "";
  std::string warnings;
  if (e.contains("warnings") && e["warnings"].is_array()) {
    for (const auto& w : e["warnings"]) warnings += "warning: energy: " + w.get<std::string>() + "\n";
  }
  const bool cpu = e["cpu"].value("counted", false), gpu = e["gpu"].value("counted", false);
  if (!e.contains("run_j")) {
    return warnings + fmt::format("energy: not counted (CPU: {}; GPU: {})\n",
                                  cpu ? "counted" : e["cpu"].value("reason", "-"),
                                  gpu ? "counted" : e["gpu"].value("reason", "-"));
  }
  std::string phases;
  if (e.contains("phases") && e["phases"].is_object()) {
    for (const auto& [name, p] : e["phases"].items()) {
      phases += fmt::format("{}{} {:.4g} J", phases.empty() ? "; per repeat: " : ", ", name, p.value("median_j", 0.0));
    }
  }
  std::string out = warnings + fmt::format("energy: {}; whole repeat with its check {:.4g} J per verified result "
                                           "(mean {}); idle before {} ({}{})\n",
                                           timed_part(e), e["per_result_j"].get<double>(), figure(e, "mean_w", "W"),
                                           figure(e["idle_w"], "total", "W"), kind_parts(e), phases);
  if (e.contains("covers")) out += "energy covers: " + e["covers"].get<std::string>() + "\n";
  return out;
}

}  // namespace scalebench
