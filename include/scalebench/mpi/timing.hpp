#pragma once
// Phase timing: each rank records seconds per phase per repeat; summaries reduce over ranks
// (max/avg/min per repeat) and then over repeats (min/median/max of the per-repeat maximum).
#include <chrono>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace scalebench {

class Communicator;

inline double wall_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Seconds per phase for the current repeat, then kept per repeat.
// One interval of a phase on the host's steady clock (wall_seconds()), in repeat `repeat` of its
// recorder: what the energy counters are integrated over for the phase's joules.
struct PhaseSpan {
  std::string phase;
  int repeat = 0;
  double t0 = 0, t1 = 0;
};

class PhaseRecorder {
 public:
  // Adds seconds to `phase` in the current repeat (phases may be hit several times a repeat).
  void add(const std::string& phase, double seconds);
  // Keeps one interval of `phase` in the current repeat (its seconds are added with add()).
  void span(const std::string& phase, double t0, double t1) { spans_.push_back({phase, repeats_, t0, t1}); }
  const std::vector<PhaseSpan>& spans() const noexcept { return spans_; }
  // Closes the current repeat; a phase not hit in it counts 0 there if it was hit before.
  void next_repeat();
  // Drops everything recorded (after warm-up).
  void clear();
  // Phase names in first-recorded order.
  const std::vector<std::string>& phases() const noexcept { return order_; }
  // samples(phase)[r] = seconds in closed repeat r.
  const std::vector<double>& samples(const std::string& phase) const;
  int repeats() const noexcept { return repeats_; }

 private:
  std::vector<std::string> order_;
  std::map<std::string, std::vector<double>> samples_;
  std::map<std::string, double> current_;
  std::vector<PhaseSpan> spans_;
  int repeats_ = 0;
};

// Times a scope into a recorder (host clock).
class ScopedPhase {
 public:
  ScopedPhase(PhaseRecorder& rec, std::string phase) : rec_(rec), phase_(std::move(phase)), t0_(wall_seconds()) {}
  ~ScopedPhase() {
    const double t1 = wall_seconds();
    rec_.add(phase_, t1 - t0_);
    rec_.span(phase_, t0_, t1);
  }
  ScopedPhase(const ScopedPhase&) = delete;
  ScopedPhase& operator=(const ScopedPhase&) = delete;

 private:
  PhaseRecorder& rec_;
  std::string phase_;
  double t0_;
};

struct PhaseStats {
  double min = 0, median = 0, max = 0;  // over repeats, of the maximum over ranks
  double rank_min = 0, rank_avg = 0;    // medians over repeats of the min / mean over ranks
  double imbalance = 0;                 // median over repeats of (max - avg) / avg over ranks
  std::vector<double> per_repeat_max;   // the maximum over ranks, per repeat
};

double median_of(std::vector<double> v);

// A run's phases summarized, in first-recorded order; names from phases.hpp.
using PhaseList = std::vector<std::pair<std::string, PhaseStats>>;

// Collective over `comm`: rank 0's phase names in its order, on every rank. Ranks may record
// different phases (rank 0 packs, a broadcast's root copies): anything reduced per phase over
// ranks takes its list from here, or the reductions' sizes differ between ranks.
std::vector<std::string> agreed_phases(const PhaseRecorder& rec, const Communicator& comm);

// Collective over `comm`: the phases of agreed_phases() and rank 0's repeat count; a rank that
// lacks a phase contributes zeros. The result is valid on every rank.
PhaseList summarize_phases(const PhaseRecorder& rec, const Communicator& comm);

// The statistics of phase `name`, nullptr when it was not recorded.
const PhaseStats* find_phase(const PhaseList& phases, std::string_view name);
// Its median over repeats, 0 when it was not recorded.
double phase_median(const PhaseList& phases, std::string_view name);

nlohmann::json to_json(const PhaseStats& s);
// A record's "phases" section: the set-up phases as "setup_<name>", then the timed ones.
nlohmann::json phases_json(const PhaseList& setup, const PhaseList& timed);

}  // namespace scalebench
