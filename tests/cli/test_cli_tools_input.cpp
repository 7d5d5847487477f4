// tools/misses, tools/auto-check and tools/energy-check given hostile input and failing children,
// under the binary's rules (tools/_checked_input.py): a FIFO, a folder, /dev/zero, a huge file,
// undecodable text, the wrong shape or types, deep nesting, NaN and numbers beyond a double are one
// line each with the documented code, never a hang or a traceback; a child that hangs is ended
// after its time limit with everything it started; a child ended by signal n is 128+n;
// energy-check's temporary folder goes on every path. No scalebench runs here: the binary, the
// measured command and nvidia-smi are small fakes written by the test, so every case is known.
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_runner.hpp"

using nlohmann::json;

namespace {

std::string tool(const std::string& name) {
  return std::string(std::getenv("SCALEBENCH_SOURCE_DIR")) + "/tools/" + name;
}

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

void write_script(const std::string& path, const std::string& text) {
  write(path, text);
  ASSERT_EQ(chmod(path.c_str(), 0755), 0);
}

std::string nested(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

// The tool's answer: exit `code`, one line of its own naming `names`, no traceback.
void expect_one_line(const CliRun& r, const std::string& tool_name, int code, const std::string& names,
                     const std::string& what) {
  EXPECT_EQ(r.exit_code, code) << what << "\n" << r.output;
  EXPECT_EQ(count_of(r.output, "tools/" + tool_name + ": "), 1) << what << "\n" << r.output;
  EXPECT_NE(r.output.find(names), std::string::npos) << what << "\n" << r.output;
  EXPECT_EQ(r.output.find("Traceback"), std::string::npos) << what << "\n" << r.output;
}

json record(double predicted, double measured) {
  return {{"subcommand", "gemm"},
          {"started_at", "2026-11-27T00:00:00Z"},
          {"command_line", json::array({"scalebench", "gemm", "--n=" + std::to_string(measured)})},
          {"phases", {{"end_to_end", {{"median_s", measured}}}}},
          {"prediction",
           {{"available", true}, {"end_to_end", {{"predicted_s", predicted}, {"measured_s", measured}}}}}};
}

}  // namespace

TEST(ToolsInput, MissesRefusesEveryKindOfBadFileWithOneLine) {
  const std::string d = make_temp_dir();
  ASSERT_EQ(mkfifo((d + "/fifo.json").c_str(), 0600), 0);
  ASSERT_EQ(run_command("truncate -s 300M " + d + "/huge.json").exit_code, 0);  // sparse: no disk spent
  write(d + "/latin1.json", "{\"subcommand\": \"gemm \xe9\"}");
  write(d + "/deep.json", "{\"a\": " + nested(100000) + "}");
  write(d + "/nan.json", "{\"subcommand\": \"gemm\", \"phases\": {}, \"x\": NaN}");
  write(d + "/inf.json", "{\"subcommand\": \"gemm\", \"phases\": {}, \"x\": -Infinity}");
  write(d + "/big.json", "{\"subcommand\": \"gemm\", \"phases\": {}, \"x\": 1e999}");
  write(d + "/list.json", "[1, 2]");
  write(d + "/twice.json", "{\"subcommand\": \"gemm\", \"phases\": {}, \"ranks\": 1, \"ranks\": 2}");
  write(d + "/bom.json", "\xef\xbb\xbf{\"subcommand\": \"gemm\", \"phases\": {}}");
  const struct {
    std::string path, names;
  } cases[] = {
      {d + "/fifo.json", "is a FIFO"},
      {"/dev/zero", "/dev/zero is a character device"},
      {d + "/huge.json", "314572800 bytes"},
      {d + "/latin1.json", "is not UTF-8 text"},
      {d + "/deep.json", "nests deeper than 64 levels"},
      {d + "/nan.json", "NaN is not a JSON number"},
      {d + "/inf.json", "-Infinity is not a JSON number"},
      {d + "/big.json", "1e999 is outside a double's range"},
      {d + "/list.json", "is not a scalebench run record"},
      {d + "/twice.json", "holds the key \"ranks\" twice in one object"},
      {d + "/bom.json", "starts with a byte-order mark"},
  };
  for (const auto& c : cases) {
    expect_one_line(run_command("timeout 20 " + tool("misses") + " " + c.path + " 2>&1"), "misses", 2, c.names, c.path);
  }
  // The same files inside a folder are passed over, the FIFO unopened: nothing with a prediction.
  expect_one_line(run_command("timeout 20 " + tool("misses") + " " + d + " 2>&1"), "misses", 3, "no record", d);
}

TEST(ToolsInput, MissesJsonIsStrictAndItsFiguresChecked) {
  const std::string d = make_temp_dir();
  // A miss beyond a double (1e300 / 1e-300), a prediction as text, an integer beyond a double and a
  // worst phase that is not text: none may become Infinity, NaN or a crash in --json.
  json wild = record(1e-300, 1e300);
  json text = record(1.0, 1.0);
  text["prediction"]["end_to_end"]["predicted_s"] = "1.0";
  text["started_at"] = "b";
  json good = record(1.0, 1.1);
  good["started_at"] = "c";
  good["prediction"]["worst_phase"] = {{"not", "text"}};
  std::string big_int = good.dump();
  big_int.replace(big_int.find("\"c\""), 3, "\"d\"");
  big_int.replace(big_int.find("\"predicted_s\":1.0"), 17, "\"predicted_s\":" + std::string(400, '9'));
  write(d + "/runs.jsonl", wild.dump() + "\n" + json{{"record", wild}}.dump() + "\n" + json{{"record", text}}.dump() +
                               "\n" + json{{"record", good}}.dump() + "\n" + "{\"record\": " + big_int + "}\n");
  const CliRun r = run_command("timeout 20 " + tool("misses") + " " + d + "/runs.jsonl --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("Infinity"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("NaN"), std::string::npos) << r.output;
  const json s = json::parse(r.output);  // nlohmann refuses NaN and Infinity: strict JSON
  EXPECT_EQ(s["records"], 1) << s.dump();
  EXPECT_EQ(s["without_prediction"]["a prediction without figures"], 3) << s.dump();
  EXPECT_EQ(s["worst"][0]["phase"], "") << s.dump();
}

TEST(ToolsInput, MissesWalksAFolderNestedDeeperThanPythonsRecursion) {
  const std::string d = make_temp_dir();
  // 1200 levels: os.walk recursed once per level (1000 at most).
  const CliRun made = run_command("cd " + d + " && for i in $(seq 1200); do mkdir d && cd d || exit 1; done && echo '" +
                                  record(1.0, 1.05).dump() + "' > r.json");
  ASSERT_EQ(made.exit_code, 0) << made.output;
  const CliRun r = run_command("timeout 60 " + tool("misses") + " " + d + " --json 2>&1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(json::parse(r.output)["records"], 1) << r.output;
}

namespace {

// A stand-in for scalebench: `study FILE --out-dir DIR ...` writes $RUNS as DIR/runs.jsonl (FAKE=
// nothing: writes none; kill: ends itself with SIGKILL; hang: sleeps); any other command is a pinned
// run, which writes a record of 1 s (PINNED=hang: sleeps instead).
const char* const kFakeScalebench = R"(#!/bin/bash
if [ "$1" = study ]; then
  case "${FAKE:-}" in nothing) exit 0 ;; kill) kill -9 $$ ;; hang) sleep 246801 ;; esac
  mkdir -p "$4" && printf '%s\n' "$RUNS" > "$4/runs.jsonl"; exit 0
fi
[ "${PINNED:-}" = hang ] && sleep 135791
echo '{"phases": {"end_to_end": {"median_s": 1.0}}}' > "${@: -1}"
)";

