// The drivers' one sweep loop (src/drivers/launch/sweep.hpp) on its own, through the real step
// runner with trivial commands: the resume rule, the order, the progress lines, the lines
// appended, the counts of failed, skipped and launch-failed runs, and a stop between runs.
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "drivers/launch/sweep.hpp"
#include "scalebench/drivers/process.hpp"

namespace sb = scalebench;
using sb::launch::Sweep;
using sb::launch::SweepItem;
using sb::results::DriverKind;
using sb::results::ResultsStore;

namespace {

// A new empty folder, removed with what it holds when the test ends.
struct TempDir {
  std::string path;
  TempDir() {
    char name[] = "/tmp/scalebench-sweep-XXXXXX";
    path = mkdtemp(name);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
};

// The commands the items run: one that writes its record (a run record with its phases, as a
// finished run has) and exits 0, /bin/false, and a run that says, as scalebench does, that this
// machine cannot hold it (exit 3, ExitCode::resource, with scalebench's error line).
std::vector<std::string> command(const std::string& what, const std::string& record) {
  if (what == "ok") return {"/bin/sh", "-c", "printf '{\"phases\":{}}' > '" + record + "'"};
  if (what == "fails") return {"/bin/false"};
  return {"/bin/sh", "-c", "echo 'scalebench: error: 9 TiB of host memory needed' >&2; exit 3"};
}

// A sweep whose item i runs command(whats[i]) with its log in `dir`, and marks its line.
Sweep sweep_of(const std::string& dir, const std::vector<std::string>& whats, bool skip_cannot_run) {
  Sweep s;
  s.driver = "study";
  s.skip_cannot_run = skip_cannot_run;
  s.stopped = "every run finished before is kept";
  s.request = [dir, whats](std::size_t i) {
    sb::launch::StepRequest q;
    q.record_path = dir + "/run-" + std::to_string(i) + ".json";
    q.argv = command(whats[i], q.record_path);
    q.log_path = dir + "/run-" + std::to_string(i) + ".log";
    q.timeout_s = 30;
    q.stopped = "the run was stopped";
    return q;
  };
  s.finished = [](std::size_t i, const sb::launch::StepResult&, nlohmann::json& line) { line["item"] = i; };
  return s;
}

std::vector<SweepItem> items_of(const std::vector<std::string>& keys) {
  std::vector<SweepItem> items;
  for (const auto& k : keys) items.push_back({k, 1.0, "item " + k});
  return items;
}

std::size_t lines_in(const std::string& path) {
  std::ifstream in(path);
  std::size_t n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

}  // namespace

TEST(Sweep, OnlyAnOkLineMakesARunDoneAndRerunRunsEveryOne) {
  const std::vector<nlohmann::json> earlier = {
      {{"key", "a"}, {"status", "ok"}},      {{"key", "b"}, {"status", "failed"}},
      {{"key", "c"}, {"status", "timeout"}}, {{"key", "d"}, {"status", "skipped"}},
      {{"key", "e"}, {"status", "failed"}},  {{"key", "e"}, {"status", "ok"}},
  };
  const std::vector<std::string> keys = {"a", "b", "c", "d", "e", "f"};
  EXPECT_EQ(sb::launch::sweep_to_do(keys, earlier, false), (std::vector<std::size_t>{1, 2, 3, 5}));
  EXPECT_EQ(sb::launch::sweep_to_do(keys, earlier, true), (std::vector<std::size_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(sb::launch::sweep_to_do(keys, {}, false).size(), keys.size());
}

TEST(Sweep, RunsInOrderSaysProgressAndCountsWhatFailed) {
  const TempDir dir;
  ResultsStore store(dir.path, DriverKind::study, "--out-dir");
  const std::vector<std::string> whats = {"ok", "fails", "cannot"};
  testing::internal::CaptureStderr();
  const sb::launch::SweepCounts c = sb::launch::run_sweep(sweep_of(dir.path, whats, true), items_of({"a", "b", "c"}),
                                                          store);
  const std::string said = testing::internal::GetCapturedStderr();
  EXPECT_EQ(c.ran, 3);
  EXPECT_EQ(c.failed, 1);
  EXPECT_EQ(c.skipped, 1);
  EXPECT_EQ(c.launch_failed, 1);  // /bin/false: no scalebench error line, so the launcher's failure
  ASSERT_EQ(store.lines().size(), 3u);
  const std::vector<std::string> statuses = {"ok", "failed", "skipped"};
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(store.lines()[i]["status"], statuses[i]) << store.lines()[i].dump();
    EXPECT_EQ(store.lines()[i]["item"], i);
  }
  EXPECT_NE(store.lines()[2]["reason"].get<std::string>().find("9 TiB of host memory"), std::string::npos);
  EXPECT_EQ(lines_in(store.jsonl_path()), 3u);
  EXPECT_EQ(said.find("scalebench study: [1/3] item a\n"), 0u) << said;
  EXPECT_NE(said.find("scalebench study: [2/3] (about "), std::string::npos) << said;
  EXPECT_NE(said.find(" left) item c\n"), std::string::npos) << said;
}

TEST(Sweep, ACannotRunHereRunFailsWhenTheDriverDoesNotSkipAndQuietSaysNothing) {
  const TempDir dir;
  ResultsStore store(dir.path, DriverKind::contrast, "--out-dir");
  Sweep s = sweep_of(dir.path, {"cannot"}, false);
  s.driver = "contrast";
  s.quiet = true;
  testing::internal::CaptureStderr();
  const sb::launch::SweepCounts c = sb::launch::run_sweep(s, items_of({"a"}), store);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  EXPECT_EQ(c.failed, 1);
  EXPECT_EQ(c.skipped, 0);
  EXPECT_EQ(c.launch_failed, 0);
  EXPECT_EQ(store.lines()[0]["status"], "failed");
}

TEST(Sweep, AResumedSweepRunsOnlyWhatHasNoOkLine) {
  const TempDir dir;
  const std::vector<std::string> keys = {"a", "b", "c"};
  {
    ResultsStore store(dir.path, DriverKind::study, "--out-dir");
    Sweep s = sweep_of(dir.path, {"ok", "fails", "ok"}, true);
    s.quiet = true;
    sb::launch::run_sweep(s, items_of(keys), store);
  }
  ResultsStore store(dir.path, DriverKind::study, "--out-dir");
  const auto todo = sb::launch::sweep_to_do(keys, store.lines(), false);
  ASSERT_EQ(todo, (std::vector<std::size_t>{1}));
  Sweep s = sweep_of(dir.path, {"ok"}, true);
  s.quiet = true;
  const sb::launch::SweepCounts c = sb::launch::run_sweep(s, items_of({keys[todo[0]]}), store);
  EXPECT_EQ(c.ran, 1);
  EXPECT_EQ(c.failed, 0);
  ASSERT_EQ(store.lines().size(), 4u);  // appended beside the failed line, which stays
  EXPECT_EQ(store.lines()[1]["status"], "failed");
  EXPECT_EQ(store.lines()[3]["key"], "b");
  EXPECT_EQ(store.lines()[3]["status"], "ok");
  EXPECT_TRUE(sb::launch::sweep_to_do(keys, store.lines(), false).empty());
}

namespace {

// In a child process: a stop signal arrives before the sweep's first run. Exits 128 + the signal
// when the sweep was stopped before running anything and appended nothing, 1 otherwise.
[[noreturn]] void stop_then_sweep(const std::string& dir) {
  const sb::StopSignals guard;
  std::raise(SIGTERM);
  try {
    ResultsStore store(dir, DriverKind::study, "--out-dir");
    sb::launch::run_sweep(sweep_of(dir, {"ok", "ok"}, true), items_of({"a", "b"}), store);
  } catch (const sb::Stopped& e) {
    std::fprintf(stderr, "%s\n", e.what());
    const bool nothing_run = lines_in(dir + "/runs.jsonl") == 0 && access((dir + "/run-0.log").c_str(), F_OK) != 0;
    std::_Exit(nothing_run ? 128 + e.signal() : 1);
  }
  std::_Exit(1);
}

}  // namespace

TEST(Sweep, AStopSignalEndsItBeforeTheNextRun) {
  const TempDir dir;
  EXPECT_EXIT(stop_then_sweep(dir.path), testing::ExitedWithCode(128 + SIGTERM), "every run finished before is kept");
}
