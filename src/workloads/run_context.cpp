#include <cblas.h>
#include <unistd.h>

#include <cstdlib>
#include <set>

#include <fmt/format.h>

#include "scalebench/base/build_info.hpp"
#include "scalebench/base/env.hpp"
#include "scalebench/base/host.hpp"
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

nlohmann::json run_context(const Communicator& comm, const nlohmann::json& extra_rank_info) {
  nlohmann::json mine = local_rank_info(comm);
  for (auto it = extra_rank_info.begin(); it != extra_rank_info.end(); ++it) mine[it.key()] = it.value();
  const auto all = comm.gather_strings(mine.dump());
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
  return {
      {"schema_version", kSchemaVersion},
      {"command_line", command_line()},
      {"started_at", utc_now_iso8601()},
      {"versions",
       {{"scalebench", build_version()},
        {"git", build_git_hash()},
        {"compiler", build_compiler()},
        {"build_type", build_type()},
        {"cuda_built", build_with_cuda()},
        {"mpi_library", mpi_library_version()},
        {"mpi_standard", fmt::format("{}.{}", mpi_major, mpi_minor)},
        {"openblas", openblas_info()}}},
      {"hosts", std::vector<std::string>(hosts.begin(), hosts.end())},
      {"cpu_model", cpu_model()},
      {"ranks", comm.size()},
      {"rank_info", ranks},
      {"environment", env},
      {"slurm", slurm},
  };
}

}  // namespace scalebench