// Shell words that wait until `pgrep -f pattern` finds a process, for up to 30 s (put a bracket in
// the pattern, as for wait_for_process, so that this shell never matches itself).
std::string once_running(const std::string& pattern) {
  return "for _ in $(seq 300); do pgrep -f '" + pattern + "' >/dev/null && break; sleep 0.1; done; ";
}

// auto-check with the fake binary, in folder d, with `env` (VAR=value ...) for the fake.
std::string auto_check(const std::string& d, const std::string& args, const std::string& env = "") {
  return "cd " + d + " && env " + env + " timeout 60 " + tool("auto-check") + " --binary " + d + "/fake " + args +
         " 2>&1";
}

// A runs.jsonl line as the study driver writes it, with `choice` in its record.
std::string runs_line(const std::string& d, const json& choice) {
  return json{{"status", "ok"},
              {"key", "n=64"},
              {"command", d + "/fake gemm --n=64"},
              {"record", {{"phases", {{"end_to_end", {{"median_s", 2.0}}}}}, {"choice", choice}}}}
      .dump();
}

}  // namespace

TEST(ToolsInput, AutoCheckRefusesEveryKindOfBadStudyFileWithOneLine) {
  const std::string d = make_temp_dir();
  write_script(d + "/fake", kFakeScalebench);
  ASSERT_EQ(mkfifo((d + "/fifo.yaml").c_str(), 0600), 0);
  ASSERT_EQ(mkdir((d + "/folder.yaml").c_str(), 0755), 0);
  write(d + "/huge.yaml", "workload: gemm\n# " + std::string(2 << 20, 'x') + "\n");
  write(d + "/latin1.yaml", "workload: gemm\nstudy: \xe9t\xe9\n");
  write(d + "/list.yaml", "- workload: gemm\n");
  write(d + "/args.yaml", "workload: gemm\nargs: [n, 64]\n");
  write(d + "/sweep.yaml", "workload: gemm\nsweep: 3\n");
  write(d + "/name.yaml", "workload: gemm\nstudy: {a: 1}\n");
  write(d + "/workload.yaml", "workload: [gemm]\n");
  write(d + "/deep.yaml", "workload: gemm\nargs: {n: " + nested(5000) + "}\n");
  std::string bomb = "workload: gemm\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 9; ++i) {
    const std::string name = std::to_string(i), last = std::to_string(i - 1);
    bomb.append("a").append(name).append(": &a").append(name).append(" [");
    for (int k = 0; k < 10; ++k) bomb.append(k ? ", *a" : "*a").append(last);
    bomb.append("]\n");
  }
  write(d + "/bomb.yaml", bomb);
  write(d + "/broken.yaml", "workload: [gemm\n");
  const struct {
    std::string args, names;
  } cases[] = {
      {"fifo.yaml", "fifo.yaml is a FIFO"},
      {"folder.yaml", "folder.yaml is a folder"},
      {"/dev/zero", "/dev/zero is a character device"},
      {"huge.yaml", "more than the 1048576"},
      {"latin1.yaml", "is not UTF-8 text"},
      {"list.yaml", "no mapping at the top"},
      {"args.yaml", "args: must be a mapping"},
      {"sweep.yaml", "sweep: must be a mapping"},
      {"name.yaml", "study: must be a name"},
      {"workload.yaml", "auto decides gemm's schedule"},
      {"deep.yaml", "nests"},
      {"bomb.yaml", "holds more than"},
      {"broken.yaml", "is not YAML"},
      {"--timeout 0 s.yaml", "--timeout 0 is outside"},
      {"--timeout x s.yaml", "--timeout 'x' is not a number"},
  };
  for (const auto& c : cases) expect_one_line(run_command(auto_check(d, c.args)), "auto-check", 2, c.names, c.args);
}

