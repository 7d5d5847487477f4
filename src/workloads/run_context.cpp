#include <cblas.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "scalebench/base/build_info.hpp"
#include "scalebench/base/env.hpp"
#include "scalebench/base/host.hpp"
#include "scalebench/base/json_field.hpp"
#include "scalebench/gpu/gpu.hpp"
#include "scalebench/mpi/mpi.hpp"
#include "scalebench/workloads/run_context.hpp"

extern char** environ;

namespace scalebench {

std::string mpi_library_version() {
  char buf[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  MPI_Get_library_version(buf, &len);
  std::string s(buf, len);
  while (!s.empty() && (s.back() == '\n' || s.back() == '\0' || s.back() == ' ')) s.pop_back();
  return s;
}

nlohmann::json openblas_info() {
  std::string config = openblas_get_config();
  std::string core = openblas_get_corename();
  while (!config.empty() && config.back() == ' ') config.pop_back();
  const int parallel = openblas_get_parallel();
  return {{"config", config},
          {"core", core},
          {"threads", openblas_get_num_threads()},
          {"parallel", parallel == 0   ? "sequential"
                       : parallel == 1 ? "pthreads"
                                       : "openmp"}};
}

nlohmann::json local_rank_info(const Communicator& comm) {
  const auto cpus = allowed_cpus();
  return {{"rank", comm.rank()},
          {"host", host_name()},
          {"pid", static_cast<long>(getpid())},
          {"cpus_allowed", format_cpu_list(cpus)},
          {"cpus_allowed_count", cpus.size()}};
}

nlohmann::json gpus_used(const nlohmann::json& rank_info) {
  // One entry per device (host and UUID): ranks that share a GPU name it once.
  std::map<std::pair<std::string, std::string>, nlohmann::json> devices;
  std::set<std::string> models, releases;
  for (const auto& r : rank_info) {
    if (!r.is_object() || !r.contains("gpu") || !r["gpu"].is_object()) continue;
    const auto& g = r["gpu"];
    const std::string host = r.value("host", std::string("unknown"));
    const std::string uuid = g.value("uuid", std::string());
    auto [it, added] = devices.try_emplace({host, uuid}, nlohmann::json::object());
    if (added) {
      it->second = {{"host", host},
                    {"name", g.value("name", std::string())},
                    {"uuid", uuid},
                    {"pci_bus_id", g.value("pci_bus_id", std::string())},
                    {"memory_bytes", g.value("memory_bytes", std::int64_t{0})},
                    {"compute_capability", g.value("compute_capability", std::string())},
                    {"driver_release", g.value("driver_release", std::string())},
                    {"driver_version", g.value("driver_version", std::string())},
                    {"ranks", nlohmann::json::array()}};
      models.insert(g.value("name", std::string()));
      if (const std::string d = g.value("driver_release", std::string()); !d.empty()) releases.insert(d);
    }
    it->second["ranks"].push_back(r.value("rank", -1));
  }
  if (devices.empty()) {
    return {{"used", false},
            {"count", 0},
            {"reason", gpu_support_built() ? "no rank of this run used a GPU" : gpu_absence_reason()}};
  }
  nlohmann::json list = nlohmann::json::array();
  for (auto& [key, d] : devices) list.push_back(std::move(d));
  return {{"used", true},
          {"count", list.size()},
          {"models", std::vector<std::string>(models.begin(), models.end())},
          {"driver_releases", std::vector<std::string>(releases.begin(), releases.end())},
          {"devices", list}};
}

nlohmann::json run_context(const Communicator& comm, const nlohmann::json& extra_rank_info) {
  nlohmann::json mine = local_rank_info(comm);
  for (auto it = extra_rank_info.begin(); it != extra_rank_info.end(); ++it) mine[it.key()] = it.value();
  const auto all = comm.gather_strings(json_text(mine));
  if (!comm.is_root()) return nlohmann::json::object();

  nlohmann::json ranks = nlohmann::json::array();
  std::set<std::string> hosts;
  for (const auto& s : all) {
    auto j = nlohmann::json::parse(s);
    hosts.insert(j.value("host", std::string("unknown")));
    ranks.push_back(std::move(j));
  }
  nlohmann::json env = nlohmann::json::object();
  for (const auto& v : honoured_env_vars()) {
    if (const char* val = std::getenv(v.name)) env[v.name] = val;
  }
  nlohmann::json slurm = nlohmann::json::object();
  for (char** e = environ; e && *e; ++e) {
    std::string kv = *e;
    if (kv.rfind("SLURM_", 0) == 0) {
      const auto eq = kv.find('=');
      slurm[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
  }
  int mpi_major = 0, mpi_minor = 0;
  MPI_Get_version(&mpi_major, &mpi_minor);
  nlohmann::json versions = {
      {"scalebench", build_version()},        {"git", build_git_hash()},
      {"git_source", build_git_source()},     {"compiler", build_compiler()},
      {"build_type", build_type()},           {"cuda_built", build_with_cuda()},
      {"mpi_library", mpi_library_version()}, {"mpi_standard", fmt::format("{}.{}", mpi_major, mpi_minor)},
      {"openblas", openblas_info()}};
  // The device libraries as rank 0 loaded them ("cuda", "nccl"); none in a build without a device.
  const nlohmann::json device_libraries = gpu_library_versions();
  for (auto it = device_libraries.begin(); it != device_libraries.end(); ++it) versions[it.key()] = it.value();
  nlohmann::json gpus = gpus_used(ranks);
  return {
      {"schema_version", kSchemaVersion},
      {"command_line", command_line()},
      {"started_at", utc_now_iso8601()},
      {"versions", std::move(versions)},
      {"hosts", std::vector<std::string>(hosts.begin(), hosts.end())},
      {"cpu_model", cpu_model()},
      {"gpus", std::move(gpus)},
      {"ranks", comm.size()},
      {"rank_info", ranks},
      {"environment", env},
      {"slurm", slurm},
  };
}

}  // namespace scalebench
