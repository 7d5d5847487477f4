// One rule for runs.jsonl lines (docs/output.md, "Reading runs.jsonl"): the drivers' reader
// (read_jsonl) and the report's (tools/report.py) use the same lines of one fixture of bad lines
// (cut, not an object, fields of the wrong kind, NaN, numbers beyond a double, a key twice, not
// UTF-8, a byte-order mark, nested too deeply, blank lines; times no clock measures, figures no run
// gives, a command line that is not argv, "ok" with the record of a run that failed its check) and
// leave out the same ones, each named in a warning.
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_runner.hpp"
#include "drivers/results/jsonl.hpp"

namespace {

using nlohmann::json;

std::string source_dir() { return std::getenv("SCALEBENCH_SOURCE_DIR"); }
std::string fixture() { return source_dir() + "/tests/data/runs-jsonl-rule.jsonl"; }

// The fixture's lines that are used (their keys start with "use-"); every other line but the two
// blank ones (2 and 3) is left out.
const std::set<int> kUsed = {1, 14, 23, 28, 31, 43};
constexpr int kLines = 44;

std::set<int> expected_unusable() {
  std::set<int> out;
  for (int n = 4; n <= kLines; ++n) {
    if (kUsed.count(n) == 0) out.insert(n);
  }
  return out;
}

TEST(RunsJsonlRule, TheDriversReaderLeavesOutEveryBadLine) {
  const scalebench::results::JsonlContents c = scalebench::results::read_jsonl(fixture(), "the fixture");
  std::set<std::string> keys;
  for (const json& l : c.lines) {
    keys.insert(l.at("key").get<std::string>());
    // Absent fields the readers index without looking are filled in.
    EXPECT_TRUE(l.at("launch_failed").is_boolean()) << l.dump();
    EXPECT_TRUE(l.contains("record")) << l.dump();
  }
  EXPECT_EQ(keys, (std::set<std::string>{"use-1", "use-14", "use-23", "use-28", "use-31", "use-43"}));
  EXPECT_EQ(std::set<int>(c.unusable.begin(), c.unusable.end()), expected_unusable());
  ASSERT_EQ(c.why.size(), c.unusable.size());
  for (const std::string& why : c.why) EXPECT_FALSE(why.empty());
}

TEST(RunsJsonlRule, TheReportUsesTheSameLines) {
  const std::string script = "import json, sys\n"
                             "sys.path.insert(0, sys.argv[1] + '/tools')\n"
                             "import report\n"
                             "used, left = [], []\n"
                             "for n, part in enumerate(open(sys.argv[2], 'rb').read().split(b'\\n'), 1):\n"
                             "    if part.strip(b' \\t\\r'):\n"
                             "        (used if report.runs_line(part)[1] is None else left).append(n)\n"
                             "print(json.dumps({'used': used, 'left': left}))\n";
  const std::string file = make_temp_dir() + "/lines.py";
  std::ofstream(file) << script;
  const CliRun r = run_command("python3 " + file + " " + source_dir() + " " + fixture());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json j = json::parse(r.output);
  EXPECT_EQ(j["used"].get<std::set<int>>(), kUsed);
  EXPECT_EQ(j["left"].get<std::set<int>>(), expected_unusable());
}

// The report's own reading of a folder's runs.jsonl: one warning per line left out, no error.
TEST(RunsJsonlRule, TheReportWarnsOncePerLineLeftOut) {
  const std::string dir = make_temp_dir();
  ASSERT_EQ(run_command("cp " + fixture() + " " + dir + "/runs.jsonl").exit_code, 0);
  const CliRun r = run_command("python3 -c 'import sys; sys.path.insert(0, sys.argv[1] + \"/tools\"); import report; "
                               "print(len(report.load_runs_jsonl(sys.argv[2])))' " +
                               source_dir() + " " + dir + " 2>&1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(count_of(r.output, "scalebench report: warning: "), static_cast<int>(expected_unusable().size()))
      << r.output;
  EXPECT_NE(r.output.find("runs.jsonl line 12 is cut or garbled, or not a driver's line: holds the key \"key\" twice"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("error"), std::string::npos) << r.output;
}

// The lines out of the record rule's ranges, and "ok" with a failed run's record, are left out by
// both readers for the same reason, each named with its field.
TEST(RunsJsonlRule, BothReadersSayTheSameOfTheBoundsAndOfAFailedRecord) {
  const scalebench::results::JsonlContents c = scalebench::results::read_jsonl(fixture(), "the fixture");
  std::map<int, std::string> drivers;
  for (std::size_t i = 0; i < c.unusable.size(); ++i) drivers[c.unusable[i]] = c.why[i];
  const std::string script = "import json, sys\n"
                             "sys.path.insert(0, sys.argv[1] + '/tools')\n"
                             "import report\n"
                             "lines = open(sys.argv[2], 'rb').read().split(b'\\n')\n"
                             "print(json.dumps({n: report.runs_line(lines[n - 1])[1] for n in range(36, 43)}))\n";
  const std::string file = make_temp_dir() + "/why.py";
  std::ofstream(file) << script;
  const CliRun r = run_command("python3 " + file + " " + source_dir() + " " + fixture());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json report = json::parse(r.output);
  const std::map<int, std::string> said = {
      {36, "record.phases.compute.median_s must be a measured time: 0 or seconds in [1e-12, 3.2e+09]"},
      {37, "record.phases.end_to_end.median_s must be a measured time"},
      {38, "record.command_line must be a list"},
      {39, "record is of a run that failed its check (\"ok\": false) while status is \"ok\""},
      {40, "record.phases.compute.per_repeat_max_s[1] must be a number"},
      {41, "record.rates.end_to_end_gflops must be a number in [0, 1e+18]"},
      {42, "record.config.threads_per_rank must be a whole number"}};
  for (const auto& [n, words] : said) {
    SCOPED_TRACE(n);
    ASSERT_TRUE(drivers.contains(n));
    EXPECT_NE(drivers[n].find(words), std::string::npos) << drivers[n];
    const std::string python = report[std::to_string(n)].get<std::string>();
    EXPECT_NE(python.find(words), std::string::npos) << python;
  }
}

}  // namespace