TEST(ToolsInput, AutoCheckSaysHowTheBinaryFailed) {
  const std::string d = make_temp_dir();
  write_script(d + "/fake", kFakeScalebench);
  write(d + "/s.yaml", "study: s\nworkload: gemm\nargs: {n: 64}\n");
  const json alt = {{"verdict", "weighed"}, {"algorithm", "summa2d"}, {"distribution", "replicated"},
                    {"transport", "mpi"},   {"grid", "1x2"},          {"options", "summa2d 1x2"}};
  const struct {
    std::string env, names;
  } cases[] = {
      {"FAKE=nothing", "left no usable runs.jsonl"},
      {"FAKE=kill", "ended by signal 9 (SIGKILL"},
      {"FAKE=hang", "ran past --timeout 2 s"},
      {"RUNS='{\"status\": \"ok\", \"record\": 5}'", "record is int"},
      {"RUNS='" + runs_line(d, {{"alternatives", "x"}}) + "'", "choice.alternatives is str"},
      {"RUNS='" + runs_line(d, {{"alternatives", {{{"algorithm", 5}}}}}) + "'", "alternative algorithm is int"},
      {"PINNED=hang RUNS='" + runs_line(d, {{"alternatives", {alt}}}) + "'", "ran past --timeout 2 s"},
  };
  for (const auto& c : cases) {
    const CliRun r = run_command(auto_check(d, "--out-dir " + d + "/out --timeout 2 s.yaml", c.env));
    expect_one_line(r, "auto-check", 3, c.names, c.env);
  }
  EXPECT_TRUE(wait_for_process("sleep 24680[1]", false, 10)) << "the hung study was left running";
  EXPECT_TRUE(wait_for_process("sleep 13579[1]", false, 10)) << "the hung pinned run was left running";
  const CliRun ok = run_command(
      auto_check(d, "--out-dir " + d + "/out s.yaml",
                 "RUNS='" + runs_line(d, {{"taken", "row1d"}, {"alternatives", {alt}}}) + "'"));
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_NE(ok.output.find("summa2d 1x2"), std::string::npos) << ok.output;
  // A SIGTERM to the check ends the run in progress with it: 143, one line, nothing left running.
  // The signal is sent once the hung study runs (up to 30 s for it to start).
  const CliRun term = run_command("cd " + d + " && (FAKE=hang " + tool("auto-check") + " --binary " + d +
                                  "/fake --out-dir out s.yaml & p=$!; " + once_running("sleep 24680[1]") +
                                  "kill -TERM $p; wait $p) 2>&1");
  expect_one_line(term, "auto-check", 143, "interrupted by SIGTERM", "SIGTERM");
  EXPECT_TRUE(wait_for_process("sleep 24680[1]", false, 10)) << "the study was left running after SIGTERM";
}

