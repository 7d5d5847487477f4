#pragma once
// Saved hwloc XML exports of real machines (tests/data/README.md says where each comes from).
#include <string>

#include "scalebench/topology/topology.hpp"

namespace test_data {

inline std::string path(const std::string& file) {
  std::string p = SCALEBENCH_TEST_DATA_DIR;
  p.append("/").append(file);
  return p;
}

// One socket, 2 cores, one NUMA domain, no GPU (the development workstation).
inline const char* const kWorkstation = "amd-epyc-1p2c-workstation.xml";
// Two sockets, Cluster-on-Die: 4 NUMA domains of 7 cores, PUs 0-27, no SMT, no GPU.
inline const char* const kTwoSocket = "cisco-ucsb-b200-m4-2p4n28c.xml";
// Two POWER8 sockets (4 cores x 2 PUs each), 2 NUMA domains, 4 P100 GPUs: 2 on each domain.
inline const char* const kGpuNode = "ibm-s822lc-power8-2p2n-4gpu.xml";

// One socket of 16 cores, one NUMA domain, one H100 (PCI 0000:00:06.0): the GPU benchmark machine.
inline const char* const kH100Node = "h100-sxm-1p16c-1gpu-vm.xml";

inline scalebench::Topology load(const char* file) { return scalebench::Topology::load_xml(path(file)); }

}  // namespace test_data
