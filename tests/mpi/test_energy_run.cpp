// The energy section of one repeat over a fake RAPL counter that a thread of the test advances
// (about 100 W) and can turn to garbage for a while, as the harness times a repeat: the timed
// interval (from the barrier, as long as the slowest rank's end to end) apart from the whole
// repeat with its check; a read that fails inside the timed interval, or only in the check after
// it, leaves the CPU's energy not counted, the reason and the warning saying where; never 0 J.
#include <gtest/gtest.h>
#include <mpi.h>
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "mpi_test_util.hpp"
#include "scalebench/base/phases.hpp"
#include "scalebench/mpi/mpi.hpp"
#include "scalebench/mpi/timing.hpp"
#include "workloads/energy_run.hpp"

using namespace scalebench;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

void sleep_s(double s) { std::this_thread::sleep_for(std::chrono::duration<double>(s)); }

// A powercap tree with one package domain whose counter a thread raises by 1 J every 10 ms, each
// value put in place at once (rename); while `garbage` is on, the file holds no number (a read of
// it fails) and the joules go on adding up unseen. Rank 0 only.
class FakeCounter {
 public:
  FakeCounter() {
    const char* tmp = std::getenv("SCALEBENCH_TEST_TMPDIR");
    std::string tmpl = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/energy-run-XXXXXX";
    root_ = mkdtemp(tmpl.data());
    zone_ = root_ + "/intel-rapl:0";
    fs::create_directories(zone_);
    std::ofstream(zone_ + "/name") << "package-0\n";
    std::ofstream(zone_ + "/max_energy_range_uj") << "262143328850\n";
    put("0");
    writer_ = std::thread([this] {
      long long uj = 0;
      while (!stop_) {
        uj += 1000000;
        put(garbage_ ? "12abc" : std::to_string(uj));
        sleep_s(0.01);
      }
    });
  }
  ~FakeCounter() {
    stop_ = true;
    writer_.join();
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  FakeCounter(const FakeCounter&) = delete;
  FakeCounter& operator=(const FakeCounter&) = delete;
  const std::string& root() const { return root_; }
  void garbage(bool on) { garbage_ = on; }

 private:
  void put(const std::string& text) {
    std::ofstream(zone_ + "/e.new") << text << "\n";
    fs::rename(zone_ + "/e.new", zone_ + "/energy_uj");
  }
  std::string root_, zone_;
  std::atomic<bool> stop_{false}, garbage_{false};
  std::thread writer_;
};

enum class Garbage { none, in_timed_interval, in_check };

// The slowest rank's extra time in the timed work (the last rank's, with several).
constexpr double kSlowerBy = 0.2;

// One timed repeat as the harness runs it (the reading before the barrier, the timed work with
// its interval kept, the check, the reading after a barrier) and its energy section (rank 0).
// The timed work lasts 1 s (the last rank's 1.2 s with several ranks), the check 0.7 s after a
// barrier; a garbage window of 0.4 s sits 0.3 s inside the one asked for.
json one_repeat(const Communicator& comm, FakeCounter* counter, Garbage where) {
  auto window = [&](Garbage here, double before, double during, double after) {
    sleep_s(before);
    if (counter != nullptr && where == here) counter->garbage(true);
    sleep_s(during);
    if (counter != nullptr) counter->garbage(false);
    sleep_s(after);
  };
  EnergyRun energy(comm, "");
  energy.start_sampling();
  sleep_s(0.1);
  PhaseRecorder rec;
  energy.mark();
  comm.barrier();
  const double t0 = wall_seconds();
  window(Garbage::in_timed_interval, 0.3, 0.4, 0.3);
  if (comm.size() > 1 && comm.rank() == comm.size() - 1) sleep_s(kSlowerBy);
  const double t1 = wall_seconds();
  rec.add(phase::end_to_end, t1 - t0);
  rec.span(phase::end_to_end, t0, t1);
  comm.barrier();  // the check waits for every rank, as a collective check does
  {
    const ScopedPhase check(rec, phase::verify);
    window(Garbage::in_check, 0.2, 0.4, 0.1);
  }
  rec.next_repeat();
  comm.barrier();
  energy.mark();
  return energy.section(1, 0, EnergyWork{"GFLOP", 8.0}, rec);
}

// Rank 0's fake counter, named to every rank's meter through SCALEBENCH_POWERCAP_ROOT.
std::unique_ptr<FakeCounter> fake_counter(const Communicator& comm) {
  std::unique_ptr<FakeCounter> c;
  if (comm.is_root()) {
    c = std::make_unique<FakeCounter>();
    setenv("SCALEBENCH_POWERCAP_ROOT", c->root().c_str(), 1);
  }
  return c;
}

double number(const json& e, const char* key, const char* sub = nullptr) {
  const json& v = sub == nullptr ? e.value(key, json()) : e.value(key, json()).value(sub, json());
  return v.is_number() ? v.get<double>() : -1.0;
}

// The CPU's energy not counted, the reason and a warning saying `where`, and no joules at all.
void expect_not_counted_in(const json& e, const std::string& where) {
  EXPECT_FALSE(e.value("available", true)) << e.dump(1);
  EXPECT_FALSE(e["cpu"].value("counted", true)) << e.dump(1);
  const std::string reason = e["cpu"].value("reason", std::string());
  EXPECT_NE(reason.find("does not hold a whole number of microjoules"), std::string::npos) << reason;
  EXPECT_NE(reason.find(where), std::string::npos) << reason;
  ASSERT_TRUE(e.contains("warnings")) << e.dump(1);
  bool warned = false;
  for (const auto& w : e["warnings"]) {
    const std::string text = w.get<std::string>();
    warned = warned || (text.rfind("CPU energy not counted: ", 0) == 0 && text.find(where) != std::string::npos);
  }
  EXPECT_TRUE(warned) << e["warnings"].dump(1);
  for (const char* figure : {"run_j", "cpu_j", "per_result_j", "repeat_j", "timed_j", "timed_mean_w", "gflop_per_j"}) {
    EXPECT_FALSE(e.contains(figure) && e[figure].is_number()) << figure << " is a number: " << e.dump(1);
    EXPECT_FALSE(e.contains(figure) && e[figure].is_object()) << figure << " has joules: " << e.dump(1);
  }
  EXPECT_EQ(e.value("covers", std::string()), "nothing: no counter counted");
}

}  // namespace

