// calibrate under a powercap tree whose counter steps back: the idle watts of an interval not
// counted never reach the profile (energy.hpp). The profile is written with power.cpu absent and
// the reason, and predict says that reason instead of joules. A profile holding watts past what
// the node's counters can draw (the 524 kW of a stepping-back counter read as a wrap) is refused
// by predict naming the field.
#include <cstdlib>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_runner.hpp"

using nlohmann::json;

namespace {

std::string binary() { return std::getenv("SCALEBENCH_BINARY"); }

}  // namespace

TEST(EnergyCalibrateCli, ACounterSteppingBackLeavesNoIdleWattsInTheProfile) {
  const std::string dir = make_temp_dir();
  const std::string zone = dir + "/pc/intel-rapl:0";
  // Down 1 J every 10 ms from 200 kJ: every interval a decrease no wrap explains.
  const std::string writer = "( n=0; while :; do n=$((n+1)); echo $((200000000000-n*1000000)) > " + zone +
                             "/e.new && mv " + zone + "/e.new " + zone + "/energy_uj; sleep 0.01; done ) & w=$!; ";
  const CliRun r = run_command("mkdir -p " + zone + " && echo package-0 > " + zone + "/name && echo 200000000000 > " +
                               zone + "/energy_uj && echo 262143328850 > " + zone + "/max_energy_range_uj && " +
                               writer + "SCALEBENCH_POWERCAP_ROOT=" + dir + "/pc timeout 500 " + binary() +
                               " calibrate --quick --no-check --out " + dir +
                               "/p.json; rc=$?; kill $w; wait $w "
                               "2>/dev/null; rm -rf " +
                               dir + "/pc; exit $rc");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("calibrate: power: CPU not read (its idle power was not counted: the RAPL counter package-0 "
                          "went down by "),
            std::string::npos)
      << r.output;
  const json p = json::parse(read_file(dir + "/p.json"));
  const json& cpu = p["power"]["cpu"];
  EXPECT_FALSE(cpu["present"].get<bool>()) << cpu.dump();
  EXPECT_FALSE(cpu.contains("idle_w")) << cpu.dump();
  EXPECT_FALSE(cpu.contains("blas_w")) << cpu.dump();
  EXPECT_NE(cpu["reason"].get<std::string>().find("its idle power was not counted: the RAPL counter package-0 went "
                                                  "down by "),
            std::string::npos)
      << cpu.dump();
  // predict reads the profile and says why there are no joules.
  const CliRun pr = run_scalebench("predict gemm --n 512 --gpus-per-node 0 --profile " + dir + "/p.json");
  ASSERT_EQ(pr.exit_code, 0) << pr.output;
  EXPECT_NE(pr.output.find("energy: no power data in the profile (CPU: its idle power was not counted: "),
            std::string::npos)
      << pr.output;
  EXPECT_EQ(pr.output.find("energy per job"), std::string::npos) << pr.output;
}

TEST(EnergyCalibrateCli, AProfileWithMegawattsOfIdleIsRefused) {
  const std::string dir = make_temp_dir();
  json j = json::parse(
      read_file(std::string(std::getenv("SCALEBENCH_SOURCE_DIR")) + "/tests/data/profile-synthetic.json"));
  j["power"] = {{"cpu", {{"present", true}, {"idle_w", 524287}, {"blas_w", {{"fp64", 250}}}}},
                {"gpu", {{"present", false}, {"reason", "none"}}}};
  std::ofstream(dir + "/p.json") << j.dump();
  expect_refused("predict gemm --n 64 --profile " + dir + "/p.json", 2,
                 "profile " + dir +
                     "/p.json: power.cpu.idle_w = 524287 W is more than the 3000 W 2 CPU package(s) "
                     "and their DRAM can draw");
}
