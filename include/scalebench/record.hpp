#pragma once
// Run records: the context every record carries, the environment knobs honoured, atomic writes.
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace scalebench {

class Communicator;

inline constexpr int kSchemaVersion = 1;

// Every environment variable scalebench reads, declared once with its default and meaning.
struct EnvVar {
  const char* name;
  const char* default_value;
  const char* meaning;
};
const std::vector<EnvVar>& honoured_env_vars();
std::string env_vars_help();  // a block of text for --help

// The command line as given (set once by main).
void set_command_line(int argc, char** argv);
const std::vector<std::string>& command_line();

std::string host_name();
std::string cpu_model();
std::vector<int> allowed_cpus();                     // sched_getaffinity of this process
std::string format_cpu_list(const std::vector<int>& cpus);  // "0-3,8"
std::string mpi_library_version();
nlohmann::json openblas_info();                      // config, core, threads, parallel mode
std::string utc_now_iso8601();

// This rank's facts: host, pid, allowed CPUs as the OS reports them, local rank.
nlohmann::json local_rank_info(const Communicator& comm);

// Collective: versions, hosts, CPU model, per-rank info (gathered), environment knobs, Slurm
// variables, command line. Valid on rank 0; `extra_rank_info` is merged into each rank's entry.
nlohmann::json run_context(const Communicator& comm, const nlohmann::json& extra_rank_info = nlohmann::json::object());

// Output files (docs/output.md, "Output files"): a regular file or a new path is replaced
// atomically (written beside it, then renamed: readers never see a partial file); a symbolic link
// is followed and its target treated the same; a character device or pipe (/dev/null,
// /dev/stdout, a FIFO) is written in place; a folder or anything else is refused.
// Throws (UsageError for an empty path, ResourceError otherwise) when `path` cannot be written
// that way; call it before any work. `option` names the path in messages ("--json", "--csv").
void check_output_path(const std::string& path, std::string_view option = "--json");
// Writes `text` to `path` as described above; ResourceError naming the path on failure.
void write_file_atomic(const std::string& path, const std::string& text);
void write_json_atomic(const std::string& path, const nlohmann::json& j);

}  // namespace scalebench
