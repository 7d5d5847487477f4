// Results folders are written only where they are, and a resume continues only what it can: a
// symbolic link named like any file a contrast, a study or `report` writes in its folder (or the
// folder itself as a link) is refused with one line and nothing is written where it leads; a
// resumed contrast never replaces a file an earlier runs.jsonl line names, refuses other options
// (naming the option), another host and a plan whose fields are not what a contrast writes; two
// calibrations started together on an empty cache never time the machine at once.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"

using nlohmann::json;

namespace {

// The cheapest contrast: the naive row of gemm at n=16 (no probe, no calibration).
const std::string kTiny = "--workload gemm --modes naive --naive-n 16 --reps 1 --warmup 0 --no-calibrate --no-report";

std::string contrast(const std::string& out, const std::string& more = "") {
  return "contrast " + kTiny + " " + more + " --out-dir " + out;
}

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// A stopped contrast's folder: its lock file names a contrast, nothing else is there yet.
std::string stopped_contrast(const std::string& dir) {
  EXPECT_EQ(run_command("mkdir -p " + dir).exit_code, 0);
  write(dir + "/.scalebench.lock", R"({"driver":"contrast","pid":1,"host":"h"})"
                                   "\n");
  return dir;
}

// A contrast whose one row finished and whose table was not written yet (stopped before it).
std::string unfinished_contrast(const std::string& dir) {
  const CliRun r = run_scalebench(contrast(dir));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(run_command("rm " + dir + "/contrast.json " + dir + "/contrast.csv").exit_code, 0);
  return dir;
}

json read_json(const std::string& path) { return json::parse(read_file(path)); }

}  // namespace

TEST(ResultsLinks, ALinkNamedLikeAContrastsFileIsRefusedAndNothingWrittenWhereItLeads) {
  const std::string dir = make_temp_dir();
  run_command("mkdir -p " + dir + "/outside");
  int i = 0;
  for (const std::string name : {"gemm-naive.json", "gemm-naive.log", "runs.jsonl", "contrast.csv",
                                 "contrast-plan.json", "report.html", "calibrate.log"}) {
    for (const bool dangling : {false, true}) {
      const std::string out = stopped_contrast(dir + "/c" + std::to_string(i));
      const std::string target = dir + "/outside/" + std::to_string(i++);
      if (!dangling) write(target, "outside\n");
      // runs.jsonl alone is a study's; a table beside it makes the folder a contrast's.
      if (name == "runs.jsonl") write(out + "/contrast.csv", "workload,mode\n");
      ASSERT_EQ(run_command("ln -s " + target + " " + out + "/" + name).exit_code, 0);
      const CliRun r = run_scalebench(contrast(out));
      EXPECT_TRUE(is_refusal(r, 3, out + "/" + name)) << name;
      EXPECT_NE(r.output.find("symbolic link"), std::string::npos) << r.output;
      if (dangling) {
        EXPECT_FALSE(file_exists(target)) << name << ": written through a dangling link";
      } else {
        EXPECT_EQ(read_file(target), "outside\n") << name << ": written through a link";
      }
    }
  }
  // contrast.json there (a link too) is a finished contrast: refused, never written.
  const std::string out = stopped_contrast(dir + "/finished");
  ASSERT_EQ(run_command("ln -s " + dir + "/outside/table " + out + "/contrast.json").exit_code, 0);
  EXPECT_TRUE(is_refusal(run_scalebench(contrast(out)), 3, out));
  EXPECT_FALSE(file_exists(dir + "/outside/table"));
}

