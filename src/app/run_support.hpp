#pragma once
// How every MPI workload subcommand (gemm, montecarlo) runs, so that bad input and failures
// behave the same everywhere:
//  1. `validate` runs before MPI_Init on every rank; a UsageError there is printed by the
//     launcher's rank 0 and every rank exits with the same code (nothing collective started).
//  2. MPI is initialised and `body` runs. An AgreedError (see agree()) is printed once by rank 0
//     and returned as the exit code by every rank. Any other failure on one rank is printed with
//     host and rank and ends the job with MPI_Abort(code): no rank is left waiting.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "scalebench/base/error.hpp"
#include "scalebench/mpi/mpi.hpp"
#include "scalebench/topology/placement.hpp"

namespace scalebench::app {

int run_mpi_command(int& argc, char**& argv, const std::function<void()>& validate,
                    const std::function<int(const Communicator&)>& body);

// Runs a subcommand; whatever escapes it ends as one line and a documented code: Error -> its
// code, std::bad_alloc -> resource (3), std::ios_base::failure -> resource (3), any other
// exception -> internal (1).
int run_guarded(const std::function<int()>& run);

// "scalebench: error: <message>" on stderr.
void print_error(const std::string& message);
// Prints on the launcher's rank 0 only (usable before MPI_Init).
bool is_launch_root();

// The options every workload subcommand (gemm, montecarlo) takes, declared and checked once.
// Numbers are kept as given and parsed by parse.hpp (decimal, ranges checked, "-1" is no seed).
struct RunOptions {
  std::string threads;
  std::string pin = "auto";
  std::string reps = "5";
  std::string warmup = "1";
  std::string seed = "42";
  std::string json;
  bool dry_run = false, quiet = false, share_gpu = false;
};
// The help lines that differ between the subcommands.
struct RunOptionHelp {
  std::string threads, seed, dry_run, share_gpu;
};
void add_run_options(CLI::App* app, RunOptions& o, const RunOptionHelp& help);
// The shared options, parsed and range-checked (UsageError naming the option).
struct ParsedRunOptions {
  int threads = 0;  // 0 when not given
  PinPolicy pin = PinPolicy::automatic;
  int reps = 5, warmup = 1;
  std::uint64_t seed = 42;
  std::optional<std::string> json;
};
ParsedRunOptions parse_run_options(const RunOptions& o, const CLI::App& app);

// Copies the shared options into a workload's configuration (GemmConfig, MonteCarloConfig).
template <class Config>
void apply_run_options(const RunOptions& o, const CLI::App& app, Config& cfg) {
  const ParsedRunOptions p = parse_run_options(o, app);
  cfg.threads = p.threads;
  cfg.pin = p.pin;
  cfg.reps = p.reps;
  cfg.warmup = p.warmup;
  cfg.seed = p.seed;
  cfg.dry_run = o.dry_run;
  cfg.quiet = o.quiet;
  cfg.share_gpu = o.share_gpu;
  cfg.json_path = p.json;
}

// argc/argv as main received them (run_mpi_command needs them for MPI_Init).
void set_main_args(int argc, char** argv);
int& main_argc();
char**& main_argv();

// A workload subcommand's run: `to_config()` before MPI starts (usage errors), then
// `run(cfg, comm)` on every rank; exit 0 when the result verified, 4 when it did not.
template <class Config, class ToConfig, class Run>
std::function<int()> workload_runner(ToConfig to_config, Run run) {
  return [to_config, run]() {
    Config cfg;
    return run_mpi_command(
        main_argc(), main_argv(), [&] { cfg = to_config(); },
        [&](const Communicator& comm) {
          return run(cfg, comm).ok ? 0 : static_cast<int>(ExitCode::verification_failed);
        });
  };
}

}  // namespace scalebench::app
