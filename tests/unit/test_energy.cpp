// Energy counters against a fake powercap tree the test writes (two sockets with DRAM, a core
// subdomain that must not be added, counters that advance and wrap) and an NVML that is absent;
// the rule that a counter is input, not truth (energy.hpp): counters that step back, vanish, turn
// into FIFOs, huge files or garbage mid-run, ranges of 0 or absurd, rises no domain can draw; the
// joules of an interval from a node's readings, not counted where a read inside it failed.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "scalebench/base/energy.hpp"
#include "scalebench/mpi/timing.hpp"
#include "workloads/energy_timeline.hpp"

using namespace scalebench;
namespace fs = std::filesystem;

namespace {

struct FakeTree {
  std::string root;
  FakeTree() {
    char tmpl[] = "/tmp/scalebench-test-powercap-XXXXXX";
    root = mkdtemp(tmpl);
  }
  ~FakeTree() { fs::remove_all(root); }
  void zone(const std::string& id, const std::string& name, const std::string& uj, const std::string& max) const {
    fs::create_directories(root + "/" + id);
    std::ofstream(root + "/" + id + "/name") << name << "\n";
    std::ofstream(root + "/" + id + "/energy_uj") << uj << "\n";
    std::ofstream(root + "/" + id + "/max_energy_range_uj") << max << "\n";
  }
  void set(const std::string& id, const std::string& uj) const {
    std::ofstream(root + "/" + id + "/energy_uj") << uj << "\n";
  }
  void two_sockets() const {
    for (const char* s : {"0", "1"}) {
      const std::string p = std::string("intel-rapl:") + s;
      zone(p, std::string("package-") + s, "1000000", "262143328850");
      zone(p + ":0", "dram", "2000000", "65712999613");
      zone(p + ":1", "core", "7", "262143328850");  // part of the package: never added
    }
  }
};

}  // namespace

TEST(Energy, TwoSocketsWithDramAreCountedAndCoreIsNot) {
  FakeTree t;
  t.two_sockets();
  const auto m = EnergyMeter::open(t.root, "/nonexistent/libnvidia-ml.so.1", {});
  EXPECT_EQ(m->cpu_reason(), "");
  ASSERT_EQ(m->domains().size(), 4u);
  EXPECT_EQ(m->domains()[0].name, "package-0");
  EXPECT_EQ(m->domains()[1].name, "package-0/dram");
  EXPECT_EQ(m->domains()[2].name, "package-1");
  EXPECT_EQ(m->domains()[3].name, "package-1/dram");
  const EnergyReading a = m->read();
  t.set("intel-rapl:0", "4000000");    // +3 J
  t.set("intel-rapl:0:0", "2500000");  // +0.5 J
  t.set("intel-rapl:1", "2000000");    // +1 J
  t.set("intel-rapl:1:1", "999999");   // core: ignored
  const EnergyReading b = m->read();
  const auto d = energy_between(m->domains(), a, b);
  ASSERT_EQ(d.size(), 4u);
  for (const auto& x : d) ASSERT_TRUE(x.joules) << x.why;
  EXPECT_DOUBLE_EQ(*d[0].joules, 3.0);
  EXPECT_DOUBLE_EQ(*d[1].joules, 0.5);
  EXPECT_DOUBLE_EQ(*d[2].joules, 1.0);
  EXPECT_DOUBLE_EQ(*d[3].joules, 0.0);
  EXPECT_DOUBLE_EQ(*joules_of_kind(m->domains(), d, "cpu").joules, 4.5);
  EXPECT_EQ(m->gpu_reason(), "no GPU used by this run");
}

TEST(Energy, AWrappedCounterCountsThroughItsRange) {
  FakeTree t;
  t.zone("intel-rapl:0", "package-0", "262143000000", "262143328850");
  const auto m = EnergyMeter::open(t.root, "", {});
  const EnergyReading a = m->read();
  t.set("intel-rapl:0", "671150");  // wrapped: 328850 µJ to the top, 671150 after it
  const EnergyReading b = m->read();
  const auto d = energy_between(m->domains(), a, b);
  ASSERT_TRUE(d[0].joules) << d[0].why;
  EXPECT_NEAR(*d[0].joules, 1.0, 1e-9);
}

