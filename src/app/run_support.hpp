#pragma once
// What every subcommand's run shares: the guard main() runs it under, and one place for the
// errors a driver reports itself. The workloads' own runs (MPI, shared options) are in
// scalebench/workloads/command.hpp.
#include <functional>
#include <string>

#include "scalebench/workloads/command.hpp"

namespace scalebench::app {

// Runs a subcommand; whatever escapes it ends as one line and a documented code: Error -> its
// code, std::bad_alloc -> resource (3), std::ios_base::failure -> resource (3), any other
// exception -> internal (1).
int run_guarded(const std::function<int()>& run);

// Runs a driver (contrast, study): an Error is printed and its code returned; any other exception
// is an internal error (1) "internal error: <what>; please report it".
int run_reporting(const std::function<int()>& run);

}  // namespace scalebench::app
