// Energy counters against a fake powercap tree the test writes (two sockets with DRAM, a core
// subdomain that must not be added, counters that advance and wrap) and an NVML that is absent.
#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "scalebench/base/energy.hpp"
#include "scalebench/mpi/timing.hpp"

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
  EXPECT_DOUBLE_EQ(d[0], 3.0);
  EXPECT_DOUBLE_EQ(d[1], 0.5);
  EXPECT_DOUBLE_EQ(d[2], 1.0);
  EXPECT_DOUBLE_EQ(d[3], 0.0);
  EXPECT_EQ(m->gpu_reason(), "no GPU used by this run");
}

TEST(Energy, AWrappedCounterCountsThroughItsRange) {
  FakeTree t;
  t.zone("intel-rapl:0", "package-0", "262143000000", "262143328850");
  const auto m = EnergyMeter::open(t.root, "", {});
  const EnergyReading a = m->read();
  t.set("intel-rapl:0", "671150");  // wrapped: 328850 µJ to the top, 671150 after it
  const EnergyReading b = m->read();
  EXPECT_NEAR(energy_between(m->domains(), a, b)[0], 1.0, 1e-9);
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
    EXPECT_NE(m->cpu_reason().find("energy_uj cannot be read"), std::string::npos) << m->cpu_reason();
  }
  {
    FakeTree t;  // a counter that is not a number
    t.zone("intel-rapl:0", "package-0", "12abc", "262143328850");
    const auto m = EnergyMeter::open(t.root, "", {});
    EXPECT_TRUE(m->domains().empty());
    EXPECT_NE(m->cpu_reason().find("cannot be read"), std::string::npos) << m->cpu_reason();
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
