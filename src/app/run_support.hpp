#pragma once
// How every MPI workload subcommand (gemm, montecarlo) runs, so that bad input and failures
// behave the same everywhere:
//  1. `validate` runs before MPI_Init on every rank; a UsageError there is printed by the
//     launcher's rank 0 and every rank exits with the same code (nothing collective started).
//  2. MPI is initialised and `body` runs. An AgreedError (see agree()) is printed once by rank 0
//     and returned as the exit code by every rank. Any other failure on one rank is printed with
//     host and rank and ends the job with MPI_Abort(code): no rank is left waiting.
#include <functional>
#include <string>

#include "scalebench/error.hpp"
#include "scalebench/mpi.hpp"

namespace scalebench::app {

int run_mpi_command(int& argc, char**& argv, const std::function<void()>& validate,
                    const std::function<int(const Communicator&)>& body);

// "scalebench: error: <message>" on stderr.
void print_error(const std::string& message);
// Prints on the launcher's rank 0 only (usable before MPI_Init).
bool is_launch_root();

// argc/argv as main received them (run_mpi_command needs them for MPI_Init).
void set_main_args(int argc, char** argv);
int& main_argc();
char**& main_argv();

}  // namespace scalebench::app
