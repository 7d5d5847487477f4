#include "scalebench/base/error.hpp"

#include <fmt/format.h>

namespace scalebench {

std::string_view exit_code_name(ExitCode code) {
  switch (code) {
    case ExitCode::ok: return "ok";
    case ExitCode::internal: return "internal error";
    case ExitCode::usage: return "usage error";
    case ExitCode::resource: return "resource error";
    case ExitCode::verification_failed: return "verification failed";
    case ExitCode::runtime: return "runtime library error";
    case ExitCode::no_cuda: return "built without CUDA";
    case ExitCode::timeout: return "timeout";
    case ExitCode::partial: return "some runs failed";
    case ExitCode::launch: return "launch failed";
  }
  return "unknown";
}

std::string exit_code_table() {
  std::string out;
  const ExitCode all[] = {
      ExitCode::ok,      ExitCode::internal, ExitCode::usage,   ExitCode::resource, ExitCode::verification_failed,
      ExitCode::runtime, ExitCode::no_cuda,  ExitCode::timeout, ExitCode::partial,  ExitCode::launch};
  const char* why[] = {"success, every result verified",
                       "a bug in scalebench (please report it)",
                       "bad option or value (see --help)",
                       "not enough memory, no GPU, too many ranks, unwritable output",
                       "a computed result is wrong (\"ok\": false in the record)",
                       "MPI, BLAS, CUDA, cuBLAS, NCCL or hwloc reported an error",
                       "a GPU feature was asked of a build without CUDA",
                       "a launched run exceeded its time limit",
                       "a driver finished but some of its runs failed",
                       "a driver's runs failed to launch (mpirun, srun, PMIx, a rank lost) or none could run here"};
  for (std::size_t i = 0; i < std::size(all); ++i) {
    out += fmt::format("  {}  {:<22} {}\n", static_cast<int>(all[i]), exit_code_name(all[i]), why[i]);
  }
  // Not a failure class but a verdict: `scalebench compare`'s code for a run that got slower
  // (kCompareSlowerExit in scalebench/drivers/compare.hpp).
  out += fmt::format("  {}  {:<21} {}\n", 10, "slower", "compare: a matched run got slower (docs/compare.md)");
  out += "  128+n (134 abort, 137 SIGKILL, 143 SIGTERM): ended by signal n; mpirun returns the first failing\n"
         "  rank's code, 128+n for a rank ended by a signal, or a code of its own (docs/cli.md: Exit codes)\n";
  return out;
}

}  // namespace scalebench