TEST(Energy, AMissingOrUnreadableTreeIsSaidNotEstimated) {
  {
    const auto m = EnergyMeter::open("/nonexistent/powercap", "", {});
    EXPECT_TRUE(m->domains().empty());
    EXPECT_NE(m->cpu_reason().find("no powercap tree at /nonexistent/powercap"), std::string::npos) << m->cpu_reason();
  }
  {
    FakeTree t;  // energy_uj is a folder: root reads every file, so unreadable is made so
    t.zone("intel-rapl:0", "package-0", "1", "262143328850");
    fs::remove(t.root + "/intel-rapl:0/energy_uj");
    fs::create_directory(t.root + "/intel-rapl:0/energy_uj");
    const auto m = EnergyMeter::open(t.root, "", {});
    EXPECT_TRUE(m->domains().empty());
    EXPECT_NE(m->cpu_reason().find("energy_uj: it is a folder, not a regular file"), std::string::npos)
        << m->cpu_reason();
  }
  {
    FakeTree t;  // a counter that is not a number
    t.zone("intel-rapl:0", "package-0", "12abc", "262143328850");
    const auto m = EnergyMeter::open(t.root, "", {});
    EXPECT_TRUE(m->domains().empty());
    EXPECT_NE(m->cpu_reason().find("does not hold a whole number of microjoules"), std::string::npos)
        << m->cpu_reason();
  }
  {
    FakeTree t;  // only a core domain: no package
    t.zone("intel-rapl:0:1", "core", "1", "2");
    const auto m = EnergyMeter::open(t.root, "", {});
    EXPECT_NE(m->cpu_reason().find("no RAPL package domain"), std::string::npos) << m->cpu_reason();
  }
}

TEST(Energy, AnAbsentNvmlIsSaidForTheGpusARunUses) {
  const auto m = EnergyMeter::open("/nonexistent", "/nonexistent/libnvidia-ml.so.1", {"0000:65:00.0"});
  EXPECT_NE(m->gpu_reason().find("NVML (/nonexistent/libnvidia-ml.so.1) cannot be loaded"), std::string::npos)
      << m->gpu_reason();
  EXPECT_TRUE(m->domains().empty());
  EXPECT_TRUE(m->read().joules.empty());
}

// ---- A counter is input, not truth: every interval checked against the elapsed time ----------

namespace {

// One package domain as RAPL gives it (262 kJ range, at most kMaxPackageWatts) and an NVML GPU.
const EnergyDomain kPackage{"cpu", "package-0", 262143.328850, 0, kMaxPackageWatts, kRaplRefreshSlackS};
const EnergyDomain kGpu{"gpu", "gpu 0000:65:00.0", 0, 300, kMaxGpuWatts, kNvmlRefreshSlackS};

EnergyReading at(double s, std::vector<std::optional<double>> joules) {
  EnergyReading r;
  r.at_s = s;
  r.unreadable.assign(joules.size(), "");
  r.joules = std::move(joules);
  return r;
}

EnergyDelta one(const EnergyDomain& d, double t0, double j0, double t1, double j1) {
  return energy_between({d}, at(t0, {j0}), at(t1, {j1}))[0];
}

bool said(const EnergyDelta& d, const std::string& text) {
  return !d.joules && d.why.find(text) != std::string::npos && d.why.find("not counted") != std::string::npos;
}

}  // namespace

