#include "scalebench/mpi/timing.hpp"

#include <algorithm>
#include <stdexcept>

#include "scalebench/base/phases.hpp"
#include "scalebench/mpi/mpi.hpp"

namespace scalebench {

void PhaseRecorder::add(const std::string& phase, double seconds) {
  if (!samples_.count(phase)) {
    order_.push_back(phase);
    samples_[phase] = std::vector<double>(repeats_, 0.0);
  }
  current_[phase] += seconds;
}

void PhaseRecorder::next_repeat() {
  for (const auto& name : order_) {
    auto it = current_.find(name);
    samples_[name].push_back(it == current_.end() ? 0.0 : it->second);
  }
  current_.clear();
  ++repeats_;
}

void PhaseRecorder::clear() {
  order_.clear();
  samples_.clear();
  current_.clear();
  spans_.clear();
  repeats_ = 0;
}

const std::vector<double>& PhaseRecorder::samples(const std::string& phase) const {
  static const std::vector<double> none;
  auto it = samples_.find(phase);
  return it == samples_.end() ? none : it->second;
}

double median_of(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::vector<std::string> agreed_phases(const PhaseRecorder& rec, const Communicator& comm) {
  std::string names;
  for (const auto& p : rec.phases()) names += p + '\n';
  names = comm.bcast_string(names, 0);
  std::vector<std::string> out;
  for (std::size_t start = 0, end; start < names.size(); start = end + 1) {
    end = names.find('\n', start);
    out.push_back(names.substr(start, end - start));
  }
  return out;
}

PhaseList summarize_phases(const PhaseRecorder& rec, const Communicator& comm) {
  // Rank 0's phase list and repeat count decide; a rank that lacks a phase contributes zeros.
  const std::vector<std::string> names = agreed_phases(rec, comm);
  std::int64_t reps = rec.repeats();
  SCALEBENCH_MPI(MPI_Bcast(&reps, 1, MPI_INT64_T, 0, comm.get()));

  PhaseList out;
  for (const std::string& phase : names) {
    std::vector<double> local(static_cast<std::size_t>(reps), 0.0);
    const auto& s = rec.samples(phase);
    for (std::size_t r = 0; r < local.size() && r < s.size(); ++r) local[r] = s[r];
    std::vector<double> mx(local.size()), mn(local.size()), sm(local.size());
    const int count = static_cast<int>(local.size());
    SCALEBENCH_MPI(MPI_Allreduce(local.data(), mx.data(), count, MPI_DOUBLE, MPI_MAX, comm.get()));
    SCALEBENCH_MPI(MPI_Allreduce(local.data(), mn.data(), count, MPI_DOUBLE, MPI_MIN, comm.get()));
    SCALEBENCH_MPI(MPI_Allreduce(local.data(), sm.data(), count, MPI_DOUBLE, MPI_SUM, comm.get()));
    PhaseStats st;
    st.per_repeat_max = mx;
    if (!mx.empty()) {
      st.min = *std::min_element(mx.begin(), mx.end());
      st.max = *std::max_element(mx.begin(), mx.end());
      st.median = median_of(mx);
      std::vector<double> avg(sm.size()), imb(sm.size());
      for (std::size_t r = 0; r < sm.size(); ++r) {
        avg[r] = sm[r] / comm.size();
        imb[r] = avg[r] > 0 ? (mx[r] - avg[r]) / avg[r] : 0.0;
      }
      st.rank_min = median_of(mn);
      st.rank_avg = median_of(avg);
      st.imbalance = median_of(imb);
    }
    out.emplace_back(phase, st);
  }
  return out;
}

const PhaseStats* find_phase(const PhaseList& phases, std::string_view name) {
  const auto it = std::find_if(phases.begin(), phases.end(), [&](const auto& p) { return p.first == name; });
  return it == phases.end() ? nullptr : &it->second;
}

double phase_median(const PhaseList& phases, std::string_view name) {
  const PhaseStats* s = find_phase(phases, name);
  return s == nullptr ? 0.0 : s->median;
}

nlohmann::json phases_json(const PhaseList& setup, const PhaseList& timed) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, st] : setup) j[std::string(phase::setup_prefix) + name] = to_json(st);
  for (const auto& [name, st] : timed) j[name] = to_json(st);
  return j;
}

nlohmann::json to_json(const PhaseStats& s) {
  return {{"min_s", s.min},
          {"median_s", s.median},
          {"max_s", s.max},
          {"rank_min_s", s.rank_min},
          {"rank_avg_s", s.rank_avg},
          {"imbalance", s.imbalance},
          {"per_repeat_max_s", s.per_repeat_max}};
}

}  // namespace scalebench