namespace {

// A stand-in for nvidia-smi, first on PATH: it offers power.draw.instant and samples one GPU at
// 100 W every 50 ms; FAKE_SMI=hang makes every call sleep (a hung driver).
const char* const kFakeNvidiaSmi = R"(#!/bin/bash
[ "${FAKE_SMI:-}" = hang ] && sleep 975311
[ "$1" = --help-query-gpu ] && { echo '"power.draw.instant"'; exit 0; }
while :; do echo "$(date +'%Y/%m/%d %H:%M:%S.%3N'), 00000000:65:00.0, 100.0"; sleep 0.05; done
)";

// A stand-in for the measured run: its last argument is the --json file energy-check added. MODE
// picks what it does; by default it writes a record of 1 s at 100 W on that GPU.
const char* const kFakeRun = R"(#!/usr/bin/env python3
import json, os, signal, sys, time
mode, path = os.environ.get("MODE", "ok"), sys.argv[-1]
if mode == "kill":
    os.kill(os.getpid(), signal.SIGKILL)
if mode == "hang":
    os.execvp("sleep", ["sleep", "864201"])
if mode == "code":
    sys.exit(5)
texts = {"types": '{"energy": {"gpu": {"counted": true}, "interval_unix": ["a", 2], "gpu_j": "x"}}',
         "nan": '{"energy": {"gpu": {"counted": true}, "interval_unix": [1, NaN], "gpu_j": 1}}',
         "deep": '{"energy": ' + '[' * 100000 + ']' * 100000 + '}', "latin1": '{"energy": "\xe9"}'}
if mode in texts:
    open(path, "w", encoding="latin-1").write(texts[mode])
if mode == "ok":
    t0 = time.time(); time.sleep(1.0); t1 = time.time()
    json.dump({"energy": {"gpu": {"counted": True}, "interval_unix": [t0, t1], "domains_rank0_node": ["gpu 0000:65:00.0"],
               "gpu_j": 100.0 * (t1 - t0)}}, open(path, "w"))
)";

