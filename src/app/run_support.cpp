#include "app/run_support.hpp"

#include <cstdio>
#include <cstdlib>
#include <exception>

#include <fmt/format.h>

#include "scalebench/record.hpp"

namespace scalebench::app {
namespace {
int g_argc = 0;
char** g_argv = nullptr;
}  // namespace

void set_main_args(int argc, char** argv) {
  g_argc = argc;
  g_argv = argv;
}
int& main_argc() { return g_argc; }
char**& main_argv() { return g_argv; }

void print_error(const std::string& message) {
  std::fflush(stdout);
  std::fprintf(stderr, "scalebench: error: %s\n", message.c_str());
  std::fflush(stderr);
}

bool is_launch_root() { return launcher_rank() == 0; }

int run_mpi_command(int& argc, char**& argv, const std::function<void()>& validate,
                    const std::function<int(const Communicator&)>& body) {
  try {
    validate();
  } catch (const Error& e) {
    if (is_launch_root()) print_error(e.what());
    return static_cast<int>(e.code());
  }

  MpiEnvironment env(argc, argv);
  Communicator world = Communicator::world();
  auto abort_with = [&](ExitCode code, const std::string& what) {
    std::fflush(stdout);
    std::fprintf(stderr, "scalebench: error on %s rank %d: %s\n", host_name().c_str(), world.rank(), what.c_str());
    std::fflush(stderr);
    if (world.size() > 1) MPI_Abort(MPI_COMM_WORLD, static_cast<int>(code));
    return static_cast<int>(code);
  };
  try {
    return body(world);
  } catch (const AgreedError& e) {
    if (world.is_root()) print_error(e.what());
    return static_cast<int>(e.code());
  } catch (const Error& e) {
    return abort_with(e.code(), e.what());
  } catch (const std::bad_alloc&) {
    return abort_with(ExitCode::resource, "out of host memory; use a smaller size or more ranks");
  } catch (const std::exception& e) {
    return abort_with(ExitCode::internal, fmt::format("internal error: {}", e.what()));
  }
}

}  // namespace scalebench::app