TEST(ResultsLinks, AResultsFolderThatIsALinkIsRefused) {
  const std::string dir = make_temp_dir();
  const std::string real = unfinished_contrast(dir + "/real");
  ASSERT_EQ(run_command("ln -s " + real + " " + dir + "/link").exit_code, 0);
  const std::string before = read_file(real + "/runs.jsonl");
  CliRun r = run_scalebench(contrast(dir + "/link"));
  EXPECT_TRUE(is_refusal(r, 3, "--out-dir " + dir + "/link is a symbolic link")) << r.output;
  EXPECT_EQ(read_file(real + "/runs.jsonl"), before);
  EXPECT_FALSE(file_exists(real + "/contrast.json"));

  // The report of a folder named through a link, and a study's folder that is a link.
  r = run_scalebench("report " + dir + "/link");
  EXPECT_TRUE(is_refusal(r, 3, "is a symbolic link")) << r.output;
  EXPECT_FALSE(file_exists(real + "/report.html"));
  const char* source = std::getenv("SCALEBENCH_SOURCE_DIR");
  ASSERT_NE(source, nullptr);
  run_command("mkdir -p " + dir + "/study-real && ln -s " + dir + "/study-real " + dir + "/study-link");
  r = run_scalebench("study " + std::string(source) + "/jobs/smoke.yaml --out-dir " + dir + "/study-link");
  EXPECT_TRUE(is_refusal(r, 3, "--out-dir " + dir + "/study-link is a symbolic link")) << r.output;
  EXPECT_FALSE(file_exists(dir + "/study-real/runs.jsonl"));
}

TEST(ResultsLinks, TheReportAndTheStudysSummariesAreNeverWrittenThroughALink) {
  const std::string dir = make_temp_dir();
  const std::string out = dir + "/c";
  ASSERT_EQ(run_scalebench(contrast(out)).exit_code, 0);
  write(dir + "/page", "outside\n");
  ASSERT_EQ(run_command("ln -s " + dir + "/page " + out + "/report.html").exit_code, 0);
  const CliRun r = run_scalebench("report " + out);
  EXPECT_TRUE(is_refusal(r, 3, out + "/report.html")) << r.output;
  EXPECT_EQ(read_file(dir + "/page"), "outside\n");

  const char* source = std::getenv("SCALEBENCH_SOURCE_DIR");
  ASSERT_NE(source, nullptr);
  for (const std::string name : {"summary.json", "summary.csv", "summary.md", "runs.jsonl", "runs"}) {
    const std::string s = dir + "/s-" + name;
    run_command("mkdir -p " + s);
    write(s + "/.scalebench.lock", R"({"driver":"study","pid":1,"host":"h"})"
                                   "\n");
    run_command("mkdir -p " + dir + "/elsewhere && ln -s " + dir + "/elsewhere/" + name + " " + s + "/" + name);
    const CliRun st = run_scalebench("study " + std::string(source) + "/jobs/smoke.yaml --out-dir " + s);
    EXPECT_TRUE(is_refusal(st, 3, s + "/" + name)) << st.output;
    EXPECT_FALSE(file_exists(dir + "/elsewhere/" + name)) << name;
  }
}

