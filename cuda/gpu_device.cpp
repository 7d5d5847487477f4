// Which GPU a rank uses, and what that GPU is.
#include <cuda_runtime.h>

#include <array>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cublas_handle.hpp"
#include "cuda_check.hpp"
#include "gpu_device.hpp"
#include "nccl_comm.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/base/host.hpp"
#include "scalebench/gpu/gpu.hpp"
#include "scalebench/mpi/mpi.hpp"
#include "scalebench/mpi/timing.hpp"

namespace scalebench::gpu {
namespace {

std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::string(v) : std::string(fallback);
}

std::string format_uuid(const cudaUUID_t& u) {
  // The form nvidia-smi prints: GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx.
  std::string s = "GPU-";
  for (int i = 0; i < 16; ++i) {
    s += fmt::format("{:02x}", static_cast<unsigned char>(u.bytes[i]));
    if (i == 3 || i == 5 || i == 7 || i == 9) s += '-';
  }
  return s;
}

// "12.4" from the CUDA API's 12040.
std::string cuda_version(int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); }

// The NVIDIA kernel module's release ("580.159.04"), as /proc/driver/nvidia/version names it;
// "" where it cannot be read (no driver, another OS, a container without the file).
std::string driver_release() {
  std::ifstream in("/proc/driver/nvidia/version");
  std::string line;
  if (!in || !std::getline(in, line) || line.size() > 4096) return "";
  // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Thu ..."
  const auto at = line.find("Kernel Module");
  if (at == std::string::npos) return "";
  std::size_t b = line.find_first_not_of(' ', at + 13);
  if (b == std::string::npos) return "";
  const std::size_t e = line.find(' ', b);
  std::string release = line.substr(b, e == std::string::npos ? std::string::npos : e - b);
  for (const char c : release) {
    if ((c < '0' || c > '9') && c != '.') return "";
  }
  return release;
}

std::string pci_bus_id(int device) {
  std::array<char, 32> buf{};
  SCALEBENCH_CUDA_CHECK(cudaDeviceGetPCIBusId(buf.data(), static_cast<int>(buf.size()), device));
  return std::string(buf.data());
}

std::string uuid_of(int device) {
  cudaDeviceProp prop{};
  SCALEBENCH_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  return format_uuid(prop.uuid);
}

// Seconds the first selection in this process took: driver initialisation and context creation
// (cudaSetDevice makes the primary context). Later selections find the context made.
double g_first_context_seconds = -1.0;

// What one rank tells the others of its node about its GPU.
struct GpuClaim {
  int world_rank = 0;
  int device = 0;
  std::array<char, 48> uuid{};
  std::array<char, 64> host{};
};

}  // namespace

double first_context_seconds() { return g_first_context_seconds < 0 ? 0.0 : g_first_context_seconds; }

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return n;
}

std::string absence_reason() {
  int n = 0;
  const cudaError_t rc = cudaGetDeviceCount(&n);
  if (rc == cudaSuccess && n > 0) return {};
  cudaGetLastError();
  std::string driver = "NVIDIA kernel driver loaded";
  if (std::ifstream version("/proc/driver/nvidia/version"); !version) driver = "no NVIDIA kernel driver loaded";
  const std::string why = rc == cudaSuccess ? std::string("0 devices") : std::string(cudaGetErrorString(rc));
  return fmt::format("{}; cudaGetDeviceCount: {}; CUDA_VISIBLE_DEVICES={}", driver, why,
                     env_or("CUDA_VISIBLE_DEVICES", "(unset)"));
}

int select_for_rank(const Communicator& comm, bool share_gpu, const std::string& asked_by) {
  const Communicator& node = comm.node();  // this host's ranks, by host name where MPI splits them apart
  int device = -1;
  agree(comm, [&] {
    const double t0 = wall_seconds();
    const int count = device_count();
    if (count == 0) {
      throw ResourceError(fmt::format("{} needs a GPU, but rank {} on {} sees none ({}); run on a GPU node or use "
                                      "a CPU backend",
                                      asked_by, comm.rank(), host_name(), absence_reason()));
    }
    device = count == 1 ? 0 : node.rank() % count;
    SCALEBENCH_CUDA_CHECK(cudaSetDevice(device));
    SCALEBENCH_CUDA_CHECK(cudaFree(nullptr));
    if (g_first_context_seconds < 0) g_first_context_seconds = wall_seconds() - t0;
  });

  // Ranks are compared by GPU UUID, not index (with one visible device per rank every index is 0),
  // and across all ranks, not only those MPI puts on this node: a UUID names one GPU anywhere, and
  // a launcher whose ranks' bindings the node does not own can leave ranks of one host apart in
  // the node split, each then taking the first GPU.
  GpuClaim mine;
  mine.world_rank = comm.rank();
  mine.device = device;
  std::strncpy(mine.host.data(), host_name().c_str(), mine.host.size() - 1);
  agree(comm, [&] {
    const std::string uuid = uuid_of(device);
    std::strncpy(mine.uuid.data(), uuid.c_str(), mine.uuid.size() - 1);
  });
  std::vector<GpuClaim> claims(static_cast<std::size_t>(comm.size()));
  SCALEBENCH_MPI(
      MPI_Allgather(&mine, sizeof(GpuClaim), MPI_BYTE, claims.data(), sizeof(GpuClaim), MPI_BYTE, comm.get()));
  agree(comm, [&] {
    if (share_gpu) return;
    for (int r = 0; r < comm.rank(); ++r) {
      const auto& other = claims[static_cast<std::size_t>(r)];
      if (std::strncmp(other.uuid.data(), mine.uuid.data(), mine.uuid.size()) == 0) {
        throw ResourceError(fmt::format("ranks {} and {} on {} would share GPU {} ({} visible here, {} ranks on this "
                                        "host); launch at most one rank per GPU or pass --share-gpu",
                                        other.world_rank, mine.world_rank, mine.host.data(), mine.uuid.data(),
                                        device_count(), node.size()));
      }
    }
  });
  return device;
}

nlohmann::json device_info(int device) {
  cudaDeviceProp prop{};
  SCALEBENCH_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  return {{"index", device},
          {"name", prop.name},
          {"pci_bus_id", pci_bus_id(device)},
          {"uuid", format_uuid(prop.uuid)},
          {"memory_bytes", static_cast<std::int64_t>(prop.totalGlobalMem)},
          {"compute_capability", fmt::format("{}.{}", prop.major, prop.minor)},
          {"multiprocessors", prop.multiProcessorCount},
          {"driver_version", cuda_version(driver)},
          {"driver_release", driver_release()},
          {"runtime_version", cuda_version(runtime)},
          {"cuda_visible_devices", env_or("CUDA_VISIBLE_DEVICES", "")}};
}

nlohmann::json library_versions() {
  int driver = 0, runtime = 0;
  // Neither call creates a context; a machine without a driver gives 0.
  if (cudaDriverGetVersion(&driver) != cudaSuccess) driver = 0;
  if (cudaRuntimeGetVersion(&runtime) != cudaSuccess) runtime = 0;
  return {{"cuda",
           {{"runtime", cuda_version(runtime)},
            {"driver", driver > 0 ? cuda_version(driver) : std::string("none")},
            {"driver_release", driver_release()},
            {"cublas", cublas_version_string()}}},
          {"nccl", nccl_version_string()}};
}

}  // namespace scalebench::gpu
