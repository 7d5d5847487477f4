#pragma once
// How the drivers (contrast, study) launch their steps: which launcher, on which hosts, with
// which extra arguments and PMI type, on how many CPUs per node; and whether a failed step's log
// holds scalebench's own error. README (contrast, study) and docs/studies.md describe the rules.
#include <string>
#include <vector>

namespace scalebench {

// One host of --hosts or --hostfile; slots 0 when not given.
struct HostEntry {
  std::string name;
  int slots = 0;
};
// "a,b:4,c": comma-separated host names, each with an optional ":slots". UsageError when bad,
// empty, or with an empty item ("a,,b", "a,", ",").
std::vector<HostEntry> parse_hosts(const std::string& list);
// An Open MPI hostfile ("name [slots=N] [max_slots=M]" per line, '#' comments), read as
// input_file.hpp reads any file (never blocks on a FIFO; a folder or device is refused by kind; at
// most 4 MiB). UsageError naming `origin` ("--hostfile", "hostfile of jobs/x.yaml"), the file and
// line when the path is empty, the file unreadable, empty or malformed. A host named twice is one
// host.
std::vector<HostEntry> read_hostfile(const std::string& path, const std::string& origin = "--hostfile");

// What the user asked of the launch (the drivers' options, a study file's keys).
struct LaunchRequest {
  std::string launcher = "auto";                    // auto | mpirun | srun
  std::string hosts;                                // --hosts a,b,...
  std::string hostfile;                             // --hostfile FILE
  std::string hostfile_origin = "--hostfile";       // where its path came from, for messages
  std::vector<std::string> mpirun_args, srun_args;  // extra launcher arguments
  bool dry_run = false;                             // the launcher need not exist
};

// The launch the drivers use, resolved once.
struct LaunchSetup {
  std::string launcher;            // mpirun | srun
  std::string program;             // the program run (SCALEBENCH_MPIEXEC for mpirun)
  std::vector<HostEntry> hosts;    // mpirun's hosts: given, or the Slurm allocation's; empty: this one
  std::string hostfile;            // as given (passed whole when every host is used)
  std::vector<std::string> extra;  // extra arguments (srun: with the chosen --mpi=)
  int nodes = 1;                   // nodes the steps may use
  std::string nodes_from;          // "this host", "--hosts", "--hostfile", "the Slurm allocation"
};
// auto: srun inside a Slurm allocation unless hosts are given, else mpirun. Throws UsageError for
// contradictions (hosts with srun, both --hosts and --hostfile) and ResourceError when the
// launcher is missing (unless dry_run). Sets Open MPI's run-as-root variables for mpirun as root.
LaunchSetup resolve_launch(const LaunchRequest& request);

// The launcher part of a step placing `ranks_per_node` ranks on each of `nodes` nodes, without
// the rank count and mapping (the caller's): mpirun --hostfile/--host, srun nothing.
std::vector<std::string> host_args(const LaunchSetup& setup, int nodes, int ranks_per_node);

// The srun --mpi= flag: none when the extra arguments name one; SLURM_MPI_TYPE when set; pmix when
// `srun --mpi=list` (its output given) offers it; else none (Slurm's MpiDefault).
std::string srun_mpi_flag(const std::vector<std::string>& extra, const char* slurm_mpi_type,
                          const std::string& mpi_list_output);

// The CPUs (PUs) the allocation gives on each node: the least of SLURM_CPUS_ON_NODE, every count
// of SLURM_JOB_CPUS_PER_NODE ("4(x2),2") and `affinity_cpus` (this process's CPU set, allowed_cpus()); values
// that are null, empty or unreadable are ignored; 0 when none is known.
int allocation_cpus(const char* cpus_on_node, const char* job_cpus_per_node, int affinity_cpus);

// True when the log holds scalebench's own error line (the failure is the run's, not the launch's).
bool has_scalebench_error(const std::string& log_path);
// Why a failed step failed, from its log: its last "scalebench: error" line; else the launcher's
// cause lines (srun, Open MPI, PMIx, the remote shell: lines that name an error, a failure, a
// signal...; of an Open MPI help text its first sentence and its "Key: value" details), the first
// 3 distinct ones (the same line from several ranks counts once), rather than the generic
// trailers printed after any failure ("MPI_ERRORS_ARE_FATAL ... potentially your MPI job",
// "Primary job terminated ...", "srun: error: ... Exited with exit code 1"); else the last 3 lines
// that say anything. Joined with " | ", at most 400 characters; empty when the log is.
std::string failure_lines(const std::string& log_path);

}  // namespace scalebench
