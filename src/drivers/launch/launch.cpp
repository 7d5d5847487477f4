// The drivers' launch: launcher, hosts, extra arguments, PMI type, allocation CPUs, step errors.
#include "scalebench/drivers/launch.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "results/files.hpp"
#include "scalebench/base/error.hpp"
#include "scalebench/base/input_file.hpp"
#include "scalebench/drivers/process.hpp"

namespace scalebench {
namespace {

// A hostfile is a page of names; a larger file is the wrong file.
constexpr std::size_t kMaxHostfileBytes = std::size_t{4} << 20;

bool valid_host(const std::string& h) {
  return !h.empty() && std::all_of(h.begin(), h.end(), [](unsigned char c) {
    return std::isalnum(c) != 0 || c == '-' || c == '.' || c == '_';
  });
}

// A whole number >= 1 (slot counts, CPU counts); -1 when `s` is not one.
int positive(const std::string& s) {
  if (s.empty() || s.size() > 9 || !std::all_of(s.begin(), s.end(), ::isdigit)) return -1;
  const int v = std::stoi(s);
  return v >= 1 ? v : -1;
}

void add_host(std::vector<HostEntry>& hosts, HostEntry h) {
  for (auto& e : hosts) {
    if (e.name == h.name) {
      e.slots += h.slots;
      return;
    }
  }
  hosts.push_back(std::move(h));
}

// What `argv` prints (stdout and stderr), or "" when it cannot run or fails.
std::string capture(const std::vector<std::string>& argv) {
  char path[] = "/tmp/scalebench-capture-XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) return "";
  close(fd);
  const StepOutcome out = run_step(argv, path, 30);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  unlink(path);
  return out.exit_code == 0 ? text.str() : "";
}

// The hosts of the Slurm allocation (scontrol show hostnames), empty when unknown.
std::vector<HostEntry> allocation_hosts() {
  const char* list = std::getenv("SLURM_JOB_NODELIST");
  if (!list || !*list || !program_available("scontrol")) return {};
  std::vector<HostEntry> hosts;
  std::stringstream ss(capture({"scontrol", "show", "hostnames", list}));
  for (std::string h; ss >> h;) {
    if (valid_host(h)) add_host(hosts, {h, 0});
  }
  return hosts;
}

bool names_option(const std::vector<std::string>& args, const std::string& option) {
  return std::any_of(args.begin(), args.end(), [&](const std::string& a) { return a.rfind(option, 0) == 0; });
}

}  // namespace

std::vector<HostEntry> parse_hosts(const std::string& list) {
  if (list.empty()) throw UsageError("--hosts is empty; write a comma-separated list, e.g. node1,node2");
  std::vector<HostEntry> hosts;
  // Every item, the empty ones too ("a,,b", "a,", ","): std::getline drops a trailing empty one.
  for (std::size_t start = 0;;) {
    const std::size_t comma = list.find(',', start);
    const std::string item = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (item.empty()) {
      throw UsageError(
          fmt::format("--hosts '{}' has an empty item; write a comma-separated list, e.g. node1,node2", list));
    }
    HostEntry h{item, 0};
    if (const auto colon = item.find(':'); colon != std::string::npos) {
      h.name = item.substr(0, colon);
      h.slots = positive(item.substr(colon + 1));
      if (h.slots < 1)
        throw UsageError(fmt::format("--hosts: '{}' has a bad slot count; write host or host:slots", item));
    }
    if (!valid_host(h.name)) {
      throw UsageError(
          fmt::format("--hosts: '{}' is not a host name; write a comma-separated list, e.g. node1,node2", item));
    }
    add_host(hosts, h);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return hosts;
}

std::vector<HostEntry> read_hostfile(const std::string& path, const std::string& origin) {
  if (path.empty()) throw UsageError(fmt::format("{} is empty; give a hostfile", origin));
  std::string text;
  try {
    text = read_input_file(path, origin, kMaxHostfileBytes);
  } catch (const Error& e) {
    throw UsageError(e.what());  // a hostfile named wrongly is the request's fault, as a bad host is
  }
  std::istringstream in(text);
  std::vector<HostEntry> hosts;
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (const auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    std::stringstream words(line);
    HostEntry h;
    if (!(words >> h.name)) continue;
    if (!valid_host(h.name)) throw UsageError(fmt::format("{}:{}: '{}' is not a host name", path, line_no, h.name));
    for (std::string w; words >> w;) {
      const auto eq = w.find('=');
      const std::string key = w.substr(0, eq);
      if (eq == std::string::npos || (key != "slots" && key != "max_slots" && key != "max-slots") ||
          positive(w.substr(eq + 1)) < 1) {
        throw UsageError(
            fmt::format("{}:{}: '{}' not understood; a line is 'host [slots=N] [max_slots=M]'", path, line_no, w));
      }
      if (key == "slots") h.slots = positive(w.substr(eq + 1));
    }
    add_host(hosts, h);
  }
  if (hosts.empty()) throw UsageError(fmt::format("{} {} names no host", origin, path));
  return hosts;
}

LaunchSetup resolve_launch(const LaunchRequest& r) {
  const bool in_slurm = std::getenv("SLURM_JOB_ID") != nullptr;
  const bool hosts_given = !r.hosts.empty() || !r.hostfile.empty();
  if (!r.hosts.empty() && !r.hostfile.empty()) throw UsageError("give --hosts or --hostfile, not both");
  LaunchSetup s;
  s.launcher = r.launcher == "auto" ? (in_slurm && !hosts_given ? "srun" : "mpirun") : r.launcher;
  if (s.launcher != "mpirun" && s.launcher != "srun") {
    throw UsageError(fmt::format("unknown --launcher '{}'; use auto, mpirun or srun", r.launcher));
  }
  if (s.launcher == "srun" && hosts_given) {
    throw UsageError("--hosts/--hostfile are for mpirun; srun runs on the nodes of its allocation (salloc/sbatch -N)");
  }
  s.program = s.launcher;
  if (s.launcher == "mpirun") {
    if (const char* m = std::getenv("SCALEBENCH_MPIEXEC"); m && *m) s.program = m;
    results::allow_mpirun_as_root();
  }
  if (!r.dry_run && !program_available(s.program)) {
    throw ResourceError(fmt::format("launcher '{}' not found; install {} or set SCALEBENCH_MPIEXEC", s.program,
                                    s.launcher == "srun" ? "slurm-client" : "openmpi-bin"));
  }
  s.nodes_from = "this host";
  if (!r.hosts.empty()) {
    s.hosts = parse_hosts(r.hosts);
    s.nodes_from = "--hosts";
  } else if (!r.hostfile.empty()) {
    s.hosts = read_hostfile(r.hostfile, r.hostfile_origin);
    s.hostfile = r.hostfile;
    s.nodes_from = "--hostfile";
  }
  if (in_slurm && !hosts_given) {
    if (const char* nn = std::getenv("SLURM_JOB_NUM_NODES")) s.nodes = std::max(1, std::atoi(nn));
    s.nodes_from = "the Slurm allocation";
    if (s.launcher == "mpirun") s.hosts = allocation_hosts();  // else Open MPI's Slurm support maps
  }
  if (!s.hosts.empty()) s.nodes = static_cast<int>(s.hosts.size());
  if (s.launcher == "mpirun") {
    s.extra = r.mpirun_args;
  } else {
    s.extra = r.srun_args;
    const char* type = std::getenv("SLURM_MPI_TYPE");
    const bool list_needed = !(type && *type) && !names_option(s.extra, "--mpi") && program_available("srun");
    const std::string flag = srun_mpi_flag(s.extra, type, list_needed ? capture({"srun", "--mpi=list"}) : "");
    if (!flag.empty()) s.extra.insert(s.extra.begin(), flag);
  }
  return s;
}

std::vector<std::string> host_args(const LaunchSetup& s, int nodes, int ranks_per_node) {
  if (s.launcher != "mpirun" || s.hosts.empty()) return {};
  if (!s.hostfile.empty() && nodes == static_cast<int>(s.hosts.size())) return {"--hostfile", s.hostfile};
  std::string list;
  for (int i = 0; i < nodes && i < static_cast<int>(s.hosts.size()); ++i) {
    list += fmt::format("{}{}:{}", i > 0 ? "," : "", s.hosts[static_cast<std::size_t>(i)].name,
                        std::max(ranks_per_node, s.hosts[static_cast<std::size_t>(i)].slots));
  }
  return {"--host", list};
}

std::string srun_mpi_flag(const std::vector<std::string>& extra, const char* slurm_mpi_type,
                          const std::string& mpi_list_output) {
  if (names_option(extra, "--mpi")) return "";
  if (slurm_mpi_type && *slurm_mpi_type) return fmt::format("--mpi={}", slurm_mpi_type);
  std::stringstream ss(mpi_list_output);
  for (std::string word; ss >> word;) {
    if (word == "pmix" || word.rfind("pmix_v", 0) == 0) return "--mpi=pmix";  // "pmix", "pmix_v3"
  }
  return "";
}

int allocation_cpus(const char* cpus_on_node, const char* job_cpus_per_node, int affinity) {
  int least = affinity > 0 ? affinity : 0;
  auto take = [&](int v) {
    if (v > 0) least = least > 0 ? std::min(least, v) : v;
  };
  if (cpus_on_node) take(positive(cpus_on_node));
  if (job_cpus_per_node) {
    std::stringstream ss(job_cpus_per_node);  // "72(x2),36"
    for (std::string item; std::getline(ss, item, ',');) take(positive(item.substr(0, item.find('('))));
  }
  return least;
}

bool has_scalebench_error(const std::string& log_path) { return !results::last_error_line(log_path).empty(); }

}  // namespace scalebench