// energy-check with the fakes, its temporary folders under d/tmp.
std::string energy_check(const std::string& d, const std::string& env, const std::string& args) {
  return "PATH=" + d + "/bin:$PATH TMPDIR=" + d + "/tmp " + env + " " + tool("energy-check") + " " + args + " -- " + d +
         "/run";
}

std::string energy_setup() {
  const std::string d = make_temp_dir();
  EXPECT_EQ(mkdir((d + "/bin").c_str(), 0755), 0);
  EXPECT_EQ(mkdir((d + "/tmp").c_str(), 0755), 0);
  write_script(d + "/bin/nvidia-smi", kFakeNvidiaSmi);
  write_script(d + "/run", kFakeRun);
  return d;
}

bool nothing_left(const std::string& d) { return run_command("ls -A " + d + "/tmp").output.empty(); }

}  // namespace

TEST(ToolsInput, EnergyCheckComparesAndLeavesNothingBehind) {
  const std::string d = energy_setup();
  const CliRun r = run_command("timeout 60 env " + energy_check(d, "", "") + " 2>&1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("ratio 1.0"), std::string::npos) << r.output;
  EXPECT_TRUE(nothing_left(d)) << run_command("ls -R " + d + "/tmp").output;
}

TEST(ToolsInput, EnergyCheckFailuresAreOneLineWithTheirCodeAndLeaveNothingBehind) {
  const std::string d = energy_setup();
  const struct {
    std::string env, args;
    int code;
    std::string names;
  } cases[] = {
      {"MODE=none", "", 3, "wrote no record"},
      {"MODE=kill", "", 137, "ended by signal 9 (SIGKILL"},
      {"MODE=code", "", 5, "failed (exit 5)"},
      {"MODE=types", "", 3, "energy.interval_unix is not two times"},
      {"MODE=nan", "", 3, "NaN is not a JSON number"},
      {"MODE=deep", "", 3, "nests deeper than 64 levels"},
      {"MODE=latin1", "", 3, "is not UTF-8 text"},
      {"MODE=hang", "--timeout 2", 3, "ran past --timeout 2 s"},
      {"FAKE_SMI=hang", "", 3, "did not answer in 10 s"},
      {"", "--interval-ms 5", 2, "--interval-ms 5 is outside"},
      {"", "--timeout inf", 2, "--timeout inf is outside"},
  };
  for (const auto& c : cases) {
    const CliRun r = run_command("timeout 60 env " + energy_check(d, c.env, c.args) + " 2>&1");
    expect_one_line(r, "energy-check", c.code, c.names, c.env + c.args);
    EXPECT_TRUE(nothing_left(d)) << c.env << c.args << ": " << run_command("ls -R " + d + "/tmp").output;
  }
  EXPECT_TRUE(wait_for_process("sleep 86420[1]", false, 10)) << "the hung command was left running";
  EXPECT_TRUE(wait_for_process("sleep 97531[1]", false, 10)) << "the hung nvidia-smi was left running";
}

TEST(ToolsInput, EnergyCheckEndedBySignalEndsItsChildrenAndRemovesItsFolder) {
  const std::string d = energy_setup();
  for (const std::string sig : {"TERM", "INT", "HUP"}) {
    // Not under timeout(1), which would take the signal: the check itself gets it.
    std::string shell = "(";
    // The signal is sent once the hung command runs (nvidia-smi is started before it).
    shell.append(energy_check(d, "MODE=hang", "")).append(" & p=$!; ");
    shell.append(once_running("sleep 86420[1]")).append("kill -").append(sig);
    const CliRun r = run_command(shell.append(" $p; wait $p) 2>&1"));
    const int code = sig == "TERM" ? 143 : sig == "INT" ? 130 : 129;
    expect_one_line(r, "energy-check", code, "interrupted by SIG" + sig, sig);
    EXPECT_TRUE(nothing_left(d)) << sig << ": " << run_command("ls -R " + d + "/tmp").output;
    EXPECT_TRUE(wait_for_process("sleep 86420[1]", false, 10)) << sig << ": the command was left running";
    EXPECT_TRUE(wait_for_process("[b]in/nvidia-smi", false, 10)) << sig << ": nvidia-smi was left running";
  }
}
