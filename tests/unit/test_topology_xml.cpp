// Topology discovery read from saved XML exports of real machines: packages, NUMA domains,
// cores, PUs, GPUs and their locality.
#include <cstdlib>
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "scalebench/base/error.hpp"
#include "scalebench/topology/topology.hpp"
#include "test_topology_data.hpp"

using scalebench::Topology;

namespace {

std::vector<int> range(int first, int last) {
  std::vector<int> v;
  for (int i = first; i <= last; ++i) v.push_back(i);
  return v;
}

// Restores an environment variable when the test ends.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace

TEST(TopologyXml, WorkstationHasOnePackageOneDomainTwoCores) {
  const Topology t = test_data::load(test_data::kWorkstation);
  EXPECT_FALSE(t.is_this_machine());
  EXPECT_EQ(t.source(), "xml:" + test_data::path(test_data::kWorkstation));
  ASSERT_EQ(t.packages().size(), 1u);
  EXPECT_EQ(t.packages()[0].cpu_model, "AMD EPYC");
  EXPECT_EQ(t.packages()[0].cores, 2);
  ASSERT_EQ(t.numa_domains().size(), 1u);
  EXPECT_EQ(t.numa_domains()[0].cpus, range(0, 1));
  EXPECT_EQ(t.numa_domains()[0].cores, 2);
  ASSERT_EQ(t.cores().size(), 2u);
  EXPECT_EQ(t.cores()[1].pus, std::vector<int>{1});
  EXPECT_EQ(t.cpus(), range(0, 1));
  EXPECT_TRUE(t.gpus().empty());  // its virtio disk and NIC are not GPUs
}

TEST(TopologyXml, TwoSocketClusterOnDieHasFourDomainsOfSevenCores) {
  const Topology t = test_data::load(test_data::kTwoSocket);
  ASSERT_EQ(t.packages().size(), 2u);
  EXPECT_EQ(t.packages()[0].numa_domains, (std::vector<int>{0, 1}));
  EXPECT_EQ(t.packages()[1].numa_domains, (std::vector<int>{2, 3}));
  EXPECT_EQ(t.packages()[1].cpus, range(14, 27));
  ASSERT_EQ(t.numa_domains().size(), 4u);
  for (int d = 0; d < 4; ++d) {
    EXPECT_EQ(t.numa_domains()[d].os_index, d);
    EXPECT_EQ(t.numa_domains()[d].cpus, range(7 * d, 7 * d + 6)) << "NUMA " << d;
    EXPECT_EQ(t.numa_domains()[d].cores, 7);
    EXPECT_EQ(t.numa_domains()[d].local_memory_bytes, d == 0 ? 16899600384ull : 16ull << 30);
  }
  EXPECT_EQ(t.cores().size(), 28u);
  EXPECT_EQ(t.cores()[20].numa_domain, 2);
  EXPECT_EQ(t.cores()[20].package, 1);
  EXPECT_TRUE(t.gpus().empty());
}

TEST(TopologyXml, GpuNodeHasTwoGpusOnEachDomainWithTheirBusIds) {
  const Topology t = test_data::load(test_data::kGpuNode);
  EXPECT_EQ(t.host(), "drac-12.grenoble.grid5000.fr");
  ASSERT_EQ(t.numa_domains().size(), 2u);
  EXPECT_EQ(t.numa_domains()[0].cpus, (std::vector<int>{0, 1, 8, 9, 16, 17, 24, 25}));
  EXPECT_EQ(t.numa_domains()[1].cpus, (std::vector<int>{80, 81, 88, 89, 96, 97, 104, 105}));
  EXPECT_EQ(t.cores().size(), 8u);
  EXPECT_EQ(t.cores()[0].pus, (std::vector<int>{0, 1}));  // SMT: a core has several PUs
  ASSERT_EQ(t.gpus().size(), 4u);                         // one GPU each, whatever its cuda/opencl/nvml OS devices
  const std::vector<std::pair<std::string, int>> expected{{"0002:01:00.0", 0},
                                                          {"0003:01:00.0", 0},
                                                          {"000a:01:00.0", 1},
                                                          {"000b:01:00.0", 1}};
  for (std::size_t i = 0; i < 4; ++i) {
    const auto& g = t.gpus()[i];
    EXPECT_EQ(g.index, static_cast<int>(i));
    EXPECT_EQ(g.pci_bus_id, expected[i].first);
    EXPECT_EQ(g.numa_domain, expected[i].second) << g.pci_bus_id;
    EXPECT_EQ(g.model, "Tesla P100-SXM2-16GB");
    EXPECT_EQ(g.os_devices, (std::vector<std::string>{"cuda" + std::to_string(i), "opencl0d" + std::to_string(i),
                                                      "nvml" + std::to_string(i)}));
    EXPECT_EQ(g.local_cpus, t.numa_domains()[static_cast<std::size_t>(expected[i].second)].cpus);
  }
}

TEST(TopologyXml, GpuIsFoundByAnyFormOfItsBusId) {
  const Topology t = test_data::load(test_data::kGpuNode);
  ASSERT_NE(t.gpu_by_pci_bus_id("0000000A:01:00.0"), nullptr);  // as CUDA prints it
  EXPECT_EQ(t.gpu_by_pci_bus_id("0000000A:01:00.0")->index, 2);
  EXPECT_EQ(t.gpu_by_pci_bus_id("000b:01:00.0")->index, 3);
  EXPECT_EQ(t.gpu_by_pci_bus_id("0000:01:00.0"), nullptr);
  EXPECT_EQ(t.gpu_by_pci_bus_id("not a bus id"), nullptr);
}

TEST(TopologyXml, HonoursHwlocXmlfile) {
  ScopedEnv env("HWLOC_XMLFILE", test_data::path(test_data::kTwoSocket));
  const Topology t = Topology::load();
  EXPECT_EQ(t.source(), "xml:" + test_data::path(test_data::kTwoSocket));
  EXPECT_EQ(t.numa_domains().size(), 4u);
  EXPECT_EQ(t.cpus(), range(0, 27));
}

TEST(TopologyXml, MissingOrInvalidFileIsAUsageError) {
  EXPECT_THROW(Topology::load_xml(test_data::path("no-such-machine.xml")), scalebench::UsageError);
  // A file that exists but is no hwloc topology.
  EXPECT_THROW(Topology::load_xml(test_data::path("README.md")), scalebench::UsageError);
}

TEST(TopologyXml, JsonListsMachineParts) {
  const auto j = test_data::load(test_data::kGpuNode).to_json();
  EXPECT_EQ(j["cores"], 8);
  EXPECT_EQ(j["pus"], 16);
  EXPECT_EQ(j["numa_domains"][1]["cpus"], "80-81,88-89,96-97,104-105");
  EXPECT_EQ(j["gpus"][2]["pci_bus_id"], "000a:01:00.0");
  EXPECT_EQ(j["gpus"][2]["numa_domain"], 1);
}

TEST(PciBusId, NormalisesTheFormsToolsPrint) {
  using scalebench::normalize_pci_bus_id;
  EXPECT_EQ(normalize_pci_bus_id("00000000:3B:00.0"), "0000:3b:00.0");
  EXPECT_EQ(normalize_pci_bus_id("0000:3b:00.0"), "0000:3b:00.0");
  EXPECT_EQ(normalize_pci_bus_id("3b:00.1"), "0000:3b:00.1");
  EXPECT_EQ(normalize_pci_bus_id(""), "");
  EXPECT_EQ(normalize_pci_bus_id("0000:3b:00.0x"), "");
  EXPECT_EQ(normalize_pci_bus_id("0000:3b:40.0"), "");  // device > 0x1f
}

// CUDA_VISIBLE_DEVICES narrows the GPUs planning counts as CUDA narrows what a process sees: the
// 4-GPU node with 3,2 shows the two GPUs of the second NUMA domain, in that order, indexed 0 and 1.
TEST(TopologyXml, CudaVisibleDevicesNarrowsTheGpusInItsOrder) {
  {
    ScopedEnv env("CUDA_VISIBLE_DEVICES", "3,2");
    const Topology t = test_data::load(test_data::kGpuNode);
    ASSERT_EQ(t.visible_gpus().size(), 2u);
    EXPECT_EQ(t.visible_gpus()[0].pci_bus_id, "000b:01:00.0");
    EXPECT_EQ(t.visible_gpus()[1].pci_bus_id, "000a:01:00.0");
    EXPECT_EQ(t.visible_gpus()[0].index, 0);
    EXPECT_EQ(t.visible_gpus()[1].index, 1);
    EXPECT_EQ(t.visible_gpus()[0].numa_domain, 1);
    EXPECT_NE(t.gpus_note().find("leaves 2 of the 4"), std::string::npos) << t.gpus_note();
    EXPECT_EQ(t.gpus().size(), 4u);  // the ranks of a node still place themselves by every GPU on the bus
    EXPECT_EQ(t.to_json()["visible_gpus"], (nlohmann::json{"000b:01:00.0", "000a:01:00.0"}));
    EXPECT_EQ(t.to_json()["gpus_note"], t.gpus_note());
  }
  {
    ScopedEnv env("CUDA_VISIBLE_DEVICES", "GPU-00fc8f7f");  // a unique prefix of GPU 1's UUID
    const Topology t = test_data::load(test_data::kGpuNode);
    ASSERT_EQ(t.visible_gpus().size(), 1u);
    EXPECT_EQ(t.visible_gpus()[0].pci_bus_id, "0003:01:00.0");
  }
  {
    ScopedEnv env("CUDA_VISIBLE_DEVICES", "0,7,1");  // CUDA reads up to the entry naming no GPU
    const Topology t = test_data::load(test_data::kGpuNode);
    ASSERT_EQ(t.visible_gpus().size(), 1u);
    EXPECT_NE(t.gpus_note().find("up to '7'"), std::string::npos) << t.gpus_note();
  }
  for (const char* none : {"", "-1", "NoDevFiles"}) {
    ScopedEnv env("CUDA_VISIBLE_DEVICES", none);
    EXPECT_TRUE(test_data::load(test_data::kGpuNode).visible_gpus().empty()) << "'" << none << "'";
  }
  {
    ScopedEnv env("CUDA_VISIBLE_DEVICES", "0,1,2,3");
    const Topology t = test_data::load(test_data::kGpuNode);
    EXPECT_EQ(t.visible_gpus().size(), 4u);
    EXPECT_TRUE(t.gpus_note().empty());
  }
}

// Where hwloc knew no UUIDs (a live machine reads only the PCI bus), UUIDs still count GPUs.
TEST(TopologyXml, CudaVisibleDevicesByUuidCountsWhereUuidsAreUnknown) {
  std::vector<scalebench::GpuInfo> bus(4);
  for (std::size_t i = 0; i < bus.size(); ++i) bus[i].pci_bus_id = "0000:0" + std::to_string(i) + ":00.0";
  std::string note;
  const auto seen = scalebench::gpus_visible_to_cuda(bus, "GPU-aaaa,GPU-bbbb", note);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[1].index, 1);
  EXPECT_NE(note.find("counted"), std::string::npos) << note;
  EXPECT_EQ(scalebench::gpus_visible_to_cuda(bus, nullptr, note).size(), 4u);
  EXPECT_TRUE(note.empty());
}