TEST(ResultsLinks, AResumeContinuesTheSamePlanOnTheSameHostOrIsRefused) {
  const std::string dir = make_temp_dir();
  const std::string out = unfinished_contrast(dir + "/c");
  const std::string record = read_file(out + "/gemm-naive.json");
  const std::string plan = read_file(out + "/contrast-plan.json");
  ASSERT_FALSE(record.empty());
  // Other options than the plan's: refused, naming the option, nothing run or replaced.
  const struct {
    std::string more, names;
  } changed[] = {
      {"--naive-n 24", "--naive-n 16; this one asks --naive-n 24"},
      {"--reps 2", "--reps 1; this one asks --reps 2"},
      {"--warmup 1", "--warmup 0; this one asks --warmup 1"},
      {"--precision fp32", "--precision fp64; this one asks --precision fp32"},
  };
  for (const auto& c : changed) {
    const CliRun r = run_scalebench(std::string("contrast --workload gemm --modes naive --no-calibrate --no-report ") +
                                    (c.more.find("naive-n") == std::string::npos ? "--naive-n 16 " : "") +
                                    (c.more.find("reps") == std::string::npos ? "--reps 1 " : "") +
                                    (c.more.find("warmup") == std::string::npos ? "--warmup 0 " : "") + c.more +
                                    " --out-dir " + out);
    EXPECT_TRUE(is_refusal(r, 2, c.names)) << c.more;
    EXPECT_NE(r.output.find("new --out-dir"), std::string::npos) << r.output;
  }
  const CliRun modes = run_scalebench("contrast --workload gemm --modes naive,single-core --naive-n 16 --reps 1 "
                                      "--warmup 0 --no-calibrate --no-report --out-dir " +
                                      out);
  EXPECT_TRUE(is_refusal(modes, 2, "--modes naive; this one asks --modes naive,single-core"));
  EXPECT_EQ(read_file(out + "/gemm-naive.json"), record);
  EXPECT_EQ(count_of(read_file(out + "/runs.jsonl"), "\n"), 1);

  // A plan measured on another host: refused, naming it.
  json other = json::parse(plan);
  other["host"] = "elsewhere-node-7";
  write(out + "/contrast-plan.json", other.dump());
  EXPECT_TRUE(is_refusal(run_scalebench(contrast(out)), 3, "measured on host elsewhere-node-7"));
  write(out + "/contrast-plan.json", plan);

  // The same options, --naive-n left out: continued, saying so on stdout; the finished row kept.
  const CliRun again = run_scalebench("contrast --workload gemm --modes naive --reps 1 --warmup 0 --no-calibrate "
                                      "--no-report --out-dir " +
                                      out + " 2>/dev/null");
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("scalebench contrast: continuing " + out + " on host "), std::string::npos)
      << again.output;
  EXPECT_NE(again.output.find("--reps 1 --warmup 0"), std::string::npos) << again.output;
  EXPECT_NE(again.output.find("--naive-n 16"), std::string::npos) << again.output;
  EXPECT_EQ(read_file(out + "/gemm-naive.json"), record);
  EXPECT_EQ(read_json(out + "/contrast.json")["from_earlier"], 1);
}

TEST(ResultsLinks, ARowRunAgainNeverReplacesTheFilesAnEarlierLineNames) {
  const std::string dir = make_temp_dir();
  const std::string out = unfinished_contrast(dir + "/c");
  // The earlier line says the row failed: it runs again, into files of new names.
  json line = json::parse(read_file(out + "/runs.jsonl"));
  line["status"] = "failed";
  write(out + "/runs.jsonl", line.dump() + "\n");
  const std::string record = read_file(out + "/gemm-naive.json");
  const std::string log = read_file(out + "/gemm-naive.log");
  const CliRun r = run_scalebench(contrast(out));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(read_file(out + "/gemm-naive.json"), record);
  EXPECT_EQ(read_file(out + "/gemm-naive.log"), log);
  EXPECT_TRUE(file_exists(out + "/gemm-naive-2.json"));
  EXPECT_TRUE(file_exists(out + "/gemm-naive-2.log"));
  const std::string lines = read_file(out + "/runs.jsonl");
  ASSERT_EQ(count_of(lines, "\n"), 2);
  EXPECT_EQ(json::parse(lines.substr(lines.find('\n') + 1))["record_path"], out + "/gemm-naive-2.json");
}

