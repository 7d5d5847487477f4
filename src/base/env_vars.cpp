// Every environment variable scalebench reads, with its default and meaning. --help prints this
// table and every record stores the values that were set.
#include <fmt/format.h>

#include "scalebench/base/env.hpp"

namespace scalebench {
namespace {
std::vector<std::string>& stored_command_line() {
  static std::vector<std::string> cl;
  return cl;
}
}  // namespace

void set_command_line(int argc, char** argv) { stored_command_line().assign(argv, argv + argc); }
const std::vector<std::string>& command_line() { return stored_command_line(); }

const std::vector<EnvVar>& honoured_env_vars() {
  static const std::vector<EnvVar> vars = {
      {"OPENBLAS_NUM_THREADS", "unset",
       "gemm: BLAS threads per rank when --threads is not given (wins over OMP_NUM_THREADS)"},
      {"OMP_NUM_THREADS", "unset",
       "gemm: BLAS threads when neither --threads nor OPENBLAS_NUM_THREADS is set; montecarlo: CPU threads per rank "
       "when --threads is not given"},
      {"OPENBLAS_CORETYPE", "unset", "OpenBLAS kernel choice; recorded, not changed"},
      {"CUDA_VISIBLE_DEVICES", "unset",
       "GPUs this process may see; one visible GPU is used as the rank's GPU. Planning (contrast, study, --pin gpu) "
       "counts only these"},
      {"HWLOC_XMLFILE", "unset", "load the machine topology from this hwloc XML file instead of the live machine"},
      {"SCALEBENCH_MPIEXEC", "mpirun", "launcher used by drivers (contrast, study) on a workstation"},
      {"SCALEBENCH_POWERCAP_ROOT", "/sys/class/powercap",
       "gemm, montecarlo: the powercap tree whose RAPL counters (package-N and their dram) give the CPUs' energy"},
      {"SCALEBENCH_NVML_LIBRARY", "libnvidia-ml.so.1",
       "gemm, montecarlo: the NVML library (the GPU driver's) whose energy counters give the GPUs' energy"},
      {"SCALEBENCH_PYTHON", "unset",
       "report (and contrast, study at their end): the Python with matplotlib that draws report.html; compare "
       "--report: the Python that draws its page (no matplotlib needed); else python3 on PATH, else /usr/bin/python3"},
      {"SLURM_JOB_ID", "unset",
       "inside a Slurm allocation: drivers launch with srun; recorded with the other SLURM_* variables"},
      {"SLURM_MPI_TYPE", "unset",
       "drivers' srun steps carry --mpi= of this value (else pmix when srun --mpi=list offers it)"},
      {"SLURM_JOB_NUM_NODES", "unset",
       "drivers: the nodes of the allocation (the multinode plan, a study's nodes); with --launcher mpirun the hosts "
       "come from SLURM_JOB_NODELIST"},
      {"SLURM_CPUS_ON_NODE", "unset",
       "drivers: the CPUs per node plans use, with SLURM_JOB_CPUS_PER_NODE and the process's CPU set"},
      {"OMPI_COMM_WORLD_RANK", "set by mpirun",
       "rank before MPI starts (which rank prints usage errors); likewise PMIX_RANK, PMI_RANK, SLURM_PROCID"},
      {"NCCL_DEBUG", "unset", "NCCL's own diagnostics; recorded"},
      {"NCCL_MAX_CTAS", "unset",
       "NCCL's cap on thread blocks per call; when set it replaces the cap of 4 that gemm --overlap asks for"},
      {"SCALEBENCH_PROFILE", "$XDG_CACHE_HOME/scalebench/profile-<host>.json (XDG_CACHE_HOME: ~/.cache)",
       "machine profile that calibrate writes and gemm/montecarlo/predict read (docs/model.md)"},
      {"XDG_CACHE_HOME", "~/.cache", "folder of the default machine profile"},
      {"SCALEBENCH_OVERLAP_TRACE", "unset",
       "gemm --overlap: if set, each rank prints every piece of every repeat (stream, piece, start and end in ms) to "
       "stderr"},
      {"SCALEBENCH_PEER_TIMEOUT", "30",
       "runs across hosts: seconds a host may send no heartbeat before every rank ends with exit 7 and a line naming "
       "it (0: off; rank 0's value applies; docs/cluster.md)"},
      {"SCALEBENCH_NO_SHARED_WINDOWS", "unset",
       "gemm --distribution shared: 1 (yes, true, on) on any rank runs the replicated scheme instead, with a warning "
       "in the record; 0 (no, false, off, empty) does not; any other value is a usage error"},
      {"OMPI_MCA_orte_bound_at_launch", "set by mpirun when it bound the process",
       "with none of OMPI_MCA_hwloc_base_binding_policy, OMPI_MCA_rmaps_base_mapping_policy, "
       "OMPI_MCA_hwloc_base_cpu_set and _cpu_list (no --bind-to, --map-by or --cpu-set given), the binding is "
       "mpirun's default (a core each for 1 or 2 processes): --pin places the rank instead (docs/placement.md)"},
      {"OMPI_MCA_osc_sm_backing_directory", "/dev/shm (Open MPI's default where writable)",
       "Open MPI's folder for shared windows' backing files: gemm --distribution shared checks it (room, writable) "
       "on each node first and falls back to replicated, saying why"},
  };
  return vars;
}

std::string env_vars_help() {
  std::string out = "Environment variables honoured:\n";
  for (const auto& v : honoured_env_vars()) {
    out += fmt::format("  {:<22} (default: {}) {}\n", v.name, v.default_value, v.meaning);
  }
  return out;
}

}  // namespace scalebench