TEST(EnergyRule, ACounterSteppingBackIsNotCountedAsAWrap) {
  // By a microjoule, by a joule, back to zero: each a wrap of 262 kJ in 20 ms (13 MW): not counted.
  for (const double after : {999.999999, 999.0, 0.0}) {
    const EnergyDelta d = one(kPackage, 10.0, 1000.0, 10.02, after);
    EXPECT_TRUE(said(d, fmt::format("went down by {:.6g} J (from 1000.000000 J to {:.6f} J)", 1000 - after, after)))
        << after << ": " << d.why;
    EXPECT_NE(d.why.find("a wrap through its range (262143 J)"), std::string::npos) << d.why;
  }
  // A real wrap: near the top, then just past it: counted through the range.
  const EnergyDelta w = one(kPackage, 10.0, 262143.0, 10.02, 0.5);
  ASSERT_TRUE(w.joules) << w.why;
  EXPECT_NEAR(*w.joules, 0.828850, 1e-6);
  // The same wrap read a whole minute later than it could have been: still within 1000 W.
  EXPECT_TRUE(one(kPackage, 0.0, 262000.0, 60.0, 100.0).joules);
  // An absurd range (2^63 µJ): a step back to zero would be 9.2e12 J through it: not counted.
  EnergyDomain vast = kPackage;
  vast.max_joules = 9223372036854.775807;
  EXPECT_TRUE(said(one(vast, 1.0, 1000.0, 1.02, 0.0), "went down by 1000 J"));
}

TEST(EnergyRule, ARiseNoDomainCanDrawIsNotCounted) {
  // 50 kJ in 20 ms (2.5 MW) on a package of at most 1000 W: not counted.
  EXPECT_TRUE(said(one(kPackage, 5.0, 0.0, 5.02, 50000.0), "rose by 50000 J in 0.02 s"));
  // 20 J in 20 ms is 1000 W: the most it can draw, counted; one refresh's lag allowed on top.
  EXPECT_TRUE(one(kPackage, 5.0, 0.0, 5.02, 20.0).joules);
  EXPECT_TRUE(one(kPackage, 5.0, 0.0, 5.0, 5.0).joules) << "read at once: one refresh of lag";
  EXPECT_FALSE(one(kPackage, 5.0, 0.0, 5.0, 50.0).joules);
  // A GPU: 2 kW at most, NVML's 100 ms refresh; its counter never wraps, so any decrease is wrong.
  EXPECT_TRUE(one(kGpu, 1.0, 100.0, 1.1, 180.0).joules);
  EXPECT_TRUE(said(one(kGpu, 1.0, 100.0, 1.1, 5000.0), "rose by"));
  EXPECT_TRUE(said(one(kGpu, 1.0, 100.0, 1.1, 99.0), "it does not wrap"));
}

TEST(EnergyRule, AnIntervalLongEnoughForAWholeWrapIsNotCounted) {
  // 262 kJ at 1000 W is 262 s: readings further apart cannot tell one wrap from two.
  EXPECT_TRUE(said(one(kPackage, 0.0, 10.0, 300.0, 20.0), "time enough to wrap"));
  EXPECT_TRUE(one(kPackage, 0.0, 10.0, 200.0, 20.0).joules);
}

TEST(EnergyRule, AnUnreadableEndIsNotCountedNeverZero) {
  EnergyReading gone = at(1.02, {std::nullopt, 50.0});
  gone.unreadable[0] = "cannot read the powercap file /x/energy_uj: no such file";
  const auto d = energy_between({kPackage, kGpu}, at(1.0, {10.0, 40.0}), gone);
  EXPECT_FALSE(d[0].joules);
  EXPECT_NE(d[0].why.find("the RAPL counter package-0 could not be read (cannot read the powercap file /x/energy_uj: "
                          "no such file): not counted"),
            std::string::npos)
      << d[0].why;
  ASSERT_TRUE(d[1].joules) << "the GPU's counter still counts: " << d[1].why;
  // The kind with a domain not counted is not counted; the other kind is.
  const EnergyDelta cpu = joules_of_kind({kPackage, kGpu}, d, "cpu");
  EXPECT_FALSE(cpu.joules);
  EXPECT_EQ(cpu.why, d[0].why);
  EXPECT_DOUBLE_EQ(*joules_of_kind({kPackage, kGpu}, d, "gpu").joules, 10.0);
  // Fewer values than domains (a reading cut short): not counted either.
  EXPECT_FALSE(energy_between({kPackage, kGpu}, at(1.0, {10.0}), at(1.1, {11.0}))[1].joules);
}