TEST(ResultsLinks, APlanOfWrongTypesOrValuesIsRefusedNamingItsField) {
  const std::string dir = make_temp_dir();
  const std::string base = unfinished_contrast(dir + "/base");
  const json plan = read_json(base + "/contrast-plan.json");
  const struct {
    std::string pointer;
    json value;
    std::string names;
  } cases[] = {
      {"/sizes/gemm/naive", 16, "\"sizes\".\"gemm\".\"naive\" is a number, not a size string"},
      {"/sizes/gemm/naive", "-5", "\"sizes\".\"gemm\".\"naive\" is '-5', not a whole number > 0"},
      {"/sizes/gemm/cpu", "0", "\"sizes\".\"gemm\".\"cpu\" is '0'"},
      {"/sizes/gemm/gpu", "lots", "\"sizes\".\"gemm\".\"gpu\" is 'lots'"},
      {"/sizes/gemm", json::array(), "\"sizes\".\"gemm\" is an array, not an object"},
      {"/sizes", "x", "\"sizes\" is a string, not an object"},
      {"/host", 42, "\"host\" is a number, not a host name"},
      {"/options/reps", "1", "\"options\".\"reps\" is a string, not a whole number"},
      {"/options/reps", -1, "\"options\".\"reps\" is -1, out of range"},
      {"/options/warmup", 1.5, "\"options\".\"warmup\" is a number, not a whole number"},
      {"/options/workloads", json::array({7}), "\"options\".\"workloads\" holds a number, not a name"},
      {"/options", nullptr, "\"options\" is null, not an object"},
  };
  int i = 0;
  for (const auto& c : cases) {
    const std::string out = dir + "/p" + std::to_string(i++);
    run_command("cp -r " + base + " " + out);
    json bad = plan;
    bad[json::json_pointer(c.pointer)] = c.value;
    write(out + "/contrast-plan.json", bad.dump());
    const std::string record = read_file(out + "/gemm-naive.json");
    EXPECT_TRUE(is_refusal(run_scalebench(contrast(out)), 3, c.names)) << c.pointer << " = " << c.value.dump();
    EXPECT_EQ(count_of(read_file(out + "/runs.jsonl"), "\n"), 1) << "a row ran on a bad plan";
    EXPECT_EQ(read_file(out + "/gemm-naive.json"), record);
  }
  // A field missing, and no plan at all beside a finished row.
  for (const char* field : {"host", "options", "sizes"}) {
    const std::string out = dir + "/m-" + field;
    run_command("cp -r " + base + " " + out);
    json bad = plan;
    bad.erase(field);
    write(out + "/contrast-plan.json", bad.dump());
    EXPECT_TRUE(is_refusal(run_scalebench(contrast(out)), 3, std::string("\"") + field + "\" is missing"));
  }
  const std::string none = dir + "/none";
  // (contrast.csv there: without a contrast's file, runs.jsonl alone would make the folder a study's.)
  run_command("cp -r " + base + " " + none + " && rm " + none + "/contrast-plan.json && touch " + none +
              "/contrast.csv");
  EXPECT_TRUE(is_refusal(run_scalebench(contrast(none)), 3, "contrast-plan.json is missing while"));
}

TEST(ResultsLinks, TwoCalibrationsStartedTogetherTimeTheMachineOnce) {
  const std::string dir = make_temp_dir();
  const std::string env = "env -u SCALEBENCH_PROFILE XDG_CACHE_HOME=" + dir + "/cache ";
  const std::string command = env + std::getenv("SCALEBENCH_BINARY") + " calibrate --quick --if-stale --no-check";
  // Both in the background (the shells' own output away from the pipe that run_command reads).
  const auto start = [&](const std::string& name) {
    return std::atoi(run_command("(" + command + " > " + dir + "/" + name + ".log 2>&1; echo $? > " + dir + "/" + name +
                                 ".rc) > /dev/null 2>&1 & echo $!")
                         .output.c_str());
  };
  const int a = start("a");
  const int b = start("b");
  ASSERT_GT(a, 0);
  ASSERT_GT(b, 0);
  for (int i = 0; i < 3000 && !(file_exists(dir + "/a.rc") && file_exists(dir + "/b.rc")); ++i) {
    run_command("sleep 0.1");
  }
  ASSERT_TRUE(file_exists(dir + "/a.rc") && file_exists(dir + "/b.rc")) << "the calibrations did not end in 300 s";
  const std::string logs = read_file(dir + "/a.log") + read_file(dir + "/b.log");
  EXPECT_EQ(read_file(dir + "/a.rc"), "0\n") << logs;
  EXPECT_EQ(read_file(dir + "/b.rc"), "0\n") << logs;
  EXPECT_EQ(count_of(logs, "calibrate: profile written to"), 1) << logs;
  EXPECT_EQ(count_of(logs, "is current for this host and build; nothing timed"), 1) << logs;
  EXPECT_EQ(count_of(logs, "another calibration (pid "), 1) << logs;
  EXPECT_EQ(run_command("ls " + dir + "/cache/scalebench | grep -c '^profile-.*json$'").output, "1\n");
}