TEST(EnergyRun, TheTimedIntervalsJoulesAreApartFromTheWholeRepeatsWithItsCheck) {
  const auto comm = Communicator::world();
  const auto counter = fake_counter(comm);
  const json e = one_repeat(comm, counter.get(), Garbage::none);
  if (comm.is_root()) {
    ASSERT_TRUE(e["cpu"].value("counted", false)) << e.dump(1);
    EXPECT_EQ(e.value("covers", std::string()), "CPU packages (RAPL), not the node at the wall");
    // The timed interval lasts as long as the slowest rank's end to end (the time column's).
    const double timed_s = number(e, "timed_s", "median");
    EXPECT_GE(timed_s, 1.0 + (comm.size() > 1 ? kSlowerBy : 0.0)) << e.dump(1);
    EXPECT_LT(timed_s, number(e, "seconds")) << e.dump(1);
    // Its joules: fewer than the whole repeat's by about the check's 0.7 s at the counter's power.
    const double timed_j = number(e, "timed_j", "median"), whole_j = number(e, "repeat_j", "median");
    ASSERT_GT(timed_j, 0) << e.dump(1);
    EXPECT_LT(timed_j, whole_j) << e.dump(1);
    EXPECT_GT(whole_j - timed_j, 0.5 * 0.7 * number(e, "mean_w")) << "the check's joules: " << e.dump(1);
    EXPECT_DOUBLE_EQ(number(e, "per_result_j"), whole_j) << "one repeat: the whole repeat is the result";
    // Power and efficiency from the timed interval alone.
    EXPECT_NEAR(number(e, "timed_mean_w"), timed_j / timed_s, 1e-9 * timed_j / timed_s);
    EXPECT_NEAR(number(e, "gflop_per_j"), 8.0 / timed_j, 1e-12 * 8.0 / timed_j);
    // The fake counter aims at 100 W; a busy machine slows its writer, so only the magnitude.
    EXPECT_GT(number(e, "timed_mean_w"), 5) << e.dump(1);
    EXPECT_LT(number(e, "timed_mean_w"), 300) << e.dump(1);
    EXPECT_TRUE(e.contains("intervals") && e["intervals"].contains("timed") && e["intervals"].contains("repeat"));
    EXPECT_TRUE(e["phases"].contains("verify")) << "the check's own joules: " << e.dump(1);
    EXPECT_FALSE(e.contains("warnings")) << e.dump(1);
    const std::string line = EnergyRun::table_line(e);
    EXPECT_NE(line.find("energy: timed interval "), std::string::npos) << line;
    EXPECT_NE(line.find("whole repeat with its check "), std::string::npos) << line;
    EXPECT_NE(line.find("energy covers: CPU packages (RAPL), not the node at the wall"), std::string::npos) << line;
  }
}

TEST(EnergyRun, AReadFailingInsideTheTimedIntervalLeavesItNotCounted) {
  const auto comm = Communicator::world();
  const auto counter = fake_counter(comm);
  const json e = one_repeat(comm, counter.get(), Garbage::in_timed_interval);
  if (comm.is_root()) {
    expect_not_counted_in(e, "(in the timed interval of timed repeat 1)");
    const std::string line = EnergyRun::table_line(e);
    EXPECT_NE(line.find("warning: energy: CPU energy not counted: "), std::string::npos) << line;
    EXPECT_NE(line.find("energy: not counted (CPU: "), std::string::npos) << line;
  }
}

TEST(EnergyRun, AReadFailingOnlyInTheCheckIsSaidToBeOutsideTheTimedInterval) {
  const auto comm = Communicator::world();
  const auto counter = fake_counter(comm);
  const json e = one_repeat(comm, counter.get(), Garbage::in_check);
  if (comm.is_root()) {
    expect_not_counted_in(e, "(in timed repeat 1, outside its timed interval: its barrier or its check)");
  }
}