TEST(EnergyRule, OnlyAWholeNumberOfMicrojoulesIsAReading) {
  EXPECT_EQ(parse_microjoules("123\n"), 123u);
  EXPECT_EQ(parse_microjoules("0"), 0u);
  EXPECT_EQ(parse_microjoules("9999999999999999999"), 9999999999999999999u);
  for (const char* bad : {"", "\n", "-5", "+5", "12.5", "1e6", "0x10", " 12", "12 ", "12\n\n", "12\n13", "abc",
                          "99999999999999999999", "18446744073709551616"}) {
    EXPECT_FALSE(parse_microjoules(bad)) << "'" << bad << "'";
  }
}

TEST(EnergyFaults, ACounterThatVanishesOrGoesBadMidRunIsNotCounted) {
  FakeTree t;
  t.zone("intel-rapl:0", "package-0", "1000000", "262143328850");
  const auto m = EnergyMeter::open(t.root, "", {});
  ASSERT_EQ(m->cpu_reason(), "");
  const EnergyReading a = m->read();
  ASSERT_TRUE(a.joules[0]);
  const std::string file = t.root + "/intel-rapl:0/energy_uj";
  // Each fault between two readings: the interval is not counted, with the file's reason.
  const std::vector<std::pair<std::string, std::string>> faults = {
      {"vanished", "no such file"},           {"empty", "does not hold a whole number"},
      {"-5", "does not hold a whole number"}, {"garbage", "does not hold a whole number"},
      {"above", "above its range"},           {"fifo", "it is a FIFO, not a regular file"},
      {"huge", "more than the 4096 bytes"},   {"folder", "it is a folder"}};
  for (const auto& [fault, reason] : faults) {
    fs::remove_all(file);
    if (fault == "empty") std::ofstream(file).flush();
    if (fault == "-5") std::ofstream(file) << "-5\n";
    if (fault == "garbage") std::ofstream(file) << "12abc\n";
    if (fault == "above") std::ofstream(file) << "262143328851\n";
    if (fault == "fifo") {
      ASSERT_EQ(mkfifo(file.c_str(), 0600), 0);  // a FIFO with no writer must not block
    }
    if (fault == "huge") {
      std::ofstream(file) << "1";
      ASSERT_EQ(truncate(file.c_str(), std::int64_t{1} << 30), 0);  // 1 GiB, sparse, no newline
    }
    if (fault == "folder") fs::create_directory(file);
    const double t0 = wall_seconds();
    const EnergyReading b = m->read();
    EXPECT_LT(wall_seconds() - t0, 1.0) << fault << ": a counter is read at once, whatever is there";
    EXPECT_FALSE(b.joules[0]) << fault;
    EXPECT_NE(b.unreadable[0].find(reason), std::string::npos) << fault << ": " << b.unreadable[0];
    const EnergyDelta d = energy_between(m->domains(), a, b)[0];
    EXPECT_FALSE(d.joules) << fault;
    EXPECT_NE(d.why.find("could not be read"), std::string::npos) << fault << ": " << d.why;
  }
  // Back to a sound value: counted again from readings on both sides.
  fs::remove_all(file);
  t.set("intel-rapl:0", "1500000");
  const EnergyDelta back = energy_between(m->domains(), a, m->read())[0];
  ASSERT_TRUE(back.joules) << back.why;
  EXPECT_DOUBLE_EQ(*back.joules, 0.5);
}

TEST(EnergyFaults, ACounterThatStepsBackBetweenReadingsIsNotCounted) {
  FakeTree t;
  t.zone("intel-rapl:0", "package-0", "5000000000", "262143328850");
  const auto m = EnergyMeter::open(t.root, "", {});
  const EnergyReading a = m->read();
  for (const char* back : {"4999999999", "4000000000", "0"}) {
    t.set("intel-rapl:0", back);
    const EnergyDelta d = energy_between(m->domains(), a, m->read())[0];
    EXPECT_FALSE(d.joules) << back;
    EXPECT_NE(d.why.find("went down by"), std::string::npos) << d.why;
    EXPECT_NE(d.why.find("(from 5000.000000 J to "), std::string::npos) << d.why;
  }
}

