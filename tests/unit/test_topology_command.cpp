// `scalebench topology`: prints the machine and every mode's plan, as text or JSON, for this
// machine or a saved export; --export-xml writes a file that reads back.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "app/commands.hpp"
#include "scalebench/topology/topology.hpp"
#include "test_topology_data.hpp"

namespace {

struct Result {
  int code = -1;
  std::string out;
  std::string err;
};

// Parses `args` as `scalebench topology <args>` and runs it, capturing its output.
Result run_topology(std::vector<std::string> args) {
  CLI::App root;
  auto sub = scalebench::app::register_topology(root);
  args.insert(args.begin(), "topology");
  std::vector<const char*> argv{"scalebench"};
  for (const auto& a : args) argv.push_back(a.c_str());
  root.parse(static_cast<int>(argv.size()), argv.data());
  Result r;
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  r.code = sub.run();
  r.out = testing::internal::GetCapturedStdout();
  r.err = testing::internal::GetCapturedStderr();
  return r;
}

}  // namespace

TEST(TopologyCommand, JsonOfTheGpuNodeCarriesEveryModesPlan) {
  const Result r = run_topology({"--xml", test_data::path(test_data::kGpuNode), "--json", "--nodes", "2"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["gpus"].size(), 4u);
  ASSERT_EQ(j["plans"].size(), 6u);
  EXPECT_EQ(j["plans"][4]["mode"], "gpu");
  EXPECT_EQ(j["plans"][4]["ranks"][2]["cpus"], "80-81,88-89");
  EXPECT_EQ(j["plans"][4]["ranks"][2]["gpu"]["pci_bus_id"], "000a:01:00.0");
  EXPECT_EQ(j["plans"][4]["mpirun"]["launcher_args"],
            (std::vector<std::string>{"-np", "4", "--map-by", "ppr:2:numa:PE=2", "--bind-to", "core"}));
  EXPECT_EQ(j["plans"][5]["mode"], "multinode");
  EXPECT_EQ(j["plans"][5]["layout"], "gpu");
  EXPECT_EQ(j["plans"][5]["total_ranks"], 8);
}

TEST(TopologyCommand, TextOfTheWorkstationSaysWhichModesCannotRun) {
  const Result r = run_topology({"--xml", test_data::path(test_data::kWorkstation)});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("1 package(s), 1 NUMA domain(s), 2 core(s), 2 PU(s), 0 GPU(s)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("numa          not possible here: one NUMA domain: same as multi-thread"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("gpu           not possible here: no GPU"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("multinode     not possible here: one node"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("mpirun -np 1 --map-by ppr:1:node:PE=2 --bind-to core scalebench <workload> --pin core"),
            std::string::npos)
      << r.out;
}

TEST(TopologyCommand, ExportXmlWritesAFileThatReadsBack) {
  char path[] = "/tmp/scalebench-export-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  const Result r = run_topology({"--xml", test_data::path(test_data::kTwoSocket), "--export-xml", path, "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto back = scalebench::Topology::load_xml(path);
  std::remove(path);
  EXPECT_EQ(back.numa_domains().size(), 4u);
  EXPECT_EQ(back.cores().size(), 28u);
}

TEST(TopologyCommand, UnreadableXmlIsAUsageErrorExit) {
  const Result r = run_topology({"--xml", "/nonexistent/topology.xml"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("topology file /nonexistent/topology.xml"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
}

// A topology file is read as every input file is: a FIFO is refused at once (hwloc's own open
// would wait for a writer for ever), and so is a folder.
TEST(TopologyCommand, AFifoOrAFolderAsTheXmlIsRefusedAtOnce) {
  char dir[] = "/tmp/scalebench-fifo-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string fifo = std::string(dir) + "/topology.xml";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const Result r = run_topology({"--xml", fifo});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("it is a FIFO"), std::string::npos) << r.err;
  const Result d = run_topology({"--xml", dir});
  EXPECT_EQ(d.code, 2);
  EXPECT_NE(d.err.find("it is a folder"), std::string::npos) << d.err;
  std::remove(fifo.c_str());
  rmdir(dir);
}

// --export-xml follows the output-file rule: checked before any work (a folder that takes no new
// file, such as /proc, is refused), written beside its place and renamed.
TEST(TopologyCommand, ExportXmlIsCheckedFirstAndWrittenWhole) {
  const Result r = run_topology({"--xml", test_data::path(test_data::kTwoSocket), "--export-xml", "/proc/x.xml"});
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find("--export-xml /proc/x.xml"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
}