TEST(EnergyFaults, FilesThatCannotBeCountersAreRefusedWhenOpened) {
  // Each: the domain is not used, the reason names the file; opening never blocks nor reads big files.
  const std::vector<std::tuple<std::string, std::string, std::string>> cases = {
      {"1", "0", "max_energy_range_uj is 0 µJ: it would wrap in under 10 s"},
      {"1", "1000", "max_energy_range_uj is 1000 µJ"},
      {"1", "-262143328850", "max_energy_range_uj does not hold a whole number"},
      {"1", "lots", "max_energy_range_uj does not hold a whole number"},
      {"300000000000", "262143328850", "reads 300000000000 µJ, above its range"},
      {"-1", "262143328850", "energy_uj does not hold a whole number"},
      {"", "262143328850", "energy_uj does not hold a whole number"},
      {"fifo", "262143328850", "energy_uj: it is a FIFO, not a regular file"},
      {"huge", "262143328850", "energy_uj: it holds 1073741824 bytes, more than the 4096 bytes"},
      {"1", "huge", "max_energy_range_uj: it holds 1073741824 bytes"},
      {"1", "fifo", "max_energy_range_uj: it is a FIFO"}};
  for (const auto& [uj, max, reason] : cases) {
    FakeTree t;
    t.zone("intel-rapl:0", "package-0", uj, max);
    for (const auto& [value, name] : {std::pair{uj, "energy_uj"}, std::pair{max, "max_energy_range_uj"}}) {
      const std::string file = t.root + "/intel-rapl:0/" + name;
      if (value == "fifo") {
        fs::remove(file);
        ASSERT_EQ(mkfifo(file.c_str(), 0600), 0);
      }
      if (value == "huge") {
        std::ofstream(file, std::ios::trunc) << "7";
        ASSERT_EQ(truncate(file.c_str(), std::int64_t{1} << 30), 0);
      }
    }
    const double t0 = wall_seconds();
    const auto m = EnergyMeter::open(t.root, "", {});
    EXPECT_LT(wall_seconds() - t0, 1.0) << reason;
    EXPECT_TRUE(m->domains().empty()) << reason;
    EXPECT_NE(m->cpu_reason().find(reason), std::string::npos) << m->cpu_reason();
  }
}

TEST(EnergyFaults, ANameFileThatIsAFifoIsSkippedWithoutBlocking) {
  FakeTree t;
  t.zone("intel-rapl:0", "package-0", "1", "262143328850");
  fs::remove(t.root + "/intel-rapl:0/name");
  ASSERT_EQ(mkfifo((t.root + "/intel-rapl:0/name").c_str(), 0600), 0);
  const auto m = EnergyMeter::open(t.root, "", {});
  EXPECT_TRUE(m->domains().empty());
  EXPECT_NE(m->cpu_reason().find("no RAPL package domain"), std::string::npos) << m->cpu_reason();
}

// The intervals the per-phase joules are integrated over: a scoped phase keeps its interval on
// the clock the counters are read on, in the repeat it ran in; clearing the recorder (after the
// warm-up) drops them with the seconds.
TEST(PhaseSpans, AScopedPhaseKeepsItsIntervalInItsRepeat) {
  scalebench::PhaseRecorder rec;
  const double before = scalebench::wall_seconds();
  { const scalebench::ScopedPhase p(rec, "compute"); }
  rec.next_repeat();
  {
    const scalebench::ScopedPhase p(rec, "gather");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  rec.next_repeat();
  const double after = scalebench::wall_seconds();
  ASSERT_EQ(rec.spans().size(), 2u);
  const auto& c = rec.spans()[0];
  const auto& g = rec.spans()[1];
  EXPECT_EQ(c.phase, "compute");
  EXPECT_EQ(c.repeat, 0);
  EXPECT_EQ(g.phase, "gather");
  EXPECT_EQ(g.repeat, 1);
  EXPECT_LE(before, c.t0);
  EXPECT_LE(c.t1, g.t0);
  EXPECT_LE(g.t1, after);
  EXPECT_GE(g.t1 - g.t0, 0.019);
  EXPECT_DOUBLE_EQ(rec.samples("gather")[1], g.t1 - g.t0) << "the seconds and the interval are the same time";
  rec.clear();
  EXPECT_TRUE(rec.spans().empty());
}

// ---- The joules of an interval from a node's readings (energy_timeline.hpp) ---------------------

namespace {

// Readings every 20 ms from 0 s to 2 s of a package at 100 W and a GPU at 300 W (2 J and 6 J a
// reading); `bad_cpu_at`: the package's reading at that index unreadable (a failed read).
std::vector<EnergyReading> steady_readings(int bad_cpu_at = -1) {
  std::vector<EnergyReading> out;
  for (int i = 0; i <= 100; ++i) {
    EnergyReading r = at(0.02 * i, {2.0 * i, 6.0 * i});
    if (i == bad_cpu_at) {
      r.joules[0] = std::nullopt;
      r.unreadable[0] = "cannot read it (made up)";
    }
    out.push_back(r);
  }
  return out;
}

}  // namespace

TEST(EnergyTimeline, AnIntervalGetsItsJoulesLinearBetweenReadings) {
  const scalebench::EnergyTimeline line({kPackage, kGpu}, steady_readings());
  // A timed interval from 0.5 s to 1.25 s (not on a reading): 0.75 s at 100 W and at 300 W.
  const scalebench::IntervalJoules j = line.between(0.5, 1.25);
  ASSERT_TRUE(j.cpu && j.gpu) << j.cpu_why << j.gpu_why;
  EXPECT_NEAR(*j.cpu, 75.0, 1e-9);
  EXPECT_NEAR(*j.gpu, 225.0, 1e-9);
  // Within one interval between two readings, and the readings' whole span.
  EXPECT_NEAR(*line.between(0.503, 0.513).cpu, 1.0, 1e-9);
  EXPECT_NEAR(*line.between(0.0, 2.0).gpu, 600.0, 1e-9);
}

TEST(EnergyTimeline, AFailedReadInsideAnIntervalLeavesItNotCountedNeverZero) {
  // The package's reading at 1.0 s failed: the intervals on either side are not counted.
  const scalebench::EnergyTimeline line({kPackage, kGpu}, steady_readings(50));
  // A timed interval around it: the package not counted (no value, the reason), the GPU counted.
  const scalebench::IntervalJoules timed = line.between(0.9, 1.1);
  EXPECT_FALSE(timed.cpu) << "a failed read inside the interval gives no joules, never a partial or 0 J";
  EXPECT_NE(timed.cpu_why.find("could not be read (cannot read it (made up)): not counted"), std::string::npos)
      << timed.cpu_why;
  ASSERT_TRUE(timed.gpu) << timed.gpu_why;
  EXPECT_NEAR(*timed.gpu, 60.0, 1e-9);
  // Touching either side of the failed read is enough: 0.99 s to 1.0 s, 1.0 s to 1.01 s.
  EXPECT_FALSE(line.between(0.99, 0.995).cpu);
  EXPECT_FALSE(line.between(1.005, 1.01).cpu);
  // An interval clear of it (the repeat's check, say) is counted, whole.
  const scalebench::IntervalJoules check = line.between(1.2, 1.5);
  ASSERT_TRUE(check.cpu) << check.cpu_why;
  EXPECT_NEAR(*check.cpu, 30.0, 1e-9) << "a failed read elsewhere takes nothing from it";
  EXPECT_NEAR(*line.between(0.1, 0.9).cpu, 80.0, 1e-9);
}

TEST(EnergyTimeline, AnIntervalOutsideTheReadingsIsNotCounted) {
  const scalebench::EnergyTimeline line({kPackage, kGpu}, steady_readings());
  for (const auto& [t0, t1] : {std::pair{-0.5, 0.5}, {1.5, 2.5}, {3.0, 4.0}}) {
    const scalebench::IntervalJoules j = line.between(t0, t1);
    EXPECT_FALSE(j.cpu) << t0 << ".." << t1 << ": the counters say nothing of the time outside their readings";
    EXPECT_NE(j.cpu_why.find("reaches outside the counters' readings"), std::string::npos) << j.cpu_why;
  }
  const scalebench::EnergyTimeline once({kPackage}, {at(0.0, {1.0})});
  EXPECT_FALSE(once.between(0.0, 0.0).cpu) << "one reading has no interval";
}
